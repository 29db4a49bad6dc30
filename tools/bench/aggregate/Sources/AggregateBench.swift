import ArgumentParser
import Dashboard
import FaultlineApp
import FaultlineCore
import Formats
import Logging
import Pipeline
import SQLiteStorage

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The aggregation benchmark (#4): fills a data folder with a realistic volume of reports and sessions through
/// the real stores and the real grouping worker, then measures a full dashboard render and the incremental
/// refresh after new reports. Each step is its own process, so its peak memory is its own.
@main
struct AggregateBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aggregate-bench", abstract: "Measure grouping, rollups and dashboard rendering at volume.",
        subcommands: [Fill.self, RenderFull.self, Refresh.self, Lists.self, Search.self])
}

struct Common: ParsableArguments {
    @Option(help: "Data folder (with --database: the files only, as a node's --blobs).") var data: String
    @Option(help: "Dashboard templates (web/).") var web: String = "web"
    @Option(
        help:
            "A PostgreSQL database (postgres://…) instead of SQLite in the data folder; password from FAULTLINE_DATABASE_PASSWORD."
    )
    var database: String?

    /// The data folder's composition on the engine chosen (SQLite with `normal` durability: the fill is no test of fsync).
    func open() async throws -> Composition {
        let choice: EngineChoice =
            database.map {
                .postgres(url: $0, password: ProcessInfo.processInfo.environment["FAULTLINE_DATABASE_PASSWORD"])
            } ?? .sqlite(durability: .normal)
        let root = try await Composition.open(folder: data, choice: choice)
        print("engine: \(root.engineDescription)")
        return root
    }
}

/// Deterministic pseudo-random numbers (SplitMix64), so every run fills the same data.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A skewed pick in 0..<n: a few values are common, most are rare (like real crash sites).
    mutating func skewed(_ n: Int) -> Int {
        min(n - 1, Int(pow(Double.random(in: 0..<1, using: &self), 3) * Double(n)))
    }
}

