import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// What spike protection counted, read back (issue #38), against the real `faultline` binary: the counts through
/// `GET /api/v1/quota-counts`, an issue's dropped events through `GET /api/v1/issues/{id}/dropped` and on its page,
/// and a month's quota that a restart does not hand out again.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct QuotaCountsEndToEndTests {
    typealias Keys = SpikeProtectionEndToEndTests.Keys
    let http = HTTP(client: HTTPClient.shared)
    let spike = SpikeProtectionEndToEndTests()

    @Test func droppedCountsAreReadableAndTheMonthsQuotaSurvivesARestart() async throws {
        // Given a project with a quota of 6 events a month
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder, extra: ["--rate-limit", "10000"])
        let configured = try await ServerProcess.run(
            ["projects", "configure", "shop", "--data", folder, "--quota-per-month", "6"])
        #expect(configured.status == 0, "\(configured.err)")
        var server = try await ServerProcess(folder: folder, environment: SpikeProtectionEndToEndTests.environment)
        defer { server.cleanUp() }

        // When 8 crashes with the same client fingerprint arrive: 6 are stored, 2 refused
        var statuses: [Int] = []
        for n in 0..<8 {
            let body = SpikeProtectionEndToEndTests.envelope(
                n, user: "user-\(n)", crashed: true, event: true, fingerprint: true)
            statuses.append(try await spike.post(server, shop, body).status)
        }
        #expect(statuses == [200, 200, 200, 200, 200, 200, 429, 429], "\(statuses)")

        // Then the API reads the counts: 6 accepted, 2 dropped, the dropped ones under the client's fingerprint
        #expect(
            try await eventually {
                let counts = try await spike.get(server, shop, "/api/v1/quota-counts?days=2")
                return counts["accepted"] as? Int == 6 && counts["dropped"] as? Int == 2
            })
        let rows = try await spike.get(server, shop, "/api/v1/quota-counts")["counts"] as? [[String: Any]] ?? []
        let fingerprinted = rows.filter { $0["fingerprint"] is String }
        #expect(fingerprinted.count == 1 && fingerprinted.first?["dropped"] as? Int == 2, "\(rows)")
        #expect(rows.allSatisfy { $0["release"] as? String == "2.0" })

        // and the issue the stored crashes made says 2 were dropped, in the API and on its page
        #expect(
            try await eventually {
                let issues = try await spike.get(server, shop, "/api/v1/issues")["issues"] as? [[String: Any]] ?? []
                return issues.first?["events"] as? Int == 6
            })
        let issues = try await spike.get(server, shop, "/api/v1/issues")["issues"] as? [[String: Any]] ?? []
        let issue = try #require(issues.first?["id"] as? Int)
        let dropped = try await spike.get(server, shop, "/api/v1/issues/\(issue)/dropped")
        #expect(dropped["dropped"] as? Int == 2)
        #expect((dropped["fingerprints"] as? [String])?.first == fingerprinted.first?["fingerprint"] as? String)
        #expect(
            try await eventually {
                let page =
                    (try? String(contentsOfFile: "\(server.folder)/site/shop/issues/\(issue).html", encoding: .utf8))
                return page?.contains("<dt>Refused past the quota</dt><dd>2 events more, counted but not stored</dd>")
                    == true
            })
        // An issue that does not exist: 404, not a zero.
        let missing = try await http.send(
            .GET, server.baseURL + "/api/v1/issues/999999/dropped",
            headers: [("Authorization", "Bearer \(shop.upload)")])
        #expect(missing.status == 404)

        // When the server dies (the counts were flushed before) and starts again
        try await server.kill9()
        server = try await ServerProcess(folder: folder, environment: SpikeProtectionEndToEndTests.environment)

        // Then the month's quota is still used up: the next crashes are refused, not 6 more admitted
        for n in 8..<10 {
            let body = SpikeProtectionEndToEndTests.envelope(
                n, user: "user-\(n)", crashed: true, event: true, fingerprint: false)
            let answer = try await spike.post(server, shop, body)
            #expect(answer.status == 429, "event \(n) after the restart: \(answer.status)")
        }
        #expect(
            try await eventually {
                let counts = try await spike.get(server, shop, "/api/v1/quota-counts?days=2")
                return counts["accepted"] as? Int == 6 && counts["dropped"] as? Int == 4
            })
    }
}
