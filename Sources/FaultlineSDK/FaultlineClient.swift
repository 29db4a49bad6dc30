import Foundation
import Synchronization

/// One started SDK: the run's state file, the delivery queue and the background uploader.
///
/// The public `Faultline` API is static, as Crashlytics' is, so one client is kept per process (see
/// ``Faultline``); everything else gets its parts passed in (clock, environment, transport), which is how the
/// tests build clients of their own.
package final class FaultlineClient: Sendable {
    package struct Configuration: Sendable {
        package var dsn: DSN?
        package var release: String?
        package var environment: String?
        package var options: FaultlineOptions
        package var folder: StateFolder
        /// The program's name (crash files are named after it).
        package var program: String
        /// `FAULTLINE_RUN_STATE`: the launcher's state file for this process.
        package var launcherStateFile: String?
        /// Where the Swift runtime writes this process's crash files; nil when it writes none.
        package var crashDirectory: String?
        /// Answers unix seconds.
        package var now: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        package var makeID: @Sendable () -> String = {
            UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        }
        package var transport: @Sendable () -> any HTTPTransport = { URLSessionTransport() }
    }

    package let configuration: Configuration
    package let state: StateFile
    package let queue: DeliveryQueue
    package let context: RunContext
    /// Under `faultline-run`: the launcher sends sessions and crashes.
    package let underLauncher: Bool
    package let device: DeviceInfo
    /// The last run's end, as it was before this run started.
    package let previousRun: SessionUpdate.Status?
    /// Under the launcher, when its state file could not be opened: the file used instead (removed at exit).
    private let detachedPath: String?
    private let stacks = StackCapture()
    /// Non-fatals recorded but not yet in the queue folder (see ``record(error:userInfo:skipping:)``).
    private let writer = Mutex(Writer())
    private let writeLock = Mutex(())
    private let mutable: Mutex<Mutable>

    private struct Mutable {
        var collectionEnabled: Bool
        var uploader: Uploader?
        var uploaderTask: Task<Void, Never>?
        /// Sends what the user agreed to with `sendUnsentReports` while collection is off.
        var manual: Uploader?
        var ended = false

        /// The uploader that may send now, if any.
        var sending: Uploader? { collectionEnabled ? uploader : manual }
    }

    /// Starts a run: recovers what ended runs left (without the launcher), makes this run's state file and
    /// queues the session's start. Sending starts with ``startSending()``.
    /// Throws `unsafeFolder` when another user could change the state folder or its queue (``PrivateFolder``).
    package init(configuration: Configuration) throws {
        var configuration = configuration
        try configuration.folder.prepare()
        if let crashes = configuration.crashDirectory, configuration.launcherStateFile == nil {
            do {
                configuration.crashDirectory = try PrivateFolder.make(crashes, what: "crash folder")
            } catch {
                // Crash files hold registers and memory, and a folder others can write can hold forged ones.
                Faultline.warn("faultline: crashes of this program are not reported: \(error)")
                configuration.crashDirectory = nil
            }
        }
        self.configuration = configuration
        let folder = configuration.folder
        let installID = try folder.installID()
        let queue = try DeliveryQueue(
            directory: folder.queue, maxItems: configuration.options.maxQueuedItems,
            maxBytes: configuration.options.maxQueuedBytes)
        self.queue = queue
        let device = DeviceInfo.current()
        self.device = device
        let options = configuration.options

        if let launcherFile = configuration.launcherStateFile {
            underLauncher = true
            // The launcher wrote last-run for the run before this one before it started us.
            previousRun = folder.lastRun()
            let file: StateFile
            var detached: String?
            do {
                file = try StateFile.open(at: launcherFile)
            } catch {
                // Still report non-fatals: keep the context in a file of our own that no recovery picks up
                // (`.detached`, not `.state`: the launcher owns this run's session). Removed at exit.
                Faultline.warn("faultline: cannot use the launcher's state file (\(error)); continuing without it")
                let own = RunContext(
                    sessionID: configuration.makeID(), installID: installID, startedAt: configuration.now(),
                    pid: getpid())
                file = try StateFile.create(at: folder.runs + "/\(own.sessionID).detached", context: own)
                detached = folder.runs + "/\(own.sessionID).detached"
            }
            detachedPath = detached
            file.setPID(getpid())
            file.setApp(
                id: options.appID, version: configuration.release, build: options.build,
                environment: configuration.environment)
            state = file
            context =
                file.snapshot()
                ?? RunContext(sessionID: "", installID: installID, startedAt: configuration.now(), pid: getpid())
        } else {
            underLauncher = false
            detachedPath = nil
            let recovery = Recovery(
                folder: folder, queue: queue, crashDirectory: configuration.crashDirectory,
                program: configuration.program, device: device, now: configuration.now, makeID: configuration.makeID)
            recovery.run()
            previousRun = folder.lastRun()
            let sessionID = configuration.makeID()
            let start = RunContext(
                sessionID: sessionID, installID: installID, appID: options.appID, appVersion: configuration.release,
                appBuild: options.build, environment: configuration.environment, startedAt: configuration.now(),
                pid: getpid())
            state = try StateFile.create(at: folder.runs + "/\(sessionID).state", context: start)
            context = start
            try queue.enqueue(
                kind: .session, id: sessionID,
                json: ReportBuilder.session(SessionUpdate(context: start, status: .ok, duration: nil, seq: 1)))
        }
        mutable = Mutex(Mutable(collectionEnabled: folder.collectionEnabled()))
    }

    // MARK: Context (the hot path: one lock, no system call)

    package func log(_ message: String) {
        state.log(message, timestamp: configuration.now())
    }

    package func setCustomValue(_ value: CustomValue?, forKey key: String) {
        state.setCustomValue(value, forKey: key)
    }

    package func setUserID(_ id: String?) {
        state.setUserID(id)
    }

    // MARK: Non-fatals

    /// Records `error` with the stack of the thread that calls ``Faultline/record(error:userInfo:)``;
    /// `skipping` frames of the SDK's own are left out.
    ///
    /// Only what must be taken on the caller's thread is taken there: its stack (a few microseconds with the
    /// cached image map) and a copy of the state file's bytes as they are at this moment (276 KB, one
    /// `memcpy`). Parsing the context, encoding the report, gzip and the queue file (about a millisecond with
    /// 64 KB of breadcrumbs) happen on a background task, in recording order;
    /// `flush`, `checkForUnsentReports` and the exit hook finish those writes first.
    @inline(never)
    package func record(error: any Error, userInfo: [String: CustomValue], skipping: Int) {
        let stack = stacks.capture(skipping: skipping + 1)
        state.incrementErrors()
        let job = NonFatalJob(
            eventID: configuration.makeID(), timestamp: configuration.now(), error: Self.errorInfo(error),
            userInfo: userInfo, stack: stack, stateBytes: state.copyBytes())
        let startWriter = writer.withLock { writer -> Bool in
            writer.jobs.append(job)
            // The queue keeps the last 8 unsent non-fatals: older ones waiting here would be dropped anyway.
            if writer.jobs.count > Limits.unsentNonFatals { writer.jobs.removeFirst() }
            guard !writer.running else { return false }
            writer.running = true
            return true
        }
        if startWriter { Task.detached(priority: .utility) { self.writePendingNonFatals() } }
    }

    /// A non-fatal taken on the caller's thread, waiting to be encoded and queued.
    private struct NonFatalJob: Sendable {
        var eventID: String
        var timestamp: Double
        var error: ErrorInfo
        var userInfo: [String: CustomValue]
        var stack: CapturedStack
        /// The state file as it was when the error was recorded (parsed by the writer, not the caller).
        var stateBytes: [UInt8]
    }

    private struct Writer: Sendable {
        var jobs: [NonFatalJob] = []
        /// A background task has been started to take jobs.
        var running = false
    }

    /// Encodes and queues the waiting non-fatals, oldest first; returns when none is waiting. One writer at a
    /// time (`writeLock`), so the queue receives them in recording order and its "last 8" are the last 8
    /// recorded; a second caller (the exit hook, `flush`) waits for the one writing.
    private func writePendingNonFatals() {
        writeLock.withLock { _ in
            while true {
                let job = writer.withLock { writer -> NonFatalJob? in
                    guard !writer.jobs.isEmpty else {
                        writer.running = false
                        return nil
                    }
                    return writer.jobs.removeFirst()
                }
                guard let job else { return }
                let context = job.stateBytes.withUnsafeBytes { try? StateFile.parse($0) } ?? self.context
                let json = ReportBuilder.nonFatal(
                    eventID: job.eventID, timestamp: job.timestamp, error: job.error, userInfo: job.userInfo,
                    stack: job.stack, context: context, device: device)
                if (try? queue.enqueue(kind: .nonfatal, id: job.eventID, json: json)) != nil {
                    mutable.withLock { $0.sending }?.notify()
                }
            }
        }
    }

    /// Writes what `record` left waiting, here and now (after a write the background task is in the middle of).
    package func finishNonFatalWrites() {
        writePendingNonFatals()
    }

    /// The error as a report names it: its Swift type (an `NSError`'s domain), code and message.
    package static func errorInfo(_ error: any Error) -> ErrorInfo {
        let message = (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
        if let ns = error as AnyObject as? NSError, type(of: error) is NSError.Type {
            return ErrorInfo(type: ns.domain, code: String(ns.code), message: message)
        }
        return ErrorInfo(type: String(reflecting: type(of: error)), code: String(error._code), message: message)
    }

    // MARK: Sending

    package var isCollectionEnabled: Bool { mutable.withLock { $0.collectionEnabled } }

    /// Starts the background uploader, unless collection is off or there is no DSN.
    package func startSending() {
        guard let dsn = configuration.dsn else { return }
        let uploader: Uploader? = mutable.withLock { state in
            guard state.collectionEnabled, state.uploaderTask == nil else { return nil }
            let uploader = state.uploader ?? makeUploader(dsn)
            state.uploader = uploader
            state.uploaderTask = Task.detached { await uploader.run() }
            return uploader
        }
        uploader?.notify()
    }

    /// Under the launcher the SDK sends only its non-fatals; the launcher sends crashes and sessions.
    private func makeUploader(_ dsn: DSN) -> Uploader {
        Uploader(
            dsn: dsn, queue: queue, transport: configuration.transport(),
            kinds: underLauncher ? [.nonfatal] : Set(DeliveryQueue.Kind.allCases))
    }

    package func setCollectionEnabled(_ enabled: Bool) {
        try? configuration.folder.setCollectionEnabled(enabled)
        let task: Task<Void, Never>? = mutable.withLock { state in
            state.collectionEnabled = enabled
            guard !enabled else { return nil }
            // A later re-enable makes a fresh uploader: the cancelled one may still be asleep in run().
            defer {
                state.uploaderTask = nil
                state.uploader = nil
            }
            return state.uploaderTask
        }
        task?.cancel()
        if enabled { startSending() }
    }

    /// Reports (not session updates) waiting in the queue.
    package func unsentReports() -> [DeliveryQueue.Item] {
        finishNonFatalWrites()
        return queue.pending().filter { $0.kind != .session }
    }

    /// Sends what is held, even while collection is off; runs in the background.
    package func sendUnsent() {
        guard let dsn = configuration.dsn else { return }
        if isCollectionEnabled {
            startSending()
            mutable.withLock { $0.uploader }?.notify()
            return
        }
        let uploader: Uploader = mutable.withLock { state in
            if let manual = state.manual { return manual }
            let made = makeUploader(dsn)
            state.manual = made
            return made
        }
        Task.detached { _ = await uploader.drain(deadline: .now + .seconds(60)) }
    }

    package func deleteUnsent() {
        for item in unsentReports() { queue.remove(item) }
    }

    /// Waits until the queue is empty or `timeout` passes; answers whether it is empty.
    package func flush(timeout: Double) async -> Bool {
        finishNonFatalWrites()
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, min(timeout, 86_400)) * 1000))
        let uploader: Uploader? = mutable.withLock { $0.sending }
        guard let uploader else { return queue.pending().isEmpty }
        return await uploader.drain(deadline: deadline)
    }

    // MARK: Exit

    /// The process is exiting normally: mark the run, queue the session's end (without the launcher) and
    /// give the uploader up to `flushOnExit` seconds.
    package func processExiting() {
        let first = mutable.withLock { state in
            defer { state.ended = true }
            return !state.ended
        }
        guard first else { return }
        finishNonFatalWrites()
        state.markExited()
        if let detachedPath { unlink(detachedPath) }
        if !underLauncher, let context = state.snapshot() {
            let end = SessionUpdate(
                context: context, status: .exited, duration: max(0, configuration.now() - context.startedAt), seq: 2)
            if (try? queue.enqueue(kind: .session, id: context.sessionID, json: ReportBuilder.session(end))) != nil {
                // The run is accounted for: nothing for the next start to recover.
                try? configuration.folder.setLastRun(.exited)
                unlink(configuration.folder.runs + "/\(context.sessionID).state")
            }
        }
        let wait = configuration.options.flushOnExit
        let uploader: Uploader? = mutable.withLock { $0.sending }
        guard wait > 0, let uploader, !queue.pending().isEmpty else { return }
        _ = uploader.drainBlocking(timeout: wait)
    }
}
