import FaultlineCore
import Formats
import Foundation
import Testing

@Suite struct NativeReportsTests {
    static let crash = """
        {
          "event_id": "7077e450-fa6f-4594-850b-fed9428d1d98",
          "kind": "crash",
          "timestamp": "2026-11-22T05:08:09.152Z",
          "session_id": "4FAA8588-5e83-4798-b470-e562a7baaa05",
          "user_id": "user-42",
          "install_id": "install-7",
          "environment": "production",
          "app": {"id": "com.example.app", "version": "2.1.0", "build": 310},
          "device": {"model": "Pixel 8", "os": "Android", "os_version": "15", "arch": "arm64",
                     "memory": 8589934592, "free_disk": 1073741824, "locale": "de_DE"},
          "error": {"type": "SIGSEGV", "code": 11, "message": "Segmentation fault"},
          "threads": [
            {"name": "main", "crashed": true, "frames": [
              {"address": "0x7f0000001234", "module": "libapp.so"},
              {"function": "main", "file": "main.swift", "line": 12, "column": 5}
            ]},
            {"name": "worker", "frames": [{"address": 4096}]}
          ],
          "modules": [
            {"name": "libapp.so", "path": "/data/app/libapp.so", "build_id": "ABA11AEFF7E7E9E2E1BC84464F53A7E183A8930A",
             "base_address": "0x7f0000000000", "end_address": "0x7f0000100000"},
            {"name": "libc.so", "base_address": "0x7f1000000000", "size": 65536}
          ],
          "breadcrumbs": [
            {"timestamp": 1795324080.5, "category": "ui", "level": "info", "message": "tapped Pay", "data": {"screen": "cart", "items": 3}}
          ],
          "custom_keys": {"plan": "pro", "retries": 2, "beta": true},
          "fingerprint": ["payment-crash"]
        }
        """

    @Test func decodesEveryFieldOfAFullCrashReport() throws {
        let decoded = try NativeReports.decode(Array(Self.crash.utf8), limits: IngestLimits())
        #expect(!decoded.isBatch)
        let report = try #require(try decoded.items.first?.get().report)
        #expect(report.eventID.rawValue == "7077e450fa6f4594850bfed9428d1d98")
        #expect(report.kind == .crash)
        #expect(report.timestamp == Timestamps.parseISO8601("2026-11-22T05:08:09.152Z"))
        #expect(report.sessionID?.rawValue == "4faa8588-5e83-4798-b470-e562a7baaa05")
        #expect(report.userKey == "user-42")
        #expect(report.release == "2.1.0")
        #expect(report.build == "310")
        #expect(report.device.memoryBytes == 8_589_934_592)
        #expect(report.device.locale == "de_DE")
        #expect(report.error == ErrorInfo(type: "SIGSEGV", code: "11", message: "Segmentation fault"))
        #expect(report.threads.count == 2)
        #expect(report.threads[0].crashed)
        #expect(report.threads[0].frames[0].address == 0x7f00_0000_1234)
        #expect(report.threads[0].frames[1].function == "main")
        #expect(report.threads[1].frames[0].address == 4096)
        #expect(report.modules[0].buildID?.rawValue == "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")
        #expect(report.modules[0].size == 0x100000)
        #expect(report.modules[1].size == 65536)
        #expect(report.breadcrumbs[0].data == ["screen": "cart", "items": "3"])
        #expect(report.customKeys.map(\.key) == ["beta", "plan", "retries"])
        #expect(report.customKeys.map(\.value) == [.bool(true), .string("pro"), .number(2)])
        #expect(report.fingerprint == ["payment-crash"])
    }

    @Test func nonFatalErrorsTakeDomainAndReason() throws {
        let body =
            #"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"nonfatal","timestamp":"2026-11-22T05:08:09Z","error":{"domain":"NSURLErrorDomain","code":-1001,"reason":"timed out"}}"#
        let report = try NativeReports.decode(Array(body.utf8), limits: IngestLimits()).items[0].get().report
        #expect(report.error == ErrorInfo(type: "NSURLErrorDomain", code: "-1001", message: "timed out"))
    }

