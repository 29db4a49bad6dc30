import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// The labeled corpus against the real server: six Swift crash sites built `-Onone`, `-O` and `-O -wmo` as three
/// releases, each crash run twice (ASLR differs), debug files uploaded before, after and split across the
/// crashes; and C/C++ crashes. Every crash site must be exactly one issue (purity and completeness 1.0), titled
/// by its cause, blamed on the crashing function by its simplified name with the right file and line.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct CrashCorpusEndToEndTests {
    struct Posted {
        var site: String
        var eventID: String
    }

    @Test func everySwiftCrashSiteIsExactlyOneIssueAcrossBuildsAndArrivalOrders() async throws {
        let scratch = try TempFolder("corpus")
        let builds = [
            ("onone", ["-Onone"]), ("o", ["-O"]), ("wmo", ["-O", "-wmo"]),
        ].map { name, flags in (name, flags) }
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("corpus", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let read = [("Authorization", "Bearer \(project.upload)")]
        var posted: [Posted] = []

        func upload(_ path: String, _ build: CrashCorpus.Build) async throws {
            let answer = try await http.send(
                .PUT, server.baseURL + "/api/v1/debug-files/\(build.buildID)", headers: read,
                body: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(
                answer.status == 201 || answer.status == 200,
                "\(path): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        func post(_ build: CrashCorpus.Build, run: Int) async throws {
            for site in CrashCorpus.swiftSites {
                let crash = try CrashCorpus.crashSwift(build, site: site.name, in: scratch)
                var url = URLComponents(string: server.baseURL + "/api/v1/crashes/swift")!
                url.queryItems = [
                    URLQueryItem(name: "release", value: "1.0-\(build.name)"),
                    URLQueryItem(name: "install_id", value: "i-\(run)"),
                ]
                if !crash.stderr.isEmpty { url.queryItems?.append(URLQueryItem(name: "message", value: crash.stderr)) }
                let answer = try await http.send(
                    .POST, url.string!, headers: [("Authorization", "Bearer \(project.ingest)")],
                    body: Array(crash.file))
                #expect(answer.status == 202, "\(String(decoding: answer.body, as: UTF8.self))")
                let id = try #require((answer.json["accepted"] as? [String])?.first)
                posted.append(Posted(site: site.name, eventID: id))
            }
        }
        func settle() async throws {
            for p in posted { _ = try await waitForReport(http, server.baseURL, p.eventID, read) { $0 != "pending" } }
        }

        for (name, flags) in builds {
            let build = try CrashCorpus.buildSwift(name, flags: flags, in: scratch)
            switch name {
            case "onone":
                // Symbols first, crashes after.
                try await upload(build.stripped, build)
                try await upload(build.debugFile, build)
                try await post(build, run: 1)
                try await post(build, run: 2)
            case "o":
                // Crashes first (grouped by module+offset meanwhile), symbols after: the stripped executable, the
                // worker runs, then the debug file.
                try await post(build, run: 1)
                try await post(build, run: 2)
                try await settle()
                try await upload(build.stripped, build)
                try await settle()
                try await upload(build.debugFile, build)
            default:
                // Split: the executable, some crashes, the debug file, more crashes.
                try await upload(build.stripped, build)
                try await post(build, run: 1)
                try await settle()
                try await upload(build.debugFile, build)
                try await post(build, run: 2)
            }
        }

        // Every report ends grouped (late symbols land, whatever the order: the culprits below prove DWARF).
        var issueOf: [String: Int] = [:]
        for p in posted {
            issueOf[p.eventID] = try await waitForIssue(http, server.baseURL, p.eventID, read)
        }
        // Purity and completeness: the map site → issue is one-to-one.
        let bySite = Dictionary(grouping: posted, by: \.site).mapValues { Set($0.compactMap { issueOf[$0.eventID] }) }
        for site in CrashCorpus.swiftSites {
            #expect(bySite[site.name]?.count == 1, "\(site.name) is split over issues \(bySite[site.name] ?? [])")
        }
        let issueSets = CrashCorpus.swiftSites.compactMap { bySite[$0.name]?.first }
        #expect(Set(issueSets).count == CrashCorpus.swiftSites.count, "crash sites merged: \(bySite)")

        // Titles name the cause; culprits are the function's simplified name with its file and line.
        let listed = try await http.send(.GET, server.baseURL + "/api/v1/issues?limit=100", headers: read)
        let issues = listed.json["issues"] as? [[String: Any]] ?? []
        #expect(issues.count == CrashCorpus.swiftSites.count, "\(issues.map { $0["title"] ?? "" })")
        for site in CrashCorpus.swiftSites {
            guard let id = bySite[site.name]?.first, let issue = issues.first(where: { ($0["id"] as? Int) == id })
            else {
                Issue.record("no issue listed for \(site.name)")
                continue
            }
            #expect(issue["title"] as? String == site.title, "\(site.name)")
            #expect(
                issue["culprit"] as? String
                    == "\(site.function) (main.swift:\(site.line(in: CrashCorpus.swiftSource)))", "\(site.name)")
            #expect(issue["events"] as? Int == 6, "\(site.name): 3 builds × 2 runs")
        }
        let missing = try await http.send(.GET, server.baseURL + "/api/v1/missing-debug-files", headers: read)
        let stillMissing = (missing.json["missing"] as? [[String: Any]] ?? []).compactMap { $0["module"] as? String }
        #expect(!stillMissing.contains("app"), "the app's debug files all arrived: \(stillMissing)")
    }

    @Test func cAndCppCrashesAreTitledByTheirCauseAndBlamedOnTheirFunction() async throws {
        let scratch = try TempFolder("native-corpus")
        let build = try CrashCorpus.buildNative(in: scratch)
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("native", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let read = [("Authorization", "Bearer \(project.upload)")]
        let uploaded = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(build.buildID)", headers: read,
            body: Array(try Data(contentsOf: URL(fileURLWithPath: build.debugFile))))
        #expect(uploaded.status == 201)
        let signals = [
            "segv": ("SIGSEGV", "Segmentation fault"), "abort": ("SIGABRT", "Aborted"), "throw": ("SIGABRT", "Aborted"),
        ]
        var ids: [String: [String]] = [:]
        for run in 1...2 {
            for site in CrashCorpus.nativeSites {
                let report = try CrashCorpus.crashNative(
                    build, site: site.name, signal: signals[site.name]!, in: scratch, release: "3.\(run)")
                let answer = try await http.send(
                    .POST, server.baseURL + "/api/v1/reports", headers: [("Authorization", "Bearer \(project.ingest)")],
                    body: Array(try JSONSerialization.data(withJSONObject: report)))
                #expect(answer.status == 202, "\(String(decoding: answer.body, as: UTF8.self))")
                ids[site.name, default: []] += (answer.json["accepted"] as? [String]) ?? []
            }
        }
        var issueOf: [String: Set<Int>] = [:]
        for (site, events) in ids {
            for id in events {
                issueOf[site, default: []].insert(try await waitForIssue(http, server.baseURL, id, read))
            }
        }
        let issues =
            (try await http.send(.GET, server.baseURL + "/api/v1/issues?limit=100", headers: read)).json["issues"]
            as? [[String: Any]] ?? []
        #expect(Set(issueOf.values.compactMap(\.first)).count == CrashCorpus.nativeSites.count)
        for site in CrashCorpus.nativeSites {
            #expect(issueOf[site.name]?.count == 1, "\(site.name): \(issueOf[site.name] ?? [])")
            guard let id = issueOf[site.name]?.first, let issue = issues.first(where: { ($0["id"] as? Int) == id })
            else {
                Issue.record("no issue for \(site.name)")
                continue
            }
            #expect(issue["title"] as? String == site.title, "\(site.name)")
            #expect(
                issue["culprit"] as? String
                    == "\(site.function) (native.cpp:\(site.line(in: CrashCorpus.nativeSource)))", "\(site.name)")
        }
    }

    /// Polls a report until its symbolication state satisfies `done`.
    func waitForReport(
        _ http: HTTP, _ base: String, _ id: String, _ headers: [(String, String)], _ done: (String) -> Bool
    ) async throws
        -> [String: Any]
    {
        let deadline = ContinuousClock.now + .seconds(60) * waitMargin
        while true {
            let answer = try await http.send(.GET, base + "/api/v1/reports/\(id)", headers: headers)
            let state = (answer.json["symbolication"] as? [String: Any])?["state"] as? String ?? "pending"
            if done(state) || ContinuousClock.now > deadline { return answer.json }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The report's issue once its processing settled (not pending, grouped).
    func waitForIssue(_ http: HTTP, _ base: String, _ id: String, _ headers: [(String, String)]) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(60) * waitMargin
        while true {
            let answer = try await http.send(.GET, base + "/api/v1/reports/\(id)", headers: headers)
            let state = (answer.json["symbolication"] as? [String: Any])?["state"] as? String ?? "pending"
            if state != "pending", let issue = answer.json["issue_id"] as? Int { return issue }
            if ContinuousClock.now > deadline {
                throw CommandError(description: "report \(id) never grouped: \(answer.json)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
