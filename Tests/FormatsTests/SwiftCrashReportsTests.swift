import FaultlineCore
import Formats
import Foundation
import Testing

@Suite struct SwiftCrashReportsTests {
    static let sample = """
        {"timestamp": "2026-11-22T07:20:09.142640Z", "kind": "crashReport",
         "description": "Fatal error: Index out of range", "faultAddress": "0x000055fabfff2ea3",
         "platform": "Linux (Debian GNU/Linux 12 (bookworm))", "architecture": "x86_64",
         "threads": [
           {"name": "main", "crashed": true, "registers": {"rax": "0x000055fabfff5070", "rip": "0x000055fabfff2ea3"},
            "frames": [{"kind": "programCounter", "address": "0x000055fabfff2ea3"},
                       {"kind": "returnAddress", "address": "0x000055fabfff2f10"},
                       {"kind": "omittedFrames", "count": 3},
                       {"kind": "asyncResumePoint", "address": "0x000055fabfff3000"},
                       {"kind": "truncated"}]},
           {"crashed": false, "frames": [{"kind": "programCounter", "address": "0x7f2d98500000"}]}],
         "capturedMemory": {"0x00007f2d99412020": "e03241992d7f0000"},
         "images": [{"name": "trap", "buildId": "2aaa9d4a628f71c3b66c83312a946a2db7977ff3", "path": "/tmp/trap",
                     "baseAddress": "0x000055fabfff2000", "endOfText": "0x000055fabfff3248"},
                    {"name": "vdso", "baseAddress": "0x7fff00000000", "endOfText": "0x7fff00001000"}],
         "backtraceTime": 0.0075}
        """

    @Test func readsEverythingTheRuntimeWrites() throws {
        let meta = SwiftCrashReports.Metadata(
            eventID: "7077e450-fa6f-4594-850b-fed9428d1d98", appVersion: "1.2", appBuild: "45", userID: "u1",
            sessionID: "s1",
            environment: "production")
        let envelope = try SwiftCrashReports.envelope(Array(Self.sample.utf8), metadata: meta)
        let report = try SwiftCrashReports.parse(envelope: envelope, limits: IngestLimits())
        #expect(report.eventID.rawValue == "7077e450fa6f4594850bfed9428d1d98")
        #expect(report.kind == .crash)
        #expect(report.release == "1.2")
        #expect(report.build == "45")
        #expect(report.userKey == "u1")
        #expect(report.sessionID?.rawValue == "s1")
        #expect(report.error == ErrorInfo(type: "Fatal error", message: "Fatal error: Index out of range"))
        #expect(report.faultAddress == 0x55fa_bfff_2ea3)
        #expect(report.device.arch == "x86_64")
        #expect(report.threads.count == 2)
        let main = report.threads[0]
        #expect(main.crashed && main.name == "main")
        #expect(
            main.registers == [
                Register(name: "rax", value: 0x55fa_bfff_5070), Register(name: "rip", value: 0x55fa_bfff_2ea3),
            ])
        #expect(main.frames.map(\.address) == [0x55fa_bfff_2ea3, 0x55fa_bfff_2f10, 0x55fa_bfff_3000])
        #expect(main.frames.map(\.instructionKind) == [.programCounter, .returnAddress, .programCounter])
        #expect(
            report.modules.first
                == LoadedModule(
                    name: "trap", path: "/tmp/trap", buildID: BuildID("2aaa9d4a628f71c3b66c83312a946a2db7977ff3"),
                    baseAddress: 0x55fa_bfff_2000, size: 0x1248))
        #expect(report.modules[1].buildID == nil)

        // The stored envelope holds the crash file byte for byte.
        #expect(String(decoding: envelope, as: UTF8.self).contains(Self.sample))
    }

    @Test func theCrashMessageRidesInTheMetadata() throws {
        // Given what the program printed, with a home path in it, scrubbed as free text.
        let printed = "/home/alice/app/main.swift:14: Fatal error: Division by zero"
        let meta = SwiftCrashReports.Metadata(
            eventID: "7077e450fa6f4594850bfed9428d1d98", userID: "/home/alice", message: printed
        )
        .scrubbed(by: Scrubber(settings: PrivacySettings()))
        #expect(meta.message == "/home/[user]/app/main.swift:14: Fatal error: Division by zero")
        #expect(meta.userID == "/home/alice")  // identities are kept as sent (docs/privacy.md)
        // With scrubbing off the text is kept.
        let kept = SwiftCrashReports.Metadata(eventID: "1", message: printed).scrubbed(
            by: Scrubber(settings: PrivacySettings(scrubbing: false)))
        #expect(kept.message == printed)

        // It survives the stored envelope and becomes the report's crash message.
        let envelope = try SwiftCrashReports.envelope(Array(Self.sample.utf8), metadata: meta)
        let report = try SwiftCrashReports.parse(envelope: envelope, limits: IngestLimits())
        #expect(report.crashMessage == meta.message)
        // An envelope stored before `message` existed reads as no message.
        let old = try SwiftCrashReports.envelope(
            Array(Self.sample.utf8), metadata: .init(eventID: "7077e450fa6f4594850bfed9428d1d98"))
        #expect(String(decoding: old, as: UTF8.self).contains("\"message\"") == false)
        #expect(try SwiftCrashReports.parse(envelope: old, limits: IngestLimits()).crashMessage == nil)

        // Over the limit: cut at a character boundary and counted.
        var limits = IngestLimits()
        limits.maxCrashMessageBytes = 10
        let long = try SwiftCrashReports.envelope(
            Array(Self.sample.utf8), metadata: .init(eventID: "7077e450fa6f4594850bfed9428d1d98", message: "ééééééé"))
        let cut = try SwiftCrashReports.parse(envelope: long, limits: limits)
        #expect(cut.crashMessage == "ééééé")
        #expect(cut.trimmed.valuesTruncated == 1)
    }

    @Test func refusesWhatIsNotACrashReport() throws {
        let meta = SwiftCrashReports.Metadata(eventID: "7077e450fa6f4594850bfed9428d1d98")
        for (body, field) in [
            (#"{"kind": "other", "timestamp": "2026-11-22T07:20:09Z", "threads": [{}]}"#, "kind"),
            (#"{"kind": "crashReport", "threads": [{}]}"#, "timestamp"),
            (#"{"kind": "crashReport", "timestamp": "2026-11-22T07:20:09Z", "threads": []}"#, "threads"),
        ] {
            let envelope = try SwiftCrashReports.envelope(Array(body.utf8), metadata: meta)
            let error = #expect(throws: FormatError.self) {
                try SwiftCrashReports.parse(envelope: envelope, limits: IngestLimits())
            }
            #expect(error?.field == field)
        }
        let broken = try SwiftCrashReports.envelope(Array("{not json".utf8), metadata: meta)
        #expect(throws: FormatError.self) { try SwiftCrashReports.parse(envelope: broken, limits: IngestLimits()) }
    }
}
