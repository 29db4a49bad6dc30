import FaultlineCore
import Foundation
import TestSupport
import Testing

@testable import Formats

/// Apple's own crash reports (`.ips`, `.crash`) read into the report every route makes.
@Suite struct AppleCrashReportsTests {
    static let limits = IngestLimits()

    static func report(_ text: String, metadata: SwiftCrashReports.Metadata? = nil) throws -> Report {
        let meta = metadata ?? SwiftCrashReports.Metadata(eventID: "6156848e344e4d9e84e087afd0d0ae7b")
        return try AppleCrashReports.report(file: Array(text.utf8), metadata: meta, limits: limits)
    }

    static func refusal(_ text: String) -> FormatError? {
        do {
            _ = try report(text)
            return nil
        } catch let error as FormatError {
            return error
        } catch {
            return FormatError(.invalidField, "not a FormatError: \(error)")
        }
    }

    /// What both spellings of the sample crash must say.
    static func expectTheSampleCrash(_ r: Report) {
        #expect(r.kind == .crash)
        #expect(
            r.app
                == AppInfo(
                    id: "com.example.demo", version: "2.1", build: "42", displayVersion: "2.1", displayBuild: "42"))
        #expect(r.release == "2.1")
        #expect(r.build == "42")
        #expect(r.device.model == "iPhone15,2")
        #expect(r.device.os == "iOS")
        #expect(r.device.osVersion == "17.2")
        #expect(r.device.arch == "arm64e")
        #expect(r.device.osBuild == "21C62")
        #expect(r.device.simulator == false)
        #expect(r.app.displayVersion == "2.1" && r.app.displayBuild == "42")
        #expect(r.installID == AppleCrashSamples.crashReporterKey)
        #expect(r.error?.type == "EXC_BAD_ACCESS")
        #expect(r.error?.code == "SIGSEGV")
        #expect(r.error?.message == nil)
        #expect(r.error?.mach == MachException(name: "EXC_BAD_ACCESS", code: 1, subcode: 0x10, signal: "SIGSEGV"))
        #expect(
            r.error?.mach?.title(faultAddress: r.faultAddress)
                == "EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000010")
        #expect(
            r.customKeys.first { $0.key == "exception_subtype" }?.value
                == .string("KERN_INVALID_ADDRESS at 0x0000000000000010"))
        #expect(r.faultAddress == 0x10)
        #expect(r.timestamp == Date(timeIntervalSince1970: 1_795_167_231.4969))

        #expect(r.threads.count == 2)
        let crashed = r.threads[0]
        #expect(crashed.crashed)
        #expect(crashed.name == "com.apple.main-thread")
        #expect(crashed.frames.map(\.address) == [0x1_02b8_c1a4, 0x1_02b8_c09c, 0x1_a1c2_5e9c])
        #expect(crashed.frames.map(\.instructionKind) == [.programCounter, .returnAddress, .returnAddress])
        #expect(crashed.frames.map(\.module) == ["Demo", "Demo", "dyld"])
        // The report's own symbols are kept (a dSYM's answer replaces them later).
        #expect(crashed.frames[0].function == "parse")
        #expect(crashed.frames[0].file == "parser.c")
        #expect(crashed.frames[0].line == 12)
        #expect(crashed.frames[1].function == nil)
        #expect(crashed.frames[2].function == "start")
        #expect(crashed.registers.contains(Register(name: "pc", value: 0x1_02b8_c1a4)))
        #expect(crashed.registers.contains(Register(name: "x1", value: 0x10)))
        #expect(!r.threads[1].crashed)
        #expect(r.threads[1].name == "worker")
        #expect(r.threads[1].frames.map(\.address) == [0x1_ce4c_8ff4])

        let app = r.modules.first { $0.name == "Demo" }
        #expect(app?.buildID == BuildID(AppleCrashSamples.appBuildID))
        #expect(app?.baseAddress == AppleCrashSamples.appBase)
        #expect(app?.size == 49152)
        #expect(app?.path?.hasSuffix("/Demo.app/Demo") == true)
        #expect(app?.format == .macho)
        #expect(app?.arch == "arm64e")
        #expect(
            r.modules.first { $0.name == "libsystem_kernel.dylib" }?.buildID
                == BuildID("b2e8c4d6e3e03c2d9b0d8e6d5b3d0a1f"))
    }

    @Test func anIPSFileIsReadWhole() throws {
        let r = try Self.report(AppleCrashSamples.ips())
        Self.expectTheSampleCrash(r)
        // The absolute image of `source: A` (all-zero UUID, no name) is not a module.
        #expect(r.modules.count == 3)
        #expect(r.modules.allSatisfy { $0.buildID != nil })
        #expect(
            r.customKeys.first { $0.key == "termination_reason" }?.value == .string("SIGNAL 11 Segmentation fault: 11"))
    }

    @Test func aCrashTextReportSaysTheSameAsItsIPS() throws {
        let text = try Self.report(AppleCrashSamples.crash())
        Self.expectTheSampleCrash(text)
        let ips = try Self.report(AppleCrashSamples.ips())
        #expect(text.threads.map { $0.frames.map(\.address) } == ips.threads.map { $0.frames.map(\.address) })
        #expect(text.modules.map(\.buildID) == ips.modules.map(\.buildID))
        #expect(text.modules.map(\.baseAddress) == ips.modules.map(\.baseAddress))
        #expect(text.modules[0].size == 0xc000)
        #expect(
            text.customKeys.first { $0.key == "termination_reason" }?.value
                == .string("SIGNAL 11 Segmentation fault: 11"))
    }

    @Test func theClientsParametersWinOverTheFile() throws {
        let meta = SwiftCrashReports.Metadata(
            eventID: "00000000000000000000000000000001", appVersion: "9.9", userID: "u-1", installID: "i-1",
            sessionID: "s-1",
            environment: "staging")
        let r = try Self.report(AppleCrashSamples.ips(), metadata: meta)
        #expect(r.eventID.rawValue == "00000000000000000000000000000001")
        #expect(r.release == "9.9")
        #expect(r.build == "42")
        #expect(r.userID == "u-1")
        #expect(r.installID == "i-1")
        #expect(r.sessionID?.rawValue == "s-1")
        #expect(r.environment == "staging")
    }

    @Test func anUncaughtExceptionsBacktraceIsTheCrashedStack() throws {
        let extra = """

              "asi" : {"libsystem_c.dylib":["abort() called"],"CoreFoundation":["*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '-[Demo boom]: unrecognized selector'"]},
              "lastExceptionBacktrace" : [{"imageOffset":24220,"symbol":"__exceptionPreprocess","imageIndex":1},{"imageOffset":33188,"imageIndex":0}],
            """
        let r = try Self.report(AppleCrashSamples.ips(extra: extra))
        #expect(r.threads.count == 3)
        #expect(r.threads[0].name == "Last Exception Backtrace")
        #expect(r.threads[0].crashed)
        #expect(r.threads[0].frames.map(\.address) == [0x1_a1c2_5e9c, 0x1_02b8_c1a4])
        #expect(r.threads[0].frames.allSatisfy { $0.instructionKind == .returnAddress })
        #expect(r.crashMessage?.contains("NSInvalidArgumentException") == true)
        // The exception the app threw is the error, not the EXC_BAD_ACCESS it ended in.
        #expect(r.error?.type == "NSInvalidArgumentException")
        #expect(r.error?.message == "-[Demo boom]: unrecognized selector")
        #expect(r.crashMessage?.contains("abort() called") == true)

        let text = AppleCrashSamples.crash(
            header: """
                Application Specific Information:
                abort() called

                Last Exception Backtrace:
                0   dyld                          \t0x00000001a1c25e9c __exceptionPreprocess + 164
                1   Demo                          \t0x0000000102b8c1a4 0x102b84000 + 33188

                """)
        let fromText = try Self.report(text)
        #expect(fromText.threads[0].name == "Last Exception Backtrace")
        #expect(fromText.threads[0].frames.map(\.address) == [0x1_a1c2_5e9c, 0x1_02b8_c1a4])
        #expect(fromText.crashMessage == "abort() called")
        // The old spelling: a parenthesised list of return addresses.
        let old = try Self.report(
            AppleCrashSamples.crash(header: "Last Exception Backtrace:\n(0x1a1c25e9c 0x102b8c1a4)\n\n"))
        #expect(old.threads[0].frames.map(\.address) == [0x1_a1c2_5e9c, 0x1_02b8_c1a4])
    }

    /// iOS 16+ names an uncaught Objective-C exception in `exceptionReason`, not in the Application Specific
    /// Information.
    @Test func anExceptionReasonNamesTheError() throws {
        let extra = """

              "exceptionReason" : {"arguments":["NSNull","length","0x206db76c0"],"format_string":"-[%s %s]: unrecognized selector sent to instance %p","name":"NSInvalidArgumentException","type":"objc-exception","composed_message":"-[NSNull length]: unrecognized selector sent to instance 0x206db76c0","class":"NSException"},
              "asi" : {"libsystem_c.dylib":["abort() called"]},
            """
        let r = try Self.report(AppleCrashSamples.ips(extra: extra))
        #expect(r.error?.type == "NSInvalidArgumentException")
        #expect(r.error?.message == "-[NSNull length]: unrecognized selector sent to instance 0x206db76c0")
        #expect(r.crashMessage == "abort() called")
    }

    @Test func macOSTextReportsAreReadToo() throws {
        let text = """
            Process:               Demo [4242]
            Path:                  /Applications/Demo.app/Contents/MacOS/Demo
            Identifier:            com.example.demo
            Version:               2.1 (42)
            Code Type:             X86-64 (Native)
            Date/Time:             2026-11-20 10:33:51.496 +0100
            OS Version:            macOS 12.6 (21G115)
            Crashed Thread:        0  Dispatch queue: com.apple.main-thread

            Exception Type:        EXC_BAD_INSTRUCTION (SIGILL)
            Exception Codes:       0x0000000000000001, 0x0000000000000000

            Thread 0 Crashed:: Dispatch queue: com.apple.main-thread
            0   com.example.demo              \t0x000000010a5c5f50 main + 64 (main.swift:7)
            1   dyld                          \t0x000000011a1e551e start + 462

            Binary Images:
                   0x10a5c4000 -        0x10a5c7fff +com.example.demo (2.1 - 42) <4C4C4473-5555-3144-A157-542D2ECDA82A> /Applications/Demo.app/Contents/MacOS/Demo
                   0x11a1e0000 -        0x11a24bfff  dyld (960) <0CD1A5E8-2A3B-3C4D-9E5F-60718293A4B5> /usr/lib/dyld
            """
        let r = try Self.report(text)
        #expect(r.release == "2.1")
        #expect(r.build == "42")
        #expect(r.device.os == "macOS")
        #expect(r.device.osVersion == "12.6")
        #expect(r.device.arch == "x86_64")
        #expect(r.threads[0].crashed)
        #expect(r.threads[0].name == "com.apple.main-thread")
        #expect(r.threads[0].frames[0].file == "main.swift")
        #expect(r.modules[0].name == "com.example.demo")
        #expect(r.modules[0].buildID == BuildID(AppleCrashSamples.appBuildID))
        #expect(r.modules[1].name == "dyld")
        #expect(r.error?.type == "EXC_BAD_INSTRUCTION")
        #expect(r.error?.mach?.title() == "EXC_BAD_INSTRUCTION (SIGILL)")
        #expect(r.device.osBuild == "21G115")
        #expect(r.device.simulator == nil)
    }

    /// Xcode's Organizer exports the text report followed by the `.ips` it was made from ("Full Report").
    @Test func aTextReportWithItsFullReportAfterItIsReadAsText() throws {
        let text = AppleCrashSamples.crash() + "\n-----------\nFull Report\n-----------\n\n" + AppleCrashSamples.ips()
        Self.expectTheSampleCrash(try Self.report(text))
    }

    @Test func anOldIPSWithATextBodyIsRead() throws {
        let header =
            #"{"bug_type":"109","timestamp":"2020-03-27 18:06:51.00 -0700","os_version":"iPhone OS 13.3.1 (17D50)","incident_id":"6156848E-344E-4D9E-84E0-87AFD0D0AE7B"}"#
        let r = try Self.report(header + "\n" + AppleCrashSamples.crash())
        Self.expectTheSampleCrash(r)
    }

    /// A broken file and what its refusal must name (the test's name in the output).
    struct Broken: CustomTestStringConvertible, Sendable {
        var file: String
        var names: String
        var testDescription: String { names }
    }

    static let broken: [Broken] = [
        ("{\"bug_type\":\"309\"}", "there is no newline"),
        (
            AppleCrashSamples.ips().replacingOccurrences(
                of: "\"bug_type\":\"309\",\"os_version\"", with: "\"bug_type\":\"288\",\"os_version\""),
            "header.bug_type"
        ),
        (String(AppleCrashSamples.ips().prefix(2000)), "unterminated"),
        (
            AppleCrashSamples.ips(threads: #"[{"triggered":true,"frames":[{"imageOffset":1,"imageIndex":9}]}]"#),
            "threads[0].frames[0]"
        ),
        (AppleCrashSamples.ips(threads: #"[{"triggered":true,"frames":[{"imageOffset":1}]}]"#), "threads[0].frames[0]"),
        (
            AppleCrashSamples.ips(threads: #"[{"triggered":true,"frames":[{"imageOffset":-1,"imageIndex":0}]}]"#),
            "threads[0].frames[0].imageOffset"
        ),
        (
            AppleCrashSamples.ips(
                threads: #"[{"triggered":true,"frames":[{"imageOffset":18446744073709551615,"imageIndex":0}]}]"#),
            "threads[0].frames[0]"
        ),
        (
            AppleCrashSamples.ips(images: #"[{"name":"Demo","uuid":"4c4c4473-5555-3144-a157-542d2ecda82a"}]"#),
            "usedImages[0].base"
        ),
        (AppleCrashSamples.ips(images: #"[{"base":1,"uuid":"not-a-uuid"}]"#), "usedImages[0].uuid"),
        (AppleCrashSamples.ips(threads: "[]"), "threads"),
        (AppleCrashSamples.ips(header: #"{"bug_type": 309,"#), "header"),
        (AppleCrashSamples.ips(header: "not json"), "not an Apple crash report"),
        (AppleCrashSamples.crash(threads: "Thread 0 Crashed:\n0   Demo   not-an-address"), "line 30"),
        (
            AppleCrashSamples.crash(
                images: "0x102b8ffff - 0x102b84000 Demo arm64 <4c4c447355553144a157542d2ecda82a> /x"), "line 46"
        ),
        (AppleCrashSamples.crash(images: "0x102b84000 - 0x102b8ffff Demo arm64 <4c4c> /x"), "line 46"),
        (
            AppleCrashSamples.crash().replacingOccurrences(of: "2026-11-20 10:33:51.4969 +0100", with: "yesterday"),
            "line 14"
        ),
        (AppleCrashSamples.crash().replacingOccurrences(of: "Date/Time:", with: "Date:"), "timestamp"),
        ("Hello, this is not a crash report.\n", "threads"),
        (
            AppleCrashSamples.ips(
                extra: "\n  \"asi\" : " + String(repeating: "[", count: 100_000)
                    + String(repeating: "]", count: 100_000) + ","),
            "nesting deeper than 512"
        ),
        ("", "body"),
    ].map { Broken(file: $0.0, names: $0.1) }

    /// Hostile and broken files: each is refused whole, naming the field or line.
    @Test(arguments: broken)
    func brokenFilesAreRefusedNamingWhatIsWrong(_ broken: Broken) throws {
        let error = try #require(Self.refusal(broken.file), "accepted: \(broken.file.prefix(80))")
        #expect("\(error.field ?? "") \(error.message)".contains(broken.names), "\(error)")
    }

    /// Xcode's symbolicated reports list a function inlined at an address as a frame of its own, before the frame
    /// that holds the address; only the real frame is kept (it stays the program counter).
    @Test func inlinedFramesOfSymbolicatedReportsAreNotStackFrames() throws {
        let text = AppleCrashSamples.crash(
            threads: """
                Thread 0 Crashed:
                0   Demo                          \t0x0000000102b8c1a4 tax + 4 (parser.c:3) [inlined]
                0   Demo                          \t0x0000000102b8c1a4 parse + 40 (parser.c:12)
                1   Demo                          \t0x0000000102b8c09c main + 12 (main.c:5)
                """)
        let frames = try Self.report(text).threads[0].frames
        #expect(frames.map(\.function) == ["parse", "main"])
        #expect(frames.map(\.instructionKind) == [.programCounter, .returnAddress])
        let ips = AppleCrashSamples.ips(
            threads: """
                [{"triggered":true,"frames":[{"imageOffset":33188,"symbol":"tax","inline":true,"imageIndex":0},
                  {"imageOffset":33188,"symbol":"parse","imageIndex":0},{"imageOffset":32924,"symbol":"main","imageIndex":0}]}]
                """)
        let fromIPS = try Self.report(ips).threads[0].frames
        #expect(fromIPS.map(\.function) == ["parse", "main"])
        #expect(fromIPS.map(\.address) == [0x1_02b8_c1a4, 0x1_02b8_c09c])
    }

    @Test func registersAreBoundedPerThread() throws {
        let many = (0..<5000).map { "x\($0): 0x0000000000000001" }.joined(separator: " ")
        let text = AppleCrashSamples.crash(
            threads: """
                Thread 0 Crashed:
                0   Demo                          \t0x0000000102b8c1a4 0x102b84000 + 33188

                Thread 0 crashed with ARM Thread State (64-bit):
                \(many)
                \(many)
                """)
        #expect(try Self.report(text).threads[0].registers.count == 64)
        let x = (0..<5000).map { _ in #"{"value":1}"# }.joined(separator: ",")
        let ips = AppleCrashSamples.ips(
            threads: #"[{"triggered":true,"threadState":{"x":[\#(x)]},"frames":[{"imageOffset":1,"imageIndex":0}]}]"#)
        #expect(try Self.report(ips).threads[0].registers.count == 64)
    }

    @Test func bytesThatAreNotUTF8AreRefused() throws {
        var bytes = Array(AppleCrashSamples.crash().utf8)
        bytes[40] = 0xff
        #expect(throws: FormatError.self) {
            try AppleCrashReports.report(
                file: bytes, metadata: .init(eventID: "6156848e344e4d9e84e087afd0d0ae7b"), limits: Self.limits)
        }
    }

    /// What is stored reads back as what was answered; home folders are gone from it, addresses and UUIDs kept.
    @Test(arguments: [AppleCrashReports.Spelling.ips, .crash])
    func preparedFilesAreScrubbedAndReadBack(spelling: AppleCrashReports.Spelling) throws {
        let home =
            "/Users/alice/Library/Developer/CoreSimulator/Devices/X/data/Containers/Bundle/Application/Y/Demo.app/Demo"
        let original = (spelling == .ips ? AppleCrashSamples.ips() : AppleCrashSamples.crash())
            .replacingOccurrences(
                of: "/private/var/containers/Bundle/Application/51346174-37EF-4F60-B72D-8DE5F01035F5/Demo.app/Demo",
                with: home
            )
            .replacingOccurrences(of: "parse + 40", with: "parse(token=hunter2) + 40")
        let scrubber = Scrubber(settings: PrivacySettings())
        let (prepared, payload) = try AppleCrashReports.prepare(
            file: Array(original.utf8), metadata: .init(eventID: ""), scrubber: scrubber, limits: Self.limits,
            hasher: CoreutilsSHA256())
        let r = prepared.report
        #expect(r.eventID.rawValue == "6156848e344e4d9e84e087afd0d0ae7b")
        #expect(r.installID == AppleCrashSamples.crashReporterKey)
        #expect(r.modules[0].path?.hasPrefix("/Users/[user]/Library/") == true)
        #expect(r.modules[0].buildID == BuildID(AppleCrashSamples.appBuildID))
        #expect(r.threads[0].frames.map(\.address) == [0x1_02b8_c1a4, 0x1_02b8_c09c, 0x1_a1c2_5e9c])
        let inflated = try NativeReports.inflate(payload)
        #expect(!String(decoding: inflated, as: UTF8.self).contains("alice"))
        let reread = try NativeReports.reread(
            inflated: inflated, format: payload.format, range: prepared.range, limits: Self.limits)
        #expect(reread == r)
        if spelling == .crash {
            #expect(r.threads[0].frames[0].function == "parse(token=[Filtered])")
        }
    }

    /// A file with NUL bytes (found by the `apple-crash` fuzz target): the stored JSON string reads `\u0000` back as
    /// U+FFFD, and the report answered is still the one a re-read gives, with or without scrubbing.
    @Test(arguments: [false, true])
    func nulBytesReadBackAsAccepted(scrubbing: Bool) throws {
        let file = Array(
            ("Process:               Demo [4242]\nIdentifier:            com.example.demo\n"
                + "Version:               2.1 (42)\nCode Type:             X86-64 (Native)\n"
                + "Date/Time:             2026-11-20 10:33:51.496 +0100\n"
                + "OS Version:            macOS 12.6 (21G115)\nException Type:        EXC_BAD_ACCESS (SIGSEGV)\n\n"
                + "Thread 0 Crashed:: Dispatch queue: com\u{1}\u{0}\u{0}main-thread\n"
                + "0   com.example.demo              \t0x000000010a5c5f50 main + 64 (main.swift:7)\n\n"
                + "Binary Images:\n       0x10a5c4000 -        0x10a5c7fff +com.example.demo (2.1 - 42) "
                + "<4C4C4473-5555-3144-A157-542D2ECDA82A> /Applications/Demo.app/Contents/MacOS/Demo\n").utf8)
        #expect(file.contains(0))
        var settings = PrivacySettings()
        settings.scrubbing = scrubbing
        let (prepared, payload) = try AppleCrashReports.prepare(
            file: file, metadata: .init(eventID: ""), scrubber: Scrubber(settings: settings), limits: Self.limits,
            hasher: CoreutilsSHA256())
        let reread = try NativeReports.reread(
            inflated: try NativeReports.inflate(payload), format: payload.format, range: prepared.range,
            limits: Self.limits)
        #expect(reread == prepared.report)
        #expect(prepared.report.threads[0].frames.map(\.address) == [0x1_0a5c_5f50])
    }

    /// A project that calls `key` sensitive filters `CrashReporter Key:` in the stored file, yet every device stays its
    /// own install: the ids are read before scrubbing.
    @Test(arguments: [AppleCrashReports.Spelling.ips, .crash])
    func theInstallIDIsReadBeforeTheProjectsOwnRules(spelling: AppleCrashReports.Spelling) throws {
        let file = Array((spelling == .ips ? AppleCrashSamples.ips() : AppleCrashSamples.crash()).utf8)
        let scrubber = Scrubber(settings: PrivacySettings(sensitiveFields: ["key"]))
        let (prepared, payload) = try AppleCrashReports.prepare(
            file: file, metadata: .init(eventID: ""), scrubber: scrubber, limits: Self.limits, hasher: CoreutilsSHA256()
        )
        let stored = String(decoding: try NativeReports.inflate(payload), as: UTF8.self)
        #expect(stored.contains("[Filtered]"))  // the file's own copy of the key
        #expect(prepared.report.installID == AppleCrashSamples.crashReporterKey)
    }

    /// The limit is the file's as uploaded, not the larger form it is stored in: a file of exactly `maxBatchBytes`
    /// whose padding storing doubles (`\"` becomes `\\\"`) is taken and reads back as answered; one byte more is
    /// refused.
    @Test(arguments: [false, true])
    func theSizeLimitIsTheFilesAsUploaded(scrubbing: Bool) throws {
        var limits = IngestLimits()
        limits.maxBatchBytes = 256 * 1024
        let scrubber = Scrubber(
            settings: PrivacySettings(scrubbing: scrubbing, sensitiveFields: scrubbing ? ["key"] : []))
        let atLimit = AppleCrashSamples.ips(bytes: limits.maxBatchBytes)
        let (prepared, payload) = try AppleCrashReports.prepare(
            file: atLimit, metadata: .init(eventID: ""), scrubber: scrubber, limits: limits, hasher: CoreutilsSHA256())
        #expect(payload.inflatedSize > limits.maxBatchBytes * 3 / 2)
        #expect(prepared.report.installID == AppleCrashSamples.crashReporterKey)
        let inflated = try NativeReports.inflate(payload)
        #expect(String(decoding: inflated, as: UTF8.self).contains("[Filtered]") == scrubbing)
        let reread = try NativeReports.reread(
            inflated: inflated, format: payload.format, range: prepared.range, limits: limits)
        #expect(reread == prepared.report)

        let over = AppleCrashSamples.ips(bytes: limits.maxBatchBytes + 1)
        let error = #expect(throws: FormatError.self) {
            try AppleCrashReports.prepare(
                file: over, metadata: .init(eventID: ""), scrubber: scrubber, limits: limits, hasher: CoreutilsSHA256())
        }
        #expect(error?.code == .tooLarge)
    }

    /// A file under the limit that is mostly control characters (6 bytes each once stored) is refused with 413 where it
    /// arrives, never stored in a form that could not be read back.
    @Test func aFileThatStoringWouldInflatePastTheBoundIsRefused() throws {
        var limits = IngestLimits()
        limits.maxBatchBytes = 1024 * 1024
        let base = AppleCrashSamples.crash(header: "Note:                ")
        let control = String(repeating: "\u{01}", count: limits.maxBatchBytes - base.utf8.count)
        let file = Array(AppleCrashSamples.crash(header: "Note:                " + control).utf8)
        #expect(file.count == limits.maxBatchBytes)
        let error = #expect(throws: FormatError.self) {
            try AppleCrashReports.prepare(
                file: file, metadata: .init(eventID: ""), scrubber: Scrubber(settings: PrivacySettings()),
                limits: limits, hasher: CoreutilsSHA256())
        }
        #expect(error?.code == .tooLarge)
        #expect(error?.message.contains("escaped for storage") == true)
    }

    @Test func aFileWithoutAnIncidentIsKeyedByItsBytes() throws {
        let file = Array(
            AppleCrashSamples.crash().replacingOccurrences(of: "Incident Identifier:", with: "Incident:").utf8)
        let first = try AppleCrashReports.prepare(
            file: file, metadata: .init(eventID: ""), scrubber: Scrubber(settings: PrivacySettings()),
            limits: Self.limits, hasher: CoreutilsSHA256())
        let second = try AppleCrashReports.prepare(
            file: file, metadata: .init(eventID: ""), scrubber: Scrubber(settings: PrivacySettings()),
            limits: Self.limits, hasher: CoreutilsSHA256())
        #expect(first.report.report.eventID == second.report.report.eventID)
        let digest = CoreutilsSHA256().sha256()
        digest.update(file)
        #expect(first.report.report.eventID.rawValue == String(digest.finalize().rawValue.prefix(32)))
    }

    @Test func spellingIsToldByTheFirstByte() {
        #expect(AppleCrashReports.spelling(of: Array("\u{FEFF}  {\"bug_type\":\"309\"}\n{}".utf8)) == .ips)
        #expect(AppleCrashReports.spelling(of: Array("Incident Identifier: x".utf8)) == .crash)
    }

    @Test func operatingSystemNamesAreThoseUsersKnow() {
        #expect(AppleCrash.operatingSystem("iPhone OS 17.2 (21C62)") == ("iOS", "17.2", "21C62"))
        #expect(AppleCrash.operatingSystem("macOS 14.2.1 (23C71)") == ("macOS", "14.2.1", "23C71"))
        #expect(AppleCrash.operatingSystem("Mac OS X 10.15.7 (19H2)") == ("macOS", "10.15.7", "19H2"))
        #expect(AppleCrash.operatingSystem("Watch OS 10.1") == ("watchOS", "10.1", nil))
        #expect(AppleCrash.operatingSystem("") == (nil, nil, nil))
    }
}
