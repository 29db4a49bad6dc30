import FaultlineCore
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The Swift crash endpoint's parameters (unknown ones refused, the `release` alias, `message`) and the content
/// types the fixed-format ingest routes accept. The real runtime's crash file is posted end to end in
/// `SwiftCrashEndToEndTests` and `DocumentedExamplesTests`; here a small file of the same shape is enough.
@Suite struct SwiftCrashRouteTests {
    static let crashFile = """
        {"timestamp":"2026-11-22T05:08:09Z","kind":"crashReport","description":"Fatal error: Division by zero",
         "faultAddress":"0x5555555551c3","platform":"x86_64-unknown-linux-gnu","architecture":"x86_64",
         "threads":[{"name":"main","crashed":true,"registers":{"rip":"0x5555555551c3"},
                     "frames":[{"kind":"programCounter","address":"0x5555555551c3"},{"kind":"returnAddress","address":"0x555555555210"}]}],
         "images":[{"name":"app","buildId":"2aaa9d4a628f71c3b66c83312a946a2db7977ff3","path":"/opt/app/app",
                    "baseAddress":"0x555555554000","endOfText":"0x555555556000"}]}
        """

    /// ASCII letters and digits: everything else percent-encoded.
    static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    /// Posts the crash file (with `event` as its id, so that each post is a new report) and returns the answer.
    static func post(
        _ client: some TestClientProtocol, _ app: TestApp, query: String, headers extra: HTTPFields = [:], event: Int,
        contentType: String? = nil
    ) async throws -> (status: HTTPResponse.Status, json: [String: Any]) {
        var headers: HTTPFields = [.authorization: "Bearer \(app.credentials.ingestKey)"]
        if let contentType { headers[.contentType] = contentType }
        headers.append(contentsOf: extra)
        let separator = query.isEmpty ? "" : "&"
        return try await client.execute(
            uri: "/api/v1/crashes/swift?event_id=\(Payloads.eventID(event))\(separator)\(query)", method: .post,
            headers: headers,
            body: ByteBuffer(string: crashFile)
        ) { ($0.status, $0.json) }
    }

    static func stored(_ client: some TestClientProtocol, _ app: TestApp, event: Int) async throws -> [String: Any] {
        try await client.execute(
            uri: "/api/v1/reports/\(Payloads.eventID(event))", method: .get, headers: app.readHeaders
        ) { response in
            #expect(response.status == .ok)
            return response.json
        }
    }

    @Test func unknownParametersAndHeadersAreRefusedByName() async throws {
        let app = try await TestApp()
        try await app.test { client in
            // A typo in the query: 400 naming it, nothing stored.
            let typo = try await Self.post(client, app, query: "relase=1.2", event: 1)
            #expect(typo.status == .badRequest)
            #expect(typo.json["error"] as? String == "unknown_parameter")
            #expect(typo.json["field"] as? String == "relase")
            #expect((typo.json["message"] as? String)?.contains("\"relase\"") == true)
            #expect((typo.json["message"] as? String)?.contains("app_version") == true)  // says what is known
            // The same as a header.
            let header = try await Self.post(
                client, app, query: "", headers: [HTTPField.Name("X-Faultline-Relase")!: "1.2"], event: 2)
            #expect(header.status == .badRequest)
            #expect(header.json["field"] as? String == "X-Faultline-Relase")
            // One name twice with different values.
            let twice = try await Self.post(
                client, app, query: "app_version=1", headers: [HTTPField.Name("X-Faultline-App-Version")!: "2"],
                event: 3)
            #expect(twice.status == .badRequest)
            #expect(twice.json["error"] as? String == "conflicting_parameter")
            #expect(try await app.sqliteReader.counts().reports == 0)
            // Headers that are not ours are none of our business.
            let fine = try await Self.post(
                client, app, query: "app_version=1", headers: [HTTPField.Name("X-Request-Id")!: "abc"], event: 4)
            #expect(fine.status == .accepted)
        }
    }

