import FaultlineCore
import Formats
import Foundation
import TestSupport
import Testing

@testable import FaultlineSDK

/// What the report builder writes, read back by the server's own parsers (`Formats`): every report must be
/// accepted as sent and mean what the SDK meant.
@Suite struct ReportBuilderTests {
    let eventID = "7077e450fa6f4594850bfed9428d1d98"
    let device = FaultlineSDK.DeviceInfo(os: "Linux", osVersion: "6.1", arch: "x86_64", model: "KVM", memory: 8 << 30)

    var context: RunContext {
        RunContext(
            sessionID: "5b1c0e2a9d4f4a578c1b2e6f0a9d3c71", installID: "c0a8f3e2-51b7-4d4e-9a0f-7f3b2e1d6c88",
            userID: "user-42",
            appID: "com.example.shop", appVersion: "2.4.1", appBuild: "381", environment: "production",
            startedAt: 1_795_410_000, pid: 4242, errors: 2,
            breadcrumbs: [
                FaultlineSDK.Breadcrumb(timestamp: 1_795_410_001.25, message: "checkout started"),
                FaultlineSDK.Breadcrumb(timestamp: 1_795_410_002.5, message: "cart \"A\"\nloaded", category: "cart"),
            ],
            customKeys: [
                CustomKey(key: "cart_items", value: .int(3)), CustomKey(key: "premium", value: .bool(true)),
                CustomKey(key: "ratio", value: .double(0.25)), CustomKey(key: "order", value: .string("from-context")),
            ])
    }

    func decodeReport(_ bytes: [UInt8]) throws -> FaultlineCore.Report {
        let decoded = try NativeReports.decode(bytes, limits: IngestLimits())
        #expect(!decoded.isBatch)
        return try #require(decoded.items.first).get().report
    }

    func customKeys(_ report: FaultlineCore.Report) -> [String: FaultlineCore.CustomValue] {
        Dictionary(report.customKeys.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    @Test func nonFatalIsWhatTheServerReads() throws {
        let stack = CapturedStack(
            threadName: "worker",
            frames: [
                .init(address: 0x5555_0000_1234, isProgramCounter: true),
                .init(address: 0x5555_0000_2000, isProgramCounter: false),
                .init(address: 0x7fff_0000_0010, isProgramCounter: false),
            ],
            modules: [
                .init(
                    name: "shop", path: "/srv/shop", buildID: "3CDF16720CD7040A0EFBE6A4D0BD30E722EB4408",
                    baseAddress: 0x5555_0000_0000,
                    endAddress: 0x5555_0001_0000),
                // A build-id that is not hex and an end below the base: left out, not a refused report.
                .init(name: "libweird.so", path: nil, buildID: "xyz", baseAddress: 0x7fff_0000_0000, endAddress: 0x10),
            ])
        let bytes = ReportBuilder.nonFatal(
            eventID: eventID, timestamp: 1_795_410_003.5,
            error: FaultlineSDK.ErrorInfo(type: "Shop.CheckoutError", code: "2", message: "card declined"),
            userInfo: ["order": .string("A-17"), "attempt": .int(2)], stack: stack, context: context, device: device)
        let r = try decodeReport(bytes)
        #expect(r.eventID.rawValue == eventID)
        #expect(r.kind == .nonfatal)
        #expect(r.timestamp.timeIntervalSince1970 == 1_795_410_003.5)
        #expect(r.sessionID?.rawValue == "5b1c0e2a9d4f4a578c1b2e6f0a9d3c71")
        #expect(r.userID == "user-42")
        #expect(r.installID == "c0a8f3e2-51b7-4d4e-9a0f-7f3b2e1d6c88")
        #expect(r.environment == "production")
        #expect(r.app == AppInfo(id: "com.example.shop", version: "2.4.1", build: "381"))
        #expect(
            r.device.os == "Linux" && r.device.osVersion == "6.1" && r.device.arch == "x86_64"
                && r.device.model == "KVM")
        #expect(r.device.memoryBytes == 8 << 30)
        #expect(r.error == FaultlineCore.ErrorInfo(type: "Shop.CheckoutError", code: "2", message: "card declined"))
        #expect(r.threads.count == 1)
        let thread = try #require(r.threads.first)
        #expect(thread.name == "worker" && thread.crashed)
        #expect(thread.frames.map(\.address) == [0x5555_0000_1234, 0x5555_0000_2000, 0x7fff_0000_0010])
        #expect(thread.frames.map(\.instructionKind) == [.programCounter, .returnAddress, .returnAddress])
        #expect(r.modules.count == 2)
        #expect(r.modules[0].buildID?.rawValue == "3cdf16720cd7040a0efbe6a4d0bd30e722eb4408")
        #expect(r.modules[0].size == 0x10000 && r.modules[0].path == "/srv/shop")
        #expect(r.modules[1].buildID == nil && r.modules[1].size == nil && r.modules[1].name == "libweird.so")
        #expect(r.breadcrumbs.map(\.message) == ["checkout started", "cart \"A\"\nloaded"])
        #expect(r.breadcrumbs.map(\.category) == [nil, "cart"])
        #expect(r.breadcrumbs.map(\.timestamp.timeIntervalSince1970) == [1_795_410_001.25, 1_795_410_002.5])
        // userInfo joins the context's keys and wins over a key of the same name.
        #expect(
            customKeys(r) == [
                "cart_items": .number(3), "premium": .bool(true), "ratio": .number(0.25), "order": .string("A-17"),
                "attempt": .number(2),
            ])
        #expect(r.trimmed == TrimCounts())
    }

