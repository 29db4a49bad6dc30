import FaultlineCore
import Formats
import Foundation
import TestSupport
import Testing

@testable import FaultlineSDK

/// `faultline-run` traces a native program and writes its crash as a minidump: real programs built by clang
/// here, the real launcher, a loopback HTTP listener standing in for the server's minidump endpoint, and the
/// server's own minidump reader and multipart parser checking what arrives.
@Suite(.serialized) struct LauncherMinidumpTests {
    /// The launcher, built beside this test bundle by `swift build --build-tests`.
    static var launcher: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "faultline-run"
        ).path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/faultline-run").path
    }

    /// Crashes three calls deep (`crash_here` ← `middle` ← `outer`), by `abort()`, or on a second thread.
    static let crashyC = """
        #include <pthread.h>
        #include <signal.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>
        __attribute__((noinline)) void crash_here(volatile int *p) { *p = 42; }
        __attribute__((noinline)) void middle(volatile int *p) { crash_here(p); __asm__ volatile(""); }
        __attribute__((noinline)) void outer(volatile int *p) { middle(p); __asm__ volatile(""); }
        static void *idle(void *arg) { (void)arg; for (;;) pause(); return 0; }
        static void *crasher(void *arg) { (void)arg; outer((volatile int *)16); return 0; }
        int main(int argc, char **argv) {
            pthread_t t;
            pthread_create(&t, 0, idle, 0);
            fprintf(stderr, "about to crash\\n");
            if (argc > 1 && !strcmp(argv[1], "abort")) abort();
            if (argc > 1 && !strcmp(argv[1], "thread")) { pthread_t u; pthread_create(&u, 0, crasher, 0); pthread_join(u, 0); }
            outer((volatile int *)16);
            return 0;
        }
        """

    static let crashyCXX = """
        #include <cstdio>
        struct Shape { virtual ~Shape() {} virtual int area() const = 0; };
        struct Square : Shape { int side = 3; int area() const override { return side * side; } };
        namespace ledger {
        __attribute__((noinline)) int total(const Shape *s) { return s->area() + 1; }
        __attribute__((noinline)) int report(const Shape *s) { int t = total(s); __asm__ volatile(""); return t; }
        }
        int main(int argc, char **) {
            std::fprintf(stderr, "summing\\n");
            const Shape *shape = argc > 5 ? new Square : nullptr;
            return ledger::report(shape);
        }
        """

    struct Built {
        let folder: TempFolder
        let c: String
        let cxx: String
    }

    static func build() throws -> Built {
        let folder = try TempFolder("launcher-minidump")
        let cSource = try folder.write("crashy.c", crashyC)
        let c = folder.file("crashy")
        _ = try Command.check("clang", ["-g", "-O1", "-pthread", cSource, "-o", c])
        let cxxSource = try folder.write("crashy.cpp", crashyCXX)
        let cxx = folder.file("crashy-cxx")
        _ = try Command.check("clang++", ["-g", "-O1", cxxSource, "-o", cxx])
        return Built(folder: folder, c: c, cxx: cxx)
    }

    /// Runs `arguments` (bare, or under the launcher with `launcherArguments` first); answers how it ended.
    static func run(
        _ arguments: [String], under launcherArguments: [String]? = nil, environment: [String: String] = [:]
    )
        throws -> (reason: ChildProcess.TerminationReason, status: Int32, stderr: String)
    {
        let process = ChildProcess()
        if let launcherArguments {
            process.executableURL = URL(fileURLWithPath: launcher)
            process.arguments = launcherArguments + ["--"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
        }
        var env = ProcessInfo.processInfo.environment
        for key in [
            "FAULTLINE_DSN", "FAULTLINE_RUN_STATE", "FAULTLINE_STATE_DIR", "FAULTLINE_NO_TRACE", "SWIFT_BACKTRACE",
        ] {
            env[key] = nil
        }
        process.environment = env.merging(environment) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationReason, process.terminationStatus, String(decoding: err, as: UTF8.self))
    }

    /// The queue's items of `kind`, decompressed.
    static func queued(_ state: String, _ kind: DeliveryQueue.Kind) throws -> [(id: String, body: [UInt8])] {
        let queue = try DeliveryQueue(directory: state + "/queue")
        return try queue.pending().filter { $0.kind == kind }.map { item in
            (item.id, try gunzip(try #require(queue.body(of: item))))
        }
    }

    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let folder = try TempFolder("gunzip")
        let path = folder.file("body.gz")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        _ = try Command.check("gzip", ["-d", path])
        return Array(try Data(contentsOf: URL(fileURLWithPath: folder.file("body"))))
    }

    /// The parts of a multipart body, by name, through the server's parser.
    static func parts(_ body: [UInt8], boundary: String) throws -> [String: (MultipartPartHeaders, [UInt8])] {
        var parser = try MultipartParser(boundary: boundary)
        var out: [String: (MultipartPartHeaders, [UInt8])] = [:]
        var current: MultipartPartHeaders?
        var data: [UInt8] = []
        for event in try parser.feed(body) {
            switch event {
            case .partStart(let headers): current = headers; data = []
            case .bodyData(let bytes): data += bytes
            case .partEnd: if let current { out[current.name] = (current, data) }
            }
        }
        try parser.finish()
        return out
    }

    /// `nm -S`: the start and size of `symbol` in `binary` (an address in the file's own layout).
    static func symbolRange(_ symbol: String, in binary: String) throws -> Range<UInt64> {
        let out = try Command.check("nm", ["-S", "--defined-only", binary])
        for line in out.split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count == 4, f[3] == Substring(symbol), let start = UInt64(f[0], radix: 16),
                let size = UInt64(f[1], radix: 16)
            {
                return start..<(start + size)
            }
        }
        throw CommandError(description: "\(symbol) not in \(binary)")
    }

    /// The crashing thread's pc as an address in `binary`'s file layout (PIE: less the module's base).
    static func crashPC(_ snapshot: ProcessSnapshot, in binary: String) throws -> UInt64 {
        let thread = try #require(snapshot.threads.first)
        let module = try #require(snapshot.modules.first { $0.path == binary })
        #expect(thread.crashed)
        #expect((module.base..<(module.base + module.size)).contains(thread.pc))
        return thread.pc - module.base
    }

    /// The dump in a queued minidump item.
    static func dump(_ item: (id: String, body: [UInt8])) throws -> [UInt8] {
        try #require(try parts(item.body, boundary: MinidumpUpload.boundary(eventID: item.id))["upload_file_minidump"])
            .1
    }

    static func readelfBuildID(_ binary: String) throws -> String? { try ELFFixtures.readelfBuildID(binary) }

    // MARK: - Dumps

    @Test func aSegfaultThreeCallsDeepIsWrittenAsAMinidumpAndTheProgramDiesAsBefore() throws {
        let built = try Self.build()
        let bare = try Self.run([built.c])
        let state = built.folder.file("state")
        let traced = try Self.run([built.c], under: ["--state-dir", state, "--release", "7.1"])
        // Then: the same death (SIGSEGV), a minidump queued and the signal report behind it as its fallback.
        #expect(bare.reason == .uncaughtSignal && bare.status == SIGSEGV)
        #expect(traced.reason == bare.reason && traced.status == bare.status)
        #expect(!traced.stderr.contains("cannot trace"), "\(traced.stderr)")
        let dumps = try Self.queued(state, .minidump)
        let item = try #require(dumps.first)
        #expect(dumps.count == 1)
        #expect(try Self.queued(state, .crash).map(\.id) == [item.id])

        let parts = try Self.parts(item.body, boundary: MinidumpUpload.boundary(eventID: item.id))
        let (fileHeaders, dump) = try #require(parts["upload_file_minidump"])
        #expect(fileHeaders.filename == "crashy.dmp")
        let minidump = try Minidump(bytes: dump)
        #expect(minidump.linux.environ == nil)  // the environment is never written
        let snapshot = try minidump.snapshot()
        #expect(snapshot.architecture == .x86_64)
        #expect(snapshot.exception?.signal == SIGSEGV)
        #expect(snapshot.exception?.faultAddress == 16)
        #expect(snapshot.threads.count == 2)
        let pc = try Self.crashPC(snapshot, in: built.c)
        #expect(try Self.symbolRange("crash_here", in: built.c).contains(pc))
        // The stack memory around the crashing thread's stack pointer is in the dump.
        let sp = try #require(snapshot.threads.first?.sp)
        #expect(snapshot.memory.contains { $0.start <= sp && sp < $0.start + UInt64($0.bytes.count) })
        // The executable's build-id, read from its notes in memory, is the file's.
        let module = try #require(snapshot.modules.first { $0.path == built.c })
        #expect(module.buildID?.description == (try Self.readelfBuildID(built.c)))
        #expect(snapshot.modules.contains { $0.path.contains("libc.so") && $0.buildID != nil })

        let sentryPart = try #require(parts["sentry"])
        let sentry = try #require(try JSONSerialization.jsonObject(with: Data(sentryPart.1)) as? [String: Any])
        #expect(sentry["event_id"] as? String == item.id)
        #expect(sentry["release"] as? String == "7.1")
        #expect(sentry["level"] as? String == "fatal")
        let run = try #require((sentry["contexts"] as? [String: Any])?["faultline"] as? [String: Any])
        #expect(run["signal"] as? Int == Int(SIGSEGV))
        let sessions = try Self.queued(state, .session)
        #expect(run["session_id"] as? String == sessions.first?.id)
        #expect((sentry["extra"] as? [String: Any])?["crash_message"] as? String == "about to crash")
    }

    @Test func theEnvironmentIsNotInTheDumpNotEvenInTheMainThreadsStack() throws {
        // Given a program whose environment holds a secret (the kernel puts the strings at the top of the main
        // thread's stack, a few KiB above its frames)
        let built = try Self.build()
        let state = built.folder.file("state")
        let secret = "hunter2-" + UUID().uuidString
        let traced = try Self.run(
            [built.c], under: ["--state-dir", state], environment: ["BOOKS_API_TOKEN": secret])
        #expect(traced.reason == .uncaughtSignal && traced.status == SIGSEGV)
        let dump = try Self.dump(try #require(try Self.queued(state, .minidump).first))
        // Then no byte of the dump holds it, and the main thread's stack still reaches its frames
        #expect(!Self.contains(dump, Array(secret.utf8)), "the environment is in the dump")
        let snapshot = try Minidump(bytes: dump).snapshot()
        let sp = try #require(snapshot.threads.first?.sp)
        #expect(snapshot.memory.contains { $0.start <= sp && sp < $0.start + UInt64($0.bytes.count) })
        #expect(try Self.symbolRange("crash_here", in: built.c).contains(try Self.crashPC(snapshot, in: built.c)))
    }

    @Test func anAbortIsDumpedInLibcWithTheProgramStillDyingOfSIGABRT() throws {
        let built = try Self.build()
        let bare = try Self.run([built.c, "abort"])
        let state = built.folder.file("state")
        let traced = try Self.run([built.c, "abort"], under: ["--state-dir", state])
        #expect(bare.reason == .uncaughtSignal && bare.status == SIGABRT)
        #expect(traced.reason == bare.reason && traced.status == bare.status)
        let item = try #require(try Self.queued(state, .minidump).first)
        let dump = try Self.dump(item)
        let snapshot = try Minidump(bytes: dump).snapshot()
        #expect(snapshot.exception?.signal == SIGABRT)
        let thread = try #require(snapshot.threads.first)
        let libc = try #require(snapshot.modules.first { $0.path.contains("libc.so") })
        #expect((libc.base..<(libc.base + libc.size)).contains(thread.pc))
    }

    @Test func aCrashOnASecondThreadNamesThatThreadAndPutsItFirst() throws {
        let built = try Self.build()
        let state = built.folder.file("state")
        let traced = try Self.run([built.c, "thread"], under: ["--state-dir", state])
        #expect(traced.reason == .uncaughtSignal && traced.status == SIGSEGV)
        let item = try #require(try Self.queued(state, .minidump).first)
        let dump = try Self.dump(item)
        let minidump = try Minidump(bytes: dump)
        let snapshot = try minidump.snapshot()
        #expect(snapshot.threads.count == 3)
        let crashed = try #require(snapshot.threads.first)
        #expect(snapshot.exception?.threadID == crashed.id)
        #expect(crashed.id != UInt64(try #require(minidump.processID)))  // not the main thread
        #expect(try Self.symbolRange("crash_here", in: built.c).contains(try Self.crashPC(snapshot, in: built.c)))
    }

    @Test func aCPlusPlusProgramCrashingInAMethodCallIsDumped() throws {
        let built = try Self.build()
        let bare = try Self.run([built.cxx])
        let state = built.folder.file("state")
        let traced = try Self.run([built.cxx], under: ["--state-dir", state])
        #expect(bare.reason == .uncaughtSignal && bare.status == SIGSEGV)
        #expect(traced.reason == bare.reason && traced.status == bare.status)
        let item = try #require(try Self.queued(state, .minidump).first)
        let dump = try Self.dump(item)
        let snapshot = try Minidump(bytes: dump).snapshot()
        // `s->area()` loads the vtable through a null pointer in ledger::total.
        #expect(
            try Self.symbolRange("_ZN6ledger5totalEPK5Shape", in: built.cxx).contains(
                try Self.crashPC(snapshot, in: built.cxx)))
    }

    @Test func withCoreDumpsOnTheProgramWritesItsOwnCoreAsWithoutTheLauncher() throws {
        // Given core files written to the crashing process's folder (`core_pattern` a file name, not a pipe)
        let pattern = try String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)
        guard !pattern.hasPrefix("|"), !pattern.contains("/") else { return }  // a collector or a fixed folder
        let built = try Self.build()
        // When the program crashes with `ulimit -c unlimited`, bare and under the launcher, each in its own folder
        let script = #"cd "$1" && shift && ulimit -c unlimited && exec "$@""#
        var cores: [String: [String]] = [:]
        var endings: [String: (ChildProcess.TerminationReason, Int32)] = [:]
        for (name, launcherArguments) in [("bare", nil), ("traced", ["--state-dir", built.folder.file("state")])] {
            let folder = built.folder.file(name)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            var command = [built.c]
            if let launcherArguments { command = [Self.launcher] + launcherArguments + ["--"] + command }
            let ended = try Self.run(["/bin/sh", "-c", script, "sh", folder] + command)
            endings[name] = (ended.reason, ended.status)
            cores[name] = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("core") }
        }
        // Then both die of SIGSEGV, and each folder holds exactly one core: the program's (the launcher, which
        // re-raises the signal on itself, writes none of its own)
        #expect(endings["bare"]?.0 == .uncaughtSignal && endings["bare"]?.1 == SIGSEGV)
        #expect(endings["traced"]?.0 == .uncaughtSignal && endings["traced"]?.1 == SIGSEGV)
        #expect(cores["bare"]?.count == 1, "\(cores)")
        #expect(cores["traced"]?.count == 1, "\(cores)")
        let core = built.folder.file("traced") + "/" + (cores["traced"]?.first ?? "core")
        #expect(try Command.check("readelf", ["-h", core]).contains("CORE (Core file)"))
        // Its notes (NT_FILE, the mapped files) name the program.
        let head = [UInt8](try Data(contentsOf: URL(fileURLWithPath: core)).prefix(1 << 20))
        #expect(Self.contains(head, Array(built.c.utf8)), "the core is not the program's")
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains {
            haystack[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }

    @Test func withNoTraceTheCrashIsTheSignalReportAlone() throws {
        let built = try Self.build()
        let state = built.folder.file("state")
        let traced = try Self.run([built.c], under: ["--state-dir", state, "--no-trace"])
        #expect(traced.reason == .uncaughtSignal && traced.status == SIGSEGV)
        #expect(try Self.queued(state, .minidump).isEmpty)
        #expect(try Self.queued(state, .crash).count == 1)
        let viaEnvironment = built.folder.file("state-env")
        _ = try Self.run([built.c], under: ["--state-dir", viaEnvironment], environment: ["FAULTLINE_NO_TRACE": "1"])
        #expect(try Self.queued(viaEnvironment, .minidump).isEmpty)
    }

    @Test func aProgramThatHandlesItsOwnSignalsIsNotDumpedUntilItDies() throws {
        // Given a program that takes 1,000 SIGSEGVs in its own handler (skipping the faulting store), then exits 3
        let folder = try TempFolder("launcher-handled")
        let source = try folder.write(
            "handled.c",
            """
            #include <signal.h>
            #include <setjmp.h>
            #include <stdlib.h>
            static sigjmp_buf back;
            static void onSegv(int s) { (void)s; siglongjmp(back, 1); }
            int main(void) {
                signal(SIGSEGV, onSegv);
                for (volatile int i = 0; i < 1000; i++) {
                    if (!sigsetjmp(back, 1)) *(volatile int *)16 = i;
                }
                return 3;
            }
            """)
        let program = folder.file("handled")
        _ = try Command.check("clang", ["-O1", source, "-o", program])
        let state = folder.file("state")
        let traced = try Self.run([program], under: ["--state-dir", state])
        // Then it exits as it would, and nothing was dumped: a handled signal is not a crash.
        #expect(traced.reason == .exit && traced.status == 3)
        #expect(try Self.queued(state, .minidump).isEmpty)
        #expect(try Self.queued(state, .crash).isEmpty)
    }

    /// Runs its arguments with `ptrace` refused (EPERM) by a seccomp filter, as a container's profile does.
    static let noPtraceC = """
        #include <errno.h>
        #include <linux/filter.h>
        #include <linux/seccomp.h>
        #include <stddef.h>
        #include <sys/prctl.h>
        #include <sys/syscall.h>
        #include <unistd.h>
        int main(int argc, char **argv) {
            (void)argc;
            struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            };
            struct sock_fprog program = { .len = 4, .filter = filter };
            if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program)) return 99;
            execv(argv[1], argv + 1);
            return 98;
        }
        """

    @Test func whereTracingIsNotPermittedTheLauncherSaysSoAndReportsTheSignal() throws {
        // Given ptrace refused to the launcher (a seccomp filter, as in a container)
        let built = try Self.build()
        let source = try built.folder.write("noptrace.c", Self.noPtraceC)
        let wrapper = built.folder.file("noptrace")
        _ = try Command.check("clang", ["-O1", source, "-o", wrapper])
        let state = built.folder.file("state")
        // When a program crashes under it
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: wrapper)
        process.arguments = [Self.launcher, "--state-dir", state, "--", built.c]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FAULTLINE_") }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // Then it says so once, the program still dies of its signal, and the signal is reported without a dump
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGSEGV)
        #expect(err.contains("faultline-run: cannot trace crashy (ptrace: Operation not permitted)"), "\(err)")
        #expect(err.contains("about to crash"))
        #expect(try Self.queued(state, .minidump).isEmpty)
        #expect(try Self.queued(state, .crash).count == 1)
    }

    @Test func theDumpIsPostedToTheMinidumpEndpointAsSentryTakesIt() throws {
        // Given a listener on 127.0.0.1 that answers every request 200
        let built = try Self.build()
        let listener = try LoopbackListener()
        let state = built.folder.file("state")
        // When a program crashes under the launcher with a DSN for it
        let traced = try Self.run(
            [built.c],
            under: [
                "--state-dir", state, "--dsn", "http://key-42@127.0.0.1:\(listener.port)/42", "--release", "7.2",
                "--environment", "staging",
            ])
        #expect(traced.reason == .uncaughtSignal && traced.status == SIGSEGV)
        // Then the dump went to /api/42/minidump/?sentry_key=key-42, gzip multipart, and the fallback stayed home
        let requests = listener.requests()
        let post = try #require(requests.first { $0.target.contains("/minidump/") }, "\(requests.map(\.target))")
        #expect(post.method == "POST")
        #expect(post.target == "/api/42/minidump/?sentry_key=key-42")
        #expect(post.headers["content-encoding"] == "gzip")
        let boundary = try MultipartParser.boundary(fromContentType: post.headers["content-type"])
        let body = try Self.gunzip(post.body)
        let parts = try Self.parts(body, boundary: boundary)
        #expect(parts["upload_file_minidump"]?.0.contentType == "application/octet-stream")
        let snapshot = try Minidump(bytes: try #require(parts["upload_file_minidump"]).1).snapshot()
        #expect(try Self.symbolRange("crash_here", in: built.c).contains(try Self.crashPC(snapshot, in: built.c)))
        let sentryPart = try #require(parts["sentry"])
        let sentry = try #require(try JSONSerialization.jsonObject(with: Data(sentryPart.1)) as? [String: Any])
        #expect(sentry["release"] as? String == "7.2")
        #expect(sentry["environment"] as? String == "staging")
        #expect(!requests.contains { $0.target == "/api/v1/reports" })  // the dump was taken: no fallback sent
        #expect(requests.filter { $0.target == "/api/v1/sessions" }.count == 2)
        #expect(try Self.queued(state, .crash).isEmpty)
        #expect(try Self.queued(state, .minidump).isEmpty)
    }
}