enum Measure {
    static func peakRSSMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kb = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return kb / 1024
    }

    static func time<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
        let start = ContinuousClock.now
        let value = try await body()
        let elapsed = ContinuousClock.now - start
        return (value, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    static func fmt(_ v: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", v) }
}

/// Builds report payloads the way an SDK batch arrives: 20 reports per gzip body.
struct ReportFactory {
    var rng: SplitMix
    let issues: Int
    let users: Int
    let releases: [String]
    let now: Date
    let days: Int
    var next = 0

    /// The event id of the `n`th report made (1-based).
    static func eventID(_ n: Int) -> String { String(format: "%032x", UInt64(n) &* 0x9E37_79B9 &+ 1) }

    mutating func batch(count: Int, recentOnly: Bool = false) throws -> (StoredPayload, [PreparedReport]) {
        var parts: [String] = []
        for _ in 0..<count {
            next += 1
            let site = rng.skewed(issues)
            let user = rng.skewed(users)
            let age =
                recentOnly
                ? Double.random(in: 0..<3600, using: &rng) : Double.random(in: 0..<(Double(days) * 86_400), using: &rng)
            let release = releases[
                min(releases.count - 1, Int((1 - age / (Double(days) * 86_400)) * Double(releases.count)))]
            let parts2 = release.split(separator: " ")
            let kind = site % 10 < 3 ? "crash" : "nonfatal"
            let time = Timestamps.formatISO8601(now.addingTimeInterval(-age))
            parts.append(
                """
                {"event_id":"\(Self.eventID(next))","kind":"\(kind)","timestamp":"\(time)",
                 "user_id":"user-\(user)","app":{"version":"\(parts2[0])","build":"\(parts2.count > 1 ? String(parts2[1].dropFirst().dropLast()) : "1")"},
                 "device":{"model":"Phone \(user % 40)","os":"Android","os_version":"\(12 + user % 4)"},
                 "error":{"type":"E\(site % 50)","code":\(site),"message":"failure \(site)"},
                 "threads":[{"crashed":true,"frames":[{"function":"abort"},{"function":"site\(site)()","file":"src/s\(site).c","line":\(site % 300)},
                   {"function":"caller\(site % 97)()","file":"src/c.c","line":9},{"function":"main","file":"src/main.c","line":3}]}],
                 "breadcrumbs":[{"timestamp":"\(time)","category":"nav","message":"opened screen \(site % 13)"}],
                 "custom_keys":{"plan":"\(user % 3 == 0 ? "pro" : "free")","screen":"s\(site % 13)"}}
                """)
        }
        let text = Array(("{\"reports\":[" + parts.joined(separator: ",") + "]}").utf8)
        let decoded = try NativeReports.decode(text, limits: IngestLimits())
        let prepared = decoded.items.compactMap { try? $0.get() }
        let deflater = try StreamingDeflater(level: 1)
        let gz = try deflater.compress(text, finish: true)
        return (StoredPayload(bytes: gz, encoding: .gzip, inflatedSize: text.count), prepared)
    }
}

enum Worker {
    /// Groups every pending report with the real worker; returns how many.
    static func drain(_ root: Composition) async throws -> Int {
        let worker = try root.symbolicationWorker(logger: Logger(label: "bench"))
        var total = 0
        while true {
            let n = try await worker.step(concurrency: 2)
            if n == 0 { return total }
            total += n
        }
    }
}

struct Fill: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option var reports = 1_000_000
    @Option var issues = 5000
    @Option var users = 100_000
    @Option var sessions = 2_000_000
    @Option var days = 90

    func run() async throws {
        let root = try await common.open()
        let project = try await root.projects.create(slug: ProjectSlug("bench")!, rateLimitPerSecond: 1e9).project
        let store = root.ingestStore
        let now = Date()
        let releases = (1...12).map { "1.\($0) (\($0 * 10))" }
        var factory = ReportFactory(
            rng: SplitMix(state: 42), issues: issues, users: users, releases: releases, now: now, days: days)

        let (_, ingestSeconds) = try await Measure.time {
            var done = 0
            while done < reports {
                var writes: [IngestWrite] = []
                for _ in 0..<50 where done < reports {
                    let n = min(20, reports - done)
                    let (payload, prepared) = try factory.batch(count: n)
                    writes.append(
                        .reports(ReportBatch(project: project.id, receivedAt: now, payload: payload, reports: prepared))
                    )
                    done += n
                }
                _ = try await store.commit(writes)
            }
        }
        print(
            "stored \(reports) reports in \(Measure.fmt(ingestSeconds)) s (\(Int(Double(reports) / ingestSeconds)) reports/s, storage only)"
        )

        let (grouped, groupSeconds) = try await Measure.time { try await Worker.drain(root) }
        print(
            "grouped \(grouped) reports in \(Measure.fmt(groupSeconds)) s (\(Int(Double(grouped) / groupSeconds)) reports/s: re-read, symbolication check, fingerprint, issue + rollups)"
        )

        var rng = SplitMix(state: 7)
        let (_, sessionSeconds) = try await Measure.time {
            var done = 0
            while done < sessions {
                var updates: [SessionUpdate] = []
                for _ in 0..<2000 where done < sessions {
                    done += 1
                    let age = Double.random(in: 0..<(Double(days) * 86_400), using: &rng)
                    let release = releases[
                        min(releases.count - 1, Int((1 - age / (Double(days) * 86_400)) * Double(releases.count)))]
                    let roll = rng.next() % 1000
                    let status: SessionStatus = roll < 8 ? .crashed : roll < 10 ? .abnormal : .exited
                    updates.append(
                        SessionUpdate(
                            sessionID: SessionID("s\(done)")!, distinctID: "user-\(rng.skewed(users))",
                            release: release,
                            started: now.addingTimeInterval(-age), status: status, errors: roll % 50 == 0 ? 1 : 0,
                            duration: 60))
                }
                _ = try await store.commit([
                    .sessions(SessionBatch(project: project.id, receivedAt: now, updates: updates))
                ])
            }
        }
        print(
            "stored \(sessions) sessions with their health rollups in \(Measure.fmt(sessionSeconds)) s (\(Int(Double(sessions) / sessionSeconds)) sessions/s)"
        )
        let counts = try await root.insights.issueCounts(project: project.id)
        print("issues: \(counts.values.reduce(0, +)); peak memory \(Measure.fmt(Measure.peakRSSMegabytes(), 0)) MB")
        let size = try await root.databaseBytes()
        print("database: \(size >> 20) MB (\(size / Int64(max(1, reports))) bytes per report, sessions included)")
        try await root.close()
    }
}

