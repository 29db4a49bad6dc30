import CPtrace

#if canImport(Glibc)
import Glibc
#endif

/// The child program: started with `posix_spawnp`, its standard error through a pipe, and waited for on the
/// launcher's main thread, which also passes signals through.
///
/// Signals: the launcher blocks the signals it passes through (and `SIGCHLD`) before it starts any thread, so
/// every thread inherits the mask and no handler of ours runs at all; the main thread takes them one at a time
/// with `sigwaitinfo`. The child gets an empty mask and default dispositions (`POSIX_SPAWN_SETSIGMASK`,
/// `POSIX_SPAWN_SETSIGDEF`), except for signals the launcher's own parent had ignored (`nohup`), which stay
/// ignored as they would without the launcher.
struct ChildProcess {
    /// How the child ended, decoded from the `waitpid` status.
    enum Ending: Equatable, Sendable {
        case exited(code: Int32)
        case signaled(signal: Int32)
    }

    /// Why `posix_spawnp` failed; `exitCode` follows the shells (127 not found, 126 not executable).
    struct SpawnError: Error, CustomStringConvertible {
        var program: String
        var errno: Int32
        var exitCode: Int32 { errno == ENOENT || errno == ENOTDIR ? 127 : 126 }
        var description: String { "faultline-run: cannot run \(program): \(String(cString: strerror(errno)))" }
    }

    /// The signals passed through to the child: everything a supervisor, a shell or a user sends to ask
    /// something of a program. Job-control stops (`SIGTSTP`, `SIGTTIN`, `SIGTTOU`) are not among them: they
    /// stop the launcher with its child, as the terminal expects.
    static let forwarded: [Int32] = [
        SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGALRM, SIGVTALRM, SIGPROF,
        SIGPWR, SIGURG, SIGXCPU, SIGXFSZ,
    ]

    /// Signals whose disposition the launcher's parent set to "ignore" (checked before anything changes).
    let inheritedIgnored: Set<Int32>
    let pid: pid_t
    /// The read end of the child's standard error (non-blocking, close-on-exec).
    let stderrRead: Int32

    /// Blocks the passed-through signals and `SIGCHLD` in the calling thread (call it before any thread
    /// starts), makes sure `SIGCHLD` is not ignored (children would be reaped by the kernel), and ignores
    /// `SIGPIPE` in the launcher (a closed standard error must not kill it). Answers the signals the parent
    /// had ignored.
    static func takeOverSignals() -> Set<Int32> {
        var ignored = Set<Int32>()
        for signal in forwarded + [SIGPIPE] where disposition(of: signal) == SIG_IGN_VALUE {
            ignored.insert(signal)
        }
        _ = Glibc.signal(SIGCHLD, SIG_DFL)
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
        var set = waitedSignals(excluding: ignored)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        return ignored
    }

    private static let SIG_IGN_VALUE = unsafeBitCast(SIG_IGN, to: Int.self)

    private static func disposition(of signal: Int32) -> Int {
        var action = sigaction()
        guard sigaction(signal, nil, &action) == 0 else { return 0 }
        return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
    }

