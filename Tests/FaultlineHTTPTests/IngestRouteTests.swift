import FaultlineCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite struct IngestRouteTests {
    @Test func aGzippedReportIsAcceptedStoredAndReadBack() async throws {
        let app = try await TestApp()
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.gzipHeaders, body: Payloads.gzip(Payloads.crash(1))
            ) { response in
                #expect(response.status == .accepted)
                #expect(response.json["accepted"] as? [String] == [Payloads.normalized(1)])
                #expect(response.json["duplicates"] as? [String] == [])
            }
            try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(1))", method: .get, headers: app.readHeaders
            ) { response in
                #expect(response.status == .ok)
                let json = response.json
                #expect(json["event_id"] as? String == Payloads.normalized(1))
                #expect(json["release"] as? String == "1.0")
                #expect(((json["threads"] as? [[String: Any]])?.first?["frames"] as? [Any])?.count == 40)
                #expect((json["breadcrumbs"] as? [Any])?.count == 20)
                #expect((json["custom_keys"] as? [String: String])?["key3"] == "value 3")
                #expect((json["error"] as? [String: String])?["code"] == "11")
            }
        }
    }

    @Test func theSameEventTwiceIsStoredOnceAndAnsweredAcceptedBothTimes() async throws {
        let app = try await TestApp()
        try await app.test { client in
            for attempt in 0..<3 {
                // The retry spells the id without hyphens: still the same event.
                let body =
                    attempt == 2
                    ? Payloads.crash(5).replacingOccurrences(of: Payloads.eventID(5), with: Payloads.normalized(5))
                    : Payloads.crash(5)
                try await client.execute(
                    uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders, body: ByteBuffer(string: body)
                ) { response in
                    #expect(response.status == .accepted)
                    #expect(response.json["duplicates"] as? [String] == (attempt == 0 ? [] : [Payloads.normalized(5)]))
                }
            }
        }
        #expect(try await app.sqliteReader.counts().reports == 1)
    }

    @Test func aBatchWithBadReportsStoresTheGoodOnesAndNamesTheBadFields() async throws {
        let app = try await TestApp()
        let body = "[" + Payloads.crash(1) + #",{"event_id":"bad"},"# + Payloads.crash(2) + "]"
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders, body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .accepted)
                #expect(response.json["accepted"] as? [String] == [Payloads.normalized(1), Payloads.normalized(2)])
                let rejected = response.json["rejected"] as? [[String: Any]]
                #expect(rejected?.count == 1)
                #expect(rejected?.first?["index"] as? Int == 1)
                #expect(rejected?.first?["field"] as? String == "reports[1].event_id")
            }
        }
        #expect(try await app.sqliteReader.counts().reports == 2)
    }

    @Test(
        arguments: [
            (#"{"event_id":"7077e450fa6f4594850bfed9428d1d98","kind":"crash"}"#, "timestamp", "invalid_field"),
            (
                #"{"event_id":"7077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"device":{"memory":"lots"}}"#,
                "device.memory", "invalid_field"
            ),
            (#"{"reports":[{"event_id":"x"}]}"#, "reports[0].event_id", "invalid_field"),
            ("not json", nil, "malformed_json"),
        ] as [(String, String?, String)])
    func invalidBodiesAre400WithTheField(_ body: String, _ field: String?, _ code: String) async throws {
        let app = try await TestApp()
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders, body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                #expect(response.json["error"] as? String == code)
                #expect(response.json["field"] as? String == field)
                #expect((response.json["message"] as? String)?.isEmpty == false)
            }
        }
        #expect(try await app.sqliteReader.counts().reports == 0)
    }

    @Test func keysAreCheckedPerRoute() async throws {
        let app = try await TestApp()
        let body = ByteBuffer(string: Payloads.crash(1))
        try await app.test { client in
            for headers: HTTPFields in [
                [:], [.authorization: "Bearer wrong"], [.authorization: "Basic abc"], app.readHeaders, app.adminHeaders,
            ] {
                try await client.execute(uri: "/api/v1/reports", method: .post, headers: headers, body: body) {
                    response in
                    #expect(response.status == .unauthorized)
                    #expect(response.json["error"] as? String == "unauthorized")
                    #expect(response.headers[.wwwAuthenticate] != nil)
                }
            }
            // The ingest key cannot read.
            try await client.execute(uri: "/api/v1/reports", method: .get, headers: app.ingestHeaders) { response in
                #expect(response.status == .unauthorized)
            }
        }
        #expect(try await app.sqliteReader.counts().reports == 0)
    }

    @Test func unknownEncodingsAndContentTypesAre415() async throws {
        let app = try await TestApp()
        try await app.test { client in
            var zstd = app.ingestHeaders
            zstd[.contentEncoding] = "zstd"
            var text = app.ingestHeaders
            text[.contentType] = "text/plain"
            for headers in [zstd, text] {
                try await client.execute(
                    uri: "/api/v1/reports", method: .post, headers: headers, body: ByteBuffer(string: Payloads.crash(1))
                ) { response in
                    #expect(response.status == .unsupportedMediaType)
                }
            }
        }
    }

    @Test func oversizedBodiesAre413() async throws {
        var limits = IngestLimits()
        limits.maxBatchBytes = 64 * 1024
        limits.maxReportBytes = 16 * 1024
        let app = try await TestApp(limits: limits)
        try await app.test { client in
            // Too large on the wire.
            let huge = ByteBuffer(repeating: UInt8(ascii: " "), count: 100 * 1024)
            try await client.execute(uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders, body: huge) {
                response in
                #expect(response.status == .contentTooLarge)
            }
            // Small on the wire, too large once inflated.
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.gzipHeaders,
                body: Payloads.bomb(memberMiB: 1, members: 1)
            ) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.json["error"] as? String == "too_large")
            }
            // One report over the per-report limit.
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.crash(1, frames: 400))
            ) { response in
                #expect(response.status == .contentTooLarge)
            }
        }
    }

    @Test func aTenGigabyteGzipBombIsRefusedWithoutInflatingIt() async throws {
        let app = try await TestApp()
        let bomb = Payloads.bomb(memberMiB: 100, members: 100)  // ~10 GiB of zeros in ~10 MB
        #expect(bomb.readableBytes < 10 * 1024 * 1024)
        try await app.test { client in
            try await client.execute(uri: "/api/v1/reports", method: .post, headers: app.gzipHeaders, body: bomb) {
                response in
                #expect(response.status == .contentTooLarge)
            }
        }
    }

    @Test func corruptGzipIs400() async throws {
        let app = try await TestApp()
        var truncated = Payloads.gzip(Payloads.crash(1))
        truncated.moveWriterIndex(to: truncated.writerIndex - 20)
        let body = truncated
        try await app.test { client in
            try await client.execute(uri: "/api/v1/reports", method: .post, headers: app.gzipHeaders, body: body) {
                response in
                #expect(response.status == .badRequest)
                #expect(response.json["error"] as? String == "corrupt_compression")
            }
        }
    }

    @Test func overTheRateLimitIs429WithRetryAfter() async throws {
        // 1/s with a 10 s burst, on a clock that stands still: no refill however slow the machine is.
        let app = try await TestApp(rateLimit: 1, clock: FrozenClock(date: Date()))
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.batch(0..<10))
            ) { response in
                #expect(response.status == .accepted)
            }
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.crash(99))
            ) { response in
                #expect(response.status == .tooManyRequests)
                #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 >= 1)
                #expect(response.json["error"] as? String == "rate_limited")
            }
            // Sessions keep flowing while reports are limited.
            try await client.execute(
                uri: "/api/v1/sessions", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.session("s1", status: "ok"))
            ) { response in
                #expect(response.status == .accepted)
            }
        }
        #expect(try await app.sqliteReader.counts().reports == 10)
    }

    @Test func pastAQuotaIs429QuotaReachedUntilTheWindowEnds() async throws {
        // A quota of 10 events a minute, on a clock that stands 5 s into a minute.
        let app = try await TestApp(clock: FrozenClock(date: Date(timeIntervalSince1970: 1_795_860_005)))
        _ = try await app.root.projects.configureQuotas(slug: ProjectSlug("app")!, by: .cli) { $0.perMinute = 10 }
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.batch(0..<10))
            ) { response in
                #expect(response.status == .accepted)
            }
            // The 11th event is refused as a quota (not the rate limit), with the 55 s left of the minute.
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.crash(99))
            ) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] == "55")
                #expect(response.json["error"] as? String == "quota_reached")
            }
            // Sessions are never under a quota.
            try await client.execute(
                uri: "/api/v1/sessions", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.session("s1", status: "ok"))
            ) { response in
                #expect(response.status == .accepted)
            }
        }
        #expect(try await app.sqliteReader.counts().reports == 10)
    }

    @Test func belowTheFreeSpaceFloorWritesAre507WithRetryAfter() async throws {
        let app = try await TestApp(minFreeBytes: 1 << 30, freeSpace: { 1 << 20 })
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: Payloads.crash(1))
            ) { response in
                #expect(response.status.code == 507)
                #expect(response.headers[.retryAfter] != nil)
                #expect(response.json["error"] as? String == "storage_full")
            }
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.json["degraded"] as? String == "storage_full")
            }
            // Reads still work.
            try await client.execute(uri: "/api/v1/reports", method: .get, headers: app.readHeaders) { response in
                #expect(response.status == .ok)
            }
        }
        #expect(try await app.sqliteReader.counts().reports == 0)
    }

    @Test func sessionsAreMergedAndRetriesChangeNothing() async throws {
        let app = try await TestApp()
        let body =
            #"{"sessions":["#
            + [
                Payloads.session("s1", status: "ok", seq: 1),
                Payloads.session("s1", status: "crashed", errors: 1, seq: 2),
            ].joined(separator: ",") + "]}"
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/sessions", method: .post, headers: app.gzipHeaders, body: Payloads.gzip(body)
            ) { response in
                #expect(response.status == .accepted)
                #expect(response.json["applied"] as? Int == 2)
            }
            try await client.execute(
                uri: "/api/v1/sessions", method: .post, headers: app.ingestHeaders, body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .accepted)
                #expect(response.json["applied"] as? Int == 0)
                #expect(response.json["unchanged"] as? Int == 2)
            }
            try await client.execute(
                uri: "/api/v1/sessions", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: #"{"session_id":"s2"}"#)
            ) { response in
                #expect(response.status == .badRequest)
                #expect(response.json["field"] as? String == "release")
            }
        }
        let state = try await app.sqliteReader.session(project: app.credentials.project.id, id: SessionID("s1")!)
        #expect(state?.status == .crashed)
        #expect(state?.errors == 1)
    }
}