struct RenderFull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "render-full")
    @OptionGroup var common: Common

    func run() async throws {
        let root = try await common.open()
        let renderer = try root.siteRenderer(webDirectory: common.web)
        let (result, seconds) = try await Measure.time { try await root.renderCycle(with: renderer, since: nil) }
        print(
            """
            full render: \(result.pages) pages written in \(Measure.fmt(seconds)) s (\(result.issuePages) issue pages rendered, \
            \(result.issuePagesCurrent) current already by their marks); peak memory \(Measure.fmt(Measure.peakRSSMegabytes(), 0)) MB
            """)
        try await root.close()
    }
}

struct Refresh: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option(name: .customLong("new"), help: "New reports to add.") var newReports = 1000
    @Option var issues = 5000
    @Option var users = 100_000
    @Option(help: "Summary-page cycles after the first, timed alone (for a steadier figure, or a profile of them).")
    var summaryRepeats = 0

    func run() async throws {
        let root = try await common.open()
        guard let project = try await root.projects.project(slug: ProjectSlug("bench")!) else {
            throw ValidationError("run fill first")
        }
        let renderer = try root.siteRenderer(webDirectory: common.web)
        let releases = (1...12).map { "1.\($0) (\($0 * 10))" }
        var factory = ReportFactory(
            rng: SplitMix(state: UInt64(Date().timeIntervalSince1970)), issues: issues, users: users,
            releases: releases,
            now: Date(), days: 90, next: 50_000_000 + Int(Date().timeIntervalSince1970) % 1_000_000 * 1000)
        let store = root.ingestStore
        let since = Date()
        var writes: [IngestWrite] = []
        var done = 0
        while done < newReports {
            let n = min(20, newReports - done)
            let (payload, prepared) = try factory.batch(count: n, recentOnly: true)
            writes.append(
                .reports(ReportBatch(project: project.id, receivedAt: Date(), payload: payload, reports: prepared)))
            done += n
        }
        // The site folder is current (render-full, then each refresh converges it): the ledger reads the versions
        // its pages were rendered from in their marks, as a restarted server does.
        let (_, ingestSeconds) = try await Measure.time { _ = try await store.commit(writes) }
        let (grouped, groupSeconds) = try await Measure.time { try await Worker.drain(root) }
        let touched = try await root.insights.issueVersions(project: project.id, changedSince: since)
        print(
            """
            \(newReports) new reports: store \(Measure.fmt(ingestSeconds)) s, group \(grouped) in \(Measure.fmt(groupSeconds)) s; \
            \(touched.count) issues touched
            """)

        // After (this design), on the site folder: 1. a cycle that stops before its first issue page (as when newer
        // data waits): the time until every summary page is current;
        let rendersBefore = root.issuePages.issuePagesRendered
        let (summary, summarySeconds) = try await Measure.time {
            try await root.renderCycle(with: renderer, since: since, stop: { true })
        }
        var repeats: [Double] = []
        for _ in 0..<summaryRepeats {
            repeats.append(
                try await Measure.time { try await root.renderCycle(with: renderer, since: since, stop: { true }) }.1)
        }
        if !repeats.isEmpty {
            let sorted = repeats.sorted()
            print(
                "summary pages again, \(repeats.count) cycles: \(Measure.fmt(sorted[0], 3))–\(Measure.fmt(sorted[sorted.count - 1], 3)) s, median \(Measure.fmt(sorted[sorted.count / 2], 3)) s"
            )
        }
        // 2. the first request of just-touched issue pages (what `SiteFilesMiddleware` does before serving: the
        // version check, the render, reading the file), then a second request of each (the check alone);
        let sample = Array(touched.keys.sorted().prefix(20))
        var first: [Double] = []
        var again: [Double] = []
        for issue in sample {
            for round in 0..<2 {
                let (outcome, seconds) = try await Measure.time { () async throws -> SiteRenderer.IssuePageRefresh in
                    let outcome = try await root.currentIssuePage(with: renderer, slug: project.slug, issue: issue)
                    _ = FileManager.default.contents(
                        atPath: common.data + "/site/" + SitePaths.issue(project.slug, issue))
                    return outcome
                }
                guard outcome == (round == 0 ? .rendered : .current) else {
                    throw ValidationError("issue \(issue): request \(round + 1) answered \(outcome)")
                }
                if round == 0 { first.append(seconds) } else { again.append(seconds) }
            }
        }
        // 3. the background cycle converging the rest of the issue pages (those just served are current).
        let (converge, convergeSeconds) = try await Measure.time {
            try await root.renderCycle(with: renderer, since: since)
        }
        let rendersAfter = root.issuePages.issuePagesRendered - rendersBefore

        // Before (the cycle as it was): the summary pages, then every touched issue page, into a scratch folder (no
        // ledger), measured after the new design so that it runs with the warmer cache.
        let scratch = common.data + "/site-before"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let (oldSummaryPages, oldSummarySeconds) = try await Measure.time {
            try await root.render(with: renderer, since: Date().addingTimeInterval(3600), into: scratch)
        }
        let (oldPages, oldSeconds) = try await Measure.time {
            try await root.render(with: renderer, since: since, into: scratch)
        }

        func median(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
        print(
            """
            before: summary pages (\(oldSummaryPages)) current after \(Measure.fmt(oldSummarySeconds)) s; a touched issue page \
            current when the cycle reaches it, every one after \(Measure.fmt(oldSeconds)) s (\(oldPages) pages)
            after:  summary pages (\(summary.summaryPages)) current after \(Measure.fmt(summarySeconds)) s; a touched issue page \
            served current on its first request in \(Measure.fmt(median(first) * 1000, 1)) ms median, \
            \(Measure.fmt((first.max() ?? 0) * 1000, 1)) ms slowest of \(first.count) (then \(Measure.fmt(median(again) * 1000, 2)) ms \
            to serve it current again); background convergence \(Measure.fmt(convergeSeconds)) s (\(converge.issuePages) issue \
            pages rendered, \(converge.issuePagesCurrent) current already); \(rendersAfter) issue page renders in all \
            for \(touched.count) touched issues
            ratio before/after: summary pages \(Measure.fmt(oldSummarySeconds / max(summarySeconds, 1e-9))), \
            a touched issue page \(Measure.fmt(oldSeconds / max(median(first), 1e-9), 0)) (cycle end vs first request); \
            peak memory \(Measure.fmt(Measure.peakRSSMegabytes(), 0)) MB
            """)
        try await root.close()
    }
}