    @Test func releaseIsTheAliasOfAppVersion() async throws {
        let app = try await TestApp()
        try await app.test { client in
            #expect(try await Self.post(client, app, query: "release=3.1&app_build=9", event: 1).status == .accepted)
            #expect(try await Self.stored(client, app, event: 1)["release"] as? String == "3.1")
            let header = try await Self.post(
                client, app, query: "", headers: [HTTPField.Name("X-Faultline-Release")!: "3.2"], event: 2)
            #expect(header.status == .accepted)
            #expect(try await Self.stored(client, app, event: 2)["release"] as? String == "3.2")
            // Both, equal: fine. Both, different: 400 naming the alias.
            #expect(
                try await Self.post(client, app, query: "release=3.3&app_version=3.3", event: 3).status == .accepted)
            let conflict = try await Self.post(client, app, query: "release=3.4&app_version=3.5", event: 4)
            #expect(conflict.status == .badRequest)
            #expect(conflict.json["error"] as? String == "conflicting_parameter")
            #expect(conflict.json["field"] as? String == "release")
        }
    }

    @Test func theMessageIsKeptScrubbedAndCut() async throws {
        let app = try await TestApp()
        try await app.test { client in
            // Two lines, as libstdc++ prints them, in the query (percent-encoded).
            let cpp = "terminate called after throwing an instance of 'std::runtime_error'\n  what():  too expensive"
            let encoded = cpp.addingPercentEncoding(withAllowedCharacters: Self.unreserved)!
            #expect(try await Self.post(client, app, query: "message=\(encoded)", event: 1).status == .accepted)
            let report = try await Self.stored(client, app, event: 1)
            #expect(report["crash_message"] as? String == cpp)
            #expect((report["error"] as? [String: Any])?["message"] as? String == "Fatal error: Division by zero")

            // A header; what the scrubber would filter anywhere else is filtered here too.
            let secret =
                "/home/alice/src/main.swift:14: Fatal error: Authorization: Bearer eyJhbGciOi.secret card 4111 1111 1111 1111"
            let posted = try await Self.post(
                client, app, query: "", headers: [HTTPField.Name("X-Faultline-Message")!: secret], event: 2)
            #expect(posted.status == .accepted)
            let scrubbed = try #require(try await Self.stored(client, app, event: 2)["crash_message"] as? String)
            #expect(
                scrubbed
                    == "/home/[user]/src/main.swift:14: Fatal error: Authorization: Bearer [Filtered] card [Filtered]")
            // …and it is gone from what is stored, not only from what is shown.
            let stored = try await app.root.reader.rawReport(eventID: EventID(Payloads.eventID(2))!, project: nil)
            let payload = try #require(stored?.payload)
            let bytes = String(
                decoding: try BodyDecoding.inflateStored(payload.bytes, limit: payload.inflatedSize), as: UTF8.self)
            #expect(!bytes.contains("alice") && !bytes.contains("eyJhbGciOi") && !bytes.contains("4111"))

            // Longer than 4 KB: cut at a character boundary, counted, not refused.
            let long = String(repeating: "é", count: 3000)  // 6000 bytes
            #expect(
                try await Self.post(
                    client, app,
                    query: "message=\(long.addingPercentEncoding(withAllowedCharacters: Self.unreserved)!)", event: 3
                ).status == .accepted)
            let cut = try await Self.stored(client, app, event: 3)
            #expect((cut["crash_message"] as? String)?.utf8.count == 4096)
            #expect((cut["trimmed"] as? [String: Any])?["values_truncated"] as? Int == 1)

            // No message: no field.
            #expect(try await Self.post(client, app, query: "", event: 4).status == .accepted)
            #expect(try await Self.stored(client, app, event: 4)["crash_message"] == nil)
        }
    }

    @Test func fixedFormatRoutesTakeGenericContentTypes() async throws {
        let app = try await TestApp()
        try await app.test { client in
            // What `curl --data-binary @file` and generic uploaders send.
            for (i, type) in [
                "application/x-www-form-urlencoded", "application/octet-stream", "application/json; charset=utf-8",
            ].enumerated() {
                let answer = try await Self.post(client, app, query: "", event: 10 + i, contentType: type)
                #expect(answer.status == .accepted, "\(type): \(answer.json)")
            }
            // A multipart form wraps the file: refused with what to do instead; other types stay refused.
            for type in ["multipart/form-data; boundary=x", "text/plain", "text/html", ";"] {
                let answer = try await Self.post(client, app, query: "", event: 20, contentType: type)
                #expect(answer.status == .unsupportedMediaType, "\(type)")
            }
            let multipart = try await Self.post(
                client, app, query: "", event: 20, contentType: "multipart/form-data; boundary=x")
            #expect((multipart.json["message"] as? String)?.contains("--data-binary") == true)

            // Native reports and sessions: the same types; their body is still parsed strictly as JSON.
            let form: HTTPFields = [
                .authorization: "Bearer \(app.credentials.ingestKey)",
                .contentType: "application/x-www-form-urlencoded",
            ]
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: form, body: ByteBuffer(string: Payloads.crash(30))
            ) { response in
                #expect(response.status == .accepted)
            }
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: form, body: ByteBuffer(string: "report=%7B%7D")
            ) { response in
                #expect(response.status == .badRequest)  // a real form body is not JSON
            }
            try await client.execute(
                uri: "/api/v1/sessions", method: .post, headers: form,
                body: ByteBuffer(string: Payloads.session("s1", status: "ok"))
            ) { response in
                #expect(response.status == .accepted)
            }
        }
    }

    @Test func nativeRoutesRefuseParametersTheyWouldIgnore() async throws {
        let app = try await TestApp()
        try await app.test { client in
            for uri in ["/api/v1/reports?app_version=1.2", "/api/v1/sessions?release=1.0"] {
                try await client.execute(
                    uri: uri, method: .post, headers: app.ingestHeaders, body: ByteBuffer(string: Payloads.crash(1))
                ) { response in
                    #expect(response.status == .badRequest)
                    #expect(response.json["error"] as? String == "unknown_parameter")
                    #expect((response.json["message"] as? String)?.contains("takes no parameters") == true)
                }
            }
            var headers = app.ingestHeaders
            headers[HTTPField.Name("X-Faultline-App-Version")!] = "1.2"
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: headers, body: ByteBuffer(string: Payloads.crash(2))
            ) { response in
                #expect(response.status == .badRequest)
                #expect(response.json["field"] as? String == "X-Faultline-App-Version")
            }
            #expect(try await app.sqliteReader.counts().reports == 0)
        }
    }
}
