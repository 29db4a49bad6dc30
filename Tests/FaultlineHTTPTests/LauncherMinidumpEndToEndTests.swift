import AsyncHTTPClient
import Foundation
import Glibc
import NIOHTTP1
import TestSupport
import Testing

/// Issue #34, "Under the launcher": a C program (frame pointers omitted) and a C++ program (frame pointers kept),
/// built here with clang/clang++ -g, crash under the real `faultline-run` against the real server on loopback, with
/// their executables and the system libraries they load uploaded by the real `symupload` first. Each crash (a
/// SIGSEGV three calls deep, `abort()`, a SIGSEGV on a second thread) arrives as one report whose crashing thread,
/// walked from the launcher's minidump and symbolicated, is the program's call chain with every frame's trust set;
/// and the program ends with the same wait status under the launcher as without it.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct LauncherMinidumpEndToEndTests {
    /// The three crashes, chosen by the first argument.
    enum Crash: String, CaseIterable { case deep, abort, thread }

    /// A program built for the test and the call chains its crashes must show.
    struct Program {
        var name: String
        var path: String
        /// The program's own functions as `function_short` names them: the chain assertions keep only these.
        var functions: Set<String>
        /// Per crash, the crashing thread's program functions, innermost first.
        var chains: [Crash: [String]]
    }

    /// SIGSEGV in `store_total` ← `add_line` ← `close_books` ← `main` (or ← `worker` on a second thread while
    /// `main` waits in `pthread_join`), or `abort()` in `check_ledger` ← `audit` ← `main`. Built with
    /// `-fomit-frame-pointer`: the walk needs the CFI.
    static let cSource = """
        #include <pthread.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        __attribute__((noinline)) void store_total(volatile int *p, int v) { *p = v; __asm__ volatile(""); }
        __attribute__((noinline)) void add_line(volatile int *p, int v) { store_total(p, v + 1); __asm__ volatile(""); }
        __attribute__((noinline)) void close_books(volatile int *p) { add_line(p, 41); __asm__ volatile(""); }
        __attribute__((noinline)) void check_ledger(int n) { if (n < 100) abort(); __asm__ volatile(""); }
        __attribute__((noinline)) void audit(int n) { check_ledger(n * 2); __asm__ volatile(""); }
        static void *worker(void *arg) { close_books((volatile int *)arg); __asm__ volatile(""); return 0; }
        int main(int argc, char **argv) {
            volatile int *nowhere = (volatile int *)(argc > 7 ? argv : 0);
            fprintf(stderr, "closing the books\\n");
            if (argc > 1 && !strcmp(argv[1], "abort")) audit(argc);
            if (argc > 1 && !strcmp(argv[1], "thread")) {
                pthread_t t;
                pthread_create(&t, 0, worker, (void *)nowhere);
                pthread_join(t, 0);
            }
            close_books(nowhere);
            return 0;
        }
        """

    /// The same three crashes in C++: member functions of `ledger::Book`, a `std::thread` for the second thread,
    /// `std::abort` for the abort. Built with frame pointers kept.
    static let cxxSource = """
        #include <cstdio>
        #include <cstdlib>
        #include <cstring>
        #include <thread>
        namespace ledger {
        struct Account { int *balance; };
        class Book {
        public:
            __attribute__((noinline)) void post(Account *a, int v) { *a->balance = v; __asm__ volatile(""); }
            __attribute__((noinline)) void settle(Account *a) { post(a, 42); __asm__ volatile(""); }
            __attribute__((noinline)) void close(Account *a) { settle(a); __asm__ volatile(""); }
            __attribute__((noinline)) void verify(int n) { if (n < 100) std::abort(); __asm__ volatile(""); }
            __attribute__((noinline)) void audit(int n) { verify(n * 2); __asm__ volatile(""); }
        };
        __attribute__((noinline)) void close_on_worker(Book *book, Account *account) {
            book->close(account);
            __asm__ volatile("");
        }
        }
        int main(int argc, char **argv) {
            ledger::Book book;
            ledger::Account account{argc > 7 ? new int(0) : nullptr};
            std::fprintf(stderr, "closing the books\\n");
            if (argc > 1 && !std::strcmp(argv[1], "abort")) book.audit(argc);
            if (argc > 1 && !std::strcmp(argv[1], "thread")) {
                std::thread worker(ledger::close_on_worker, &book, &account);
                worker.join();
            }
            book.close(&account);
            return 0;
        }
        """

    static func build(in folder: TempFolder) throws -> [Program] {
        let cSource = try folder.write("books.c", Self.cSource)
        let c = folder.file("books")
        try Command.check(
            "clang", ["-g", "-O1", "-fomit-frame-pointer", "-pthread", "-Wl,--build-id=sha1", cSource, "-o", c])
        let cxxSource = try folder.write("books.cpp", Self.cxxSource)
        let cxx = folder.file("books-cxx")
        try Command.check(
            "clang++",
            ["-g", "-O1", "-fno-omit-frame-pointer", "-pthread", "-Wl,--build-id=sha1", cxxSource, "-o", cxx])
        let book = "ledger::Book::"
        return [
            Program(
                name: "C", path: c,
                functions: ["store_total", "add_line", "close_books", "check_ledger", "audit", "worker", "main"],
                chains: [
                    .deep: ["store_total", "add_line", "close_books", "main"],
                    .abort: ["check_ledger", "audit", "main"],
                    .thread: ["store_total", "add_line", "close_books", "worker"],
                ]),
            Program(
                name: "C++", path: cxx,
                functions: Set(
                    ["post", "settle", "close", "verify", "audit"].map { book + $0 } + [
                        "ledger::close_on_worker", "main",
                    ]),
                chains: [
                    .deep: [book + "post", book + "settle", book + "close", "main"],
                    .abort: [book + "verify", book + "audit", "main"],
                    .thread: [book + "post", book + "settle", book + "close", "ledger::close_on_worker"],
                ]),
        ]
    }

    // MARK: - Running

    /// How a run ended: the raw wait status (`waitpid`), so that the signal and the exit code are compared whole; and
    /// its standard error.
    struct Ending {
        var status: Int32
        var stderr: String
        var signal: Int32? { status & 0x7f != 0 && status & 0x7f != 0x7f ? status & 0x7f : nil }
    }

    /// Runs `arguments` with `posix_spawn` (stdout to /dev/null, stderr to a file) and waits for its wait status.
    /// Core files are off for the run (`ulimit -c 0`, then `exec`): with them on, the bare program's status has the
    /// core-dumped bit and the launcher's cannot (it writes no core of its own; docs/native.md). The program's own
    /// core under the launcher is `LauncherMinidumpTests`' concern.
    static func spawn(_ command: [String], environment: [String: String]) throws -> Ending {
        let arguments = ["/bin/sh", "-c", #"ulimit -c 0 && exec "$@""#, "sh"] + command
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FAULTLINE_") }
        env["SWIFT_BACKTRACE"] = nil
        env.merge(environment) { $1 }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw TestFailure("posix_spawn \(command[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw TestFailure("waitpid: \(String(cString: strerror(errno)))") }
        }
        return Ending(status: status, stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }

    /// The event ids of the project's reports.
    static func reportIDs(_ http: HTTP, _ server: ServerProcess, token: String) async throws -> Set<String> {
        let listed = try await http.send(
            .GET, server.baseURL + "/api/v1/reports?limit=100", headers: [("Authorization", "Bearer \(token)")])
        #expect(listed.status == 200, "\(listed.json)")
        let reports = listed.json["reports"] as? [[String: Any]] ?? []
        return Set(reports.compactMap { $0["event_id"] as? String })
    }

    /// Polls the report until it is symbolicated (not pending) and grouped; nil if it never is.
    static func settled(_ http: HTTP, _ url: String, token: String) async throws -> [String: Any]? {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let answer = try await http.send(.GET, url, headers: [("Authorization", "Bearer \(token)")])
            let state = (answer.json["symbolication"] as? [String: Any])?["state"] as? String ?? "pending"
            if answer.status == 200, state != "pending", answer.json["issue_id"] is Int { return answer.json }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// A thread's symbolicated functions (each slot's inline chain, innermost first) as `function_short` names them;
    /// thread 0 is the crashing one.
    static func functions(_ report: [String: Any], thread index: Int = 0) -> [String] {
        let symbolication = report["symbolication"] as? [String: Any]
        let threads = symbolication?["threads"] as? [[[String: Any]]] ?? []
        guard index < threads.count else { return [] }
        return threads[index].flatMap { slot in
            (slot["frames"] as? [[String: Any]] ?? []).compactMap { $0["function_short"] as? String }
        }
    }

    // MARK: - The test

    @Test func everyCrashArrivesOnceWithItsWalkedCallChainAndTheProgramDiesAsBefore() async throws {
        let scratch = try TempFolder("launcher-e2e")
        let programs = try Self.build(in: scratch)
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("native", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)

        // The executables and every library they load, uploaded by the real symupload from one folder (copies: the
        // server finds each by its build-id).
        let symbols = scratch.file("symbols")
        try FileManager.default.createDirectory(atPath: symbols, withIntermediateDirectories: true)
        var libraries: Set<String> = []
        for program in programs {
            try FileManager.default.copyItem(
                atPath: program.path, toPath: symbols + "/" + (program.path as NSString).lastPathComponent)
            for line in try Command.check("ldd", [program.path]).split(separator: "\n") {
                if let path = line.split(separator: " ").first(where: { $0.hasPrefix("/") }) {
                    libraries.insert(String(path))
                }
            }
        }
        for library in libraries {
            let resolved = URL(fileURLWithPath: library).resolvingSymlinksInPath().path
            let copy = symbols + "/" + (library as NSString).lastPathComponent
            if !FileManager.default.fileExists(atPath: copy) {
                try FileManager.default.copyItem(atPath: resolved, toPath: copy)
            }
        }
        #expect(libraries.contains { $0.contains("libc.so") })
        let uploaded = try Command.run(
            SDKBinaries.symupload, [symbols],
            environment: ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": project.upload])
        #expect(uploaded.status == 0, "\(uploaded.out)\(uploaded.err)")

        let dsn = "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)"
        var seen = try await Self.reportIDs(http, server, token: project.upload)
        for program in programs {
            for crash in Crash.allCases {
                let name = "\(program.name) \(crash.rawValue)"
                let arguments = [program.path, crash.rawValue]
                // Without the launcher, then under it: the same wait status (signal, core-dump bit).
                let bare = try Self.spawn(arguments, environment: [:])
                let state = scratch.file("state-\(program.name)-\(crash.rawValue)")
                let traced = try Self.spawn(
                    [SDKBinaries.launcher, "--state-dir", state, "--dsn", dsn, "--release", "2.4.1", "--"]
                        + arguments,
                    environment: [:])
                let signal: Int32 = crash == .abort ? SIGABRT : SIGSEGV
                #expect(bare.signal == signal, "\(name): bare wait status \(bare.status)")
                #expect(
                    traced.status == bare.status, "\(name): \(traced.status) under the launcher, \(bare.status) bare")
                #expect(!traced.stderr.contains("cannot trace"), "\(name): \(traced.stderr)")
                #expect(traced.stderr.contains("closing the books"), "\(name): \(traced.stderr)")

                // One report: the dump, not its fallback beside it.
                let now = try await Self.reportIDs(http, server, token: project.upload)
                let new = now.subtracting(seen)
                #expect(new.count == 1, "\(name): \(new.count) new reports")
                seen = now
                guard let eventID = new.first else { continue }
                let report = try #require(
                    try await Self.settled(
                        http, server.baseURL + "/api/v1/reports/\(eventID)", token: project.upload),
                    "\(name): never symbolicated and grouped")
                #expect(report["release"] as? String == "2.4.1", "\(name)")

                // The crashing thread's program functions, innermost first, are the call chain.
                let functions = Self.functions(report)
                let own = functions.filter(program.functions.contains)
                #expect(own == program.chains[crash], "\(name): \(functions)")
                if crash == .abort {
                    // The walk starts in libc (the signal is raised there) and goes up through `abort`.
                    #expect(functions.first.map(program.functions.contains) == false, "\(name): \(functions)")
                    #expect(functions.contains("abort"), "\(name): \(functions)")
                } else {
                    #expect(functions.first == program.chains[crash]?.first, "\(name): \(functions)")
                }

                // Every walked frame of the crashing thread says how it was found: the registers for the first,
                // the uploaded files' CFI for the rest (the read API's `trust`).
                let threads = report["threads"] as? [[String: Any]] ?? []
                let crashed = try #require(threads.first, "\(name): \(report)")
                #expect(crashed["crashed"] as? Bool == true, "\(name): the crashing thread is not first")
                let trusts = (crashed["frames"] as? [[String: Any]] ?? []).map { $0["trust"] as? String ?? "" }
                #expect(trusts.first == "context", "\(name): \(trusts)")
                #expect(trusts.count >= (program.chains[crash]?.count ?? 0), "\(name): \(trusts)")
                #expect(trusts.dropFirst().allSatisfy { $0 == "cfi" }, "\(name): \(trusts)")
                if crash == .thread {
                    // The other thread, waiting in `pthread_join`, is walked too: through libc up to `main`.
                    #expect(threads.count == 2, "\(name): \(threads.count) threads")
                    let waiting = Self.functions(report, thread: 1)
                    #expect(waiting.filter(program.functions.contains) == ["main"], "\(name): \(waiting)")
                }
            }
        }
    }
}
