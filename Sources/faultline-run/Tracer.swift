import CPtrace

#if canImport(Glibc)
import Glibc
#endif

/// Follows the child under `ptrace` so that a crash can be written as a minidump before the child dies.
///
/// The launcher seizes its child right after starting it (`PTRACE_SEIZE` with `PTRACE_O_TRACECLONE`: every
/// thread the child starts is traced too; its own child processes are not). The child runs as before: every
/// stop is answered at once, a signal is handed back exactly as it came, a job-control stop stays a stop
/// (`PTRACE_LISTEN`). Only on the delivery of a fatal crash signal (``Launcher/crashSignals`` with its default
/// action: no handler, not ignored) are the other threads stopped too (`PTRACE_INTERRUPT`) and the process
/// read (``ProcessReader``); then every thread goes on and the signal is delivered, so the child dies of it
/// as it would have, with the same status and the same core dump.
///
/// A signal the program handles itself is not a crash yet: a Swift program's runtime catches `SIGSEGV`,
/// writes its crash file, and dies of the signal with its default action afterwards. `shouldDump` is asked
/// at that moment, and the launcher answers no when the runtime's crash file is there (one report, the
/// richer one). Every tracing call runs on the thread that seized the child (the launcher's main thread).
final class Tracer {
    let pid: pid_t
    /// Whether a dump may be taken now (asked once, at the fatal signal).
    private let shouldDump: () -> Bool
    /// The minidump, once one was written.
    private(set) var dump: [UInt8]?
    private var captured = false

    /// Why the child cannot be traced (`errno` of `PTRACE_SEIZE`).
    struct SeizeError: Error, CustomStringConvertible {
        var errno: Int32
        var description: String { "ptrace: \(String(cString: strerror(errno)))" }
    }

    /// Seizes `pid` and any thread it already has.
    init(pid: pid_t, shouldDump: @escaping () -> Bool) throws(SeizeError) {
        self.pid = pid
        self.shouldDump = shouldDump
        guard Self.seize(pid) == 0 else { throw SeizeError(errno: errno) }
        // Started stopped before its exec, the child has one thread; this is for a caller that did not.
        for tid in Self.tasks(of: pid) where tid != pid { _ = Self.seize(tid) }
    }

    private static func seize(_ tid: pid_t) -> Int {
        faultline_ptrace(
            Int32(FAULTLINE_PTRACE_SEIZE), tid, nil,
            UnsafeMutableRawPointer(bitPattern: Int(FAULTLINE_PTRACE_O_TRACECLONE)))
    }

    /// Answers every stop that is waiting; returns how the child ended once its main thread is gone.
    func handleEvents() -> ChildProcess.Ending? {
        while true {
            var status: Int32 = 0
            let tid = waitpid(-1, &status, Int32(FAULTLINE_WALL) | WNOHANG)
            if tid == 0 { return nil }
            if tid < 0 {
                if errno == EINTR { continue }
                // ECHILD: nothing left to wait for, which cannot be while the child lives.
                return .exited(code: 0)
            }
            if let ending = handle(tid, status) { return ending }
        }
    }

    /// One `waitpid` report.
    private func handle(_ tid: pid_t, _ status: Int32) -> ChildProcess.Ending? {
        guard Self.isStopped(status) else {
            // A thread ended; the child has ended when its main thread is reported (always last).
            return tid == pid ? ChildProcess.decode(status) : nil
        }
        let signal = (status >> 8) & 0xff
        let isSignalDelivery = (status >> 16) & 0xffff == 0
        if isSignalDelivery, !captured, Launcher.crashSignals.contains(signal), isFatal(signal), shouldDump() {
            captured = true
            capture(thread: tid, signal: signal)
        }
        answer(tid, status)
        return nil
    }

    /// A ptrace event stop: a job-control stop stays stopped (`PTRACE_LISTEN`), anything else goes on.
    private func resumeAfterEvent(_ tid: pid_t, event: Int32, signal: Int32) {
        if event == Int32(FAULTLINE_PTRACE_EVENT_STOP), [SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU].contains(signal),
            faultline_ptrace(Int32(FAULTLINE_PTRACE_LISTEN), tid, nil, nil) == 0
        {
            return
        }
        resume(tid, 0)
    }

