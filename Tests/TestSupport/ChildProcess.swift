import Foundation
import Synchronization

/// A child process of a test: the part of Foundation's `Process` the tests use (same names), started with
/// `posix_spawn` directly. Every process a test starts is one of these (`Command.run` and the servers' helpers too).
///
/// Why not `Process`: Foundation's `Process.run()` (Swift 6.3.1), to close the parent's descriptors in the child, lists
/// `/proc/self/fd` and copies each `readdir` entry as a whole `struct dirent` (280 bytes), though glibc packs the
/// entries in its 32 KiB buffer at their own length (24 bytes for a descriptor number). With more than about 1,350
/// descriptors open (the end-to-end suites hold that many at once) the buffer is full and the copy of its last entry
/// reads up to 256 bytes past it, which kills the test process with SIGSEGV when the buffer ends at the top of a malloc
/// heap. AddressSanitizer shows it with one `Process.run()` after opening 1,500 descriptors: "heap-buffer-overflow …
/// READ of size 256" in `findMaximumOpenFromProcSelfFD`.
///
/// Here the child closes every descriptor from 3 up with glibc's `posix_spawn_file_actions_addclosefrom_np`, without
/// listing them; it starts in a process group of its own (as Foundation's do) with no signal blocked (a test thread's
/// blocked SIGTERM would otherwise make `terminate()` do nothing).
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: the configuration is set before `run()` by the one test that owns the object; the state after it is
    // behind `state`.
    public typealias TerminationReason = Process.TerminationReason

    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's whole environment; nil: the test process's.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// A `FileHandle` or a `Pipe` (its reading end); nil: /dev/null. Default: the test process's own.
    public var standardInput: Any? = FileHandle.standardInput
    /// A `FileHandle` or a `Pipe` (its writing end); nil: /dev/null. Default: the test process's own.
    public var standardOutput: Any? = FileHandle.standardOutput
    public var standardError: Any? = FileHandle.standardError

    private struct State {
        var pid: pid_t = 0
        /// The raw wait status, once the child has been reaped.
        var status: Int32?
    }
    private let state = Mutex(State())

    public init() {}

    public var processIdentifier: Int32 { state.withLock { $0.pid } }

    /// Starts the child; throws when it cannot be started (no such file, not executable).
    public func run() throws {
        guard let executable = executableURL?.path else { throw CommandError(description: "no executable") }
        guard state.withLock({ $0.pid }) == 0 else { throw CommandError(description: "\(executable) already started") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { if devNull >= 0 { close(devNull) } }
        var parentEnds: [FileHandle] = []  // a pipe's end the child uses, closed here once it runs
        for (target, handle, reading) in [
            (STDIN_FILENO, standardInput, true), (STDOUT_FILENO, standardOutput, false),
            (STDERR_FILENO, standardError, false),
        ] {
            let source: Int32
            switch handle {
            case let pipe as Pipe:
                let end = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                source = end.fileDescriptor
                if !parentEnds.contains(where: { $0 === end }) { parentEnds.append(end) }
            // `FileHandle.nullDevice` has no descriptor of its own (-1): /dev/null, as for nil.
            case let file as FileHandle: source = file.fileDescriptor >= 0 ? file.fileDescriptor : devNull
            default: source = devNull
            }
            try check(posix_spawn_file_actions_adddup2(&actions, source, target), "dup2")
        }
        try check(Self.closeFrom(&actions, 3), "closefrom")
        if let directory = currentDirectoryURL?.path {
            try check(Self.changeDirectory(&actions, directory), "chdir \(directory)")
        }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in envp { free(variable) } }

        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw CommandError(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        state.withLock { $0.pid = pid }
        for end in parentEnds { try? end.close() }  // the reader sees the end of the output when the child exits
    }

    /// Whether the child is still running (reaps it once it has ended).
    public var isRunning: Bool {
        state.withLock { state in
            guard state.pid > 0, state.status == nil else { return false }
            var status: Int32 = 0
            let reaped = waitpid(state.pid, &status, WNOHANG)
            if reaped == state.pid { state.status = status }
            return reaped == 0 || (reaped == -1 && errno == EINTR)
        }
    }

    /// Waits until the child has ended (polling, so that `isRunning` and `terminate()` may be called meanwhile).
    public func waitUntilExit() {
        while isRunning { usleep(5_000) }
    }

    /// SIGTERM to the child, unless it has already ended.
    public func terminate() { send(SIGTERM) }

    /// SIGINT to the child, unless it has already ended.
    public func interrupt() { send(SIGINT) }

    private func send(_ number: Int32) {
        state.withLock { state in
            // A reaped child's pid may be another process's by now.
            if state.pid > 0, state.status == nil { kill(state.pid, number) }
        }
    }

    /// The exit status, or the signal that ended the child (as `Process` says it).
    public var terminationStatus: Int32 {
        let status = ended()
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    public var terminationReason: TerminationReason { ended() & 0x7f == 0 ? .exit : .uncaughtSignal }

    private func ended() -> Int32 {
        precondition(!isRunning, "the process is still running")
        return state.withLock { $0.status } ?? 0
    }

    private func check(_ result: Int32, _ what: String) throws {
        guard result == 0 else {
            throw CommandError(description: "posix_spawn \(what) failed: \(String(cString: strerror(result)))")
        }
    }

    // glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34) and `…_addchdir_np` (2.29) are not in the Glibc
    // module (they need _GNU_SOURCE): looked up once by name.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let closeFromFunction: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    private static let changeDirectoryFunction: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: T.self) }  // RTLD_DEFAULT
    }

    private static func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ first: Int32) -> Int32
    {
        closeFromFunction?(actions, first) ?? ENOSYS
    }

    private static func changeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String)
        -> Int32
    {
        changeDirectoryFunction?(actions, path) ?? ENOSYS
    }
}
