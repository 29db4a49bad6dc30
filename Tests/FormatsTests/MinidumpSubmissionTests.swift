import FaultlineCore
import Formats
import Foundation
import NIOCore
import TestSupport
import Testing

/// Every way a minidump arrives, decoded into one `MinidumpSubmission`: Sentry's minidump form with its `sentry`
/// fields and sentry-native's MessagePack attachments, a raw body, and an envelope's `event.minidump` attachment.
/// The dumps are the real Crashpad dumps of the fuzz seeds; the real handler's own upload is in
/// `MinidumpCrashpadTests`.
@Suite struct MinidumpSubmissionTests {
    static let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../tools/fuzzing/seeds/minidump").standardized

    /// A dump crashpad_handler wrote (`tools/fuzzing/make-seeds.py`): `segfault` or `second-thread`.
    func dump(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Self.seeds.appendingPathComponent("crashpad-\(name).dmp")))
    }

    func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        var buffer = ByteBuffer(bytes: bytes)
        return Array(try buffer.compress(with: .gzip()).readableBytesView)
    }

    /// A form with `parts` (name, filename, bytes) and its Content-Type.
    func form(_ parts: [(String, String?, [UInt8])], boundary: String = "----faultline-test") -> ([UInt8], String) {
        var body: [UInt8] = []
        for (name, filename, bytes) in parts {
            var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\""
            if let filename { header += "; filename=\"\(filename)\"\r\nContent-Type: application/octet-stream" }
            body += Array((header + "\r\n\r\n").utf8) + bytes + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return (body, "multipart/form-data; boundary=\(boundary)")
    }

    func text(_ name: String, _ value: String) -> (String, String?, [UInt8]) { (name, nil, Array(value.utf8)) }

    @Test func sentryFormFieldsSetTheEventAndTheRestGoesToExtra() throws {
        let dump = try dump("segfault")
        let (body, contentType) = form([
            text(
                "sentry",
                #"{"release":"shop@2.0","environment":"production","tags":{"tier":"gold"},"event_id":"7077e450fa6f4594850bfed9428d1d98"}"#
            ),
            text("sentry[environment]", "staging"),
            text("sentry[tags][flavor]", "beta"),
            text("sentry[user][id]", "u-17"),
            text("build", "42"),
            ("upload_file_minidump", "crash.dmp", dump),
            ("app.log", "app.log", Array("a log line\n".utf8)),
        ])

        let submission = try MinidumpSubmission.multipart(body, contentType: contentType)

        #expect(submission.dump == dump)
        #expect(submission.filename == "crash.dmp")
        #expect(submission.eventID == EventID("7077e450fa6f4594850bfed9428d1d98"))
        let event = try json(submission.event)
        #expect(event["release"] as? String == "shop@2.0")
        // A flattened field after the JSON one wins, and merges into its objects
        #expect(event["environment"] as? String == "staging")
        #expect(event["tags"] as? [String: String] == ["tier": "gold", "flavor": "beta"])
        #expect((event["user"] as? [String: String])?["id"] == "u-17")
        #expect(event["extra"] as? [String: String] == ["build": "42"])
        #expect(submission.attachments.map(\.filename) == ["app.log"])
        #expect(submission.attachments.first?.bytes == Array("a log line\n".utf8))
    }

    @Test func sentryNativesMessagePackEventAndBreadcrumbs() throws {
        let dump = try dump("second-thread")
        let event = MessagePackWriter.map([
            ("event_id", .string("8077e450fa6f4594850bfed9428d1d98")), ("release", .string("native@1.0")),
            ("contexts", .map([("os", .map([("name", .string("Linux"))]))])), ("level", .string("fatal")),
            ("extra", .map([("attempt", .int(3)), ("ratio", .double(0.5)), ("ok", .bool(true))])),
        ])
        func crumb(_ n: Int, _ time: String) -> MessagePackWriter {
            .map([("timestamp", .string(time)), ("message", .string("crumb \(n)"))])
        }
        // File 1 filled first (crumbs 1–3); file 2 was started later (crumbs 4–5): the newest are 4, 5 and before
        // them the latest of file 1.
        let first = [
            crumb(1, "2026-11-29T00:00:01Z"), crumb(2, "2026-11-29T00:00:02Z"), crumb(3, "2026-11-29T00:00:03Z"),
        ]
        let second = [crumb(4, "2026-11-29T00:00:04Z"), crumb(5, "2026-11-29T00:00:05Z")]
        let (body, contentType) = form([
            ("upload_file_minidump", "minidump.dmp", dump),
            ("__sentry-event", "__sentry-event", event.bytes),
            ("__sentry-breadcrumb1", "__sentry-breadcrumb1", first.flatMap(\.bytes)),
            ("__sentry-breadcrumb2", "__sentry-breadcrumb2", second.flatMap(\.bytes)),
            text("sentry[tags][from]", "form"),
        ])

        let submission = try MinidumpSubmission.multipart(body, contentType: contentType)

        #expect(submission.eventID == EventID("8077e450fa6f4594850bfed9428d1d98"))
        let decoded = try json(submission.event)
        #expect(decoded["release"] as? String == "native@1.0")
        #expect(((decoded["contexts"] as? [String: Any])?["os"] as? [String: String])?["name"] == "Linux")
        #expect(decoded["tags"] as? [String: String] == ["from": "form"])
        let extra = try #require(decoded["extra"] as? [String: Any])
        #expect(extra["attempt"] as? Int == 3 && extra["ratio"] as? Double == 0.5 && extra["ok"] as? Bool == true)
        let crumbs = try #require((decoded["breadcrumbs"] as? [String: Any])?["values"] as? [[String: String]])
        #expect(crumbs.map { $0["message"] } == ["crumb 3", "crumb 4", "crumb 5"])
        #expect(submission.attachments.isEmpty)
    }

    @Test func aRawBodyGzipdOrNotIsTheDump() throws {
        let dump = try dump("second-thread")

        #expect(try MinidumpSubmission.raw(dump).dump == dump)
        let gzipped = try MinidumpSubmission.raw(try gzip(dump), contentEncoding: "gzip", query: "guid=abc&version=3.1")
        #expect(gzipped.dump == dump)
        let event = try json(gzipped.event)
        #expect(event["release"] as? String == "3.1")
        #expect((event["user"] as? [String: String])?["id"] == "abc")
    }

    @Test func anEnvelopesMinidumpAttachment() throws {
        let dump = try dump("segfault")
        let event = #"{"event_id":"9077e450fa6f4594850bfed9428d1d98","release":"lib@1","platform":"native"}"#
        var envelope = Array(#"{"event_id":"9077e450fa6f4594850bfed9428d1d98"}"#.utf8) + [10]
        envelope += Array(#"{"type":"event","length":\#(event.utf8.count)}"#.utf8) + [10] + Array(event.utf8) + [10]
        envelope += Array(
            #"{"type":"attachment","length":\#(dump.count),"filename":"crash.dmp","attachment_type":"event.minidump"}"#
                .utf8)
        envelope += [10] + dump + [10]
        envelope +=
            Array(#"{"type":"attachment","length":5,"filename":"a.txt"}"#.utf8) + [10] + Array("hello".utf8) + [10]

        let submission = try #require(try MinidumpSubmission.envelope(envelope))

        #expect(submission.dump == dump)
        #expect(submission.filename == "crash.dmp")
        #expect(submission.eventID == EventID("9077e450fa6f4594850bfed9428d1d98"))
        #expect(try json(submission.event)["release"] as? String == "lib@1")
        #expect(submission.attachments.map(\.filename) == ["a.txt"])
        // An envelope without a minidump is not a minidump submission
        let plain = Array("{}\n{\"type\":\"event\"}\n{}\n".utf8)
        #expect(try MinidumpSubmission.envelope(plain) == nil)
    }

    @Test func whatIsNotAMinidumpOrTooLargeIsRefusedByName() throws {
        let dump = try dump("segfault")
        // Not MDMP
        let notDump = #expect(throws: FormatError.self) { try MinidumpSubmission.raw(Array("{\"hello\":1}".utf8)) }
        #expect(notDump?.message.contains("MDMP") == true)
        // A form without the dump part
        let (noDump, type) = form([text("prod", "x")])
        let missing = #expect(throws: FormatError.self) { try MinidumpSubmission.multipart(noDump, contentType: type) }
        #expect(missing?.field == "upload_file_minidump")
        // A dump past its limit, and a gzip bomb past the body limit
        var small = MinidumpSubmission.Limits()
        small.maxDumpBytes = dump.count - 1
        #expect(throws: FormatError.self) { try MinidumpSubmission.raw(dump, limits: small) }
        var tight = MinidumpSubmission.Limits()
        tight.maxBodyBytes = 1 << 20
        let bomb = try gzip(Array("MDMP".utf8) + [UInt8](repeating: 0, count: 8 << 20))
        let tooLarge = #expect(throws: FormatError.self) {
            try MinidumpSubmission.raw(bomb, contentEncoding: "gzip", limits: tight)
        }
        #expect(tooLarge?.code == .tooLarge)
        // A sentry field that is not JSON
        let (badJSON, badType) = form([text("sentry", "{not json"), ("upload_file_minidump", "d", dump)])
        let bad = #expect(throws: FormatError.self) { try MinidumpSubmission.multipart(badJSON, contentType: badType) }
        #expect(bad?.field == "sentry")
    }

    @Test func deepNestingStopsAtTheCaps() throws {
        let dump = try dump("segfault")
        // A sentry field nested 10,000 deep is refused before it is decoded
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let (body, type) = form([text("sentry", #"{"a":\#(deep)}"#), ("upload_file_minidump", "d", dump)])
        let error = #expect(throws: FormatError.self) { try MinidumpSubmission.multipart(body, contentType: type) }
        #expect(error?.field == "sentry")
        // A flattened name with more keys than the cap is kept as a plain extra field
        let name = "sentry" + String(repeating: "[k]", count: 9)
        let (flat, flatType) = form([text(name, "v"), text("sentry[a][b]", "w"), ("upload_file_minidump", "d", dump)])
        let event = try json(try MinidumpSubmission.multipart(flat, contentType: flatType).event)
        #expect((event["extra"] as? [String: String])?[name] == "v")
        #expect((event["a"] as? [String: String])?["b"] == "w")
    }

    @Test func hostileMessagePackIsRefusedNotTrapped() throws {
        let dump = try dump("segfault")
        let hostile: [[UInt8]] = [
            [0xDD, 0xFF, 0xFF, 0xFF, 0xFF],  // an array claiming 4 G elements
            [0xDB, 0xFF, 0xFF, 0xFF, 0xF0, 0x41],  // a string past the end
            [UInt8](repeating: 0x91, count: 10_000) + [0xC0],  // nested 10,000 deep
            [0xC1],  // the one byte MessagePack never uses
            [UInt8](repeating: 0x81, count: 60) + [0xC0] + [UInt8](repeating: 0xC0, count: 60),  // maps as map keys
        ]
        for bytes in hostile {
            let (body, type) = form([("upload_file_minidump", "d", dump), ("__sentry-event", "__sentry-event", bytes)])
            let error = #expect(throws: FormatError.self) { try MinidumpSubmission.multipart(body, contentType: type) }
            #expect(error?.field == "__sentry-event")
        }
    }
}

extension MinidumpSubmissionTests {
    /// What the `minidump-form` fuzz target found: map keys nested in map keys, each written out as JSON text,
    /// doubled their escapes at every level (exponential time). Such keys are refused now.
    @Test func nestedMapKeysFoundByTheFuzzer() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz/minidump-form/nested-map-keys")
        let bytes = try [UInt8](Data(contentsOf: file))
        let error = #expect(throws: FormatError.self) { try FuzzCorpusTests.run("minidump-form", bytes) }
        #expect(error?.field?.hasPrefix("__sentry-") == true)
    }
}

/// Writes MessagePack as sentry-native does (maps with string keys, strings, integers, doubles, booleans).
indirect enum MessagePackWriter {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case map([(String, MessagePackWriter)])

    var bytes: [UInt8] {
        switch self {
        case .string(let s):
            let utf8 = Array(s.utf8)
            return (utf8.count < 32 ? [0xA0 | UInt8(utf8.count)] : [0xD9, UInt8(utf8.count)]) + utf8
        case .int(let i):
            return [0xD3] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(bitPattern: i) >> (8 * $0)) }
        case .double(let d):
            return [0xCB] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: d.bitPattern >> (8 * $0)) }
        case .bool(let b): return [b ? 0xC3 : 0xC2]
        case .map(let members):
            return [0x80 | UInt8(members.count)] + members.flatMap { MessagePackWriter.string($0.0).bytes + $0.1.bytes }
        }
    }
}