    @Test(arguments: [
        (#"{"kind":"crash","timestamp":1}"#, "event_id"),
        (#"{"event_id":"nope","kind":"crash","timestamp":1}"#, "event_id"),
        (#"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"fatal","timestamp":1}"#, "kind"),
        (#"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash"}"#, "timestamp"),
        (#"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":"noon"}"#, "timestamp"),
        (
            #"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"threads":[{"frames":[{"address":"0xZZ"}]}]}"#,
            "threads[0].frames[0].address"
        ),
        (
            #"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"threads":[{"frames":[{}]}]}"#,
            "threads[0].frames[0]"
        ),
        (
            #"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"modules":[{"name":"a","base_address":"0x10","build_id":"../x"}]}"#,
            "modules[0].build_id"
        ),
        (
            #"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"modules":[{"name":"a"}]}"#,
            "modules[0].base_address"
        ),
        (
            #"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"custom_keys":{"a":{"nested":1}}}"#,
            "custom_keys.a"
        ),
        (#"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"threads":{"x":1}}"#, "threads"),
    ])
    func invalidFieldsAreNamed(_ body: String, _ field: String) {
        let error = #expect(throws: FormatError.self) {
            try NativeReports.decode(Array(body.utf8), limits: IngestLimits())
        }
        #expect(error?.code == .invalidField)
        #expect(error?.field == field)
    }

    @Test func notJSONIsMalformed() {
        let error = #expect(throws: FormatError.self) {
            try NativeReports.decode(Array("{\"a\": nul}".utf8), limits: IngestLimits())
        }
        #expect(error?.code == .malformedJSON)
    }

    @Test func aBatchKeepsGoodReportsAndNamesTheBadOnes() throws {
        let body =
            #"{"reports":[{"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1},{"event_id":"x","kind":"crash","timestamp":1},{"event_id":"c077e450fa6f4594850bfed9428d1d98","kind":"nonfatal","timestamp":2}]}"#
        let decoded = try NativeReports.decode(Array(body.utf8), limits: IngestLimits())
        #expect(decoded.isBatch)
        #expect(decoded.items.count == 3)
        #expect((try? decoded.items[0].get()) != nil)
        #expect((try? decoded.items[2].get()) != nil)
        guard case .failure(let error) = decoded.items[1] else { Issue.record("expected a failure"); return }
        #expect(error.field == "reports[1].event_id")
    }

    @Test func oneReportOverTheSizeLimitIsRefusedAlone() throws {
        var limits = IngestLimits()
        limits.maxReportBytes = 200
        let big = String(repeating: "x", count: 300)
        let body =
            #"[{"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1},{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"environment":"\#(big)"}]"#
        let decoded = try NativeReports.decode(Array(body.utf8), limits: limits)
        #expect((try? decoded.items[0].get()) != nil)
        guard case .failure(let error) = decoded.items[1] else { Issue.record("expected a failure"); return }
        #expect(error.code == .tooLarge)
    }

    /// What decoding gave: the body, or the format error (any other error is a failure of the test).
    func outcome(_ decode: () throws -> NativeReports.Decoded) -> Result<NativeReports.Decoded, FormatError> {
        do {
            return .success(try decode())
        } catch let error as FormatError {
            return .failure(error)
        } catch {
            Issue.record("not a FormatError: \(error)")
            return .failure(FormatError(.malformedJSON, "\(error)"))
        }
    }

    /// `decode` parses a body that is one report without splitting it first; whatever the body, it answers exactly
    /// as the splitter's path does (the same report and range, the same batch, the same error).
    @Test func aSingleReportAnswersAsTheSplittersPathDoes() throws {
        let one = #"{"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1}"#
        let two = #"{"event_id":"b077e450fa6f4594850bfed9428d1d98","kind":"nonfatal","timestamp":2}"#
        let bom = "\u{FEFF}"
        let bodies = [
            Self.crash, " \n\t" + Self.crash + "\r\n ", bom + Self.crash,
            bom + " " + bom + one + " \n" + bom + "\n" + bom,
            one, "\(one) ", #"{"reports":[\#(one),\#(two)]}"#, "[\(one),\(two)]", "[\(one)]",
            // A batch key after the report's own fields is a batch still, and a `reports` that is not an array is not.
            #"{"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"reports":[\#(two)]}"#,
            #"{"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"reports":{"a":[1]}}"#,
            #"{"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1, "reports" : [] }"#,
            // Escaped, the key is not the splitter's batch key; nested, it is any other value.
            #"{"report\u0073":[\#(two)],"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1}"#,
            #"{"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"x":{"reports":[1]}}"#,
            // Refused: a field missing or wrong, not JSON, two values, trailing bytes, a mark inside, empty.
            #"{"event_id":"a077e450fa6f4594850bfed9428d1d98","timestamp":1}"#,
            #"{"event_id":"x","kind":"crash","timestamp":1}"#,
            "{\"a\": nul}", one + one, one + "x", "x" + one, "{\(bom)\"event_id\":1}", "{}", "", " ", "{", "}", "[]",
            bom,
            // Duplicate keys: the last one wins on both paths.
            #"{"event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"nonfatal","kind":"crash","timestamp":1}"#,
        ]
        var limits = IngestLimits()
        for (index, body) in bodies.enumerated() {
            let bytes = Array(body.utf8)
            #expect(
                outcome { try NativeReports.decode(bytes, limits: limits) }
                    == outcome { try NativeReports.decodeSplitting(bytes, limits: limits) },
                "body \(index): \(body.prefix(60))")
        }
        // Too large for one report: the same refusal.
        limits.maxReportBytes = 40
        let bytes = Array(one.utf8)
        let error = #expect(throws: FormatError.self) { try NativeReports.decode(bytes, limits: limits) }
        #expect(error?.code == .tooLarge)
        #expect(
            outcome { try NativeReports.decodeSplitting(bytes, limits: limits) }
                == outcome { try NativeReports.decode(bytes, limits: limits) })
        // The report's range is the object without what surrounds it.
        let padded = Array((bom + "  " + one + "\n").utf8)
        let decoded = try NativeReports.decode(padded, limits: IngestLimits())
        #expect(decoded.isBatch == false)
        #expect(try decoded.items.first?.get().range == 5..<(5 + one.utf8.count))
    }

    /// Scrubbing while parsing (one walk) must answer exactly as scrubbing first and parsing the rewritten bytes.
    @Test func aReportScrubbedWhileParsedEqualsOneScrubbedFirst() throws {
        let head = #""event_id":"a077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1"#
        func body(_ rest: String) -> String { "{\(head),\(rest)}" }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        // Bodies the shortcut reads (it must succeed on them, or this test would not test it) …
        let shortcut = [
            Self.crash, " \n" + Self.crash + "\n",
            body(#""custom_keys":{"password":"hunter2","card":"4111 1111 1111 1111","n":1}"#),
            body(
                #""breadcrumbs":[{"timestamp":1,"message":"Bearer abc.def","data":{"token":"t0k","url":"https://u:pw@host/x","k":3}}]"#
            ),
            body(#""error":{"type":"E","message":"card 4111111111111111 at /home/alice/app and C:\\Users\\bob\\x"}"#),
            // Escapes in a scrubbed string, in an unscrubbed one, and in a key.
            body(
                #""error":{"type":"E","message":"\u0034111111111111111 \"q\" \u00e9"},"user_id":"\u0061b\n","pass\u0077ord_hint":"x""#
            ),
            // What the parser skips is walked by the scrubber: nested secrets in unknown fields.
            body(#""extra":{"deep":[{"api_key":[1,true,{"x":"y"}]},"iban DE89370400440532013000"],"ip_address":null}"#),
            // Kept subtrees stay as sent; a null IP stays null.
            body(
                #""modules":[{"name":"/home/carol/lib.so","base_address":"0x1000"}],"debug_meta":{"password":"p"},"ip_address":null"#
            ),
            body(
                #""threads":[{"name":"secret-worker","frames":[{"function":"auth()","file":"/Users/dave/a.swift","line":3}]}]"#
            ),
            // Byte order marks and whitespace around the report (the protocol tolerates them).
            "\u{FEFF}" + Self.crash,
            "\u{FEFF} " + body(#""error":{"type":"E","message":"4111111111111111"}"#) + "\n\u{FEFF}",
        ]
        // … and bodies it hands back to the two passes (a number or bool that becomes a string, an IP address to
        // drop, a batch, errors), where the answers are theirs by construction; compared too.
        let others = [
            body(#""custom_keys":{"password":12}"#), body(#""custom_keys":{"secret":true}"#),
            body(#""ip_address":"1.2.3.4""#),
            #"{"reports":[{\#(head)}]}"#, "[{\(head)}]", "\u{FEFF}[" + body(#""user_id":"Bearer x""#) + "]",
            body(#""extra":\#(deep)"#),
            body(#""error":{"type":"E","message":"bad \q escape"}"#),
            body(#""error":{"type":"E","message":"bad \q 4111111111111111"}"#),
            body(#""fault_address":"0x4111111111111111""#), body(#""kind":"nonfatal""#), "{\(head)", "", "{}",
        ]
        let scrubbers = [
            Scrubber(settings: PrivacySettings()),
            Scrubber(
                settings: PrivacySettings(safeFields: ["password"], sensitiveFields: ["message", "name", "line"])),
            Scrubber(settings: PrivacySettings(sensitiveFields: ["device", "threads"])),
            Scrubber(settings: PrivacySettings(scrubbing: false)),
        ]
        func answer(_ decode: () throws -> (decoded: NativeReports.Decoded, scrubbed: [UInt8]?)) -> String {
            do {
                let (decoded, scrubbed) = try decode()
                return "\(decoded) \(scrubbed.map { String(decoding: $0, as: UTF8.self) } ?? "unchanged")"
            } catch {
                return "error \(error)"
            }
        }
        for (s, scrubber) in scrubbers.enumerated() {
            for (index, text) in (shortcut + others).enumerated() {
                let bytes = Array(text.utf8)
                let once = answer { try NativeReports.decode(bytes, limits: IngestLimits(), scrubber: scrubber) }
                let twice = answer {
                    try NativeReports.decodeScrubbingFirst(bytes, limits: IngestLimits(), scrubber: scrubber)
                }
                #expect(once == twice, "scrubber \(s), body \(index): \(text.prefix(80))")
                // Scrubber 1 filters `line` (a number in bodies 0, 1, 8 and 9), scrubber 2 whole objects with numbers.
                if index < shortcut.count, s != 2, s != 1 || ![0, 1, 8, 9].contains(index) {
                    #expect(
                        NativeReports.singleScrubbing(bytes, limits: IngestLimits(), scrubber: scrubber) != nil,
                        "scrubber \(s), body \(index) did not take the shortcut")
                }
            }
        }
        // With scrubbing on, a byte order mark was refused (the scrubber's reader saw it as a stray character), against
        // the protocol; now a single report and a batch with marks are taken and scrubbed, their ranges in what is stored.
        for text in [
            shortcut[shortcut.count - 1],
            "\u{FEFF}[" + body(#""error":{"type":"E","message":"4111111111111111"}"#) + "]",
        ] {
            let (decoded, stored) = try NativeReports.decode(
                Array(text.utf8), limits: IngestLimits(), scrubber: scrubbers[0])
            let prepared = try decoded.items[0].get()
            #expect(prepared.report.error?.message == Scrubber.filtered)
            let bytes = try #require(stored)
            // What processing re-reads from the stored bytes is the report that was accepted.
            #expect(
                try NativeReports.decode(Array(bytes[prepared.range]), limits: IngestLimits()).items[0].get().report
                    == prepared.report)
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(decoded.isBatch ? "[{" : "{"))
        }
        // The shortcut did scrub: a card number filtered, a home folder's user replaced, in the stored bytes too.
        let bytes = Array(shortcut[4].utf8)
        let (decoded, scrubbed) = try NativeReports.decode(bytes, limits: IngestLimits(), scrubber: scrubbers[0])
        let message = try decoded.items[0].get().report.error?.message
        #expect(message == #"card [Filtered] at /home/[user]/app and C:\Users\[user]\x"#)
        #expect(
            String(decoding: try #require(scrubbed), as: UTF8.self).contains(#"card [Filtered] at /home/[user]/app"#))
    }

    @Test func tooManyReportsInABatchIsRefused() {
        var limits = IngestLimits()
        limits.maxReportsPerBatch = 2
        let body = "[" + Array(repeating: "{}", count: 3).joined(separator: ",") + "]"
        let error = #expect(throws: FormatError.self) { try NativeReports.decode(Array(body.utf8), limits: limits) }
        #expect(error?.code == .tooLarge)
    }

    @Test func storedReportsRereadExactlyAndEncodeBackToTheWireShape() throws {
        let body = Array(("{\"reports\": [" + Self.crash + "]}").utf8)
        let prepared = try NativeReports.decode(body, limits: IngestLimits()).items[0].get()
        let payload = StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(body), encoding: .deflate, inflatedSize: body.count)
        let reread = try NativeReports.reread(payload, range: prepared.range, limits: IngestLimits())
        #expect(reread == prepared.report)

        let json = try NativeReports.encode(
            StoredReport(project: ProjectID(3), report: reread, receivedAt: Date(timeIntervalSince1970: 0)))
        // What the read API answers decodes again as the same report.
        let again = try NativeReports.decode(json, limits: IngestLimits()).items[0].get().report
        #expect(again == reread)
        let object = try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any]
        #expect(object?["project_id"] as? Int == 3)
        #expect(object?["release"] as? String == "2.1.0")
        #expect((object?["trimmed"] as? [String: Int])?["custom_keys_dropped"] == 0)
    }

    /// Processing reads a stored report without its breadcrumbs (skipped, not built): the rest of the report is the
    /// same, and so is everything processing makes from it (the grouping and the search entry).
    @Test func aReportReadForProcessingIsTheReportWithoutItsBreadcrumbs() throws {
        let body = Array(
            ("{\"reports\": [" + Self.crash + "," + Self.crash.replacingOccurrences(of: "7077e450", with: "8077e450")
                + "]}").utf8)
        let items = try NativeReports.decode(body, limits: IngestLimits()).items.map { try $0.get() }
        let payload = StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(body), encoding: .deflate, inflatedSize: body.count)
        let inflated = try NativeReports.inflate(payload)
        for prepared in items {
            let all = try NativeReports.reread(
                inflated: inflated, format: .nativeV1, range: prepared.range, limits: IngestLimits())
            let processing = try NativeReports.reread(
                inflated: inflated, format: .nativeV1, range: prepared.range, limits: IngestLimits(),
                purpose: .processing)
            #expect(all == prepared.report)
            #expect(!all.breadcrumbs.isEmpty)
            #expect(processing.breadcrumbs.isEmpty)
            var expected = all
            expected.breadcrumbs = []
            #expect(processing == expected)
            #expect(GroupingInput.make(processing, symbols: nil) == GroupingInput.make(all, symbols: nil))
            #expect(
                SearchDocument.make(processing, symbols: nil, grouping: nil)
                    == SearchDocument.make(all, symbols: nil, grouping: nil))
        }
    }
}