    private func resume(_ tid: pid_t, _ signal: Int32) {
        _ = faultline_ptrace(Int32(FAULTLINE_PTRACE_CONT), tid, nil, UnsafeMutableRawPointer(bitPattern: Int(signal)))
    }

    static func isStopped(_ status: Int32) -> Bool { status & 0xff == 0x7f }

    /// Whether `signal` now has its default action: neither caught (`SigCgt`) nor ignored (`SigIgn`). A fault
    /// the kernel forces on a thread that blocks or ignores it was reset to the default already.
    private func isFatal(_ signal: Int32) -> Bool {
        guard (1...64).contains(signal) else { return false }
        guard let status = ProcessReader.readFile("/proc/\(pid)/status") else { return true }
        let text = String(decoding: status, as: UTF8.self)
        for name in ["SigCgt:", "SigIgn:"] {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
                let mask = UInt64(String(line.dropFirst(name.count).filter { !$0.isWhitespace }), radix: 16)
            else { continue }
            if mask & (1 << UInt64(signal - 1)) != 0 { return false }
        }
        return true
    }

    // MARK: - The dump

    /// Stops the other threads, reads the process, and lets the other threads go on (the caller resumes the
    /// crashing one with its signal).
    private func capture(thread: pid_t, signal: Int32) {
        var info = siginfo_t()
        var code: Int32 = 0
        var address: UInt64 = 0
        if faultline_ptrace(Int32(FAULTLINE_PTRACE_GETSIGINFO), thread, nil, &info) == 0 {
            code = info.si_code
            address = UInt64(faultline_siginfo_addr(&info))
        }
        let stopped = stopOthers(except: thread)
        let reader = ProcessReader(pid: pid)
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let content = reader.read(
            crash: CrashStop(thread: thread, signal: signal, code: code, address: address),
            threads: stopped.map(\.tid), now: UInt32(clamping: now.tv_sec))
        reader.close()
        dump = MinidumpWriter.write(content)
        for other in stopped { answer(other.tid, other.status) }
    }

    /// Interrupts every other thread and waits (at most two seconds in all) until each has stopped or ended.
    /// Answers the stopped ones with the stop they reported, to be answered afterwards as any stop is.
    private func stopOthers(except thread: pid_t) -> [(tid: pid_t, status: Int32)] {
        var waiting = Set<pid_t>()
        for tid in Self.tasks(of: pid).prefix(ProcessReader.maxThreads) where tid != thread {
            if faultline_ptrace(Int32(FAULTLINE_PTRACE_INTERRUPT), tid, nil, nil) == 0 { waiting.insert(tid) }
        }
        var stopped: [(tid: pid_t, status: Int32)] = []
        var rounds = 0
        while !waiting.isEmpty, rounds < 2000 {
            for tid in waiting {
                var status: Int32 = 0
                let result = waitpid(tid, &status, Int32(FAULTLINE_WALL) | WNOHANG)
                if result == tid {
                    waiting.remove(tid)
                    if Self.isStopped(status) { stopped.append((tid, status)) }
                } else if result < 0, errno != EINTR {
                    waiting.remove(tid)
                }
            }
            if !waiting.isEmpty {
                usleep(1000)
                rounds += 1
            }
        }
        return stopped
    }

    /// Answers a stop: a signal-delivery stop goes on with its signal, an event stop as
    /// ``resumeAfterEvent(_:event:signal:)`` says. Also for the stops collected while the dump was taken.
    private func answer(_ tid: pid_t, _ status: Int32) {
        let signal = (status >> 8) & 0xff
        let event = (status >> 16) & 0xffff
        if event == 0 { resume(tid, signal) } else { resumeAfterEvent(tid, event: event, signal: signal) }
    }

    /// The thread ids in `/proc/PID/task` (bounded).
    static func tasks(of pid: pid_t) -> [pid_t] {
        guard let dir = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(dir) }
        var out: [pid_t] = []
        var looked = 0
        while looked < 100_000, let entry = readdir(dir) {
            looked += 1
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if let tid = pid_t(name), tid > 0 { out.append(tid) }
        }
        return out
    }
}