extension MinidumpSubmissionTests {
    @Test func theSentryFieldKeepsItsKeyOrderAndNumbers() throws {
        // Given a sentry field whose keys are out of alphabetical order, one given twice, and numbers of each kind
        let sentry = #"{"zeta":1,"alpha":"a\u0041","zeta":2,"whole":1.0,"big":18446744073709551615,"half":0.5}"#
        let (body, type) = form([text("sentry", sentry), ("upload_file_minidump", "d", try dump("segfault"))])
        // When the form is read
        let event = String(decoding: try MinidumpSubmission.multipart(body, contentType: type).event, as: UTF8.self)
        // Then the keys keep their first place and last value, and each number its exact value
        #expect(event.hasPrefix(#"{"zeta":2,"alpha":"aA","whole":1,"big":18446744073709551615,"half":0.5,"#))
        // And 64 levels of nesting are read, while 65, or text after the object, are refused
        func nested(_ levels: Int) -> String {
            #"{"a":"# + String(repeating: "[", count: levels - 1) + String(repeating: "]", count: levels - 1) + "}"
        }
        let (deep, deepType) = form([text("sentry", nested(64)), ("upload_file_minidump", "d", try dump("segfault"))])
        #expect(try json(try MinidumpSubmission.multipart(deep, contentType: deepType).event)["a"] != nil)
        for bad in [nested(65), #"{"a":1} x"#] {
            let (badBody, badType) = form([text("sentry", bad), ("upload_file_minidump", "d", try dump("segfault"))])
            let error = #expect(throws: FormatError.self) {
                try MinidumpSubmission.multipart(badBody, contentType: badType)
            }
            #expect(error?.code == .malformedJSON)
        }
    }
}

extension MinidumpSubmissionTests {
    @Test func theSentryFieldMergesIntoTheAttachedEventKeyByKey() throws {
        // Given an attached event, and a sentry field that adds to one object, replaces another and adds a key
        let attached = MessagePackWriter.map([
            ("contexts", .map([("os", .map([("name", .string("Linux"))]))])), ("tags", .map([("a", .string("1"))])),
            ("level", .string("error")),
        ])
        let (body, type) = form([
            ("upload_file_minidump", "d", try dump("segfault")), ("__sentry-event", "__sentry-event", attached.bytes),
            text("sentry", #"{"contexts":{"os":{"version":"6.1"},"app":{}},"tags":"flat","release":"r@1"}"#),
        ])
        // When the form is read
        let event = String(decoding: try MinidumpSubmission.multipart(body, contentType: type).event, as: UTF8.self)
        // Then objects merge in place, anything else is replaced, and new keys follow the old ones
        #expect(
            event.hasPrefix(
                #"{"contexts":{"os":{"name":"Linux","version":"6.1"},"app":{}},"tags":"flat","level":"error","release":"r@1","#
            ))
    }
}
