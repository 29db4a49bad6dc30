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
}
