import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Fingerprint rules against the real `faultline` binary (issue #36): the dry run through the API and through
/// `faultline grouping try --server`, a mistake answered 400 with its line and column, and `faultline grouping set`
/// regrouping the stored events in the background while the server runs, with no event lost.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct GroupingRulesEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let spike = SpikeProtectionEndToEndTests()

    @Test func dryRunThenApplyRegroupsWithoutLosingAnEvent() async throws {
        // Given a server with 4 stored events of one issue
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder, extra: ["--rate-limit", "10000"])
        let server = try await ServerProcess(folder: folder, environment: SpikeProtectionEndToEndTests.environment)
        defer { server.cleanUp() }
        for n in 0..<4 {
            let body = SpikeProtectionEndToEndTests.envelope(
                n, user: "user-\(n % 2)", crashed: true, event: true, fingerprint: false)
            #expect(try await spike.post(server, shop, body).status == 200)
        }
        #expect(
            try await eventually {
                let issues = try await spike.get(server, shop, "/api/v1/issues")["issues"] as? [[String: Any]] ?? []
                return issues.count == 1 && issues.first?["events"] as? Int == 4
            })
        let rulesFile = folder + "/rules.txt"
        try "error.type:RuntimeError -> runtime {{ release }}\n".write(
            toFile: rulesFile, atomically: true, encoding: .utf8)

        // When the rules are tried through the API: the issue would move whole, 4 events of 2 users
        let tried = try await http.send(
            .POST, server.baseURL + "/api/v1/grouping/try?days=7",
            headers: [("Authorization", "Bearer \(shop.upload)")], body: Array("error.type:RuntimeError -> x".utf8))
        #expect(tried.status == 200)
        let answer = tried.json["answer"] as? [String: Any] ?? [:]
        #expect(answer["reports"] as? Int == 4 && answer["moved"] as? Int == 4, "\(answer)")
        let move = (answer["moves"] as? [[String: Any]])?.first?["to"] as? [String: Any] ?? [:]
        #expect(move["events"] as? Int == 4 && move["users"] as? Int == 2, "\(answer)")
        // and a mistake is a 400 naming its line and column
        let bad = try await http.send(
            .POST, server.baseURL + "/api/v1/grouping/try",
            headers: [("Authorization", "Bearer \(shop.upload)")], body: Array("type:A -> a\ncolour:red -> x".utf8))
        #expect(bad.status == 400)
        #expect(bad.json["field"] as? String == "rules")
        #expect((bad.json["message"] as? String)?.hasPrefix("line 2, column 1: unknown field") == true, "\(bad.json)")

        // and through the CLI asking the server
        let cli = try await ServerProcess.run(
            ["grouping", "try", rulesFile, "--project", "shop", "--server", server.baseURL],
            environment: ["FAULTLINE_TOKEN": shop.upload])
        #expect(cli.status == 0, "\(cli.err)")
        #expect(cli.out.contains("over 4 reports") && cli.out.contains("would move whole (1):"), "\(cli.out)")

        // When the rules are set (as a second process on the same data folder)
        let set = try await ServerProcess.run(["grouping", "set", rulesFile, "--project", "shop", "--data", folder])
        #expect(set.status == 0, "\(set.err)")

        // Then the worker regroups every stored event: done, one issue, all 4 events, now grouped by the rule
        #expect(
            try await eventually {
                let rules = try await spike.get(server, shop, "/api/v1/grouping/rules")
                return (rules["regroup"] as? [String: Any])?["done"] as? Bool == true
            })
        let rules = try await spike.get(server, shop, "/api/v1/grouping/rules")
        #expect((rules["versions"] as? [[String: Any]])?.map { $0["version"] as? Int } == [1])
        #expect(
            try await eventually {
                let issues = try await spike.get(server, shop, "/api/v1/issues")["issues"] as? [[String: Any]] ?? []
                return issues.count == 1 && issues.first?["events"] as? Int == 4
            })
        let after = try await ServerProcess.run(
            ["grouping", "try", rulesFile, "--project", "shop", "--data", folder, "--json"])
        #expect(after.out.contains("\"moved\" : 0"), "\(after.out)")
    }

    @Test func rulesAreSetThroughTheAPIByAnAdminOnlyAndRecorded() async throws {
        // Given a server and its admin token
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let rules = Array("error.type:NetworkError error.code:1001 -> network-timeout\n".utf8)
        func put(_ token: String, _ body: [UInt8]) async throws -> HTTP.Answer {
            try await http.send(
                .PUT, server.baseURL + "/api/v1/grouping/rules?project=shop",
                headers: [("Authorization", "Bearer \(token)")], body: body)
        }

        // When CI's upload token tries to change them: 403, and no version is stored
        #expect(try await put(shop.upload, rules).status == 403)
        #expect((try await spike.get(server, shop, "/api/v1/grouping/rules")["versions"] as? [Any])?.isEmpty == true)
        // and a mistake is a 400 naming its line and column, and stores nothing
        let bad = try await put(admin, Array("type:A -> a\ncolour:red -> x".utf8))
        #expect(bad.status == 400 && bad.json["field"] as? String == "rules", "\(bad.json)")
        #expect((try await spike.get(server, shop, "/api/v1/grouping/rules")["versions"] as? [Any])?.isEmpty == true)

        // When the admin token sets them: version 1, as the CLI shows it
        let set = try await put(admin, rules)
        #expect(set.status == 200)
        #expect((set.json["versions"] as? [[String: Any]])?.map { $0["version"] as? Int } == [1], "\(set.json)")
        let shown = try await ServerProcess.run(["grouping", "show", "--project", "shop", "--data", folder])
        #expect(shown.out.contains("network-timeout"), "\(shown.out)")

        // Then the audit trail records the new version, by the admin token, from the address that sent it
        let trail = try await http.send(
            .GET, server.baseURL + "/api/v1/audit?project=shop&kind=project",
            headers: [("Authorization", "Bearer \(admin)")])
        let entries = trail.json["entries"] as? [[String: Any]] ?? []
        #expect(
            entries.contains {
                $0["kind"] as? String == "project.grouping_rules" && $0["actor_kind"] as? String == "admin-token"
                    && $0["after"] as? String == "version 1: 1 rule" && $0["address"] as? String == "127.0.0.1"
            }, "\(trail.json)")
    }
}
