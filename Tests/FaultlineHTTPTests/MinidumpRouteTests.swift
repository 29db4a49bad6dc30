import AsyncHTTPClient
import Formats
import Foundation
import TestSupport
import Testing

/// Every way a minidump reaches the real server on loopback: Sentry's minidump endpoint with a form (extra fields and
/// a `sentry` JSON field), a raw body, Crashpad's gzip'd and chunked form without a Content-Length (sent by curl), an
/// envelope's `event.minidump` attachment, and the real `crashpad_handler` uploading by itself. Each is answered with
/// the event id, stored with its dump (the environment dropped), walked by the server's worker and grouped: the same
/// dump through each route is one issue. Bad bodies get 400/413/401 with JSON naming what was wrong.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct MinidumpRouteTests {
    let http = HTTP(client: HTTPClient.shared)

    struct Setup {
        let server: ServerProcess
        let project: (ingest: String, upload: String, id: Int)
        var minidumpURL: String { server.baseURL + "/api/\(project.id)/minidump/?sentry_key=\(project.ingest)" }
        var read: [(String, String)] { [("Authorization", "Bearer \(project.upload)")] }
    }

    func start() async throws -> Setup {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("native", in: folder)
        try await Self.keepMinidumps("native", in: folder)
        let server = try await ServerProcess(folder: folder)
        return Setup(server: server, project: project)
    }

    /// Keeps the project's dumps for the retention period, so the tests read them back after the worker walked them
    /// (by default a dump is deleted once its walk is final).
    static func keepMinidumps(_ slug: String, in folder: String) async throws {
        let set = try await ServerProcess.run(
            ["projects", "configure", slug, "--data", folder, "--keep-minidumps", "retention-period"])
        guard set.status == 0 else { throw TestFailure("projects configure failed: \(set)") }
    }

    static let boundary = "----faultline-minidump-test"

    /// A `multipart/form-data` body of `parts` (name, file name, bytes).
    static func form(_ parts: [(String, String?, [UInt8])]) -> [UInt8] {
        var body: [UInt8] = []
        for (name, filename, bytes) in parts {
            var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\""
            if let filename { header += "; filename=\"\(filename)\"\r\nContent-Type: application/octet-stream" }
            body += Array((header + "\r\n\r\n").utf8) + bytes + Array("\r\n".utf8)
        }
        return body + Array("--\(boundary)--\r\n".utf8)
    }

    static let formType = ("Content-Type", "multipart/form-data; boundary=\(boundary)")

    /// An envelope as sentry-native's breakpad backend sends one: the event, then the dump as `event.minidump`.
    static func envelope(eventID: String, event: String, dump: [UInt8]) -> [UInt8] {
        var out = Array("{\"event_id\":\"\(eventID)\"}\n".utf8)
        out += Array("{\"type\":\"event\",\"length\":\(event.utf8.count)}\n\(event)\n".utf8)
        out += Array(
            ("{\"type\":\"attachment\",\"length\":\(dump.count),\"filename\":\"minidump.dmp\","
                + "\"attachment_type\":\"event.minidump\"}\n").utf8)
        return out + dump + [0x0A]
    }

    /// The event id the endpoint answered with: Relay's hyphenated UUID as plain text.
    func answeredID(_ answer: HTTP.Answer) throws -> String {
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(answer.headers.first(name: "Content-Type")?.hasPrefix("text/plain") == true)
        #expect(text.count == 36 && text.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12], "\(text)")
        return text.replacingOccurrences(of: "-", with: "")
    }

    /// The stored `event.minidump` attachment of `eventID`, read from the data folder's database with Python's
    /// sqlite3 (attachments have no read route).
    static func storedDump(_ folder: String, eventID: String) throws -> [UInt8]? {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
            row = db.execute("SELECT bytes FROM attachments WHERE replace(event_id, '-', '') = ? "
                             "AND attachment_type = 'event.minidump'", (sys.argv[2],)).fetchone()
            print(bytes(row[0]).hex() if row else "")
            """
        let out = try Command.check("python3", ["-c", script, folder + "/faultline.sqlite", eventID])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !out.isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(out.utf8.count / 2)
        var digits = out.utf8.makeIterator()
        while let high = digits.next(), let low = digits.next() {
            guard let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// The report once the worker grouped it (`issue_id` set), or as it was when 30 s (× the margin) passed.
    func grouped(_ s: Setup, _ eventID: String) async throws -> [String: Any] {
        var report: [String: Any] = [:]
        _ = try await eventually {
            let answer = try await http.send(.GET, s.server.baseURL + "/api/v1/reports/\(eventID)", headers: s.read)
            report = answer.json
            return report["issue_id"] is Int
        }
        return report
    }

    // MARK: - Every route

    @Test func theSameDumpThroughEveryRouteIsStoredWalkedAndOneIssue() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let dump = try Crashpad.crash(.segfault).bytes

        // Sentry's form: extra fields, a `sentry` JSON field, the dump.
        let formID = "7077e450fa6f4594850bfed9428d1d98"
        let form = try await http.send(
            .POST, s.minidumpURL, headers: [Self.formType],
            body: Self.form([
                ("sentry", nil, Array(#"{"event_id":"\#(formID)","release":"shop@2.0","environment":"prod"}"#.utf8)),
                ("build", nil, Array("42".utf8)),
                ("upload_file_minidump", "crash.dmp", dump),
            ]))
        #expect(form.status == 200, "\(String(decoding: form.body, as: UTF8.self))")
        #expect(try answeredID(form) == formID)

        // The bare dump: its event id is Crashpad's report UUID, from the dump.
        let raw = try await http.send(
            .POST, s.minidumpURL, headers: [("Content-Type", "application/x-dmp")], body: dump)
        #expect(raw.status == 200, "\(String(decoding: raw.body, as: UTF8.self))")
        let rawID = try answeredID(raw)
        #expect(rawID != formID)

        // Crashpad's own framing: the form gzip'd, chunked, no Content-Length (curl does exactly that).
        let chunkedID = "8077e450fa6f4594850bfed9428d1d98"
        let scratch = try TempFolder("minidump-route")
        let file = scratch.path + "/upload.gz"
        let gzipped = Payloads.gzip(
            Self.form([
                ("prod", nil, Array("crashy".utf8)), ("ver", nil, Array("1.2.3".utf8)),
                ("sentry", nil, Array(#"{"event_id":"\#(chunkedID)"}"#.utf8)),
                ("upload_file_minidump", "crash.dmp", dump),
            ]))
        FileManager.default.createFile(atPath: file, contents: Data(gzipped))
        let curl = try Command.run(
            "curl",
            [
                "-sS", "-v", "-X", "POST", "-H", "Transfer-Encoding: chunked", "-H", "Content-Encoding: gzip",
                "-H", "\(Self.formType.0): \(Self.formType.1)", "--data-binary", "@" + file,
                "-w", "\n%{http_code}", s.minidumpURL + "&product=crashy&version=1.2.3",
            ])
        #expect(curl.status == 0, "\(curl.err)")
        // The request really went without a Content-Length.
        // (Header lines end in CRLF, one Character in Swift: split on any newline.)
        let sent = curl.err.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("> ") }.map { $0.lowercased() }
        #expect(sent.contains { $0.hasPrefix("> transfer-encoding: chunked") })
        #expect(!sent.contains { $0.hasPrefix("> content-length") }, "\(sent)")
        let lines = curl.out.split(separator: "\n")
        #expect(lines.last == "200", "\(curl.out)")
        #expect(lines.first.map { $0.replacingOccurrences(of: "-", with: "") } == chunkedID)

        // sentry-native's envelope with the dump as an `event.minidump` item, past nothing: answered in JSON.
        let envelopeID = "9077e450fa6f4594850bfed9428d1d98"
        let envelope = try await http.send(
            .POST, s.server.baseURL + "/api/\(s.project.id)/envelope/",
            headers: [("X-Sentry-Auth", "Sentry sentry_key=\(s.project.ingest), sentry_version=7")],
            body: Self.envelope(
                eventID: envelopeID,
                event: #"{"event_id":"\#(envelopeID)","platform":"native","release":"native@1.0"}"#,
                dump: dump))
        #expect(envelope.status == 200, "\(String(decoding: envelope.body, as: UTF8.self))")
        #expect(envelope.json["id"] as? String == envelopeID)

        // Each is stored, walked and grouped: one issue, a SIGSEGV.
        var issues: Set<Int> = []
        for id in [formID, rawID, chunkedID, envelopeID] {
            let report = try await grouped(s, id)
            let issue = try #require(report["issue_id"] as? Int, "\(id): \(report)")
            issues.insert(issue)
            #expect(report["kind"] as? String == "crash", "\(id)")
            #expect((report["error"] as? [String: Any])?["type"] as? String == "SIGSEGV", "\(id): \(report)")
            // The dump is kept with the event, without the environment.
            let stored = try #require(try Self.storedDump(s.server.folder, eventID: id), "\(id) has no stored dump")
            let minidump = try Minidump(bytes: stored)
            #expect(!minidump.streams.contains { $0.type == Minidump.StreamType.linuxEnviron }, "\(id)")
            #expect(minidump.threads.count == (try Minidump(bytes: dump)).threads.count, "\(id)")
        }
        #expect(issues.count == 1, "\(issues)")

        // What the requests said around the dump.
        let fromForm = try await grouped(s, formID)
        #expect(fromForm["release"] as? String == "2.0")
        #expect(fromForm["environment"] as? String == "prod")
        #expect((fromForm["custom_keys"] as? [String: Any])?["extra.build"] as? String == "42", "\(fromForm)")
        #expect(try await grouped(s, chunkedID)["release"] as? String == "1.2.3")
        #expect(try await grouped(s, envelopeID)["release"] as? String == "1.0")

        // A retried upload is the same event, stored once.
        let again = try await http.send(
            .POST, s.minidumpURL, headers: [("Content-Type", "application/octet-stream")], body: dump)
        #expect(again.status == 200)
        #expect(try answeredID(again) == rawID)
        let listed = try await http.send(.GET, s.server.baseURL + "/api/v1/reports", headers: s.read)
        #expect((listed.json["reports"] as? [[String: Any]])?.count == 4)
    }

    /// A Breakpad dump holds the process's environment: the stored dump does not.
    @Test func theEnvironmentIsNotStored() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../tools/fuzzing/seeds/minidump/breakpad-arm64.dmp").standardized
        let dump = [UInt8](try Data(contentsOf: seeds))
        #expect(try Minidump(bytes: dump).linux.environ?.contains("TOKEN=secret") == true)

        let answer = try await http.send(
            .POST, s.minidumpURL, headers: [("Content-Type", "application/octet-stream")], body: dump)
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let id = try answeredID(answer)
        let stored = try #require(try Self.storedDump(s.server.folder, eventID: id))
        #expect(try Minidump(bytes: stored).linux.environ == nil)
        #expect(!String(decoding: stored, as: UTF8.self).contains("TOKEN=secret"))
        #expect(try Minidump(bytes: stored).linux.cmdLine?.first == "/usr/bin/shop")

        // Nor through the envelope route.
        let envelopeID = "a077e450fa6f4594850bfed9428d1d98"
        let envelope = try await http.send(
            .POST, s.server.baseURL + "/api/\(s.project.id)/envelope/?sentry_key=\(s.project.ingest)",
            body: Self.envelope(eventID: envelopeID, event: #"{"platform":"native"}"#, dump: dump))
        #expect(envelope.status == 200, "\(String(decoding: envelope.body, as: UTF8.self))")
        let fromEnvelope = try #require(try Self.storedDump(s.server.folder, eventID: envelopeID))
        #expect(try Minidump(bytes: fromEnvelope).linux.environ == nil)
        #expect(!String(decoding: fromEnvelope, as: UTF8.self).contains("TOKEN=secret"))
    }

    /// An envelope's dump is kept up to the dump limit (16 MiB), not the 5 MiB of other attachments.
    @Test func anEnvelopesDumpPastTheAttachmentLimitIsKeptAndWalked() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        // A real dump followed by 6 MiB that no stream points at.
        let dump = try Crashpad.crash(.segfault).bytes + [UInt8](repeating: 0, count: 6 << 20)
        let id = "b077e450fa6f4594850bfed9428d1d98"
        let answer = try await http.send(
            .POST, s.server.baseURL + "/api/\(s.project.id)/envelope/?sentry_key=\(s.project.ingest)",
            headers: [("Content-Encoding", "gzip")],
            body: Payloads.gzip(Self.envelope(eventID: id, event: #"{"release":"big@1.0"}"#, dump: dump)))
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.json["id"] as? String == id)
        let report = try await grouped(s, id)
        #expect((report["error"] as? [String: Any])?["type"] as? String == "SIGSEGV", "\(report)")
        #expect(report["release"] as? String == "1.0")
        #expect(try Self.storedDump(s.server.folder, eventID: id) != nil)

        // Past the dump limit, it is refused as the minidump endpoint refuses it.
        let tooBig = try Crashpad.crash(.segfault).bytes + [UInt8](repeating: 0, count: 17 << 20)
        let refused = try await http.send(
            .POST, s.server.baseURL + "/api/\(s.project.id)/envelope/?sentry_key=\(s.project.ingest)",
            headers: [("Content-Encoding", "gzip")],
            body: Payloads.gzip(Self.envelope(eventID: id, event: "{}", dump: tooBig)))
        #expect(refused.status == 413, "\(String(decoding: refused.body, as: UTF8.self))")
    }

    // MARK: - The real Crashpad

    /// `crashpad_handler --url=…` posts the dump as it does for any server: accepted, stored with the annotations'
    /// release (`prod@ver`) and the client's id as the user.
    @Test func theRealCrashpadHandlerUploadsAndTheReportIsStored() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let crash = try Crashpad.upload(.segfault, to: s.minidumpURL)
        // The handler moves a dump it uploaded (answered 200) to `completed`.
        #expect(crash.dump.contains("/completed/"), "\(crash.dump)")

        var reports: [[String: Any]] = []
        #expect(
            try await eventually {
                let answer = try await http.send(.GET, s.server.baseURL + "/api/v1/reports", headers: s.read)
                reports = answer.json["reports"] as? [[String: Any]] ?? []
                return reports.count == 1
            })
        let id = try #require(reports.first?["event_id"] as? String)
        let report = try await grouped(s, id)
        #expect(report["release"] as? String == "1.2.3")
        #expect(report["user_id"] as? String == Crashpad.clientGUID, "\(report)")
        #expect((report["error"] as? [String: Any])?["type"] as? String == "SIGSEGV")
        #expect(report["issue_id"] is Int)
        #expect(try Self.storedDump(s.server.folder, eventID: id.replacingOccurrences(of: "-", with: "")) != nil)
    }

    // MARK: - Refusals

    @Test func badBodiesAreRefusedWithJSONNamingWhatWasWrong() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let dump = try Crashpad.crash(.segfault).bytes

        // Not a minidump, bare or in the form: 400 naming the field.
        let text = try await http.send(
            .POST, s.minidumpURL, headers: [("Content-Type", "application/octet-stream")],
            body: Array("not a dump at all".utf8))
        #expect(text.status == 400)
        #expect(text.json["field"] as? String == "upload_file_minidump", "\(text.json)")
        let formed = try await http.send(
            .POST, s.minidumpURL, headers: [Self.formType],
            body: Self.form([("upload_file_minidump", "crash.dmp", Array("ELF and more".utf8))]))
        #expect(formed.status == 400)
        #expect(formed.json["field"] as? String == "upload_file_minidump")
        let missing = try await http.send(
            .POST, s.minidumpURL, headers: [Self.formType], body: Self.form([("build", nil, Array("42".utf8))]))
        #expect(missing.status == 400)
        #expect(missing.json["field"] as? String == "upload_file_minidump")
        // `MDMP` and then nonsense: the dump cannot be read.
        let broken = try await http.send(
            .POST, s.minidumpURL, headers: [("Content-Type", "application/x-dmp")],
            body: Array("MDMP".utf8) + [UInt8](repeating: 0xFF, count: 64))
        #expect(broken.status == 400)
        #expect(broken.json["field"] as? String == "upload_file_minidump", "\(broken.json)")

        // Too large once inflated (a gzip'd body of 21 MiB, the dump limit is 16 MiB and the body's 20).
        let big = Payloads.gzip(dump + [UInt8](repeating: 0, count: 21 << 20))
        let inflated = try await http.send(
            .POST, s.minidumpURL, headers: [("Content-Type", "application/x-dmp"), ("Content-Encoding", "gzip")],
            body: big)
        #expect(inflated.status == 413, "\(String(decoding: inflated.body, as: UTF8.self))")
        // A dump part that inflates past the dump limit, in a form under the body limit.
        let bigPart = try await http.send(
            .POST, s.minidumpURL, headers: [Self.formType],
            body: Self.form([
                ("upload_file_minidump", "crash.dmp.gz", Payloads.gzip(dump + [UInt8](repeating: 0, count: 17 << 20)))
            ]))
        #expect(bigPart.status == 413, "\(String(decoding: bigPart.body, as: UTF8.self))")
        // A declared length past the limit: answered before the body.
        let connection = try RawConnection(port: s.server.port)
        try connection.send(
            "POST /api/\(s.project.id)/minidump/?sentry_key=\(s.project.ingest) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/x-dmp\r\nContent-Length: \(21 << 20)\r\n\r\nMDMP")
        let declared = try #require(try await connection.readResponse(within: .seconds(20)))
        #expect(declared.status == 413)
        // Chunked with no length, past the limit: cut off while reading.
        let scratch = try TempFolder("minidump-route-big")
        FileManager.default.createFile(
            atPath: scratch.path + "/big.dmp", contents: Data(dump + [UInt8](repeating: 7, count: 21 << 20)))
        let curl = try Command.run(
            "curl",
            [
                "-sS", "-X", "POST", "-H", "Transfer-Encoding: chunked", "-H", "Content-Type: application/x-dmp",
                "--data-binary", "@" + scratch.path + "/big.dmp", "-o", "/dev/null", "-w", "%{http_code}",
                s.minidumpURL,
            ])
        #expect(curl.out.hasSuffix("413"), "\(curl.out) \(curl.err)")

        // A wrong key: 401, and nothing was stored.
        let wrongKey = try await http.send(
            .POST, s.server.baseURL + "/api/\(s.project.id)/minidump?sentry_key=0123456789abcdef",
            headers: [("Content-Type", "application/x-dmp")], body: dump)
        #expect(wrongKey.status == 401)
        let noKey = try await http.send(
            .POST, s.server.baseURL + "/api/\(s.project.id)/minidump", headers: [("Content-Type", "application/x-dmp")],
            body: dump)
        #expect(noKey.status == 401)
        let listed = try await http.send(.GET, s.server.baseURL + "/api/v1/reports", headers: s.read)
        #expect((listed.json["reports"] as? [[String: Any]])?.isEmpty == true, "\(listed.json)")
        // And the server still serves.
        let fine = try await http.send(
            .POST, s.minidumpURL, headers: [("Content-Type", "application/x-dmp")], body: dump)
        #expect(fine.status == 200)
    }

    /// Dumps count against the project's quota with its debug files: a dump that would take the project past it is
    /// refused with 429 `quota_exceeded` and `Retry-After` (Crashpad keeps the report and sends it again), on the
    /// minidump endpoint and in an envelope alike, and nothing of it is stored.
    @Test func aDumpPastTheProjectsQuotaIsRefusedAndNotStored() async throws {
        let scratch = try TempFolder("minidump-quota")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("native", in: folder)
        let server = try await ServerProcess(folder: folder, arguments: ["--debug-file-quota-mb", "1"])
        defer { server.cleanUp() }
        // A debug file that leaves a few KiB of the 1 MiB quota.
        let big = "static const char filler[1030000] = {1};\nint main(void) { return filler[12345]; }\n"
        let binary = try ELFFixtures.compileC(big, name: "big", in: scratch, flags: ["-O0"])
        let size = (try FileManager.default.attributesOfItem(atPath: binary)[.size] as? Int) ?? 0
        #expect(size > 1_030_000 && size < 1 << 20, "\(size)")
        let buildID = try #require(try ELFFixtures.readelfBuildID(binary))
        let put = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)",
            headers: [("Authorization", "Bearer \(project.upload)")],
            body: Array(try Data(contentsOf: URL(fileURLWithPath: binary))))
        #expect(put.status == 201, "\(put.json)")

        let dump = try Crashpad.crash(.segfault).bytes
        #expect(dump.count > (1 << 20) - size)
        let url = server.baseURL + "/api/\(project.id)/minidump/?sentry_key=\(project.ingest)"
        let raw = try await http.send(.POST, url, headers: [("Content-Type", "application/x-dmp")], body: dump)
        #expect(raw.status == 429, "\(String(decoding: raw.body, as: UTF8.self))")
        #expect(raw.headers.first(name: "Retry-After") != nil)
        #expect(String(decoding: raw.body, as: UTF8.self).contains("quota_exceeded"))
        let event = #"{"event_id":"5e1f0000000040008000000000000001","platform":"native","level":"fatal"}"#
        let posted = try await http.send(
            .POST, server.baseURL + "/api/\(project.id)/envelope/?sentry_key=\(project.ingest)",
            body: Self.envelope(eventID: "5e1f0000000040008000000000000001", event: event, dump: dump))
        #expect(posted.status == 429, "\(String(decoding: posted.body, as: UTF8.self))")
        let reports = try await http.send(
            .GET, server.baseURL + "/api/v1/reports?limit=5", headers: [("Authorization", "Bearer \(project.upload)")])
        #expect((reports.json["reports"] as? [Any])?.isEmpty == true)
    }
}