    private static func waitedSignals(excluding ignored: Set<Int32>) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGCHLD)
        for signal in forwarded where !ignored.contains(signal) { sigaddset(&set, signal) }
        return set
    }

    /// Starts `arguments[0]` (searched in `PATH`) with `environment` (`NAME=value` strings), standard input
    /// and output inherited and standard error into a pipe.
    ///
    /// With `stopped`, the child stops itself (`SIGSTOP`) before its exec and is answered stopped: the tracer
    /// seizes it there and continues it, so that not one instruction of the program runs untraced
    /// (``startStopped(_:_:_:_:)``; the program is looked up in `PATH` here, as `posix_spawnp` would).
    init(arguments: [String], environment: [String], inheritedIgnored: Set<Int32>, stopped: Bool = false)
        throws(SpawnError)
    {
        self.inheritedIgnored = inheritedIgnored
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw SpawnError(program: arguments[0], errno: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the child's fd 2; both pipe ends close at exec.
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in Self.forwarded + [SIGPIPE, SIGCHLD] where !inheritedIgnored.contains(signal) {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        let result =
            stopped
            ? Self.startStopped(&pid, arguments[0], argv, envp, stderr: fds[1], defaults: &defaults)
            : posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        close(fds[1])
        guard result == 0 else {
            close(fds[0])
            throw SpawnError(program: arguments[0], errno: result)
        }
        self.pid = pid
        self.stderrRead = fds[0]
    }

    /// Forks a child that stops before it execs `program` (looked up in `PATH` first, so that a missing or
    /// non-executable program is the same error as with `posix_spawnp`), and waits until it has stopped.
    /// Answers 0 or an `errno`.
    private static func startStopped(
        _ pid: inout pid_t, _ program: String, _ argv: [UnsafeMutablePointer<CChar>?],
        _ envp: [UnsafeMutablePointer<CChar>?], stderr: Int32, defaults: inout sigset_t
    ) -> Int32 {
        let path: String
        switch resolve(program, searchPath: getenv("PATH").map { String(cString: $0) }) {
        case .success(let found): path = found
        case .failure(let error): return error.errno
        }
        let child = faultline_spawn_stopped(path, argv, envp, stderr, &defaults)
        guard child > 0 else { return errno }
        pid = child
        var status: Int32 = 0
        while waitpid(child, &status, WUNTRACED) < 0, errno == EINTR {}
        return 0
    }

    struct LookupError: Error { var errno: Int32 }

    /// `program` as `execvp` finds it: as given when it holds a `/`, else the first executable file of that
    /// name in the `PATH` folders (default `/usr/local/bin:/bin:/usr/bin`); EACCES when only a
    /// non-executable one is there, else ENOENT.
    static func resolve(_ program: String, searchPath: String?) -> Result<String, LookupError> {
        if program.contains("/") {
            return access(program, X_OK) == 0 ? .success(program) : .failure(LookupError(errno: errno))
        }
        var sawDenied = false
        for folder in (searchPath ?? "/usr/local/bin:/bin:/usr/bin").split(
            separator: ":", omittingEmptySubsequences: false
        ).prefix(1024) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + program
            var info = stat()
            guard stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            if access(candidate, X_OK) == 0 { return .success(candidate) }
            sawDenied = true
        }
        return .failure(LookupError(errno: sawDenied ? EACCES : ENOENT))
    }

    /// Waits for the child to end, passing signals through meanwhile. A signal the kernel sent itself
    /// (`si_code == SI_KERNEL`: a terminal's Ctrl-C, Ctrl-\, a window resize, a hang-up) went to the whole
    /// foreground process group, the child included, so it is not sent a second time. With a `tracer`, each
    /// `SIGCHLD` is a stop (or the end) of a traced thread, answered by the tracer.
    func wait(tracer: Tracer? = nil) -> Ending {
        var set = Self.waitedSignals(excluding: inheritedIgnored)
        while true {
            var info = siginfo_t()
            let signal = sigwaitinfo(&set, &info)
            if signal < 0 { continue }  // EINTR (a stop and continue); nothing else can fail with a valid set
            if signal == SIGCHLD {
                if let tracer {
                    if let ending = tracer.handleEvents() { return ending }
                    continue
                }
                if let ending = reap(blocking: false) { return ending }
                continue
            }
            if info.si_code == SI_KERNEL { continue }
            kill(pid, signal)
        }
    }

    private func reap(blocking: Bool) -> Ending? {
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == pid { return Self.decode(status) }
            if result < 0, errno == EINTR { continue }
            return nil
        }
    }

    static func decode(_ status: Int32) -> Ending {
        let low = status & 0x7f
        if low == 0 { return .exited(code: (status >> 8) & 0xff) }
        return .signaled(signal: low)
    }
}

/// Ends the launcher the way its child ended: the same exit code, or the same signal (with no core file
/// of its own); a signal that does not kill by default falls back to exit code 128 + signal, as shells say.
func exitLikeChild(_ ending: ChildProcess.Ending) -> Never {
    switch ending {
    case .exited(let code):
        exit(code)
    case .signaled(let signal):
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        _ = Glibc.signal(signal, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        // Block it everywhere else and deliver it to this thread: a pending blocked signal is delivered the
        // moment it is unblocked.
        raise(signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        exit(128 &+ signal)
    }
}
