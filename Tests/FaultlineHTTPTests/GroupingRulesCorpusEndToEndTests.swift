import AsyncHTTPClient
import FaultlineCore
import Foundation
import TestSupport
import Testing

/// Issue #36's "the dry run equals the applied result, issue for issue", on real events through the real worker: C/C++
/// crashes unwound by elfutils and symbolicated from their uploaded debug file, Swift crashes under the Swift
/// runtime's backtracer, and Sentry events, all grouped by the server. The rules merge, split and leave issues alone
/// across the three; after they are applied and the regroup is done, every issue the dry run announced holds the
/// events, users and example events it said, the untouched issues are as they were, and no event is lost.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct GroupingRulesCorpusEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// Merges the native abort and throw, and two Swift sites by their symbolicated in-app functions; splits the native
    /// segfault and the Sentry RuntimeError by release. The other Swift sites and the Sentry ValueError match nothing.
    static let rules = """
        error.type:SIGABRT -> native-stop
        error.type:"std::runtime_error" -> native-stop
        function:"Inventory.*" -> swift-data
        function:"Session.*" -> swift-data
        error.type:SIGSEGV release:3.2 -> segv {{ release }}
        error.type:RuntimeError -> runtime {{ release }}

        """

    /// A Sentry event (envelope) of `type` thrown in `function`, in `release`, for `user`.
    static func sentry(_ n: Int, type: String, function: String, release: String, user: String) -> [UInt8] {
        let now = ISO8601DateFormatter().string(from: Date())
        let eventID = String(format: "%032x", 0x5e00 + n)
        let item =
            #"{"event_id":"\#(eventID)","timestamp":"\#(now)","platform":"python","level":"error","release":"\#(release)","user":{"id":"\#(user)"},"exception":{"values":[{"type":"\#(type)","value":"corpus \#(n)","stacktrace":{"frames":[{"function":"main","module":"app","lineno":1,"in_app":true},{"function":"\#(function)","module":"app","lineno":7,"in_app":true}]}}]}}"#
        return Array(
            (#"{"event_id":"\#(eventID)"}"# + "\n" + #"{"type":"event","length":\#(item.utf8.count)}"# + "\n" + item
                + "\n").utf8)
    }

    @Test func theRegroupEndsWithTheIssuesTheDryRunAnnounced() async throws {
        let scratch = try TempFolder("grouping-corpus")
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let read = [("Authorization", "Bearer \(shop.upload)")]
        let ingest = [("Authorization", "Bearer \(shop.ingest)")]
        var events: [String] = []
        func accepted(_ answer: HTTP.Answer) {
            #expect(answer.status == 202, "\(String(decoding: answer.body, as: UTF8.self))")
            events += answer.json["accepted"] as? [String] ?? []
        }

        // Given C/C++ crashes of three sites in releases 3.1 and 3.2, symbolicated from their debug file
        let native = try CrashCorpus.buildNative(in: scratch)
        let uploaded = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(native.buildID)", headers: read,
            body: Array(try Data(contentsOf: URL(fileURLWithPath: native.debugFile))))
        #expect(uploaded.status == 201)
        let signals = [
            "segv": ("SIGSEGV", "Segmentation fault"), "abort": ("SIGABRT", "Aborted"), "throw": ("SIGABRT", "Aborted"),
        ]
        for release in ["3.1", "3.2"] {
            for site in CrashCorpus.nativeSites {
                let report = try CrashCorpus.crashNative(
                    native, site: site.name, signal: signals[site.name]!, in: scratch, release: release)
                accepted(
                    try await http.send(
                        .POST, server.baseURL + "/api/v1/reports", headers: ingest,
                        body: Array(try JSONSerialization.data(withJSONObject: report))))
            }
        }
        // and the six Swift crash sites, symbolicated from theirs
        let swift = try CrashCorpus.buildSwift("onone", flags: ["-Onone"], in: scratch)
        for file in [swift.stripped, swift.debugFile] {
            let answer = try await http.send(
                .PUT, server.baseURL + "/api/v1/debug-files/\(swift.buildID)", headers: read,
                body: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            #expect(answer.status == 201 || answer.status == 200)
        }
        for site in CrashCorpus.swiftSites {
            let crash = try CrashCorpus.crashSwift(swift, site: site.name, in: scratch)
            var url = URLComponents(string: server.baseURL + "/api/v1/crashes/swift")!
            url.queryItems = [
                URLQueryItem(name: "release", value: "1.0"), URLQueryItem(name: "install_id", value: "i-1"),
            ]
            if !crash.stderr.isEmpty { url.queryItems?.append(URLQueryItem(name: "message", value: crash.stderr)) }
            accepted(try await http.send(.POST, url.string!, headers: ingest, body: Array(crash.file)))
        }
        // and Sentry events: a RuntimeError in two releases, a ValueError
        let sentry: [(String, String, String, String)] = [
            ("RuntimeError", "boom", "shop@2.0", "s1"), ("RuntimeError", "boom", "shop@2.0", "s2"),
            ("RuntimeError", "boom", "shop@2.1", "s3"), ("ValueError", "load", "shop@2.0", "s1"),
            ("ValueError", "load", "shop@2.1", "s4"),
        ]
        for (n, (type, function, release, user)) in sentry.enumerated() {
            let answer = try await http.send(
                .POST, server.baseURL + "/api/\(shop.id)/envelope/?sentry_key=\(shop.ingest)",
                headers: [("Content-Type", "application/x-sentry-envelope")],
                body: Self.sentry(n, type: type, function: function, release: release, user: user))
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            events.append(String(format: "%032x", 0x5e00 + n))
        }
        let corpus = CrashCorpusEndToEndTests()
        for id in events { _ = try await corpus.waitForIssue(http, server.baseURL, id, read) }
        let before = try await issues(server, read)
        #expect(before.count == 11, "\(before)")
        #expect(before.values.map(\.events).reduce(0, +) == events.count)

        // When the rules are tried: two merges and two splits, nothing else moving; 11 issues stay 11 (native 3 → 3,
        // Swift 6 → 5, Sentry 2 → 3)
        let tried = try await http.send(
            .POST, server.baseURL + "/api/v1/grouping/try?days=7", headers: read, body: Array(Self.rules.utf8))
        #expect(tried.status == 200, "\(tried.json)")
        let answer = try JSONDecoder().decode(
            TryOut.self, from: JSONSerialization.data(withJSONObject: tried.json)
        ).answer
        #expect(answer.reports == events.count && answer.withoutFacts == 0 && answer.ungrouped == 0, "\(answer)")
        #expect(answer.merges.count == 2 && answer.splits.count == 2 && answer.moves.isEmpty, "\(answer)")
        #expect(answer.issuesBefore == 11 && answer.issuesAfter == 11, "\(answer)")

        // and applied; the regroup runs to its end on the worker
        let set = try await http.send(
            .PUT, server.baseURL + "/api/v1/grouping/rules?project=shop",
            headers: [("Authorization", "Bearer \(admin)")], body: Array(Self.rules.utf8))
        #expect(set.status == 200)
        #expect(
            try await eventually {
                let rules = try await http.send(.GET, server.baseURL + "/api/v1/grouping/rules", headers: read)
                return (rules.json["regroup"] as? [String: Any])?["done"] as? Bool == true
            })

        // Then every announced destination holds what was announced, found by number or by its new fingerprint
        let after = try await issues(server, read)
        func issue(_ to: GroupingDryRunAnswer.Destination) -> Listed? {
            if let id = to.issue { return after[Int(id.rawValue)] }
            return after.values.first { $0.fingerprint == to.fingerprint }
        }
        var expected: [(GroupingDryRunAnswer.Destination, events: Int, users: Int, examples: [String])] =
            answer.merges.map { ($0.into, $0.events, $0.users, $0.examples) }
        let merged = answer.merges.map(\.into)
        for split in answer.splits {
            for part in split.parts where !merged.contains(part.to) {
                expected.append((part.to, part.events, part.users, part.examples))
            }
        }
        for (to, events, users, examples) in expected {
            let found = try #require(issue(to), "no issue for \(to) after the regroup: \(after)")
            #expect(found.events == events && found.users == users, "\(to): \(found)")
            for example in examples {
                #expect(try await corpus.waitForIssue(http, server.baseURL, example, read) == found.id, "\(example)")
            }
        }
        // and the issues no rule touched are as they were
        let touched = Set((answer.merges.flatMap(\.issues) + answer.splits.map(\.issue)).map { Int($0.rawValue) })
        for (id, listed) in before where !touched.contains(id) {
            #expect(after[id]?.events == listed.events && after[id]?.fingerprint == listed.fingerprint, "#\(id)")
        }
        #expect(after.values.filter { $0.events > 0 }.count == answer.issuesAfter, "\(after)")
        #expect(after.values.map(\.events).reduce(0, +) == events.count)
        // and a second dry run finds nothing to move
        let again = try await http.send(
            .POST, server.baseURL + "/api/v1/grouping/try?days=7", headers: read, body: Array(Self.rules.utf8))
        #expect((again.json["answer"] as? [String: Any])?["moved"] as? Int == 0, "\(again.json)")
    }

    struct Listed: Sendable {
        var id: Int
        var events: Int
        var users: Int
        var fingerprint: String
    }

    /// The project's issues by number.
    func issues(_ server: ServerProcess, _ read: [(String, String)]) async throws -> [Int: Listed] {
        let answer = try await http.send(.GET, server.baseURL + "/api/v1/issues?limit=100", headers: read)
        var out: [Int: Listed] = [:]
        for issue in answer.json["issues"] as? [[String: Any]] ?? [] {
            guard let id = issue["id"] as? Int, let events = issue["events"] as? Int,
                let fingerprint = issue["fingerprint"] as? String
            else { continue }
            out[id] = Listed(id: id, events: events, users: issue["users"] as? Int ?? -1, fingerprint: fingerprint)
        }
        return out
    }

    /// `POST /api/v1/grouping/try`'s body, decoded as the CLI's `--server` mode decodes it.
    struct TryOut: Decodable {
        var answer: GroupingDryRunAnswer
    }
}
