import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// The real SDK in the real fixture program (no launcher) against the real `faultline` server.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SDKEndToEndTests {
    /// One app on one machine: a state folder, a crash folder the Swift runtime writes to, and a project.
    struct App {
        let server: ServerProcess
        let project: (ingest: String, upload: String, id: Int)
        let folder: TempFolder
        var state: String { folder.path + "/state" }
        var crashes: String { folder.path + "/crashes" }
        var http: HTTP { HTTP(client: HTTPClient.shared) }

        static func start(_ slug: String) async throws -> App {
            let data = ServerProcess.newFolder()
            let project = try await ServerProcess.createProject(slug, in: data)
            let server = try await ServerProcess(folder: data)
            let folder = try TempFolder("sdk-e2e")
            try FileManager.default.createDirectory(atPath: folder.path + "/crashes", withIntermediateDirectories: true)
            return App(server: server, project: project, folder: folder)
        }

        var environment: [String: String] {
            [
                "FAULTLINE_DSN": "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)",
                "FAULTLINE_RELEASE": "3.1.0", "FAULTLINE_ENVIRONMENT": "test", "FAULTLINE_STATE_DIR": state,
                "FAULTLINE_RUN_STATE": "",
                "SWIFT_BACKTRACE":
                    "enable=yes,interactive=no,format=json,symbolicate=off,threads=all,images=all,output-to=\(crashes)",
            ]
        }

        /// Runs the fixture with `steps` to its end.
        @discardableResult
        func run(_ steps: [String], environment extra: [String: String] = [:]) throws -> Command.Result {
            try Command.run(SDKBinaries.fixture, steps, environment: environment.merging(extra) { $1 })
        }

        func get(_ path: String) async throws -> HTTP.Answer {
            try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(project.upload)")])
        }

        func reports(kind: String) async throws -> [[String: Any]] {
            try await get("/api/v1/reports?limit=500&kind=\(kind)").json["reports"] as? [[String: Any]] ?? []
        }

        func report(_ id: String) async throws -> [String: Any] {
            try await get("/api/v1/reports/\(id)").json
        }

        /// Session counts of today and yesterday added up, so that a test running across midnight sees all of its
        /// sessions (each is counted on the day it started).
        func sessionCounts() async throws -> [String: Any] {
            let days = try await get("/api/v1/health?days=2").json["days"] as? [[String: Any]] ?? []
            var sums: [String: Any] = [:]
            for key in ["sessions", "crashed_sessions", "errored_sessions"] {
                sums[key] = days.reduce(0) { $0 + (($1["health"] as? [String: Any])?[key] as? Int ?? 0) }
            }
            return sums
        }

        func cleanUp() { server.cleanUp() }
    }

    /// Polls `condition` for up to 30 s × `waitMargin` (the server groups and stores in the background).
    func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30) * waitMargin
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    func files(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }
    }

    @Test func aCrashIsSentAtTheNextStartExactlyOnceWithItsContext() async throws {
        let app = try await App.start("crash-next-start")
        defer { app.cleanUp() }

        let crashed = try app.run([
            "start", "user:buyer-7", "log:cart opened", "logs:3", "key:cart=three items", "ikey:items=3", "crash:index",
        ])
        #expect(crashed.status != 0)
        let crashFiles = files(app.crashes)
        #expect(crashFiles.count == 1, "\(crashed.err)")
        #expect(crashFiles.first?.hasPrefix("SDKFixture-") == true)
        #expect(try await app.reports(kind: "crash").isEmpty)  // the program died: nothing sent yet

        let next = try app.run(["start", "did-crash", "flush:20"])
        #expect(next.out.contains("did-crash=true"), "\(next.out)\(next.err)")
        #expect(next.out.contains("flushed=true"))
        #expect(try await eventually { try await app.reports(kind: "crash").count == 1 })
        let summary = try #require(try await app.reports(kind: "crash").first)
        let report = try await app.report(try #require(summary["event_id"] as? String))
        #expect(report["user_id"] as? String == "buyer-7")
        #expect(report["environment"] as? String == "test")
        #expect(report["release"] as? String == "3.1.0")
        let crumbs = (report["breadcrumbs"] as? [[String: Any]])?.compactMap { $0["message"] as? String }
        #expect(crumbs == ["cart opened", "crumb 0", "crumb 1", "crumb 2"])
        let keys = report["custom_keys"] as? [String: Any]
        #expect(keys?["cart"] as? String == "three items")
        #expect(keys?["items"] as? Int == 3)
        #expect((report["threads"] as? [[String: Any]])?.contains { $0["crashed"] as? Bool == true } == true)
        #expect((report["session_id"] as? String)?.isEmpty == false)
        // The crash file and the run's state file were consumed only once the report was queued and sent.
        #expect(files(app.crashes).isEmpty)

        // Its session ended crashed; the second run's ended exited.
        #expect(try await eventually { try await app.sessionCounts()["crashed_sessions"] as? Int == 1 })
        #expect(try await eventually { try await app.sessionCounts()["sessions"] as? Int == 2 })

        // A third start sends nothing new and knows the last run did not crash.
        let third = try app.run(["start", "did-crash", "flush:20"])
        #expect(third.out.contains("did-crash=false"))
        #expect(third.out.contains("flushed=true"))
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await app.reports(kind: "crash").count == 1)
        #expect(try await eventually { try await app.sessionCounts()["sessions"] as? Int == 3 })
        #expect(try await app.sessionCounts()["crashed_sessions"] as? Int == 1)
        #expect(files(app.state + "/runs").isEmpty)
    }

    @Test func nonFatalsCarryTheCallingThreadsStackSymbolicated() async throws {
        let app = try await App.start("nonfatal-stack")
        defer { app.cleanUp() }
        // The fixture's debug information goes up first, as a release pipeline would do it.
        let tree = try TempFolder("sdk-symbols")
        try FileManager.default.copyItem(atPath: SDKBinaries.fixture, toPath: tree.path + "/SDKFixture")
        let upload = try Command.run(
            SDKBinaries.symupload, [tree.path],
            environment: ["FAULTLINE_URL": app.server.baseURL, "FAULTLINE_UPLOAD_TOKEN": app.project.upload])
        #expect(upload.status == 0, "\(upload.out)\(upload.err)")

        let run = try app.run(["start", "key:screen=checkout", "nonfatal-inside:1", "flush:20"])
        #expect(run.out.contains("flushed=true"), "\(run.out)\(run.err)")
        #expect(try await eventually { try await app.reports(kind: "nonfatal").count == 1 })
        let id = try #require(try await app.reports(kind: "nonfatal").first?["event_id"] as? String)
        let report = try await app.report(id)
        let error = report["error"] as? [String: Any]
        #expect(error?["type"] as? String == "SDKFixture.FixtureError")
        #expect(error?["code"] as? String == "0")
        #expect(error?["message"] as? String == "checkoutFailed(code: 0)")
        let keys = report["custom_keys"] as? [String: Any]
        #expect(keys?["screen"] as? String == "checkout")
        #expect(keys?["attempt"] as? Int == 0)
        // The stack is the calling thread's: it starts in the function that called record, not in the SDK, and
        // the server names its frames from the uploaded debug file (`symbolication.threads[thread][frame]`).
        func functions() async throws -> [String] {
            let symbolication = try await app.report(id)["symbolication"] as? [String: Any]
            let frames = (symbolication?["threads"] as? [[[String: Any]]])?.first ?? []
            return frames.compactMap { ($0["frames"] as? [[String: Any]])?.first?["function_short"] as? String }
        }
        let symbolicated = try await eventually { try await functions().first == "recordCheckout(step:)" }
        let names = try await functions()
        #expect(symbolicated, "\(names)")
        #expect(names.prefix(2) == ["recordCheckout(step:)", "runSteps()"])
        #expect(!names.contains { $0.contains("Faultline") || $0.contains("StackCapture") })
        // The session counts the handled error.
        #expect(try await eventually { try await app.sessionCounts()["errored_sessions"] as? Int == 1 })
    }

    @Test func onlyTheLastEightNonFatalsAndSixtyFourKeysAreKept() async throws {
        let app = try await App.start("limits")
        defer { app.cleanUp() }
        // Held while collection is off, so the queue's bound decides what is left.
        let held = try app.run(["start", "collection:off", "keys:70", "nonfatal:12", "unsent"])
        #expect(held.out.contains("unsent=true"), "\(held.out)\(held.err)")
        let sent = try app.run(["start", "collection:on", "flush:20"])
        #expect(sent.out.contains("flushed=true"), "\(sent.out)\(sent.err)")
        #expect(try await eventually { try await app.reports(kind: "nonfatal").count == 8 })
        try await Task.sleep(for: .milliseconds(500))
        let summaries = try await app.reports(kind: "nonfatal")
        #expect(summaries.count == 8)
        var attempts: [Int] = []
        for summary in summaries {
            let report = try await app.report(try #require(summary["event_id"] as? String))
            let keys = try #require(report["custom_keys"] as? [String: Any])
            #expect(keys.count == 64)
            attempts.append(keys["attempt"] as? Int ?? -1)
            // Keys set after the 64th were dropped on the device: k64…k69 never appear.
            #expect(!keys.keys.contains { ["k64", "k65", "k66", "k67", "k68", "k69"].contains($0) })
            #expect(keys["k01"] as? String == "v01")
            #expect(keys["k63"] as? String == "v63")
        }
        #expect(attempts.sorted() == Array(4..<12))  // the oldest four went first
    }

    @Test func optOutSendsNothingUntilSendUnsentReports() async throws {
        let app = try await App.start("opt-out")
        defer { app.cleanUp() }
        let off = try app.run(["start", "collection:off", "flush:20"])
        #expect(off.out.contains("flushed="), "\(off.out)\(off.err)")
        try await Task.sleep(for: .milliseconds(300))
        let sessionsBefore = try await app.sessionCounts()["sessions"] as? Int ?? 0

        let held = try app.run(["start", "user:private", "nonfatal:2", "unsent"])
        #expect(held.out.contains("unsent=true"), "\(held.out)\(held.err)")
        try await Task.sleep(for: .seconds(1))
        #expect(try await app.reports(kind: "nonfatal").isEmpty)
        #expect(try await app.sessionCounts()["sessions"] as? Int ?? 0 == sessionsBefore)  // not even a session

        let deleted = try app.run(["start", "unsent", "delete-unsent", "unsent"])
        #expect(deleted.out.contains("unsent=true\nunsent=false"), "\(deleted.out)")
        _ = try app.run(["start", "nonfatal:1"])

        // The user agrees: what is held goes, while collection stays off.
        let agreed = try app.run(["start", "unsent", "send-unsent", "flush:20", "unsent"])
        #expect(agreed.out.contains("unsent=true"), "\(agreed.out)\(agreed.err)")
        #expect(agreed.out.contains("flushed=true"))
        #expect(agreed.out.hasSuffix("unsent=false\n"))
        #expect(try await eventually { try await app.reports(kind: "nonfatal").count == 1 })
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await app.reports(kind: "nonfatal").count == 1)  // the deleted two never went
    }
}
