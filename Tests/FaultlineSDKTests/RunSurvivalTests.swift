import Foundation
import TestSupport
import Testing

@testable import FaultlineSDK

/// The state file of a real process (the SDK fixture) outlives that process: SIGKILL, a Swift crash.
@Suite(.serialized) struct RunSurvivalTests {
    /// The SDK fixture, built beside this test bundle by `swift build --build-tests`.
    static var fixture: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "SDKFixture"
        ).path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/SDKFixture").path
    }

    static func launch(_ steps: [String], environment: [String: String]) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: fixture)
        process.arguments = steps
        var env = ProcessInfo.processInfo.environment
        for key in ["FAULTLINE_DSN", "FAULTLINE_RUN_STATE", "SWIFT_BACKTRACE"] { env[key] = nil }
        process.environment = env.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    static func runFiles(_ state: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: state + "/runs")) ?? [])
            .filter { $0.hasSuffix(".state") }.map { state + "/runs/" + $0 }
    }

    @Test func stateSurvivesSIGKILLAndTheNextStartEndsTheSessionAbnormal() async throws {
        let folder = try TempFolder("sdk-kill")
        let state = folder.path + "/state"
        let child = try Self.launch(
            [
                "start", "user:killed-user", "log:before the kill", "key:stage=payment", "ikey:tries=2", "nonfatal:1",
                "sleep:60",
            ],
            environment: ["FAULTLINE_STATE_DIR": state])
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }

        // Wait until the child has written its context (it is sleeping then).
        var path: String?
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let file = Self.runFiles(state).first, let context = try? StateFile.read(at: file), context.errors == 1 {
                path = file
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let file = try #require(path)
        #expect(StateFile.isHeld(at: file))

        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal)
        #expect(child.terminationStatus == SIGKILL)

        // Everything written before the kill is there; the run did not mark itself exited; nobody holds it.
        #expect(!StateFile.isHeld(at: file))
        let context = try StateFile.read(at: file)
        #expect(context.pid == child.processIdentifier)
        #expect(context.userID == "killed-user")
        #expect(context.breadcrumbs.map(\.message) == ["before the kill"])
        #expect(
            context.customKeys == [
                CustomKey(key: "stage", value: .string("payment")), CustomKey(key: "tries", value: .int(2)),
            ])
        #expect(context.errors == 1)
        #expect(!context.exitedNormally)
        #expect(context.sessionID.count == 32)

        // The next start ends that session abnormal (no crash file), queues it and removes the state file.
        let next = try Self.launch(["start", "did-crash"], environment: ["FAULTLINE_STATE_DIR": state])
        next.waitUntilExit()
        #expect(next.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(StateFolder(path: state).lastRun() == .exited)  // the second run itself exited normally
        let queue = try DeliveryQueue(directory: state + "/queue")
        let sessions = queue.pending().filter { $0.kind == .session }
        let bodies = sessions.compactMap { queue.body(of: $0) }.compactMap { Gzip.decompress($0) }
            .map { String(decoding: $0, as: UTF8.self) }
        let killedEnd = bodies.filter { $0.contains(context.sessionID) && $0.contains("\"abnormal\"") }
        #expect(killedEnd.count == 1, "\(bodies)")
        #expect(killedEnd.first?.contains("\"errors\":1") == true)
    }

    @Test func recoveryMatchesACrashFileToItsRunOnce() async throws {
        let folder = try TempFolder("sdk-crash")
        let state = folder.path + "/state"
        let crashes = folder.path + "/crashes"
        try FileManager.default.createDirectory(atPath: crashes, withIntermediateDirectories: true)
        let backtrace = BacktraceSetting.value(crashDirectory: crashes)
        let child = try Self.launch(
            ["start", "log:about to fail", "key:k=v", "crash:fatal"],
            environment: ["FAULTLINE_STATE_DIR": state, "SWIFT_BACKTRACE": backtrace])
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal)
        let crashFiles = try FileManager.default.contentsOfDirectory(atPath: crashes)
        #expect(crashFiles.count == 1)
        #expect(crashFiles.first?.hasPrefix("SDKFixture-\(child.processIdentifier)-") == true)
        let run = try #require(Self.runFiles(state).first)
        let context = try StateFile.read(at: run)
        // A crash file of another program in the same folder is not ours to send.
        FileManager.default.createFile(atPath: crashes + "/other-1-0.json", contents: Data("{}".utf8))
        // A program whose name is longer than 15 bytes gets crash files named after the first 15 (its `comm`).
        let long = "SDKFixture-with-a-long-name"
        #expect(
            Recovery(
                folder: StateFolder(path: state), queue: try DeliveryQueue(directory: folder.path + "/other-queue"),
                crashDirectory: crashes, program: long, device: DeviceInfo.current(), now: { 0 }, makeID: { "" }
            ).crashFilesOfThisProgram().isEmpty)
        try FileManager.default.copyItem(
            atPath: crashes + "/" + crashFiles[0], toPath: crashes + "/SDKFixture-with-99-0.0.json")
        let truncated = Recovery(
            folder: StateFolder(path: state), queue: try DeliveryQueue(directory: folder.path + "/other-queue"),
            crashDirectory: crashes, program: long, device: DeviceInfo.current(), now: { 0 }, makeID: { "" })
        #expect(truncated.crashFilesOfThisProgram().map(\.pid) == [99])
        try FileManager.default.removeItem(atPath: crashes + "/SDKFixture-with-99-0.0.json")

        let queue = try DeliveryQueue(directory: folder.path + "/queue")
        let recovery = Recovery(
            folder: StateFolder(path: state), queue: queue, crashDirectory: crashes, program: "SDKFixture",
            device: DeviceInfo.current(), now: { Date().timeIntervalSince1970 }, makeID: { UUID().uuidString })
        let outcomes = recovery.run()
        #expect(outcomes.count == 1)
        #expect(outcomes.first?.status == .crashed)
        #expect(outcomes.first?.sessionID == context.sessionID)
        #expect(StateFolder(path: state).lastRun() == .crashed)
        let crash = try #require(queue.pending().first { $0.kind == .crash })
        let body = String(decoding: Gzip.decompress(queue.body(of: crash) ?? []) ?? [], as: UTF8.self)
        #expect(body.contains("about to fail"))
        #expect(body.contains(context.sessionID))
        #expect(queue.pending().filter { $0.kind == .session }.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: crashes) == ["other-1-0.json"])
        #expect(Self.runFiles(state).isEmpty)
        // Nothing left to recover: a second pass queues nothing.
        #expect(recovery.run().isEmpty)
        #expect(queue.pending().count == 2)
    }

    @Test func underTheLauncherTheSDKWritesIntoItsStateFileAndLeavesSessionsToIt() async throws {
        let folder = try TempFolder("sdk-launched")
        let state = folder.path + "/state"
        try FileManager.default.createDirectory(atPath: state + "/runs", withIntermediateDirectories: true)
        // What faultline-run does before it starts its child: make the run's state file, holding its lock.
        let path = state + "/runs/launched.state"
        let launcher = try StateFile.create(
            at: path,
            context: RunContext(
                sessionID: "0123456789abcdef0123456789abcdef", installID: "install-1", appVersion: "9.9",
                startedAt: 1_795_000_000, pid: 0))
        #expect(launcher.holdsLock)
        let child = try Self.launch(
            ["start", "user:launched-user", "log:inside", "key:k=v", "nonfatal:1", "unsent"],
            environment: ["FAULTLINE_STATE_DIR": state, "FAULTLINE_RUN_STATE": path])
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        let context = try #require(launcher.snapshot())
        #expect(context.sessionID == "0123456789abcdef0123456789abcdef")
        #expect(context.pid == child.processIdentifier)
        #expect(context.userID == "launched-user")
        #expect(context.appVersion == "9.9")
        #expect(context.breadcrumbs.map(\.message) == ["inside"])
        #expect(context.customKeys == [CustomKey(key: "k", value: .string("v"))])
        #expect(context.errors == 1)
        #expect(context.exitedNormally)
        // The non-fatal is queued; no session update, no state file of its own, no last-run: the launcher's.
        let queue = try DeliveryQueue(directory: state + "/queue")
        #expect(queue.pending().map(\.kind) == [.nonfatal])
        #expect(Self.runFiles(state) == [path])
        #expect(StateFolder(path: state).lastRun() == nil)

        // A launcher state file that cannot be opened: the SDK still records, into a file it removes at exit.
        let broken = try Self.launch(
            ["start", "nonfatal:1"],
            environment: ["FAULTLINE_STATE_DIR": state, "FAULTLINE_RUN_STATE": folder.path + "/missing"])
        broken.waitUntilExit()
        #expect(broken.terminationStatus == 0)
        #expect(queue.pending().map(\.kind) == [.nonfatal, .nonfatal])
        #expect(try FileManager.default.contentsOfDirectory(atPath: state + "/runs") == ["launched.state"])
    }

    @Test func crashFileTimestampsAndBacktraceSettings() {
        #expect(Recovery.parseISO8601("2026-11-23T05:19:28.291960Z") == 1_795_411_168.291960)
        #expect(Recovery.parseISO8601("1970-01-01T00:00:00Z") == 0)
        #expect(Recovery.parseISO8601("2026-13-23T05:19:28Z") == nil)
        #expect(Recovery.parseISO8601("2026-11-23T05:19:28.29x960Z") == nil)
        #expect(Recovery.parseISO8601("") == nil)
        #expect(
            BacktraceSetting.jsonCrashDirectory(BacktraceSetting.value(crashDirectory: "/var/crash")) == "/var/crash")
        #expect(BacktraceSetting.jsonCrashDirectory("enable=yes,format=text,output-to=/tmp") == nil)
        #expect(BacktraceSetting.jsonCrashDirectory("enable=no,format=json,output-to=/tmp") == nil)
        #expect(BacktraceSetting.jsonCrashDirectory("format=json") == nil)
        #expect(BacktraceSetting.jsonCrashDirectory(nil) == nil)
        #expect(DeviceInfo.memTotal("MemTotal:       16314388 kB\nMemFree: 1 kB") == 16_314_388 * 1024)
        #expect(DeviceInfo.memTotal("MemTotal: 99999999999999999999 kB") == nil)
        #expect(DeviceInfo.current().memory ?? 0 > 0)
    }

    @Test func errorsAreNamedByTypeCodeAndMessage() {
        struct Described: LocalizedError {
            var errorDescription: String? { "the card was declined" }
        }
        enum Plain: Error { case first(Int), second(Int) }
        let described = FaultlineClient.errorInfo(Described())
        #expect(described.type.hasSuffix("Described"))
        #expect(described.message == "the card was declined")
        let plain = FaultlineClient.errorInfo(Plain.second(3))
        #expect(plain.type.hasPrefix("FaultlineSDKTests."))
        #expect(plain.type.hasSuffix("Plain"))
        #expect(plain.code == "1")
        #expect(plain.message == "second(3)")
        let ns = FaultlineClient.errorInfo(NSError(domain: "NSURLErrorDomain", code: -1001))
        #expect(ns.type == "NSURLErrorDomain")
        #expect(ns.code == "-1001")
    }
}
