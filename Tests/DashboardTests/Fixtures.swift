import Dashboard
import FaultlineCore
import Foundation

/// Test data: one project full of hostile strings, one without any sessions.
enum Fixtures {
    static let script = "<script>alert(1)</script>"
    static let breakout = "\"><img src=x onerror=alert(1)>"
    static let hostile = "\(script)\(breakout) & co"

    /// 2026-11-22 12:00:00 UTC.
    static let today = DayNumber(rawValue: 20_779)
    static let now = today.start.addingTimeInterval(12 * 3600)

    static let demoID = ProjectID(1)
    static let emptyID = ProjectID(2)
    static let demo = Project(id: demoID, slug: ProjectSlug("demo")!, createdAt: now, rateLimitPerSecond: 10)
    static let empty = Project(
        id: emptyID, slug: ProjectSlug("empty")!, createdAt: now, rateLimitPerSecond: 10,
        privacy: PrivacySettings(scrubbing: false, safeFields: ["order_<id>", "plan"], keepIPAddresses: true),
        minidumps: .retentionPeriod)

    static let release = "1.0 \(hostile)"
    static let oldRelease = "0.9"

    /// The repository's `web` folder, found from this file's path.
    static var webDirectory: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("web").path
    }

    /// 625 sessions, 3 crashed; 200 users, 2 crashed.
    static let todayHealth = ReleaseHealth(sessions: 625, crashedSessions: 3, users: 200, crashedUsers: 2)

    static func summary(_ id: Int64, title: String, status: IssueStatus = .open) -> IssueSummary {
        IssueSummary(
            id: IssueID(id), project: demoID, kind: .crash,
            fingerprint: Fingerprint(version: 1, hash: "0123456789abcdef"),
            title: title, culprit: "App.\(hostile)() (Process.swift:42)", status: status,
            signals: IssueSignals(fresh: true, regressed: false, repetitive: true, early: false),
            firstSeen: now.addingTimeInterval(-86_400 * 3), lastSeen: now.addingTimeInterval(-600),
            firstRelease: release,
            lastRelease: release, events: 40, users: 12)
    }

    static let sample = ReportSummary(
        cursor: 7, project: demoID, eventID: EventID("7077e450fa6f4594850bfed9428d1d98")!, kind: .crash,
        timestamp: now.addingTimeInterval(-600), receivedAt: now.addingTimeInterval(-599), release: release,
        environment: hostile, userKey: "user \(hostile)", errorType: nil, errorMessage: nil, trimmed: TrimCounts())

    static func detail(_ summary: IssueSummary) -> IssueDetail {
        IssueDetail(
            summary: summary,
            grouping: GroupingResult(
                fingerprint: summary.fingerprint, source: .stack, components: ["App.\(hostile)()", "main"],
                title: summary.title,
                culprit: summary.culprit),
            releases: [
                IssueReleaseRow(
                    release: release, events: 40, users: 12, firstSeen: summary.firstSeen, lastSeen: summary.lastSeen)
            ],
            days: [IssueDay(day: today, events: 5, users: 3), IssueDay(day: today.adding(-2), events: 35, users: 11)],
            breakdowns: [
                "device": [BreakdownEntry(value: "Phone \(hostile)", events: 30)],
                "os": [BreakdownEntry(value: "Linux 6.1", events: 40)],
                "user": [BreakdownEntry(value: "user \(hostile)", events: 2)],
            ],
            repeatUsers: 1, samples: [sample])
    }

    static let appModule = LoadedModule(
        name: "/opt/app/App", buildID: BuildID("aabbccdd"), baseAddress: 0x1000, size: 0x10000)
    static let libModule = LoadedModule(
        name: "/opt/app/libfoo.so", buildID: BuildID("11223344"), baseAddress: 0x100000, size: 0x10000)

    /// A report whose crashed thread is the second one, with an inline chain, a frame without a debug file,
    /// hostile breadcrumbs, custom keys and device.
    static let report = Report(
        eventID: sample.eventID, kind: .crash, timestamp: sample.timestamp, userID: "user \(hostile)",
        installID: "install-1",
        environment: hostile, app: AppInfo(id: "com.example", version: "1.0", build: hostile),
        device: DeviceInfo(
            model: "Phone \(hostile)", os: "Linux", osVersion: "6.1", arch: "x86_64", memoryBytes: 8 << 30),
        error: ErrorInfo(type: "Fatal \(hostile)", message: "message \(hostile)"),
        threads: [
            ThreadInfo(
                name: "worker \(hostile)", crashed: false,
                frames: [Frame(function: "Worker.run()", file: "Worker.swift", line: 7)]),
            ThreadInfo(
                name: "main", crashed: true,
                frames: [
                    Frame(address: 0x1234, instructionKind: .programCounter),
                    Frame(address: 0x100200, instructionKind: .returnAddress),
                ]),
        ],
        modules: [appModule, libModule],
        breadcrumbs: [
            Breadcrumb(
                timestamp: now.addingTimeInterval(-700), category: "ui \(hostile)", level: "info",
                message: "tap \(hostile)",
                data: ["screen \(hostile)": "value \(hostile)"])
        ],
        customKeys: [(key: "key \(hostile)", value: .string("value \(hostile)")), (key: "count", value: .number(3))])

    static let symbols = SymbolicatedReport(
        state: .partial,
        threads: [
            [
                SymbolicatedFrameSlot(
                    frames: [ResolvedFrame(function: "Worker.run()", file: "Worker.swift", line: 7)], buildID: nil,
                    status: "client")
            ],
            [
                SymbolicatedFrameSlot(
                    frames: [
                        ResolvedFrame(
                            function: "Swift runtime failure: Index out of range", file: nil, line: nil, inlined: true),
                        ResolvedFrame(
                            function: "App.\(hostile)()", file: "/src/App/Process.swift", line: 42, inlined: true),
                        // The full demangled form, as the symbolicator stores it.
                        ResolvedFrame(
                            function: "static main.App.main(arguments: [Swift.String]) async throws -> ()",
                            file: "/src/App/Main.swift", line: 9),
                    ],
                    buildID: "aabbccdd", status: "dwarf", offset: 0x234),
                SymbolicatedFrameSlot(frames: [], buildID: "11223344", status: "missing_debug_file", offset: 0x1ff),
            ],
        ],
        missing: [MissingModule(buildID: "11223344", module: "libfoo.so")])

    static func daily(_ days: ClosedRange<Int>, _ health: ReleaseHealth) -> [DailyHealth] {
        days.map { DailyHealth(day: today.adding(-$0), health: health) }
    }

    /// The full data set of the `demo` project: issue 1 (hostile title), issue 2 (`&` title), issue 3 (closed).
    static func insights() -> FakeInsights {
        let issue1 = summary(1, title: "Crash \(hostile)")
        let issue2 = summary(2, title: "Tom & Jerry")
        let issue3 = summary(3, title: "Old crash", status: .closed)
        // Today and days 1…4 ago have sessions; days 5…9 ago have none (a gap); 10…40 ago have sessions.
        var all =
            daily(0...0, todayHealth)
            + daily(1...4, ReleaseHealth(sessions: 1000, crashedSessions: 10, users: 300, crashedUsers: 5))
        all += daily(10...40, ReleaseHealth(sessions: 500, crashedSessions: 1, users: 100, crashedUsers: 1))
        let releaseRow = ReleaseRow(
            release: release, firstSeen: now.addingTimeInterval(-86_400 * 5), lastSeen: now,
            health: ReleaseHealth(sessions: 4625, crashedSessions: 43, users: 500, crashedUsers: 22), adoption: 0.25,
            recentSessions: 1000, newIssues: 2)
        let oldRow = ReleaseRow(
            release: oldRelease, firstSeen: now.addingTimeInterval(-86_400 * 60),
            lastSeen: now.addingTimeInterval(-86_400 * 10),
            health: ReleaseHealth(), adoption: 0, recentSessions: 0, newIssues: 1)
        let tops = [TopIssue(issue: issue1, users: 9, events: 30), TopIssue(issue: issue2, users: 2, events: 3)]
        var demoData = FakeInsights.ProjectData()
        demoData.health = [
            nil: all,
            release: daily(0...4, ReleaseHealth(sessions: 900, crashedSessions: 9, users: 250, crashedUsers: 4)),
        ]
        demoData.releases = [releaseRow, oldRow]
        // The windows before: issue 1 grew from 3 users the day before and shrank from 12 the week before;
        // issue 2 is new today and as many users as the week before.
        let tops24 = [
            TopIssue(issue: issue1, users: 9, events: 30, previous: .init(users: 3, events: 4)),
            TopIssue(issue: issue2, users: 2, events: 3, previous: .init(users: 0, events: 0)),
        ]
        let tops7 = [
            TopIssue(issue: issue1, users: 9, events: 30, previous: .init(users: 12, events: 40)),
            TopIssue(issue: issue2, users: 2, events: 3, previous: .init(users: 2, events: 5)),
        ]
        demoData.top = [
            .last24Hours: tops24, .last7Days: tops7, .release(release): tops,
            .release(oldRelease): [TopIssue(issue: issue3, users: 1, events: 1)],
        ]
        demoData.issues = [issue1, issue2]
        demoData.details = [issue1.id: detail(issue1), issue2.id: detail(issue2), issue3.id: detail(issue3)]
        demoData.changed = [issue2.id]
        demoData.alerts = [
            Alert(
                id: 1, project: demoID, kind: .velocity, issue: issue1.id, release: release,
                title: "Trending \(hostile)",
                reason: [
                    "issue_sessions": 30, "release_sessions": 1000, "share_percent": 3, "threshold_percent": 1,
                    "issue_users": 28, "min_users": 25, "release_users": 300, "window_minutes": 30, "\(hostile)": 1.5,
                ],
                createdAt: now.addingTimeInterval(-3600)),
            Alert(
                id: 2, project: demoID, kind: .newIssue, issue: IssueID(99), release: nil, title: "New issue elsewhere",
                reason: [:],
                createdAt: now.addingTimeInterval(-7200)),
        ]
        demoData.counts = [.open: 2, .closed: 1]
        return FakeInsights(projects: [demoID: demoData, emptyID: FakeInsights.ProjectData()])
    }

    static func sources(insights: FakeInsights = insights()) -> DashboardSources {
        DashboardSources(
            projects: { [empty, demo] }, insights: insights,
            missingDebugFiles: { project in
                project == demoID
                    ? [
                        MissingDebugFileSummary(
                            buildID: BuildID("11223344")!, module: "libfoo.so \(hostile)", reports: 4,
                            releases: [release]),
                        MissingDebugFileSummary(
                            buildID: BuildID("55667788")!, module: "app", reports: 2, releases: [release],
                            has: [.executable]),
                    ]
                    : []
            },
            event: { sample in sample.eventID == Self.sample.eventID ? (report, symbols) : nil })
    }

    /// Renders the whole site (or an incremental part of it) and returns what was written.
    static func render(
        since: Date? = nil, insights: FakeInsights = insights(), limits: SiteRenderer.Limits = SiteRenderer.Limits()
    ) async throws -> (pages: [String: String], count: Int) {
        let renderer = try SiteRenderer(webDirectory: webDirectory, limits: limits)
        let store = PageStore()
        let count = try await renderer.render(sources: sources(insights: insights), now: now, since: since) {
            path, html in
            await store.put(path, html)
        }
        return (await store.pages, count)
    }
}