/// The live issue lists (`GET /{slug}/list`): the time to answer one page (count + page read + render, the work of
/// the controller minus HTTP), for the default list and filtered, sorted and deep pages.
struct Lists: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option(help: "Times each page is answered.") var repeats = 20

    func run() async throws {
        let root = try await common.open()
        guard let project = try await root.projects.project(slug: ProjectSlug("bench")!) else {
            throw ValidationError("run fill first")
        }
        let renderer = try root.siteRenderer(webDirectory: common.web)
        let insights = root.insights
        let total = try await insights.issueCount(matching: IssueQuery(project: project.id))
        let lastPage = max(1, (total + 99) / 100)
        let cases: [(String, [String: String])] = [
            ("default list, page 1", [:]),
            ("open crashes by users", ["status": "open", "kind": "crash", "sort": "users"]),
            ("non-fatal by events, page 3", ["kind": "non-fatal", "sort": "events", "page": "3"]),
            ("regressed", ["status": "regressed"]),
            ("release 1.12 (120) by users", ["release": "1.12 (120)", "sort": "users"]),
            ("default list, last page (\(lastPage))", ["page": "\(lastPage)"]),
        ]
        print("issue lists over \(total) issues (\(repeats) answers each; median and slowest, ms):")
        for (name, parameters) in cases {
            let request = try IssueListRequest(parameters: parameters)
            var times: [Double] = []
            var bytes = 0
            for _ in 0..<repeats {
                let (html, seconds) = try await Measure.time {
                    try await renderer.issueListPage(
                        project: project, request: request, insights: insights, csrfToken: "x", now: Date())
                }
                bytes = html.utf8.count
                times.append(seconds * 1000)
            }
            times.sort()
            print(
                "  \(name): median \(Measure.fmt(times[times.count / 2])) ms, slowest \(Measure.fmt(times.last ?? 0)) ms (\(bytes / 1024) KB)"
            )
        }
        try await root.close()
    }
}

