import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Server-side PII scrubbing against the real server: for each ingest path, the secrets a client sent are in
/// neither the stored payloads (inflated) nor anywhere in the SQLite files, the read API shows `[Filtered]`, and
/// each project's settings (`faultline projects configure`) are honoured.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct PrivacyEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    static let storedBytesScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Python/stored_bytes.py").path

    /// Everything the data folder holds about reports, as text: inflated payloads, then the raw database files.
    func stored(_ folder: String) throws -> String {
        let result = try Command.run("python3", [Self.storedBytesScript, folder])
        guard result.status == 0 else { throw TestFailure("stored_bytes.py failed: \(result.err)") }
        return result.out
    }

    func configure(_ slug: String, in folder: String, _ options: [String]) async throws -> [String: Any] {
        let result = try await ServerProcess.run(["projects", "configure", slug, "--data", folder, "--json"] + options)
        guard result.status == 0 else { throw TestFailure("projects configure failed: \(result)") }
        return try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any] ?? [:]
    }

    func fetchReport(_ server: ServerProcess, upload: String, _ id: String) async throws -> [String: Any] {
        var answer: HTTP.Answer?
        _ = try await eventually {
            answer = try await http.send(
                .GET, server.baseURL + "/api/v1/reports/\(id)", headers: [("Authorization", "Bearer \(upload)")])
            return answer?.status == 200
        }
        let found = try #require(answer)
        guard found.status == 200 else { throw TestFailure("GET report \(id) → \(found.status)") }
        return found.json
    }

    static let card = "4111 1111 1111 1111"
    static let token = "sk_live_51Hd9QhLk2Vb"

    static func nativeReport(_ n: Int) -> String {
        #"""
        {"event_id":"\#(Payloads.eventID(n))","kind":"nonfatal","timestamp":"2026-11-22T05:08:09Z","user_id":"user-1",
         "app":{"id":"com.example","version":"1.0","build":"7"},
         "error":{"type":"PaymentError","message":"charge of card \#(card) failed"},
         "threads":[{"name":"main","crashed":true,"frames":[{"address":"0x7f0000001234","module":"libapp.so","function":"pay","file":"/home/alice/src/pay.c","line":12}]}],
         "modules":[{"name":"libapp.so","path":"/home/alice/build/libapp.so","build_id":"aba11aeff7e7e9e2e1bc84464f53a7e183a8930a","base_address":"0x7f0000000000","size":1048576}],
         "breadcrumbs":[{"timestamp":1795000000,"category":"http","message":"GET https://shop:hunter2pw@api.example.com/orders","data":{"Authorization":"Bearer \#(token)"}}],
         "custom_keys":{"password":"hunter2pw","plan":"pro","db_password":"correcthorse"}}
        """#
    }

    @Test func nativeReportsAreScrubbedBeforeTheyAreStored() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        let answer = try await http.postReports(server.baseURL, key: project.ingest, Self.nativeReport(1))
        #expect(answer.status == 202, "\(String(decoding: answer.body, as: UTF8.self))")
        let report = try await fetchReport(server, upload: project.upload, Payloads.eventID(1))
        let keys = report["custom_keys"] as? [String: Any] ?? [:]
        #expect(keys["password"] as? String == "[Filtered]")
        #expect(keys["db_password"] as? String == "[Filtered]")
        #expect(keys["plan"] as? String == "pro")
        #expect((report["error"] as? [String: Any])?["message"] as? String == "charge of card [Filtered] failed")
        let crumb = (report["breadcrumbs"] as? [[String: Any]])?.first
        #expect(crumb?["message"] as? String == "GET https://shop:[Filtered]@api.example.com/orders")
        #expect((crumb?["data"] as? [String: Any])?["Authorization"] as? String == "[Filtered]")
        let frame = ((report["threads"] as? [[String: Any]])?.first?["frames"] as? [[String: Any]])?.first
        #expect(frame?["file"] as? String == "/home/[user]/src/pay.c")
        #expect(frame?["address"] as? String == "0x7f0000001234")
        // Debug metadata is kept as sent: the module's path and build-id.
        let module = (report["modules"] as? [[String: Any]])?.first
        #expect(module?["path"] as? String == "/home/alice/build/libapp.so")
        #expect(module?["build_id"] as? String == "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")

        let bytes = try stored(folder)
        #expect(bytes.contains("libapp.so"))  // the payload was found and inflated
        for secret in ["hunter2pw", "correcthorse", Self.card, Self.token, "/home/alice/src"] {
            #expect(!bytes.contains(secret), "\(secret) was stored")
        }
    }

    @Test func projectSettingsAreHonouredPerProject() async throws {
        let folder = ServerProcess.newFolder()
        let strict = try await ServerProcess.createProject("strict", in: folder)
        let open = try await ServerProcess.createProject("open", in: folder)
        let safe = try await ServerProcess.createProject("safe", in: folder)
        let configuredOpen = try await configure("open", in: folder, ["--scrubbing", "off"])
        #expect(configuredOpen["scrubbing"] as? Bool == false)
        let configuredSafe = try await configure(
            "safe", in: folder,
            ["--safe-field", "db_password", "--sensitive-field", "plan", "--keep-ip-addresses", "on"])
        #expect(configuredSafe["safe_fields"] as? [String] == ["db_password"])
        #expect(configuredSafe["keep_ip_addresses"] as? Bool == true)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        for (n, project) in [(1, strict), (2, open), (3, safe)] {
            let answer = try await http.postReports(server.baseURL, key: project.ingest, Self.nativeReport(n))
            #expect(answer.status == 202)
        }
        let strictKeys =
            try await fetchReport(server, upload: strict.upload, Payloads.eventID(1))["custom_keys"] as? [String: Any]
        let openKeys =
            try await fetchReport(server, upload: open.upload, Payloads.eventID(2))["custom_keys"] as? [String: Any]
        let safeKeys =
            try await fetchReport(server, upload: safe.upload, Payloads.eventID(3))["custom_keys"] as? [String: Any]
        #expect(strictKeys?["db_password"] as? String == "[Filtered]")
        #expect(strictKeys?["plan"] as? String == "pro")
        // Scrubbing off keeps every value.
        #expect(openKeys?["password"] as? String == "hunter2pw")
        #expect(openKeys?["db_password"] as? String == "correcthorse")
        // A safe field is kept, an extra sensitive name is filtered, the defaults still apply.
        #expect(safeKeys?["db_password"] as? String == "correcthorse")
        #expect(safeKeys?["plan"] as? String == "[Filtered]")
        #expect(safeKeys?["password"] as? String == "[Filtered]")

        // The dashboard shows each project's settings.
        let site = folder + "-site"
        defer { try? FileManager.default.removeItem(atPath: site) }
        let rendered = try await ServerProcess.run(["render", "--data", folder, "--out", site])
        #expect(rendered.status == 0, "\(rendered.err)")
        let safeHTML = try String(contentsOfFile: site + "/safe/index.html", encoding: .utf8)
        #expect(safeHTML.contains("<dt>Safe fields</dt><dd>db_password</dd>"))
        #expect(safeHTML.contains("<dt>IP addresses</dt><dd>Kept</dd>"))
        let openHTML = try String(contentsOfFile: site + "/open/index.html", encoding: .utf8)
        #expect(openHTML.contains("<dt>Scrubbing</dt><dd>Off: values are stored as sent</dd>"))
    }

    @Test func swiftRuntimeCrashFilesAreScrubbedButTheirImagesKept() async throws {
        // A real program whose fatal error message carries a card number and a token, built under a home-like path.
        let scratch = try TempFolder("swift-pii")
        let home = scratch.path + "/home/alice/bin"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let src = try scratch.write(
            "main.swift",
            """
            @inline(never) func charge(_ card: String) -> Never { fatalError("declined card \\(card) token Bearer \(Self.token)") }
            charge(CommandLine.arguments.count > 5 ? "none" : "\(Self.card)")
            """)
        let binary = home + "/payments"
        try Command.check("swiftc", ["-O", "-g", src, "-o", binary])
        let out = scratch.file("crashes")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let run = try Command.run(
            binary, [],
            environment: [
                "SWIFT_BACKTRACE": "enable=yes,format=json,symbolicate=off,threads=all,images=all,output-to=\(out)"
            ])
        #expect(run.status != 0)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: out).first)
        let written = try Data(contentsOf: URL(fileURLWithPath: out + "/" + name))
        // Swift 6.3's runtime writes "Illegal instruction" as the description, not fatalError's message; a
        // runtime or a wrapper that puts the message there (with user data in it) is what this guards against.
        var crash = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        crash["description"] = "Fatal error: declined card \(Self.card) token Bearer \(Self.token)"
        let file = try JSONSerialization.data(withJSONObject: crash)

        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("swift", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let posted = try await http.send(
            .POST, server.baseURL + "/api/v1/crashes/swift?app_version=1.0",
            headers: [("Authorization", "Bearer \(project.ingest)"), ("Content-Encoding", "gzip")],
            body: Payloads.gzip(Array(file)))
        #expect(posted.status == 202, "\(String(decoding: posted.body, as: UTF8.self))")
        let id = try #require((posted.json["accepted"] as? [String])?.first)
        let report = try await fetchReport(server, upload: project.upload, id)
        let message = (report["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("declined card [Filtered] token Bearer [Filtered]"), "\(message)")
        // The image path (under /home/alice) and its build-id are debug metadata: kept.
        let buildID = try #require(try ELFFixtures.readelfBuildID(binary))
        let modules = report["modules"] as? [[String: Any]] ?? []
        #expect(modules.contains { $0["build_id"] as? String == buildID && $0["path"] as? String == binary })

        let bytes = try stored(folder)
        #expect(bytes.contains(buildID) || bytes.contains("payments"))
        #expect(!bytes.contains(Self.card))
        #expect(!bytes.contains(Self.token))
    }

    @Test func sentryEnvelopesAndStoreBodiesAreScrubbed() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("sentry", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let eventID = "9ec79c33ec9942ab8353589fcb2e04dc"
        let event = #"""
            {"event_id":"\#(eventID)","timestamp":"2026-11-22T05:08:09Z","platform":"native","level":"error","release":"shop@1.0","message":"card \#(Self.card) declined","extra":{"password":"hunter2pw","url":"postgres://app:dbsecret9@db/1"},"user":{"id":"user-5","ip_address":"203.0.113.77"},"request":{"url":"https://shop.example.com/pay","env":{"REMOTE_ADDR":"198.51.100.23"}},"exception":{"values":[{"type":"PaymentError","value":"IBAN DE89370400440532013000 refused","stacktrace":{"frames":[{"function":"pay","abs_path":"/Users/alice/shop/pay.swift","instruction_addr":"0x1000"}]}}]},"debug_meta":{"images":[{"type":"elf","code_file":"/home/alice/lib/libshop.so","debug_id":"aba11aef-f7e7-e9e2-e1bc-84464f53a7e1","image_addr":"0x1000"}]}}
            """#
        let session =
            #"{"sid":"7c5e4a1e2f3b4c5d6e7f8091a2b3c4d5","did":"user-5","started":"2026-11-22T05:00:00Z","status":"ok","init":true,"attrs":{"release":"shop@1.0","ip_address":"203.0.113.78"}}"#
        var envelope = Array(#"{"event_id":"\#(eventID)","sent_at":"2026-11-22T05:08:09Z"}"#.utf8) + [0x0a]
        for (type, payload) in [("session", session), ("event", event)] {
            envelope +=
                Array(#"{"type":"\#(type)","length":\#(payload.utf8.count)}"#.utf8) + [0x0a] + Array(payload.utf8) + [
                    0x0a
                ]
        }
        let sent = try await http.send(
            .POST, server.baseURL + "/api/\(project.id)/envelope/",
            headers: [("X-Sentry-Auth", "Sentry sentry_key=\(project.ingest)"), ("Content-Encoding", "gzip")],
            body: Payloads.gzip(envelope))
        #expect(sent.status == 200, "\(String(decoding: sent.body, as: UTF8.self))")

        // The legacy store endpoint, one event JSON.
        let storeID = "0c3f9d3a6f1a4a53b2d1e9f0a8b7c6d5"
        let storeEvent =
            #"{"event_id":"\#(storeID)","timestamp":"2026-11-22T05:08:10Z","platform":"python","message":"retry with Bearer \#(Self.token)","extra":{"api_key":"key-777-secret"}}"#
        let stored1 = try await http.send(
            .POST, server.baseURL + "/api/\(project.id)/store/?sentry_key=\(project.ingest)",
            headers: [("Content-Type", "application/json")], body: Array(storeEvent.utf8))
        #expect(stored1.status == 200, "\(String(decoding: stored1.body, as: UTF8.self))")

        let read = try await fetchReport(server, upload: project.upload, eventID)
        let text = String(decoding: try JSONSerialization.data(withJSONObject: read), as: UTF8.self)
        #expect(text.contains("[Filtered]"))
        let keys = read["custom_keys"] as? [String: Any] ?? [:]
        #expect(keys["extra.password"] as? String == "[Filtered]")
        #expect(keys["extra.url"] as? String == "postgres://app:[Filtered]@db/1")
        #expect((read["error"] as? [String: Any])?["message"] as? String == "IBAN [Filtered] refused")
        let other = try await fetchReport(server, upload: project.upload, storeID)
        let otherText = String(decoding: try JSONSerialization.data(withJSONObject: other), as: UTF8.self)
        #expect(!otherText.contains(Self.token))

        let bytes = try stored(folder)
        #expect(bytes.contains("libshop.so"))  // debug metadata kept
        #expect(bytes.contains("aba11aef-f7e7-e9e2-e1bc-84464f53a7e1"))
        for secret in [
            Self.card, "hunter2pw", "dbsecret9", "203.0.113.77", "198.51.100.23", "203.0.113.78",
            "DE89370400440532013000", "/Users/alice", Self.token, "key-777-secret",
        ] {
            #expect(!bytes.contains(secret), "\(secret) was stored")
        }
    }

    // MARK: issue #39: bypasses, e-mail addresses and phone numbers

    /// One value per bypass of issue #39, each a string that must be stored nowhere.
    static let bypassSecrets = [
        "cookie-sess-771", "qs-secret-772", "form-secret-773", "cookie-secret-774", "hdr-secret-775", "hdr-secret-776",
        "hdr-secret-777", "long-secret-778", "log-secret-779", "crumb-secret-780", "198.51.100.81", "text-secret-782",
        "vars-secret-783", "vars-secret-784", "native-sess-785", "native-secret-786", "198.51.100.87",
    ]
    static let email = "jane.doe@example.com"
    static let phone = "+44 20 7946 0958"

    static func bypassEnvelope(_ eventID: String) -> [UInt8] {
        let longKey = String(repeating: "k", count: 300)
        let event = #"""
            {"event_id":"\#(eventID)","timestamp":"2026-11-22T05:08:09Z","platform":"python","level":"error","release":"shop@1.0",
             "user":{"email":"\#(email)"},
             "extra":{"address":"\#(card)","session_id":"cookie-sess-771","\#(longKey)":"long-secret-778"},
             "request":{"url":"https://shop.example.com/pay","query_string":"api_key=qs-secret-772&page=2","data":"user=bob&password=form-secret-773",
               "headers":[["Cookie","sessionid=cookie-secret-774; theme=dark"],["X-Api-Key","hdr-secret-775"],["X-Forwarded-For","198.51.100.81"]],
               "env":{"api-key":"hdr-secret-776","private-key":"hdr-secret-777","X-Real-IP":"198.51.100.87"}},
             "breadcrumbs":{"values":[{"timestamp":1795000000,"category":"http","data":{"url":"https://api.example.com/v1?api_key=crumb-secret-780"}}]},
             "exception":{"values":[{"type":"LoginError","value":"contact \#(email) or \#(phone) after password=text-secret-782",
               "stacktrace":{"frames":[{"function":"login","module":"shop.auth","vars":{"pwd":"vars-secret-783","passphrase":"vars-secret-784"}}]}}]}}
            """#
        // An item before the event was stored unscrubbed inside the event's payload.
        let log = #"{"items":[{"body":"retry password=log-secret-779"}]}"#
        var envelope = Array(#"{"event_id":"\#(eventID)","sent_at":"2026-11-22T05:08:09Z"}"#.utf8) + [0x0a]
        for (type, payload) in [("log", log), ("event", event)] {
            envelope +=
                Array(#"{"type":"\#(type)","length":\#(payload.utf8.count)}"#.utf8) + [0x0a] + Array(payload.utf8) + [
                    0x0a
                ]
        }
        return envelope
    }

    static func bypassNativeReport(_ n: Int) -> String {
        #"""
        {"event_id":"\#(Payloads.eventID(n))","kind":"nonfatal","timestamp":"2026-11-22T05:08:09Z","user_id":"\#(email)",
         "error":{"type":"PaymentError","message":"call \#(phone)"},
         "custom_keys":{"session_id":"native-sess-785","X-Api-Key":"native-secret-786","address":"\#(card)"}}
        """#
    }

    @Test func issue39BypassesAreClosedAndContactsMaskedPerProject() async throws {
        // Given two projects on one server: "masked" with the defaults, "plain" with e-mail/phone masking off.
        let folder = ServerProcess.newFolder()
        let masked = try await ServerProcess.createProject("masked", in: folder)
        let plain = try await ServerProcess.createProject("plain", in: folder)
        let configured = try await configure("plain", in: folder, ["--mask-emails-and-phones", "off"])
        #expect(configured["mask_emails_and_phones"] as? Bool == false)
        #expect(try await configure("masked", in: folder, [])["mask_emails_and_phones"] as? Bool == true)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        // When each gets the same Sentry envelope and the same native report.
        let events = [(masked, "1c3f9d3a6f1a4a53b2d1e9f0a8b7c6d5", 1), (plain, "2c3f9d3a6f1a4a53b2d1e9f0a8b7c6d5", 2)]
        for (project, eventID, n) in events {
            let sent = try await http.send(
                .POST, server.baseURL + "/api/\(project.id)/envelope/",
                headers: [("X-Sentry-Auth", "Sentry sentry_key=\(project.ingest)"), ("Content-Encoding", "gzip")],
                body: Payloads.gzip(Self.bypassEnvelope(eventID)))
            #expect(sent.status == 200, "\(String(decoding: sent.body, as: UTF8.self))")
            let posted = try await http.postReports(server.baseURL, key: project.ingest, Self.bypassNativeReport(n))
            #expect(posted.status == 202, "\(String(decoding: posted.body, as: UTF8.self))")
        }

        // Then the masked project shows a pseudonymous user id, the same for both formats, and masks in text.
        let maskedEvent = try await fetchReport(server, upload: masked.upload, events[0].1)
        let maskedNative = try await fetchReport(server, upload: masked.upload, Payloads.eventID(1))
        let pseudonym = try #require(maskedEvent["user_id"] as? String)
        #expect(
            pseudonym.hasPrefix("email:") && pseudonym.hasSuffix(":j***@example.com")
                && pseudonym.count == 6 + 32 + 1 + 16, "\(pseudonym)")
        #expect(maskedNative["user_id"] as? String == pseudonym)
        #expect(
            (maskedEvent["error"] as? [String: Any])?["message"] as? String
                == "contact j***@example.com or +** ** **** **58 after password=[Filtered]")
        #expect((maskedNative["error"] as? [String: Any])?["message"] as? String == "call +** ** **** **58")
        let nativeKeys = maskedNative["custom_keys"] as? [String: Any] ?? [:]
        #expect(nativeKeys["address"] as? String == "[Filtered]")
        #expect(nativeKeys["session_id"] as? String == "[Filtered]")
        #expect(nativeKeys["X-Api-Key"] as? String == "[Filtered]")
        let eventKeys = maskedEvent["custom_keys"] as? [String: Any] ?? [:]
        #expect(eventKeys["extra.address"] as? String == "[Filtered]")

        // The plain project keeps contacts as sent, under its own settings, and still closes every bypass.
        let plainEvent = try await fetchReport(server, upload: plain.upload, events[1].1)
        let plainNative = try await fetchReport(server, upload: plain.upload, Payloads.eventID(2))
        #expect(plainEvent["user_id"] as? String == Self.email)
        #expect(plainNative["user_id"] as? String == Self.email)
        #expect(
            (plainEvent["error"] as? [String: Any])?["message"] as? String
                == "contact \(Self.email) or \(Self.phone) after password=[Filtered]")

        // And no bypassed value is anywhere in the data folder (payloads inflated, database files raw).
        let bytes = try stored(folder)
        #expect(bytes.contains("shop.example.com"))  // the payloads were found and inflated
        for secret in Self.bypassSecrets + [Self.card] {
            #expect(!bytes.contains(secret), "\(secret) was stored")
        }
    }
}
