import Foundation

/// What `Faultline.start` does first without the launcher: report the runs that ended since the last start.
///
/// A run's state file that nobody holds (``StateFile/isHeld(at:)``) belongs to a run that has ended. If the
/// crash folder has a crash file of that run (named `<program>-<pid>-….json`, written at or after the run
/// started), the two become one crash report and the session ends `crashed`; otherwise the session ends
/// `exited` if the run marked itself so, else `abnormal` (killed, out of memory, power loss). Crash files that
/// match no run are still sent, without context. Files are deleted only once the queue holds what was made
/// of them, so a crash during recovery repeats it rather than losing it (the event id of a crash report is
/// derived from the crash file, so a repeat is a duplicate on the server, not a second event). The state and
/// crash folders have passed ``PrivateFolder``'s check; files in them are read without following links.
package struct Recovery: Sendable {
    package var folder: StateFolder
    package var queue: DeliveryQueue
    package var crashDirectory: String?
    package var program: String
    package var device: DeviceInfo
    package var now: @Sendable () -> Double
    package var makeID: @Sendable () -> String

    package init(
        folder: StateFolder, queue: DeliveryQueue, crashDirectory: String?, program: String, device: DeviceInfo,
        now: @escaping @Sendable () -> Double, makeID: @escaping @Sendable () -> String
    ) {
        self.folder = folder
        self.queue = queue
        self.crashDirectory = crashDirectory
        self.program = program
        self.device = device
        self.now = now
        self.makeID = makeID
    }

    package struct Outcome: Sendable, Equatable {
        package var sessionID: String
        package var status: SessionUpdate.Status
        package var crashFile: String?
    }

    /// Crash files younger than this that cannot be read may still be being written: left for later.
    static let unfinishedCrashFileAge: Double = 300

    @discardableResult
    package func run() -> [Outcome] {
        var ended: [(path: String, context: RunContext)] = []
        var livePIDs = Set<Int32>()
        for path in folder.runFiles() {
            if StateFile.isHeld(at: path) {
                if let live = try? StateFile.read(at: path) { livePIDs.insert(live.pid) }
                continue
            }
            guard let context = try? StateFile.read(at: path) else {
                // Not a state file we can read: nothing to report from it, ever.
                if Self.age(of: path, now: now()) > 60 { unlink(path) }
                continue
            }
            ended.append((path, context))
        }
        var crashFiles = crashFilesOfThisProgram().filter { !livePIDs.contains($0.pid) }
        var outcomes: [Outcome] = []
        var latest: (started: Double, status: SessionUpdate.Status)?

        for (path, context) in ended.sorted(by: { $0.context.startedAt < $1.context.startedAt }) {
            var status: SessionUpdate.Status = context.exitedNormally ? .exited : .abnormal
            var endTime = Self.modified(path) ?? context.startedAt
            var used: CrashFile?
            if let index = crashFiles.firstIndex(where: {
                $0.pid == context.pid && $0.timestamp >= context.startedAt - 1
            }) {
                let crash = crashFiles.remove(at: index)
                if let json = try? ReportBuilder.swiftCrash(
                    eventID: crash.eventID, crashFile: crash.bytes, context: context, crashMessage: nil, device: device),
                    (try? queue.enqueue(kind: .crash, id: crash.eventID, json: json)) != nil
                {
                    status = .crashed
                    endTime = crash.timestamp
                    used = crash
                } else if Self.age(of: crash.path, now: now()) < Self.unfinishedCrashFileAge {
                    continue  // perhaps still being written: try again at the next start
                } else {
                    unlink(crash.path)  // never readable: the session still ends crashed
                    status = .crashed
                }
            }
            let end = SessionUpdate(
                context: context, status: status, duration: max(0, endTime - context.startedAt), seq: 2)
            guard (try? queue.enqueue(kind: .session, id: context.sessionID, json: ReportBuilder.session(end))) != nil
            else { continue }
            if let used { unlink(used.path) }
            unlink(path)
            outcomes.append(Outcome(sessionID: context.sessionID, status: status, crashFile: used?.path))
            if latest == nil || context.startedAt >= latest!.started { latest = (context.startedAt, status) }
        }

        // Crash files of this program that belong to no run we know (the SDK was not started yet, or its
        // state file is gone): still crashes worth seeing.
        for crash in crashFiles {
            if let json = try? ReportBuilder.swiftCrash(
                eventID: crash.eventID, crashFile: crash.bytes, context: nil, crashMessage: nil, device: device)
            {
                if (try? queue.enqueue(kind: .crash, id: crash.eventID, json: json)) != nil {
                    unlink(crash.path)
                    outcomes.append(Outcome(sessionID: "", status: .crashed, crashFile: crash.path))
                }
            } else if Self.age(of: crash.path, now: now()) >= Self.unfinishedCrashFileAge {
                unlink(crash.path)
            }
        }
        if let latest { try? folder.setLastRun(latest.status) }
        return outcomes
    }

    struct CrashFile {
        var path: String
        var pid: Int32
        var timestamp: Double
        var bytes: [UInt8]
        /// Derived from the file's name and contents, so recovering the same file twice gives the same id.
        var eventID: String
    }

    /// The largest crash file read (with `capturedMemory` and all threads they are well under a MiB).
    package static let maxCrashFileBytes = 64 << 20

    /// The JSON crash files in the crash folder named after this program: `<program>-<pid>-<n>.json`, the name
    /// cut at 15 bytes as the kernel keeps it.
    func crashFilesOfThisProgram() -> [CrashFile] {
        guard let directory = crashDirectory,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory)
        else { return [] }
        var files: [CrashFile] = []
        // The runtime names the file after the process's `comm`, which the kernel cuts at 15 bytes
        // (`faultline-example` writes `faultline-examp-<pid>-0.0.json`).
        let prefixes = [program + "-", String(decoding: program.utf8.prefix(15), as: UTF8.self) + "-"]
        for name in names.sorted().prefix(1000) {
            guard name.hasSuffix(".json"), let prefix = prefixes.first(where: { name.hasPrefix($0) }) else { continue }
            let rest = name.dropFirst(prefix.count)
            guard let pidText = rest.split(separator: "-").first, let pid = Int32(pidText), pid > 0 else { continue }
            let path = directory + "/" + name
            guard let bytes = PrivateFile.read(path, limit: Self.maxCrashFileBytes) else { continue }
            files.append(
                CrashFile(
                    path: path, pid: pid, timestamp: Self.crashTimestamp(bytes) ?? Self.modified(path) ?? 0,
                    bytes: bytes, eventID: Self.eventID(name: name, bytes: bytes)))
        }
        return files
    }

    /// The `"timestamp": "2026-11-23T05:19:28.291960Z"` at the start of a crash file, as unix seconds.
    static func crashTimestamp(_ bytes: [UInt8]) -> Double? {
        let head = String(decoding: bytes.prefix(512), as: UTF8.self)
        guard let key = head.range(of: "\"timestamp\"") else { return nil }
        let after = head[key.upperBound...]
        guard let open = after.firstIndex(of: "\""), let close = after[after.index(after: open)...].firstIndex(of: "\"")
        else { return nil }
        return parseISO8601(String(after[after.index(after: open)..<close]))
    }

    /// `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` → unix seconds; nil for anything else (the report builder's parser).
    static func parseISO8601(_ text: String) -> Double? { ISO8601.parse(text) }

    /// 32 hex digits from FNV-1a over the file's name and bytes: stable across repeats of a recovery.
    package static func eventID(name: String, bytes: [UInt8]) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in Array(name.utf8) + [0] + bytes {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 &+ 0x9e37_79b9_7f4a_7c15
        }
        func hex(_ v: UInt64) -> String {
            let text = String(v, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return hex(a) + hex(b)
    }

    static func modified(_ path: String) -> Double? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }

    static func age(of path: String, now: Double) -> Double {
        guard let modified = modified(path) else { return .infinity }
        return now - modified
    }
}
