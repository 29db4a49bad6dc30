import Dispatch
import FaultlineSDK
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One run of a program under `faultline-run`: state folder and state file first, then the child, then the
/// report of how it ended. Reporting is best effort around the child, never in its way: when the state folder
/// cannot be made, or another user could change it or its `queue/`, `runs/` or `crashes/` (``PrivateFolder``),
/// the program still runs (without reporting, with one line on standard error) and its exit status is passed on.
///
/// Order of the ending (so that a crash of the launcher itself, or a server that is down, loses nothing):
/// read the context → queue the crash report and the session's end → `last-run` → remove the run's crash
/// and state files (only once they are queued) → send with a deadline. What was not sent stays in the queue
/// for the next run of the launcher or of the SDK.
final class Launcher {
    struct Settings {
        var dsn: String?
        var release: String?
        var build: String?
        var environment: String?
        var appID: String?
        var stateDirectory: String
        var sendTimeout: Double
        /// Trace the child and write a minidump of a native crash (``Tracer``); `--no-trace` turns it off.
        var trace: Bool = true
    }

    /// Signals after which the run counts as a crash even without the Swift runtime's crash file.
    static let crashSignals: Set<Int32> = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS]
    /// Signals that ask a program to stop: a death by one of them is an ordinary end (`exited`).
    static let stopSignals: Set<Int32> = [SIGTERM, SIGINT, SIGHUP]

    let settings: Settings
    let command: [String]
    let environment: [String: String]
    let inheritedIgnored: Set<Int32>

    init(settings: Settings, command: [String], environment: [String: String], inheritedIgnored: Set<Int32>) {
        self.settings = settings
        self.command = command
        self.environment = environment
        self.inheritedIgnored = inheritedIgnored
    }

    /// What reporting needs for this run; nil when it could not be set up.
    private struct Run {
        var folder: StateFolder
        var statePath: String
        var stateFile: StateFile
        var context: RunContext
        var queue: DeliveryQueue
        var uploader: Uploader?
        var device: DeviceInfo
    }

    /// Runs the child to its end and reports it; answers how the child ended.
    func run() -> ChildProcess.Ending {
        let run = prepare()
        let childEnvironment = Self.childEnvironment(
            parent: environment, run: run.map { ($0.folder, $0.statePath) }, settings: settings)
        // Only a run that reports traces its child (`--no-trace` turns it off).
        let traced = run != nil && settings.trace
        let child: ChildProcess
        do {
            child = try ChildProcess(
                arguments: command, environment: childEnvironment, inheritedIgnored: inheritedIgnored,
                stopped: traced)
        } catch {
            warn(error.description)
            if let run { Self.abandon(run) }
            return .exited(code: error.exitCode)
        }
        // The child waits stopped before its exec: seized there, then continued (also when it cannot be traced).
        var tracer: Tracer?
        if traced, let run {
            tracer = startTracing(child.pid, folder: run.folder)
            kill(child.pid, SIGCONT)
        }
        let copier = StderrCopier(fd: child.stderrRead)
        copier.start()

        var sender: Task<Void, Never>?
        if let run {
            run.stateFile.setPID(child.pid)
            var context = run.context
            context.pid = child.pid
            enqueue(
                run, kind: .session, id: context.sessionID,
                json: ReportBuilder.session(SessionUpdate(context: context, status: .ok, duration: nil, seq: 1)))
            if let uploader = run.uploader {
                sender = Task.detached { await uploader.run() }
                uploader.notify()
            }
        }

        let ending = child.wait(tracer: tracer)
        copier.finish()
        guard var run else { return ending }
        run.context.pid = child.pid
        report(ending, of: run, stderr: copier.tail.lines, dump: tracer?.dump)
        // The background sender is stopped only after the final drain: cancelled in the middle of a request,
        // it would turn an answer on its way into a failure and a backoff the drain then has to wait out.
        if let uploader = run.uploader { send(uploader, timeout: settings.sendTimeout) }
        sender?.cancel()
        return ending
    }

    // MARK: - Before the child

    /// Seizes the child for crash capture. When tracing is not permitted (a container without `ptrace`, Yama's
    /// scope 3, a set-user-id program), says so once and goes on without it: a crash is then reported as the
    /// signal, as with `--no-trace`.
    private func startTracing(_ pid: pid_t, folder: StateFolder) -> Tracer? {
        do {
            // A Swift program's runtime writes its crash file before the signal's default action: that one
            // report is kept, and no dump is written.
            return try Tracer(pid: pid, shouldDump: { folder.crashFiles(pid: pid).isEmpty })
        } catch {
            warn(
                "cannot trace \(Self.programName(command[0])) (\(error)): a crash is reported without its stack; --no-trace skips trying"
            )
            return nil
        }
    }

    private func prepare() -> Run? {
        var folder = StateFolder(path: settings.stateDirectory)
        do {
            try folder.prepareForLauncher()
            let installID = try folder.installID()
            let sessionID = Self.newID()
            let context = RunContext(
                sessionID: sessionID, installID: installID, appID: settings.appID, appVersion: settings.release,
                appBuild: settings.build, environment: settings.environment,
                startedAt: Date().timeIntervalSince1970, pid: 0)
            let statePath = folder.runs + "/" + sessionID + ".state"
            let stateFile = try StateFile.create(at: statePath, context: context)
            let queue = try DeliveryQueue(directory: folder.queue)
            let device = Self.device()
            // Runs of this program that ended without their launcher finishing them (it was killed, the
            // machine lost power): their crash files and sessions, as the SDK reports them at its start.
            // A run whose state file is still held (another launcher's, running now) is left alone.
            Recovery(
                folder: folder, queue: queue, crashDirectory: folder.crashes, program: Self.programName(command[0]),
                device: device, now: { Date().timeIntervalSince1970 }, makeID: { Launcher.newID() }
            ).run()
            var uploader: Uploader?
            if let text = settings.dsn {
                do {
                    let dsn = try DSN(text)
                    if folder.collectionEnabled() {
                        uploader = Uploader(dsn: dsn, queue: queue, transport: Self.makeTransport())
                    }
                } catch {
                    warn("\(error); reports are kept in \(folder.queue)")
                }
            }
            return Run(
                folder: folder, statePath: statePath, stateFile: stateFile, context: context, queue: queue,
                uploader: uploader, device: device)
        } catch {
            warn("no crash reporting for this run (the program runs without it): \(error)")
            return nil
        }
    }

    /// The child's environment: ours, plus `SWIFT_BACKTRACE` (the user's other keys kept, ours win), the
    /// state folder and state file, and the DSN, release and environment so that an SDK inside agrees.
    static func childEnvironment(
        parent: [String: String], run: (folder: StateFolder, statePath: String)?, settings: Settings
    ) -> [String] {
        var env = parent
        if let run {
            env["SWIFT_BACKTRACE"] = swiftBacktrace(existing: parent["SWIFT_BACKTRACE"], outputTo: run.folder.crashes)
            env["FAULTLINE_STATE_DIR"] = run.folder.path
            env["FAULTLINE_RUN_STATE"] = run.statePath
        }
        if let dsn = settings.dsn { env["FAULTLINE_DSN"] = dsn }
        if let release = settings.release { env["FAULTLINE_RELEASE"] = release }
        if let environment = settings.environment { env["FAULTLINE_ENVIRONMENT"] = environment }
        return env.map { "\($0.key)=\($0.value)" }.sorted()
    }

    /// The backtracer settings the launcher needs, merged into what the user set (theirs kept, ours win).
    static func swiftBacktrace(existing: String?, outputTo folder: String) -> String {
        let ours: [(String, String)] = [
            ("enable", "yes"), ("interactive", "no"), ("format", "json"), ("symbolicate", "off"),
            ("threads", "all"), ("images", "all"), ("output-to", folder),
        ]
        let ourKeys = Set(ours.map(\.0))
        let theirs = (existing ?? "").split(separator: ",").filter { item in
            let key = item.split(separator: "=", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) }
            return key.map { !$0.isEmpty && !ourKeys.contains($0) } ?? false
        }
        return (theirs.map(String.init) + ours.map { "\($0.0)=\($0.1)" }).joined(separator: ",")
    }

    // MARK: - After the child

    private func report(_ ending: ChildProcess.Ending, of run: Run, stderr lines: [String], dump: [UInt8]?) {
        let now = Date().timeIntervalSince1970
        // The SDK inside may have written breadcrumbs, keys, a user id and errors; the file is untrusted.
        var context = (try? StateFile.read(at: run.statePath)) ?? run.stateFile.snapshot() ?? run.context
        context.sessionID = run.context.sessionID
        context.installID = run.context.installID
        context.pid = run.context.pid
        let crashFiles = run.folder.crashFiles(pid: run.context.pid)
        let message = lines.isEmpty ? nil : lines.joined(separator: "\n")

        var status = SessionUpdate.Status.exited
        var reportQueued = true
        if case .signaled(let signal) = ending {
            // Made once, and for a crash file derived from it as the SDK's recovery does: if the launcher dies
            // between queueing the report and deleting the file, the repeat is a duplicate, not a second event.
            var eventID = Self.newID()
            var body: [UInt8]?
            if let file = crashFiles.last, let bytes = PrivateFile.read(file, limit: Recovery.maxCrashFileBytes) {
                eventID = Recovery.eventID(name: String(file.split(separator: "/").last ?? ""), bytes: bytes)
                body = try? ReportBuilder.swiftCrash(
                    eventID: eventID, crashFile: bytes, context: context, crashMessage: message,
                    device: run.device)
                if body == nil { warn("the crash file \(file) is unreadable; reporting the signal only") }
            }
            // A native crash the tracer captured goes as its minidump, with the signal report under the same
            // event id queued after it: the uploader sends that one only if the server refuses the dump.
            if body == nil, let dump,
                let upload = minidumpUpload(dump, signal: signal, at: now, context: context, run: run, stderr: lines),
                enqueue(run, kind: .minidump, id: upload.eventID, json: upload.body)
            {
                eventID = upload.eventID
            }
            if body == nil, Self.crashSignals.contains(signal) || !crashFiles.isEmpty {
                body = ReportBuilder.signalCrash(
                    eventID: eventID, timestamp: now, signal: signal, stderrTail: lines, crashMessage: message,
                    context: context, device: run.device)
            }
            if let body {
                status = .crashed
                reportQueued = enqueue(run, kind: .crash, id: eventID, json: body)
            } else {
                status = Self.stopSignals.contains(signal) ? .exited : .abnormal
            }
        }
        let duration = max(0, now - context.startedAt)
        let sessionQueued = enqueue(
            run, kind: .session, id: context.sessionID,
            json: ReportBuilder.session(SessionUpdate(context: context, status: status, duration: duration, seq: 2)))
        try? run.folder.setLastRun(status)
        // Only what is safely queued may go: otherwise the next run (of the launcher or the SDK) finds it.
        if reportQueued { for file in crashFiles { unlink(file) } }
        if reportQueued && sessionQueued { unlink(run.statePath) }
        run.uploader?.notify()
    }

    /// The captured dump with the run's context, as Sentry's minidump endpoint takes it, under a new event id.
    private func minidumpUpload(
        _ dump: [UInt8], signal: Int32, at now: Double, context: RunContext, run: Run, stderr lines: [String]
    ) -> (eventID: String, body: [UInt8])? {
        let message = lines.isEmpty ? nil : lines.joined(separator: "\n")
        for _ in 0..<4 {
            let eventID = Self.newID()
            let sentry = MinidumpUpload.sentryEvent(
                eventID: eventID, timestamp: now, signal: signal, context: context, device: run.device,
                stderrTail: lines, crashMessage: message)
            let name = Self.programName(command[0]) + ".dmp"
            if let body = MinidumpUpload.body(eventID: eventID, dump: dump, sentry: sentry, filename: name) {
                return (eventID, body)
            }
        }
        return nil
    }

    /// The child could not start: the state file of a run that never was goes.
    private static func abandon(_ run: Run) { unlink(run.statePath) }

    @discardableResult
    private func enqueue(_ run: Run, kind: DeliveryQueue.Kind, id: String, json: [UInt8]) -> Bool {
        do {
            try run.queue.enqueue(kind: kind, id: id, json: json)
            return true
        } catch {
            warn("could not queue a \(kind.rawValue) report: \(error)")
            return false
        }
    }

    /// Sends what is queued until it is empty or `timeout` seconds have passed; the rest stays queued.
    private func send(_ uploader: Uploader, timeout: Double) {
        guard timeout > 0 else { return }
        // Said once, so that a report that did not go out is not a mystery: it is kept, not lost.
        if !uploader.drainBlocking(timeout: timeout) {
            warn(
                "not everything could be sent within \(Int(timeout)) s; the rest stays queued in \(settings.stateDirectory)/queue and goes with the next run"
            )
        }
    }

    // MARK: - Helpers

    /// The program's name as the state folder and crash files know it: the basename of PROGRAM.
    static func programName(_ program: String) -> String {
        String(program.split(separator: "/").last ?? "program")
    }

    /// 32 lowercase hex digits.
    static func newID() -> String {
        UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    static func makeTransport() -> any HTTPTransport { URLSessionTransport() }

    static func device() -> DeviceInfo { DeviceInfo.current() }

    private func warn(_ message: String) {
        let line = message.hasPrefix("faultline-run:") ? message + "\n" : "faultline-run: \(message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