/// Search at volume (issue #12): the latency of a few kinds of query on the filled folder (the index was filled by
/// the worker during `fill`), then the index's share of processing: making a report's entry (pure) and replacing
/// entries in batches as the worker's transaction does.
struct Search: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option(help: "Reports the fill stored (to pick an event id in the middle).") var reports = 1_000_000
    @Option(help: "Runs of each query.") var runs = 7
    @Option(help: "Reports whose entries are made and replaced for the indexing cost.") var reindex = 20_000

    func run() async throws {
        let root = try await common.open()
        guard let project = try await root.projects.project(slug: ProjectSlug("bench")!) else {
            throw ValidationError("run fill first")
        }
        let store = root.searchStore
        let queries: [(String, String)] = [
            ("user id", "user-4242"),
            ("event id", ReportFactory.eventID(reports / 2)),
            ("function (rare)", "site4321()"),
            ("function (common)", "caller17"),
            ("custom key value (1/3 of reports)", "pro"),
            ("error message", "failure 4321"),
            ("release", "1.7 (70)"),
            ("prefix of a common term", "fail"),
            ("no match", "nothing-matches-this"),
        ]
        print("search at \(reports) reports (\(runs) runs each; page 1 of 25 reports, with count and issues):")
        for (kind, text) in queries {
            let parsed = try SearchText.parse(text)
            var times: [Double] = []
            var last: SearchResults?
            for _ in 0..<runs {
                let (results, seconds) = try await Measure.time {
                    try await store.search(parsed, project: project.id, page: 1, pageSize: 25, now: Date())
                }
                times.append(seconds * 1000)
                last = results
            }
            times.sort()
            let (_, deep) = try await Measure.time {
                try await store.search(parsed, project: project.id, page: 40, pageSize: 25, now: Date())
            }
            let count = last.map { $0.reportCountIsLowerBound ? "> \($0.reportCount)" : "\($0.reportCount)" } ?? "?"
            print(
                """
                  \(kind) "\(text)": \(count) reports, \(last?.issues.count ?? 0) issues; median \(Measure.fmt(times[times.count / 2], 1)) ms, \
                max \(Measure.fmt(times.last ?? 0, 1)) ms; page 40: \(Measure.fmt(deep * 1000, 1)) ms
                """)
        }

        // The index's share of processing: entries made from `reindex` reports and written over existing reports'
        // entries, 200 per transaction (the worker's batch). SQLite's store only: PostgreSQL writes its entries inside
        // the worker's set-based batch (tools/bench/stores measures that whole).
        guard let database = root.sqliteDatabase else {
            print(
                "database: \(try await root.databaseBytes() >> 20) MB; peak memory \(Measure.fmt(Measure.peakRSSMegabytes(), 0)) MB"
            )
            try await root.close()
            return
        }
        let indexStore = SQLiteSearchStore(database: database)
        var factory = ReportFactory(
            rng: SplitMix(state: 99), issues: 5000, users: 100_000, releases: (1...12).map { "1.\($0) (\($0 * 10))" },
            now: Date(),
            days: 90, next: 90_000_000)
        var made: [Report] = []
        while made.count < reindex {
            let (_, prepared) = try factory.batch(count: 20)
            made += prepared.map(\.report)
        }
        let (documents, makeSeconds) = try await Measure.time {
            made.map { report in
                SearchDocument.make(report, symbols: nil, grouping: Grouping.group(report, symbols: nil))
            }
        }
        var ids: [Int64] = []
        while ids.count < reindex {
            let page = try await root.reader.reports(
                matching: ReportQuery(project: project.id, before: ids.last, limit: 500))
            if page.isEmpty { break }
            ids += page.map(\.cursor).prefix(reindex - ids.count)
        }
        let (_, writeSeconds) = try await Measure.time {
            var index = 0
            while index < ids.count {
                let end = min(ids.count, index + 200)
                try await indexStore.replace(
                    (index..<end).map { (reportID: ids[$0], project: project.id, document: documents[$0]) })
                index = end
            }
        }
        let perReport = (makeSeconds + writeSeconds) / Double(max(1, ids.count)) * 1e6
        print(
            """
            indexing \(ids.count) reports: make entries \(Measure.fmt(makeSeconds, 2)) s, replace in batches of 200 \
            \(Measure.fmt(writeSeconds, 2)) s; \(Measure.fmt(perReport, 0)) µs per report
            """)
        let size = try await root.databaseBytes()
        print("database: \(size >> 20) MB; peak memory \(Measure.fmt(Measure.peakRSSMegabytes(), 0)) MB")
        try await root.close()
    }
}
