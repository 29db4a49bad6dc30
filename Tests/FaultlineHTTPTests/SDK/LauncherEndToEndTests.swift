import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// `faultline-run` against the real server, running the real SDK fixture, a C program built here, and shells.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct LauncherEndToEndTests {
    // MARK: - Helpers

    /// A running `faultline-run`, its output in files (a pipe could fill up and block it).
    final class Launch: @unchecked Sendable {
        // @unchecked: used by one test at a time.
        let process = ChildProcess()
        let outPath: String
        let errPath: String

        init(_ arguments: [String], environment: [String: String] = [:]) throws {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("launch-\(UUID().uuidString)").path
            outPath = base + ".out"
            errPath = base + ".err"
            FileManager.default.createFile(atPath: outPath, contents: nil)
            FileManager.default.createFile(atPath: errPath, contents: nil)
            process.executableURL = URL(fileURLWithPath: SDKBinaries.launcher)
            process.arguments = arguments
            var env = ProcessInfo.processInfo.environment
            for name in [
                "FAULTLINE_DSN", "FAULTLINE_RELEASE", "FAULTLINE_ENVIRONMENT", "FAULTLINE_STATE_DIR", "SWIFT_BACKTRACE",
            ] {
                env[name] = nil
            }
            process.environment = env.merging(environment) { $1 }
            process.standardOutput = FileHandle(forWritingAtPath: outPath)
            process.standardError = FileHandle(forWritingAtPath: errPath)
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        var err: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }
        var out: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }

        /// Waits for the end; answers (signal?, exit code?).
        func wait(timeout: Duration = .seconds(90)) async throws -> Ending {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning {
                guard ContinuousClock.now < deadline else {
                    process.terminate()
                    throw TestFailure("faultline-run did not end: \(err)")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            defer {
                try? FileManager.default.removeItem(atPath: outPath)
                try? FileManager.default.removeItem(atPath: errPath)
            }
            let ending: Ending =
                process.terminationReason == .uncaughtSignal
                ? .signal(process.terminationStatus) : .code(process.terminationStatus)
            lastErr = err
            lastOut = out
            return ending
        }
        var lastErr = ""
        var lastOut = ""

        /// The launcher's child, once it has one (from /proc: the launcher's only child).
        func childPID(timeout: Duration = .seconds(30)) async throws -> Int32 {
            let deadline = ContinuousClock.now + timeout
            let pid = process.processIdentifier
            while ContinuousClock.now < deadline {
                let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
                if let child = text.split(separator: " ").first.flatMap({ Int32($0) }) { return child }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw TestFailure("no child of faultline-run")
        }

        /// Waits until the launcher has copied `text` from the child's standard error.
        func waitForStderr(_ text: String, timeout: Duration = .seconds(60)) async throws {
            let deadline = ContinuousClock.now + timeout
            while !err.contains(text) {
                guard ContinuousClock.now < deadline, process.isRunning else {
                    throw TestFailure("no '\(text)' in: \(err)")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    enum Ending: Equatable { case code(Int32), signal(Int32) }

    /// A server with one project; the DSN the launcher is given.
    struct Setup {
        let folder: String
        let server: ServerProcess
        let project: (ingest: String, upload: String, id: Int)
        var dsn: String { "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)" }
    }

    func setUp() async throws -> Setup {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("launcher", in: folder)
        return Setup(folder: folder, server: try await ServerProcess(folder: folder), project: project)
    }

    func run(_ dsn: String?, release: String, state: String, _ command: [String], sendTimeout: Int = 20) async throws
        -> (Ending, String)
    {
        var arguments = ["--release", release, "--state-dir", state, "--send-timeout", "\(sendTimeout)"]
        if let dsn { arguments += ["--dsn", dsn] }
        let launch = try Launch(arguments + ["--"] + command)
        let ending = try await launch.wait()
        return (ending, launch.lastErr)
    }

    func get(_ setup: Setup, _ path: String) async throws -> [String: Any] {
        let answer = try await HTTP(client: HTTPClient.shared).send(
            .GET, setup.server.baseURL + path, headers: [("Authorization", "Bearer \(setup.project.upload)")])
        guard answer.status == 200 else {
            throw TestFailure("GET \(path): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        return answer.json
    }

    func crashReports(_ setup: Setup) async throws -> [[String: Any]] {
        try await get(setup, "/api/v1/reports?kind=crash&limit=500")["reports"] as? [[String: Any]] ?? []
    }

    /// The release's lifetime health as the server computes it.
    func releaseHealth(_ setup: Setup, release: String) async throws -> [String: Any] {
        let releases = try await get(setup, "/api/v1/releases?limit=100")["releases"] as? [[String: Any]] ?? []
        return releases.first { $0["release"] as? String == release }?["health"] as? [String: Any] ?? [:]
    }

    func waitForSymbolication(_ setup: Setup, _ id: String) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(60) * waitMargin
        while true {
            let report = try await get(setup, "/api/v1/reports/\(id)")
            let state = (report["symbolication"] as? [String: Any])?["state"] as? String ?? "pending"
            if state != "pending" || ContinuousClock.now > deadline { return report }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// What the fixture dies of without the launcher: the launcher must end the same way.
    func bareEnding(_ arguments: [String]) async throws -> Ending {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: SDKBinaries.fixture)
        process.arguments = arguments
        let state = try TempFolder("bare-state")
        var env = ProcessInfo.processInfo.environment
        env["SWIFT_BACKTRACE"] = "enable=no"
        env["FAULTLINE_STATE_DIR"] = state.path
        env["FAULTLINE_DSN"] = nil
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        _ = state
        return process.terminationReason == .uncaughtSignal
            ? .signal(process.terminationStatus) : .code(process.terminationStatus)
    }

    // MARK: - Tests

    @Test func aSwiftCrashArrivesOnceSymbolicatedWithItsContextAndCrashesTheSession() async throws {
        let setup = try await setUp()
        defer { setup.server.cleanUp() }
        let state = try TempFolder("launcher-state")
        // The fixture's debug file first, as CI would.
        let upload = try Command.run(
            SDKBinaries.symupload, [SDKBinaries.fixture],
            environment: ["FAULTLINE_URL": setup.server.baseURL, "FAULTLINE_UPLOAD_TOKEN": setup.project.upload])
        #expect(upload.status == 0, "\(upload.err)")

        let steps = [
            "start", "log:checkout started", "key:cart=blue", "ikey:items=3", "user:user-7",
            "stderr:about to look past the end", "crash:index",
        ]
        let (ending, err) = try await run(setup.dsn, release: "3.1", state: state.path, [SDKBinaries.fixture] + steps)
        // The launcher ends as its child does without it.
        #expect(ending == (try await bareEnding(steps)))
        guard case .signal = ending else { Issue.record("not a signal death: \(ending)"); return }
        #expect(err.contains("about to look past the end"))  // the child's stderr went through

        let crashes = try await crashReports(setup)
        #expect(crashes.count == 1, "\(err)")
        let id = try #require(crashes.first?["event_id"] as? String)
        let report = try await waitForSymbolication(setup, id)
        #expect(report["user_id"] as? String == "user-7")
        #expect(report["release"] as? String == "3.1")
        #expect(
            (report["breadcrumbs"] as? [[String: Any]])?.contains { $0["message"] as? String == "checkout started" }
                == true)
        let keys = report["custom_keys"] as? [String: Any] ?? [:]
        #expect(keys["cart"] as? String == "blue")
        #expect(keys["items"] as? Int == 3)
        #expect((report["crash_message"] as? String)?.contains("Index out of range") == true)
        let symbolication = try #require(report["symbolication"] as? [String: Any])
        // The fixture's own frames resolve; the system's libraries have no debug files here ("partial").
        #expect(["complete", "partial"].contains(symbolication["state"] as? String ?? ""), "\(symbolication)")
        let crashed = (symbolication["threads"] as? [[[String: Any]]])?.first ?? []
        let functions = crashed.flatMap { $0["frames"] as? [[String: Any]] ?? [] }.compactMap {
            $0["function"] as? String
        }
        #expect(functions.contains { $0.contains("indexOutOfRange") }, "\(functions)")

        var health = try await releaseHealth(setup, release: "3.1")
        #expect(health["sessions"] as? Int == 1)
        #expect(health["crashed_sessions"] as? Int == 1)

        // Once: the next run of the same app sends nothing again, and the crash file and state file are gone.
        let (next, nextErr) = try await run(
            setup.dsn, release: "3.1", state: state.path, [SDKBinaries.fixture, "start", "exit:0"])
        #expect(next == .code(0), "\(nextErr)")
        #expect(try await crashReports(setup).count == 1)
        health = try await releaseHealth(setup, release: "3.1")
        #expect(health["sessions"] as? Int == 2)
        #expect(health["crashed_sessions"] as? Int == 1)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: state.file("crashes")))?.isEmpty == true)
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: state.file("runs")))?.filter {
                $0.hasSuffix(".state")
            }.isEmpty == true)
        #expect((try? String(contentsOfFile: state.file("last-run"), encoding: .utf8))?.contains("exited") == true)
    }

    @Test func aProgramKilledWithSIGKILLIsAnAbnormalSession() async throws {
        let setup = try await setUp()
        defer { setup.server.cleanUp() }
        let state = try TempFolder("launcher-state")
        let launch = try Launch([
            "--dsn", setup.dsn, "--release", "4.0", "--state-dir", state.path, "--",
            SDKBinaries.fixture, "start", "stderr:sleeping", "sleep:60",
        ])
        try await launch.waitForStderr("sleeping")
        kill(try await launch.childPID(), SIGKILL)
        #expect(try await launch.wait() == .signal(SIGKILL))
        let health = try await releaseHealth(setup, release: "4.0")
        #expect(health["sessions"] as? Int == 1, "\(launch.lastErr)")
        #expect(health["abnormal_sessions"] as? Int == 1, "\(launch.lastErr)")
        #expect(health["crashed_sessions"] as? Int == 0)
        #expect(try await crashReports(setup).isEmpty)
        #expect((try? String(contentsOfFile: state.file("last-run"), encoding: .utf8))?.contains("abnormal") == true)
    }

    @Test func crashFreeUsersAndSessionsOfNRunsWithKCrashesAreExact() async throws {
        let setup = try await setUp()
        defer { setup.server.cleanUp() }
        // Four installations (state folders), seven runs, three of them crash (in two installations).
        let installs = try (0..<4).map { _ in try TempFolder("launcher-install") }
        let plan: [(install: Int, crash: Bool)] = [
            (0, false), (0, true), (1, false), (1, false), (2, true), (3, false), (2, true),
        ]
        for run in plan {
            let command =
                run.crash ? [SDKBinaries.fixture, "start", "crash:abort"] : [SDKBinaries.fixture, "start", "exit:0"]
            let (ending, err) = try await self.run(
                setup.dsn, release: "5.0", state: installs[run.install].path, command)
            #expect(ending == (run.crash ? .signal(SIGABRT) : .code(0)), "\(err)")
        }
        let sessions = plan.count
        let crashed = plan.filter(\.crash).count
        let users = Set(plan.map(\.install)).count
        let crashedUsers = Set(plan.filter(\.crash).map(\.install)).count
        let health = try await releaseHealth(setup, release: "5.0")
        #expect(health["sessions"] as? Int == sessions)
        #expect(health["crashed_sessions"] as? Int == crashed)
        #expect(health["users"] as? Int == users)
        #expect(health["crashed_users"] as? Int == crashedUsers)
        #expect(health["crash_free_sessions"] as? Double == 1 - Double(crashed) / Double(sessions))
        #expect(health["crash_free_users"] as? Double == 1 - Double(crashedUsers) / Double(users))
        #expect(try await crashReports(setup).count == crashed)
    }

    @Test func aCProgramThatSegfaultsGetsACrashWithTheSignalAndItsLastStderrLines() async throws {
        let setup = try await setUp()
        defer { setup.server.cleanUp() }
        let scratch = try TempFolder("launcher-c")
        let program = try ELFFixtures.compileC(
            """
            #include <stdio.h>
            int main(void) {
                for (int i = 0; i < 100; i++) fprintf(stderr, "warming up %d\\n", i);
                fprintf(stderr, "opening the ledger\\n");
                fprintf(stderr, "about to dereference a bad pointer\\n");
                volatile int *bad = (int *)16;
                *bad = 1;
                return 0;
            }
            """, name: "segv", in: scratch, flags: ["-g", "-O0"])
        let (ending, err) = try await run(setup.dsn, release: "6.0", state: scratch.file("state"), [program])
        #expect(ending == .signal(SIGSEGV))
        #expect(err.contains("warming up 0\n"))  // every line went through, not only the tail
        let crashes = try await crashReports(setup)
        #expect(crashes.count == 1, "\(err)")
        let id = try #require(crashes.first?["event_id"] as? String)
        let report = try await get(setup, "/api/v1/reports/\(id)")
        #expect((report["error"] as? [String: Any])?["type"] as? String == "SIGSEGV")
        let crumbs = (report["breadcrumbs"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(crumbs.suffix(2) == ["opening the ledger", "about to dereference a bad pointer"], "\(crumbs)")
        #expect(!crumbs.contains("warming up 0"))  // only the last lines are kept
        let health = try await releaseHealth(setup, release: "6.0")
        #expect(health["crashed_sessions"] as? Int == 1)
    }

    @Test func theExitStatusIsTheChilds() async throws {
        let setup = try await setUp()
        defer { setup.server.cleanUp() }
        let state = try TempFolder("launcher-state")
        let (code, _) = try await run(setup.dsn, release: "7.0", state: state.path, ["sh", "-c", "exit 42"])
        #expect(code == .code(42))
        let (signal, _) = try await run(setup.dsn, release: "7.0", state: state.path, ["sh", "-c", "kill -USR1 $$"])
        #expect(signal == .signal(SIGUSR1))
        let (missing, err) = try await run(setup.dsn, release: "7.0", state: state.path, ["/no/such/program"])
        #expect(missing == .code(127))
        #expect(err.contains("/no/such/program"))
        // Without a DSN it still runs the program (and keeps the sessions for later).
        let (offline, _) = try await run(nil, release: "7.0", state: state.path, ["sh", "-c", "exit 3"])
        #expect(offline == .code(3))
        let health = try await releaseHealth(setup, release: "7.0")
        #expect(health["sessions"] as? Int == 2)
        #expect(health["abnormal_sessions"] as? Int == 1)  // SIGUSR1 is neither a crash nor a request to stop
        #expect(health["crashed_sessions"] as? Int == 0)
    }

    @Test func aSIGTERMSentToTheLauncherReachesTheChild() async throws {
        let setup = try await setUp()
        defer { setup.server.cleanUp() }
        let state = try TempFolder("launcher-state")
        let script = "trap 'echo child got TERM >&2; exit 7' TERM; echo ready >&2; while :; do sleep 0.05; done"
        let launch = try Launch([
            "--dsn", setup.dsn, "--release", "8.0", "--state-dir", state.path, "--", "sh", "-c", script,
        ])
        try await launch.waitForStderr("ready")
        kill(launch.process.processIdentifier, SIGTERM)
        #expect(try await launch.wait() == .code(7))
        #expect(launch.lastErr.contains("child got TERM"))

        // A child that dies of the SIGTERM: the launcher dies of it too, and the session ended as asked.
        let fixture = try Launch([
            "--dsn", setup.dsn, "--release", "8.0", "--state-dir", state.path, "--",
            SDKBinaries.fixture, "start", "stderr:waiting", "sleep:60",
        ])
        try await fixture.waitForStderr("waiting")
        kill(fixture.process.processIdentifier, SIGTERM)
        #expect(try await fixture.wait() == .signal(SIGTERM))
        let health = try await releaseHealth(setup, release: "8.0")
        #expect(health["sessions"] as? Int == 2)
        #expect(health["crashed_sessions"] as? Int == 0)
        #expect(health["abnormal_sessions"] as? Int == 0)
    }

    @Test func withCollectionOffNothingLeavesUntilItIsOnAgain() async throws {
        let setup = try await setUp()
        defer { setup.server.cleanUp() }
        let state = try TempFolder("launcher-state")
        // The app's user said no (Faultline.setCollectionEnabled(false) writes this file).
        try state.write("settings", "collection=off\n")
        let (ending, err) = try await run(
            setup.dsn, release: "11.0", state: state.path, [SDKBinaries.fixture, "start", "crash:abort"])
        #expect(ending == .signal(SIGABRT), "\(err)")
        #expect(try await crashReports(setup).isEmpty)
        #expect(try await releaseHealth(setup, release: "11.0")["sessions"] == nil)
        #expect(
            ((try? FileManager.default.contentsOfDirectory(atPath: state.file("queue"))) ?? []).contains {
                $0.contains("crash")
            })

        try state.write("settings", "collection=on\n")
        let (next, _) = try await run(setup.dsn, release: "11.0", state: state.path, ["/bin/true"])
        #expect(next == .code(0))
        #expect(try await crashReports(setup).count == 1)
        let health = try await releaseHealth(setup, release: "11.0")
        #expect(health["sessions"] as? Int == 2)
        #expect(health["crashed_sessions"] as? Int == 1)
    }

    /// A launcher killed with SIGKILL cannot report its run; the next run does, from the state file the child
    /// left. (Its child's standard error is then a pipe nobody reads: its next write there kills it with
    /// SIGPIPE, as under any pipe, so the run here ends with the child's own SIGKILL.)
    @Test func aRunWhoseLauncherWasKilledIsReportedByTheNextRun() async throws {
        let setup = try await setUp()
        defer { setup.server.cleanUp() }
        let state = try TempFolder("launcher-state")
        let launch = try Launch([
            "--dsn", setup.dsn, "--release", "10.0", "--state-dir", state.path, "--",
            SDKBinaries.fixture, "start", "log:left alone", "stderr:waiting", "sleep:60",
        ])
        try await launch.waitForStderr("waiting")
        let child = try await launch.childPID()
        // Foundation notices the launcher's end only once an inherited descriptor closes, which its orphaned
        // child keeps open: watch /proc instead (dead = reaped, or a zombie, which holds no lock).
        func dead(_ pid: Int32) -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        func waitDead(_ pid: Int32) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while !dead(pid), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        }
        // The launcher sends the run's start in the background, after starting the child (which may say "waiting"
        // first): wait until the start is stored, so that what follows is about the kill, not a start on its way.
        let started = ContinuousClock.now + .seconds(30) * waitMargin
        while try await releaseHealth(setup, release: "10.0")["sessions"] as? Int != 1, ContinuousClock.now < started {
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(launch.process.processIdentifier, SIGKILL)
        try await waitDead(launch.process.processIdentifier)
        #expect(!dead(child))
        kill(child, SIGKILL)
        try await waitDead(child)
        #expect(dead(child))
        #expect(try await releaseHealth(setup, release: "10.0")["abnormal_sessions"] as? Int == 0)

        let (next, err) = try await run(setup.dsn, release: "10.0", state: state.path, ["/bin/true"])
        #expect(next == .code(0), "\(err)")
        let health = try await releaseHealth(setup, release: "10.0")
        #expect(health["sessions"] as? Int == 2)
        #expect(health["abnormal_sessions"] as? Int == 1)
        #expect(health["crashed_sessions"] as? Int == 0)
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: state.file("runs")))?.filter {
                $0.hasSuffix(".state")
            }.isEmpty == true)
    }

    /// A terminal's Ctrl-C goes to the whole foreground process group, the child included: the launcher must
    /// not send it a second time. The launcher runs on a real pseudo-terminal (Python's `pty`), as in a shell.
    @Test func aTerminalsCtrlCReachesTheChildOnce() throws {
        let scratch = try TempFolder("launcher-pty")
        // The child counts the SIGINTs it gets for a second, then exits with that count (a shell's trap would
        // merge two that arrive while it waits for a command).
        let child = try ELFFixtures.compileC(
            """
            #include <signal.h>
            #include <stdio.h>
            #include <time.h>
            static volatile sig_atomic_t count = 0;
            static void on_int(int signal) { (void)signal; count++; }
            int main(void) {
                struct sigaction action = {0};
                action.sa_handler = on_int;
                sigaction(SIGINT, &action, 0);
                fprintf(stderr, "ready\\n");
                struct timespec step = {0, 10000000};
                for (int i = 0; i < 100; i++) nanosleep(&step, 0);
                return count;
            }
            """, name: "count-int", in: scratch, flags: ["-O0"])
        let driver = try scratch.write(
            "ctrl_c_driver.py",
            """
            import os, pty, select, sys, time
            launcher, state, script = sys.argv[1], sys.argv[2], sys.argv[3]
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(launcher, [launcher, "--state-dir", state, "--", script])
            seen = b""
            deadline = time.time() + 60
            while b"ready" not in seen and time.time() < deadline:
                if select.select([fd], [], [], 0.2)[0]:
                    try: seen += os.read(fd, 4096)
                    except OSError: break
            os.write(fd, bytes([3]))  # Ctrl-C
            while True:  # keep the terminal drained until the launcher ends (EIO once it has)
                if select.select([fd], [], [], 0.2)[0]:
                    try:
                        if not os.read(fd, 4096): break
                    except OSError: break
            _, status = os.waitpid(pid, 0)
            print(os.waitstatus_to_exitcode(status))
            """)
        let result = try Command.run("python3", [driver, SDKBinaries.launcher, scratch.file("state"), child])
        #expect(result.out.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(result.out) \(result.err)")
    }

    @Test func aCrashWhileTheServerIsDownIsSentByTheNextRunExactlyOnce() async throws {
        let setup = try await setUp()
        let state = try TempFolder("launcher-state")
        let deadDSN = setup.dsn
        _ = try await setup.server.terminate()

        let (ending, err) = try await run(
            deadDSN, release: "9.0", state: state.path,
            [SDKBinaries.fixture, "start", "log:before the outage", "crash:abort"],
            sendTimeout: 1)
        #expect(ending == .signal(SIGABRT))
        let queued = (try? FileManager.default.contentsOfDirectory(atPath: state.file("queue"))) ?? []
        #expect(!queued.isEmpty, "\(err)")

        // The server comes back (on another port); the next run sends what waited, then its own session.
        let server = try await ServerProcess(folder: setup.folder)
        defer { server.cleanUp() }
        let back = Setup(folder: setup.folder, server: server, project: setup.project)
        let (next, nextErr) = try await run(back.dsn, release: "9.0", state: state.path, ["/bin/true"])
        #expect(next == .code(0), "\(nextErr)")
        let crashes = try await crashReports(back)
        #expect(crashes.count == 1)
        if let id = crashes.first?["event_id"] as? String {
            let report = try await get(back, "/api/v1/reports/\(id)")
            #expect(
                (report["breadcrumbs"] as? [[String: Any]])?.contains {
                    $0["message"] as? String == "before the outage"
                } == true)
        }
        var health = try await releaseHealth(back, release: "9.0")
        #expect(health["sessions"] as? Int == 2)
        #expect(health["crashed_sessions"] as? Int == 1)
        // Exactly once: another run sends it no more.
        _ = try await run(back.dsn, release: "9.0", state: state.path, ["/bin/true"])
        #expect(try await crashReports(back).count == 1)
        health = try await releaseHealth(back, release: "9.0")
        #expect(health["sessions"] as? Int == 3)
    }
}
