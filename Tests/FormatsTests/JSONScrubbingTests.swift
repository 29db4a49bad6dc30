import FaultlineCore
import Formats
import Foundation
import Testing

/// The JSON rewriter: what the rules decide, applied to documents, every untouched byte copied as sent.
@Suite struct JSONScrubbingTests {
    typealias F = SentryFixtures
    let scrubber = Scrubber(settings: PrivacySettings())

    func scrub(_ text: String, _ scrubber: Scrubber? = nil) throws -> String? {
        try JSONScrubbing.scrub(Array(text.utf8), scrubber: scrubber ?? self.scrubber).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    func object(_ text: String?) throws -> [String: Any] {
        let text = try #require(text)
        return try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func nothingToScrubReturnsNilSoTheClientsBytesAreKept() throws {
        // The fixture's one personal value is `user.email`, masked by default; without that rule nothing changes.
        #expect(try scrub(F.pythonHandled, Scrubber(settings: PrivacySettings(maskEmailsAndPhones: false))) == nil)
        #expect(try scrub(F.pythonHandled)?.contains(#""email":"t***@example.com""#) == true)
        #expect(try scrub(F.pythonMessage) == nil)
        #expect(try scrub(#"  {"a" : [1, 2.50e3, true, null, "x\u00e9\n"] }  "#) == nil)
    }

    @Test func nestedKeysArraysAndOnlyTheChangedBytesAreRewritten() throws {
        let input =
            #"{"extra": {"password": "hunter2", "list": [{"api_key": 12}, "card 4111 1111 1111 1111"]},  "keep":  [1,2]}"#
        let out = try #require(try scrub(input))
        #expect(
            out
                == #"{"extra": {"password": "[Filtered]", "list": [{"api_key": "[Filtered]"}, "card [Filtered]"]},  "keep":  [1,2]}"#
        )
    }

    @Test func aSensitiveKeyFiltersEveryScalarInsideItsValue() throws {
        let out = try object(
            try scrub(#"{"credentials": {"user": "bob", "pin": 1234, "ok": true, "none": null, "more": ["a"]}}"#))
        let credentials = try #require(out["credentials"] as? [String: Any])
        #expect(credentials["user"] as? String == "[Filtered]")
        #expect(credentials["pin"] as? String == "[Filtered]")
        #expect(credentials["ok"] as? String == "[Filtered]")
        #expect(credentials["none"] is NSNull)
        #expect(credentials["more"] as? [String] == ["[Filtered]"])
    }

    /// Decisions are remembered per walk by the key's bytes: more names than the memory holds, repeated, in two cases,
    /// must each still get their own decision.
    @Test func everyKeyGetsItsOwnDecisionHoweverManyThereAre() throws {
        let names = (0..<300).flatMap { ["k\($0)", "Token\($0)", "token\($0)", "K\($0)"] }
        let members = (names + names.reversed()).enumerated().map { #""\#($1)":"v\#($0)""# }
        let scrubbed = try object(try scrub("{" + members.joined(separator: ",") + "}"))
        for name in names {
            let value = try #require(scrubbed[name] as? String)
            #expect((value == Scrubber.filtered) == name.lowercased().hasPrefix("token"), "\(name): \(value)")
        }
    }

    @Test func escapesAndUnicodeSurviveTheRewrite() throws {
        // An escaped key still matches; an escaped Windows path is decoded, scrubbed and re-encoded.
        let input =
            #"{"pass\u0077ord": "x", "path": "C:\\Users\\Zo\u00eb\\app.exe", "msg": "caf\u00e9 \"q\" é 🙂 /home/jürgen/a\tb", "n": "ok"}"#
        let out = try #require(try scrub(input))
        let parsed = try object(out)
        #expect(parsed["password"] as? String == "[Filtered]")
        #expect(parsed["path"] as? String == "C:\\Users\\[user]\\app.exe")
        #expect(parsed["msg"] as? String == "café \"q\" é 🙂 /home/[user]/a\tb")
        #expect(out.hasSuffix(#", "n": "ok"}"#))  // untouched members keep their spelling
    }

    @Test func debugMetadataIsUntouched() throws {
        let meta =
            #"{"images":[{"type":"elf","code_file":"/home/alice/build/libapp.so","debug_id":"4111111111111111","image_addr":"0x4111111111111111"}]}"#
        let input =
            #"{"debug_meta":\#(meta),"message":"at /home/alice/build","modules":[{"path":"/home/alice/lib.so","build_id":"4111111111111111"}],"threads":[{"registers":{"x0":"4111111111111111"},"frames":[{"address":"4111111111111111","file":"/Users/alice/a.swift"}]}]}"#
        let out = try object(try scrub(input))
        let expected = try object(input)
        #expect(
            NSDictionary(dictionary: out["debug_meta"] as? [String: Any] ?? [:]).isEqual(
                to: expected["debug_meta"] as? [String: Any] ?? [:]))
        #expect((out["modules"] as? [[String: Any]])?.first?["path"] as? String == "/home/alice/lib.so")
        let thread = try #require((out["threads"] as? [[String: Any]])?.first)
        #expect((thread["registers"] as? [String: String])?["x0"] == "4111111111111111")
        let frame = try #require((thread["frames"] as? [[String: Any]])?.first)
        #expect(frame["address"] as? String == "4111111111111111")
        #expect(frame["file"] as? String == "/Users/[user]/a.swift")
        #expect(out["message"] as? String == "at /home/[user]/build")
    }

    @Test func ipAddressesAreDroppedAsNullUnlessKept() throws {
        let input = #"{"user":{"id":"u1","ip_address":"203.0.113.9"},"request":{"env":{"REMOTE_ADDR":"198.51.100.4"}}}"#
        let out = try object(try scrub(input))
        #expect((out["user"] as? [String: Any])?["ip_address"] is NSNull)
        #expect((out["user"] as? [String: Any])?["id"] as? String == "u1")
        #expect(((out["request"] as? [String: Any])?["env"] as? [String: Any])?["REMOTE_ADDR"] is NSNull)
        #expect(try scrub(input, Scrubber(settings: PrivacySettings(keepIPAddresses: true))) == nil)
        // Scrubbing off still drops IP addresses, however deep, and changes nothing else.
        let off = try object(
            try scrub(
                #"{"extra":{"password":"x"},"user":{"ip_address":"203.0.113.9"}}"#,
                Scrubber(settings: PrivacySettings(scrubbing: false))))
        #expect((off["user"] as? [String: Any])?["ip_address"] is NSNull)
        #expect((off["extra"] as? [String: Any])?["password"] as? String == "x")
    }

    @Test func safeFieldsAndScrubbingOffKeepValues() throws {
        let input = #"{"extra":{"password":"hunter2","github_token":"abc","note":"4111111111111111"}}"#
        let safe = try object(try scrub(input, Scrubber(settings: PrivacySettings(safeFields: ["github_token"]))))
        #expect(
            (safe["extra"] as? [String: String]) == [
                "password": "[Filtered]", "github_token": "abc", "note": "[Filtered]",
            ])
        #expect(try scrub(input, Scrubber(settings: PrivacySettings(scrubbing: false))) == nil)
    }

    @Test func malformedJSONIsAnErrorNotAPartialCopy() {
        #expect(throws: FormatError.self) { try scrub(#"{"password": "x""#) }
        #expect(throws: FormatError.self) { try scrub(#"{"a": tru}"#) }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: FormatError.self) { try scrub(deep) }
    }

    // MARK: native batches

    @Test func aNativeBatchIsScrubbedAndItsRangesReferToTheScrubbedBytes() throws {
        func report(_ n: Int, _ key: String) -> String {
            #"{"event_id":"0000000\#(n)-0000-4000-8000-000000000000","kind":"nonfatal","timestamp":1795000000,"error":{"type":"E","message":"m"},"custom_keys":{"\#(key)":"hunter2"}}"#
        }
        let body = Array(#"{"reports":[\#(report(1, "password")),\#(report(2, "plan"))]}"#.utf8)
        let (decoded, scrubbed) = try NativeReports.decode(body, limits: IngestLimits(), scrubber: scrubber)
        let stored = try #require(scrubbed)
        #expect(!String(decoding: stored, as: UTF8.self).contains(#""password":"hunter2""#))
        let first = try decoded.items[0].get()
        #expect(first.report.customKeys.first?.value == .string("[Filtered]"))
        let second = try decoded.items[1].get()
        #expect(second.report.customKeys.first?.value == .string("hunter2"))
        // Each range re-reads to the same report from the stored bytes.
        for item in [first, second] {
            let again = try NativeReports.decode(Array(stored[item.range]), limits: IngestLimits()).items[0].get()
            #expect(again.report.eventID == item.report.eventID)
        }
    }

    @Test func aMalformedBatchElementIsRefusedAndNotStored() throws {
        let good =
            #"{"event_id":"00000001-0000-4000-8000-000000000000","kind":"nonfatal","timestamp":1795000000,"error":{"type":"E","message":"4111111111111111"}}"#
        let bad = #"{"event_id":"00000002-0000-4000-8000-000000000000","password":"hunter2","x":tru}"#
        let body = Array(#"[\#(good),\#(bad)]"#.utf8)
        let (decoded, scrubbed) = try NativeReports.decode(body, limits: IngestLimits(), scrubber: scrubber)
        let stored = String(decoding: try #require(scrubbed), as: UTF8.self)
        #expect(!stored.contains("hunter2"))
        #expect(!stored.contains("4111111111111111"))
        #expect(try decoded.items[0].get().report.error?.message == "[Filtered]")
        guard case .failure(let error) = decoded.items[1] else {
            Issue.record("the malformed report was accepted")
            return
        }
        #expect(error.field?.hasPrefix("reports[1]") == true)
    }

    // MARK: Sentry envelopes

    @Test func anEnvelopesJSONItemsAreScrubbedAndReframed() throws {
        let event =
            #"{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","message":"card 4111 1111 1111 1111","extra":{"password":"hunter2"},"user":{"id":"u","ip_address":"203.0.113.9"},"debug_meta":{"images":[{"code_file":"/home/alice/app","debug_id":"4111111111111111"}]}}"#
        let session =
            #"{"sid":"7c5e4a1e2f3b4c5d6e7f8091a2b3c4d5","did":"u","started":"2026-11-22T05:00:00Z","status":"ok","attrs":{"release":"shop@1.0","ip_address":"203.0.113.9"}}"#
        let attachment = "password=hunter2\n"
        let body = F.envelope(
            F.pythonHeader,
            [
                F.item("session", session), F.item("event", event),
                F.item("attachment", attachment, extra: #","filename":"a.log""#),
            ])
        let out = try #require(try SentryEnvelope.scrub(body, scrubber: scrubber).bytes)
        let envelope = try SentryEnvelope.parse(out)
        #expect(envelope.items.map(\.type) == ["session", "event", "attachment"])
        let scrubbedEvent = try object(String(decoding: out[envelope.items[1].payloadRange], as: UTF8.self))
        #expect(scrubbedEvent["message"] as? String == "card [Filtered]")
        #expect((scrubbedEvent["extra"] as? [String: Any])?["password"] as? String == "[Filtered]")
        #expect((scrubbedEvent["user"] as? [String: Any])?["ip_address"] is NSNull)
        let images = ((scrubbedEvent["debug_meta"] as? [String: Any])?["images"] as? [[String: Any]])?.first
        #expect(images?["code_file"] as? String == "/home/alice/app")
        #expect(images?["debug_id"] as? String == "4111111111111111")
        let scrubbedSession = try object(String(decoding: out[envelope.items[0].payloadRange], as: UTF8.self))
        #expect((scrubbedSession["attrs"] as? [String: Any])?["ip_address"] is NSNull)
        // Item lengths were rewritten; the attachment is binary and copied as is, with its header.
        #expect(envelope.items[1].length == envelope.items[1].payloadRange.count)
        #expect(String(decoding: out[envelope.items[2].payloadRange], as: UTF8.self) == attachment)
        #expect(envelope.items[2].filename == "a.log")
        // The envelope header is copied as sent.
        #expect(String(decoding: out.prefix(F.pythonHeader.utf8.count), as: UTF8.self) == F.pythonHeader)
        // And the reader takes the result.
        let contents = try SentryEnvelopeReader.read(
            out, receivedAt: F.receivedAt, limits: IngestLimits(), maxAttachmentBytes: 1 << 20, sessionSeed: "s")
        #expect(contents.eventError == nil)
        #expect(contents.event?.report.eventID == EventID("9ec79c33ec9942ab8353589fcb2e04dc"))
        #expect(contents.sessions.count == 1)
    }

    @Test func anEnvelopeWithNothingToScrubIsNil() throws {
        let body = F.envelope(F.pythonHeader, [F.item("event", F.pythonHandled)])
        #expect(
            try SentryEnvelope.scrub(body, scrubber: Scrubber(settings: PrivacySettings(maskEmailsAndPhones: false)))
                .bytes == nil)
    }

    @Test func anEventTooDeepToScrubIsListedAndOtherItemsStillScrubbed() throws {
        let deep = String(repeating: "[", count: 520) + String(repeating: "]", count: 520)
        let event = #"{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","extra":{"password":"hunter2","x":\#(deep)}}"#
        let session =
            #"{"sid":"7c5e4a1e2f3b4c5d6e7f8091a2b3c4d5","did":"u","started":"2026-11-22T05:00:00Z","attrs":{"release":"a","ip_address":"203.0.113.9"}}"#
        let body = F.envelope(F.pythonHeader, [F.item("session", session), F.item("event", event)])
        let scrubbed = try SentryEnvelope.scrub(body, scrubber: scrubber)
        #expect(scrubbed.unscrubbedEvents.keys.sorted() == [1])
        #expect(scrubbed.unscrubbedEvents[1]?.field?.hasPrefix("items[1]") == true)
        let out = String(decoding: try #require(scrubbed.bytes), as: UTF8.self)
        #expect(!out.contains("203.0.113.9"))
    }

    @Test func anItemWithoutLengthKeepsItsHeader() throws {
        let body = Array((F.cliHeader + "\n" + #"{"type":"event"}"# + "\n" + #"{"message":"Bearer abc"}"# + "\n").utf8)
        let out = String(
            decoding: try #require(try SentryEnvelope.scrub(body, scrubber: scrubber).bytes), as: UTF8.self)
        #expect(out == F.cliHeader + "\n" + #"{"type":"event"}"# + "\n" + #"{"message":"Bearer [Filtered]"}"# + "\n")
    }

    // MARK: issue #39: bypasses

    @Test func protocolFieldNamesInFreeMapsAreScrubbedLikeAnyValue() throws {
        // A card number in `extra.address` and a cookie in `extra.session_id` were stored; frames keep theirs.
        let input =
            #"{"extra":{"address":"4111 1111 1111 1111","session_id":"s3cr3t","version":"me@example.com"},"#
            + #""contexts":{"os":{"version":"6.3.1"},"shop":{"build":"5500 0000 0000 0004"}},"#
            + #""tags":[["release","4111111111111111"]],"exception":{"values":[{"stacktrace":{"frames":[{"address":"0x7f00","module":"/home/alice/a.so","vars":{"pwd":"x","passphrase":"y","address":"z"}}]}}]}}"#
        let out = try object(try scrub(input))
        let extra = try #require(out["extra"] as? [String: Any])
        #expect(extra["address"] as? String == "[Filtered]")
        #expect(extra["session_id"] as? String == "[Filtered]")
        #expect(extra["version"] as? String == "m***@example.com")
        let contexts = try #require(out["contexts"] as? [String: [String: Any]])
        #expect(contexts["os"]?["version"] as? String == "6.3.1")
        #expect(contexts["shop"]?["build"] as? String == "[Filtered]")
        #expect((out["tags"] as? [[String]])?.first == ["release", "[Filtered]"])
        let frame = try #require(
            (((out["exception"] as? [String: Any])?["values"] as? [[String: Any]])?.first?["stacktrace"]
                as? [String: Any])?["frames"] as? [[String: Any]]
        ).first
        #expect(frame?["address"] as? String == "0x7f00")
        #expect(frame?["module"] as? String == "/home/alice/a.so")
        #expect(
            frame?["vars"] as? [String: String] == ["pwd": "[Filtered]", "passphrase": "[Filtered]", "address": "z"])
    }

    @Test func requestQueryStringsFormsCookiesAndHeadersAreScrubbedPairByPair() throws {
        let input =
            #"{"request":{"url":"https://shop.example.com/pay?api_key=k123&page=2","query_string":"token=t1&sort=asc","#
            + #""data":"user=bob&password=hunter2","cookies":"theme=dark; sessionid=abc","#
            + #""headers":[["X-Api-Key","k456"],["Cookie","sessionid=def; lang=en"],["X-Forwarded-For","203.0.113.9"],["Accept","*/*"]],"#
            + #""env":{"REMOTE_ADDR":"203.0.113.9","X-Real-IP":"203.0.113.9"}},"#
            + #""breadcrumbs":{"values":[{"data":{"url":"https://api.example.com/v1?apikey=k789"}}]}}"#
        let text = try #require(try scrub(input))
        for secret in ["k123", "t1", "hunter2", "abc", "k456", "def", "203.0.113.9", "k789"] {
            #expect(!text.contains(secret), "\(secret)")
        }
        let request = try #require(try object(text)["request"] as? [String: Any])
        #expect(request["url"] as? String == "https://shop.example.com/pay?api_key=[Filtered]&page=2")
        #expect(request["query_string"] as? String == "token=[Filtered]&sort=asc")
        #expect(request["data"] as? String == "user=bob&password=[Filtered]")
        #expect(request["cookies"] as? String == "theme=dark; sessionid=[Filtered]")
        let headers = try #require(request["headers"] as? [[Any]])
        #expect(headers[0][1] as? String == "[Filtered]")
        #expect(headers[1][1] as? String == "sessionid=[Filtered]; lang=en")
        #expect(headers[2][1] is NSNull)
        #expect(headers[3][1] as? String == "*/*")
        #expect((request["env"] as? [String: Any])?["X-Real-IP"] is NSNull)
    }

    @Test func overlongKeyNamesAreFilteredNotSkipped() throws {
        let name = String(repeating: "k", count: 300)
        let out = try object(try scrub(#"{"extra":{"\#(name)":"hunter2","short":"ok"}}"#))
        #expect((out["extra"] as? [String: String]) == [name: "[Filtered]", "short": "ok"])
    }

    @Test func userIdsThatAreEmailsBecomePseudonymsAndOtherAddressesAreMasked() throws {
        final class EchoMAC: IdentityHashing {
            func authenticationCode(for message: [UInt8]) -> [UInt8] {
                Array((message + Array(repeating: 0, count: 32)).prefix(32))
            }
        }
        let keyed = Scrubber(settings: PrivacySettings(), identities: EchoMAC())
        let input =
            #"{"user":{"id":"jane@example.com","email":"Jane@Example.com","username":"jane@example.com"},"#
            + #""message":"mail jane@example.com or call +44 20 7946 0958"}"#
        let out = try object(try scrub(input, keyed))
        let user = try #require(out["user"] as? [String: String])
        let expected = "email:" + "jane@example.com".utf8.map { String($0, radix: 16) }.joined()
        #expect(user["id"] == expected + ":j***@example.com")
        #expect(user["email"] == expected + ":J***@Example.com")
        #expect(user["username"] == "j***@example.com")
        #expect(out["message"] as? String == "mail j***@example.com or call +** ** **** **58")
        // Native reports: `user_id` at the top, through both the one-pass and the two-pass decoding.
        let native = Array(
            #"{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","kind":"nonfatal","timestamp":"2026-11-22T05:08:09Z","user_id":"jane@example.com","error":{"type":"E"}}"#
                .utf8)
        let one = try #require(NativeReports.singleScrubbing(native, limits: IngestLimits(), scrubber: keyed))
        let two = try NativeReports.decodeScrubbingFirst(native, limits: IngestLimits(), scrubber: keyed)
        #expect(one.0.report.userID == expected + ":j***@example.com")
        #expect(one.1 == two.scrubbed)
        #expect(try two.decoded.items[0].get().report.userID == expected + ":j***@example.com")
    }

    @Test func everyEnvelopeItemButAttachmentsIsScrubbedAndOnlyTheEventIsStored() throws {
        let event = #"{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","message":"hello"}"#
        let body = F.envelope(
            F.pythonHeader,
            [
                F.item("attachment", "password=hunter2\n", extra: #","filename":"a.log""#),
                F.item("log", #"{"items":[{"body":"password=hunter3"}]}"#),
                F.item("statsd", "not json password=hunter4"), F.item("event", event),
            ])
        let scrubbed = try #require(try SentryEnvelope.scrub(body, scrubber: scrubber).bytes)
        let text = String(decoding: scrubbed, as: UTF8.self)
        #expect(!text.contains("hunter3") && !text.contains("hunter4"))
        let contents = try SentryIngestDecoding.envelope(
            body, limits: IngestLimits(), maxAttachmentBytes: 1 << 20, receivedAt: F.receivedAt, seed: "s",
            scrubber: scrubber)
        let stored = String(decoding: contents.storedBytes, as: UTF8.self)
        #expect(!stored.contains("hunter"))
        #expect(contents.clientGzip == nil)
        // The stored bytes are the header line and the event item, and the event's range points into them.
        let range = try #require(contents.contents.event?.range)
        #expect(String(decoding: contents.storedBytes[range], as: UTF8.self) == event)
        #expect(stored.hasPrefix(F.pythonHeader + "\n"))
        let reread = try NativeReports.reread(
            inflated: contents.storedBytes, format: .sentryEvent, range: range, limits: IngestLimits())
        #expect(reread.eventID == EventID("9ec79c33ec9942ab8353589fcb2e04dc"))
    }

    @Test func aNativeReportScrubbedWhileParsedMatchesTheTwoPassesInEveryScope() throws {
        // Free maps (custom_keys, breadcrumb data) with protocol names, folded names, pairs, contacts; the one-pass
        // shortcut must give the two passes' report and bytes, or step aside.
        let native = Array(
            #"""
            {"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","kind":"nonfatal","timestamp":"2026-11-22T05:08:09Z","user_id":"u-1",
             "error":{"type":"E","message":"call +44 20 7946 0958 or jane@example.com, password=x"},
             "threads":[{"name":"main","crashed":true,"frames":[{"address":"0x7f0000001234","module":"/home/alice/a.so","function":"TokenStore::load"}]}],
             "breadcrumbs":[{"timestamp":1795000000,"category":"http","data":{"url":"https://a.example.com/?api_key=k1","X-Api-Key":"k2","address":"4111111111111111"}}],
             "custom_keys":{"address":"4111 1111 1111 1111","session_id":"s3","version":"v","private-key":"k3","plan":"pro"}}
            """#.utf8)
        for settings in [
            PrivacySettings(), PrivacySettings(scrubbing: false), PrivacySettings(maskEmailsAndPhones: false),
        ] {
            let scrubber = Scrubber(settings: settings)
            let two = try NativeReports.decodeScrubbingFirst(native, limits: IngestLimits(), scrubber: scrubber)
            let report = try two.decoded.items[0].get().report
            // The shortcut takes this report (free maps of scalars need no second walk).
            let one = try #require(NativeReports.singleScrubbing(native, limits: IngestLimits(), scrubber: scrubber))
            #expect(one.0.report == report)
            #expect(one.1 == two.scrubbed)
            let keys = Dictionary(uniqueKeysWithValues: report.customKeys.map { ($0.key, $0.value) })
            if settings.scrubbing {
                for key in ["address", "session_id", "private-key"] {
                    #expect(keys[key] == .string("[Filtered]"), "\(key)")
                }
                #expect(keys["plan"] == .string("pro"))
                #expect(report.threads.first?.frames.first?.function == "TokenStore::load")
            }
        }
    }
}