    @Test func signalCrashNamesTheSignalAndKeepsStderr() throws {
        let bytes = ReportBuilder.signalCrash(
            eventID: eventID, timestamp: 1_795_410_010, signal: 11, stderrTail: ["loading config", "about to parse"],
            crashMessage: "Segmentation fault (core dumped)", context: context, device: device)
        let r = try decodeReport(bytes)
        #expect(r.kind == .crash)
        #expect(r.error?.type == "SIGSEGV")
        #expect(r.error?.code == "11")
        #expect(r.error?.message?.contains("signal 11") == true)
        #expect(r.error?.message?.contains("exit status 139") == true)
        #expect(r.crashMessage == "Segmentation fault (core dumped)")
        #expect(
            r.breadcrumbs.map(\.message) == [
                "checkout started", "cart \"A\"\nloaded", "loading config", "about to parse",
            ])
        #expect(r.breadcrumbs.map(\.category) == [nil, "cart", "stderr", "stderr"])
        #expect(r.userID == "user-42" && r.app.version == "2.4.1")
        #expect(r.threads.isEmpty)

        // Without a context (a program that does not link the SDK), and an unnamed signal.
        let bare = try decodeReport(
            ReportBuilder.signalCrash(
                eventID: eventID, timestamp: 1_795_410_010, signal: 40, stderrTail: [], crashMessage: nil, context: nil,
                device: device))
        #expect(bare.error?.type == "SIGRTMIN+6")
        #expect(bare.sessionID == nil && bare.breadcrumbs.isEmpty)
        #expect(
            try decodeReport(
                ReportBuilder.signalCrash(
                    eventID: eventID, timestamp: 1, signal: 6, stderrTail: [], crashMessage: nil, context: nil,
                    device: device)
            ).error?.type == "SIGABRT")
    }

    @Test func sessionUpdatesAreWhatTheServerReads() throws {
        let start = SessionUpdate(context: context, status: .ok, duration: nil, seq: 1)
        let end = SessionUpdate(context: context, status: .crashed, duration: 12.5, seq: 2)
        let s1 = try #require(NativeSessions.decode(ReportBuilder.session(start), limits: IngestLimits()).first)
        let s2 = try #require(NativeSessions.decode(ReportBuilder.session(end), limits: IngestLimits()).first)
        #expect(s1.sessionID.rawValue == "5b1c0e2a9d4f4a578c1b2e6f0a9d3c71")
        #expect(s1.release == "2.4.1")  // the build is beneath the release, not in it
        #expect(s1.distinctID == "user-42")
        #expect(s1.environment == "production")
        #expect(s1.started.timeIntervalSince1970 == 1_795_410_000)
        #expect(s1.status == .ok && s1.errors == 2 && s1.seq == 1 && s1.duration == nil)
        #expect(s2.status == .crashed && s2.seq == 2 && s2.duration == 12.5)

        // No version, no user, hostile numbers: still a session the server takes.
        var bare = SessionUpdate(
            sessionID: "abc", installID: "install-1", userID: nil, appVersion: nil, appBuild: nil, environment: nil,
            started: .nan, status: .abnormal, errors: -3, duration: -1, seq: 2)
        var s3 = try #require(NativeSessions.decode(ReportBuilder.session(bare), limits: IngestLimits()).first)
        #expect(s3.release == "unknown" && s3.distinctID == "install-1" && s3.errors == 0 && s3.duration == nil)
        bare.started = .infinity
        s3 = try #require(NativeSessions.decode(ReportBuilder.session(bare), limits: IngestLimits()).first)
        #expect(s3.status == .abnormal)
    }

    @Test func hostileContextStillMakesAnAcceptedReport() throws {
        var ctx = context
        ctx.sessionID = "not a valid session id with spaces"
        ctx.breadcrumbs = (0..<5000).map {
            FaultlineSDK.Breadcrumb(
                timestamp: $0 == 0 ? .nan : 1_795_410_000 + Double($0),
                message: "crumb \($0) " + String(repeating: "x", count: 40))
        }
        ctx.customKeys = (0..<200).map {
            CustomKey(key: "k\($0)" + String(repeating: "é", count: 900), value: .double($0 == 0 ? .infinity : 1))
        }
        ctx.userID = String(repeating: "u", count: 5000)
        let stack = CapturedStack(
            threadName: nil,
            frames: (0..<5000).map { .init(address: UInt64($0) &* 16, isProgramCounter: $0 == 0) },
            modules: (0..<5000).map {
                .init(
                    name: "lib\($0).so", path: "/" + String(repeating: "p", count: 300),
                    buildID: String(repeating: "ab", count: 20),
                    baseAddress: UInt64($0) << 20, endAddress: (UInt64($0) << 20) + 4096)
            })
        let bytes = ReportBuilder.nonFatal(
            eventID: eventID, timestamp: .infinity,
            error: FaultlineSDK.ErrorInfo(type: "E", code: nil, message: String(repeating: "m", count: 100_000)),
            userInfo: [:], stack: stack, context: ctx, device: device)
        #expect(bytes.count <= 1_000_000)
        let r = try decodeReport(bytes)
        #expect(r.sessionID == nil)
        #expect(r.customKeys.count == 64)
        #expect(r.threads.first?.frames.count ?? 0 > 0)
        // The newest breadcrumbs are kept, oldest first.
        #expect(r.breadcrumbs.last?.message?.hasPrefix("crumb 4999 ") == true)
        #expect(r.trimmed.breadcrumbsDropped == 0)
    }

    // MARK: - Swift runtime crash files

    /// A real crash file: a swiftc-built program trapping under the Swift runtime's backtracer.
    static let realCrash: Result<[UInt8], any Error> = Result {
        let folder = try TempFolder("sdk-crash")
        return [UInt8](try SwiftCrashFixture.crash(in: folder).report)
    }

    @Test func swiftCrashMapsAsTheServersSwiftEndpointDoes() throws {
        let file = try Self.realCrash.get()
        let bytes = try ReportBuilder.swiftCrash(
            eventID: eventID, crashFile: file, context: context,
            crashMessage: "main.swift:2: Fatal error: Index out of range",
            device: device)
        let mine = try decodeReport(bytes)
        // The server's own reading of the same file (`POST /api/v1/crashes/swift`).
        let envelope = try SwiftCrashReports.envelope(file, metadata: .init(eventID: eventID))
        let theirs = try SwiftCrashReports.parse(envelope: envelope, limits: IngestLimits())
        #expect(mine.kind == .crash)
        #expect(mine.threads == theirs.threads)
        #expect(mine.threads.contains { $0.crashed && !$0.frames.isEmpty && !$0.registers.isEmpty })
        #expect(mine.modules == theirs.modules)
        #expect(mine.modules.contains { $0.buildID != nil && $0.size != nil })
        #expect(mine.error == theirs.error)
        #expect(mine.error?.type != nil)
        #expect(mine.faultAddress == theirs.faultAddress && mine.faultAddress != nil)
        #expect(abs(mine.timestamp.timeIntervalSince(theirs.timestamp)) < 0.001)
        #expect(mine.crashMessage == "main.swift:2: Fatal error: Index out of range")
        #expect(mine.userID == "user-42" && mine.sessionID?.rawValue == context.sessionID)
        #expect(mine.breadcrumbs.count == 2 && customKeys(mine)["cart_items"] == .number(3))
        #expect(mine.device.arch == "x86_64" || mine.device.arch == "arm64" || mine.device.arch == "aarch64")
        // capturedMemory (user data) is not sent.
        #expect(!String(decoding: bytes, as: UTF8.self).contains("capturedMemory"))

        // Without a context: still a crash, with no identity.
        let bare = try decodeReport(
            try ReportBuilder.swiftCrash(
                eventID: eventID, crashFile: file, context: nil, crashMessage: nil, device: device))
        #expect(bare.threads == theirs.threads && bare.userID == nil && bare.sessionID == nil)
    }

    @Test(arguments: [
        ("", "not JSON"), ("[]", "not a JSON object"), ("{\"kind\":\"crashReport\"}", "timestamp"),
        ("{\"kind\":\"other\",\"timestamp\":\"2026-11-23T05:16:21Z\",\"threads\":[{}]}", "crashReport"),
        ("{\"kind\":\"crashReport\",\"timestamp\":\"2026-11-23T05:16:21Z\",\"threads\":[]}", "threads"),
        ("{\"kind\":\"crashReport\",\"timestamp\":\"yesterday\",\"threads\":[{}]}", "timestamp"),
        ("{\"kind\":\"crashReport\"", "not JSON"), ("{\"a\":\"\\ud800\"}", "not JSON"),
    ])
    func notACrashFile(_ text: String, _ why: String) {
        do {
            _ = try ReportBuilder.swiftCrash(
                eventID: eventID, crashFile: Array(text.utf8), context: nil, crashMessage: nil, device: device)
            Issue.record("accepted \(text)")
        } catch let error as SDKError {
            #expect(error.code == .corruptCrashFile)
            #expect(error.message.contains(why), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func deepNestingAndHugeFilesAreRefusedNotFatal() {
        let deep = Array(repeating: UInt8(ascii: "["), count: 100_000)
        #expect(throws: SDKError.self) {
            try ReportBuilder.swiftCrash(
                eventID: eventID, crashFile: deep, context: nil, crashMessage: nil, device: device)
        }
        let huge = [UInt8](repeating: 0x20, count: ReportBuilder.maxCrashFileBytes + 1)
        #expect(throws: SDKError.self) {
            try ReportBuilder.swiftCrash(
                eventID: eventID, crashFile: huge, context: nil, crashMessage: nil, device: device)
        }
    }

    @Test func oddButValidFieldsAreCleanedNotRefused() throws {
        let text = """
            {"kind":"crashReport","timestamp":"2026-11-23T07:16:21.5+02:00","description":"Bad pointer dereference",
             "faultAddress":"0xnothex","architecture":"x86_64",
             "threads":[{"name":7,"crashed":"yes","registers":{"rip":"0x10","bad":"zz","big":"0x11111111111111111"},
                         "frames":[{"kind":"programCounter","address":"0x10"},{"kind":"truncated"},{"kind":"omittedFrames","count":3},
                                   {"kind":"asyncResumePoint","address":"0x20"},{"kind":"weird","address":"0x30"},{"address":12345678901234567890123}]},
                        "not a thread", {"crashed":true,"frames":"nope"}],
             "images":[{"name":"a","baseAddress":"0x1000","endOfText":"0x800","buildId":"abc"},{"path":"/x/b","baseAddress":"0x2000","endOfText":"0x3000","buildId":"ABCD"},
                       {"name":"nobase"}, 5],
             "capturedMemory":{"0x10":"00ff"}}
            """
        let r = try decodeReport(
            try ReportBuilder.swiftCrash(
                eventID: eventID, crashFile: Array(text.utf8), context: nil, crashMessage: nil,
                device: FaultlineSDK.DeviceInfo(osVersion: nil, arch: nil, model: nil, memory: nil)))
        #expect(r.timestamp.timeIntervalSince1970 == 1_795_410_981.5)
        #expect(r.error?.type == "Bad pointer dereference")
        #expect(r.faultAddress == nil)
        #expect(r.device.arch == "x86_64")
        #expect(r.threads.count == 2)
        #expect(r.threads[0].frames.map(\.address) == [0x10, 0x20, 0x30])
        #expect(r.threads[0].frames.map(\.instructionKind) == [.programCounter, .programCounter, nil])
        #expect(r.threads[0].registers == [Register(name: "rip", value: 0x10)])
        #expect(r.threads[0].name == nil && r.threads[0].crashed == false)
        #expect(r.threads[1].crashed && r.threads[1].frames.isEmpty)
        #expect(r.modules.map(\.name) == ["a", "/x/b"])
        #expect(r.modules[0].size == nil && r.modules[0].buildID == nil)
        #expect(r.modules[1].size == 0x1000 && r.modules[1].buildID?.rawValue == "abcd")
    }

    @Test func mutatedCrashFilesNeverTrapAndWhatIsBuiltIsAccepted() throws {
        let file = try Self.realCrash.get()
        var rng = SplitMix(seed: 11)
        var built = 0
        for round in 0..<400 {
            var bytes = file
            switch round % 4 {
            case 0: bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count))))
            case 1:
                for _ in 0..<(1 + rng.next() % 8) {
                    bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
                }
            case 2:
                let i = Int(rng.next() % UInt64(bytes.count))
                bytes.insert(contentsOf: Array("\"x\":[1,{\"address\":\"0x\"}],".utf8), at: i)
            default:
                // Swap a value-ish character for a digit or quote.
                let i = Int(rng.next() % UInt64(bytes.count))
                bytes[i] =
                    [UInt8(ascii: "\""), UInt8(ascii: "0"), UInt8(ascii: "}"), UInt8(ascii: "f")][Int(rng.next() % 4)]
            }
            do {
                let report = try ReportBuilder.swiftCrash(
                    eventID: eventID, crashFile: bytes, context: context, crashMessage: nil, device: device)
                _ = try decodeReport(report)  // anything built must be accepted
                built += 1
            } catch let error as SDKError {
                #expect(error.code == .corruptCrashFile)
            }
        }
        #expect(built > 0)
    }
}

/// A deterministic generator for the mutation test.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
