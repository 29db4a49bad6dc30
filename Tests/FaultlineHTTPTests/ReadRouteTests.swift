import FaultlineCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite struct ReadRouteTests {
    @Test func listsFilterAndPage() async throws {
        let app = try await TestApp()
        let other = try await app.root.projects.create(slug: ProjectSlug("other")!)
        try await app.test { client in
            let v2 = (10..<15).map { Payloads.crash($0, version: "2.0") }
            let nonfatal = (20..<23).map { Payloads.crash($0, kind: "nonfatal") }
            let body = "[" + ((0..<10).map { Payloads.crash($0) } + v2 + nonfatal).joined(separator: ",") + "]"
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders, body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .accepted)
            }
            var otherHeaders = app.ingestHeaders
            otherHeaders[.authorization] = "Bearer \(other.ingestKey)"
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: otherHeaders,
                body: ByteBuffer(string: Payloads.crash(100))
            ) { response in
                #expect(response.status == .accepted)
            }

            var seen: [String] = []
            var uri = "/api/v1/reports?limit=7"
            while true {
                let page = try await client.execute(uri: uri, method: .get, headers: app.readHeaders) { $0.json }
                seen += (page["reports"] as? [[String: Any]] ?? []).compactMap { $0["event_id"] as? String }
                guard let next = page["next_cursor"] as? String else { break }
                uri = "/api/v1/reports?limit=7&cursor=\(next)"
            }
            #expect(seen.count == 18)
            #expect(Set(seen).count == 18)
            #expect(!seen.contains(Payloads.normalized(100)))  // the upload token sees only its project

            let released = try await client.execute(
                uri: "/api/v1/reports?release=2.0%20(7)", method: .get, headers: app.readHeaders
            ) { $0.json }
            #expect((released["reports"] as? [Any])?.count == 5)
            let nonfatals = try await client.execute(
                uri: "/api/v1/reports?kind=nonfatal", method: .get, headers: app.readHeaders
            ) { $0.json }
            #expect((nonfatals["reports"] as? [Any])?.count == 3)
            let admin = try await client.execute(
                uri: "/api/v1/reports?limit=500", method: .get, headers: app.adminHeaders
            ) { $0.json }
            #expect((admin["reports"] as? [Any])?.count == 19)
            let adminOther = try await client.execute(
                uri: "/api/v1/reports?project=other", method: .get, headers: app.adminHeaders
            ) { $0.json }
            #expect(
                (adminOther["reports"] as? [[String: Any]])?.map { $0["event_id"] as? String } == [
                    Payloads.normalized(100)
                ])

            // A report of another project is not found with this project's token, found with the admin's.
            try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(100))", method: .get, headers: app.readHeaders
            ) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(100))", method: .get, headers: app.adminHeaders
            ) { response in
                #expect(response.status == .ok)
                #expect(response.json["project_id"] as? Int == Int(other.project.id.rawValue))
            }
            for bad in ["kind=fatal", "limit=0", "limit=501", "since=yesterday", "cursor=abc"] {
                try await client.execute(uri: "/api/v1/reports?\(bad)", method: .get, headers: app.readHeaders) {
                    response in
                    #expect(response.status == .badRequest)
                }
            }
        }
    }

    @Test func trimmingIsVisibleOnTheStoredReport() async throws {
        let app = try await TestApp()
        let keys = (0..<70).map { #""k\#($0)":"\#(String(repeating: "v", count: $0 == 3 ? 2000 : 3))""# }.joined(
            separator: ",")
        let body =
            #"{"event_id":"7077e450fa6f4594850bfed9428d1d98","kind":"nonfatal","timestamp":1795000000,"custom_keys":{"#
            + keys + "}}"
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders, body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .accepted)
            }
            try await client.execute(
                uri: "/api/v1/reports/7077e450fa6f4594850bfed9428d1d98", method: .get, headers: app.readHeaders
            ) { response in
                let trimmed = response.json["trimmed"] as? [String: Int]
                #expect(trimmed?["custom_keys_dropped"] == 6)
                #expect(trimmed?["values_truncated"] == 1)
                #expect((response.json["custom_keys"] as? [String: Any])?.count == 64)
            }
            try await client.execute(uri: "/api/v1/reports", method: .get, headers: app.readHeaders) { response in
                let first = (response.json["reports"] as? [[String: Any]])?.first
                #expect((first?["trimmed"] as? [String: Int])?["custom_keys_dropped"] == 6)
            }
        }
    }
}

@Suite struct OperationsRouteTests {
    @Test func healthAndMetrics() async throws {
        let app = try await TestApp()
        try await app.test { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.json["status"] as? String == "ok")
            }
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.batch(0..<3))
            ) { _ in }
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: [.authorization: "Bearer nope"],
                body: ByteBuffer(string: "{}")
            ) { _ in }
            try await client.execute(uri: "/metrics", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(text.contains("faultline_reports_accepted_total 3"))
                #expect(text.contains(#"faultline_http_requests_total{route="/api/v1/reports",status="401"} 1"#))
                #expect(text.contains("faultline_db_commit_duration_seconds_count"))
                #expect(text.contains(#"faultline_ingest_duration_seconds_count{route="/api/v1/reports"}"#))
            }
            // Outside the API, everything is the dashboard: the admin token first, then 404 for what is not there.
            try await client.execute(uri: "/nowhere", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            }
            try await client.execute(uri: "/nowhere", method: .get, headers: app.adminHeaders) { response in
                #expect(response.status == .notFound)
                #expect(response.json["error"] as? String == "not_found")
            }
            try await client.execute(uri: "/", method: .get, headers: app.adminHeaders) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("Faultline"))
            }
            try await client.execute(uri: "/login", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("name=\"token\""))
            }
        }
    }
}
