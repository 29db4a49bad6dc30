import Foundation
import TestSupport
import Testing

/// Security #39, finding 7, through the real `faultline-run`: a state folder another user made (a real one:
/// `nobody`, through `setpriv`; the suite runs as root) is refused, the program still runs with reporting off,
/// and nothing is written through the links planted in it. A folder of our own works, `crashes/` private.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct LauncherStateFolderTests {
    typealias Launch = LauncherEndToEndTests.Launch

    static func asNobody(_ script: String) throws -> Command.Result {
        try Command.run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", script])
    }

    @Test func aFolderAnotherUserMadeIsRefusedAndTheProgramStillRuns() async throws {
        try #require(geteuid() == 0, "this test plants a second user's folder: run the suite as root")
        // Given: in a /tmp-like folder, nobody makes the state folder with crashes/ and queue/ (0777), and plants
        // links to a root-only file at every name the launcher's next few thousand pids would write through.
        let root = try TempFolder("f7-launcher")
        let pub = root.path + "/pub"
        let shared = pub + "/shared"
        let victim = root.path + "/victim"
        try FileManager.default.createDirectory(atPath: pub, withIntermediateDirectories: false)
        #expect(chmod(pub, 0o1777) == 0)
        try "root only\n".write(toFile: victim, atomically: false, encoding: .utf8)
        #expect(chmod(victim, 0o600) == 0)
        let made = try Self.asNobody("mkdir -m 777 \(shared) \(shared)/crashes \(shared)/queue \(shared)/runs")
        try #require(made.status == 0, "\(made.err)")
        let lastPID =
            Int(
                (try String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8))
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        for pid in (lastPID + 1)...(lastPID + 3000) {
            for name in ["last-run.tmp-\(pid)", "install-id.tmp-\(pid)", "settings.tmp-\(pid)"] {
                let link = shared + "/" + name
                #expect(symlink(victim, link) == 0 && lchown(link, 65534, 65534) == 0)
            }
        }
        for name in ["install-id", "last-run"] { #expect(symlink(victim, shared + "/" + name) == 0) }

        // When a root launcher runs a Swift program that crashes, with that folder.
        let marker = root.path + "/ran"
        let launch = try Launch(
            [
                "--state-dir", shared, "--send-timeout", "0", "--", "/bin/sh", "-c",
                "echo ran > \(marker); exec \(SDKBinaries.fixture) start crash:index",
            ],
            environment: ["FAULTLINE_STATE_DIR": shared, "SWIFT_BACKTRACE": "enable=no"])
        let ending = try await launch.wait()

        // Then: the program ran and died as it would have without the launcher; reporting said why it is off.
        #expect(FileManager.default.fileExists(atPath: marker))
        guard case .signal = ending else { Issue.record("not a signal death: \(ending): \(launch.lastErr)"); return }
        #expect(
            launch.lastErr.contains(
                "faultline-run: no crash reporting for this run (the program runs without it): refusing the state folder \(shared): it is owned by uid 65534, not by this user (uid 0)"
            ))
        #expect(launch.lastErr.contains("faultline: not started: refusing the state folder \(shared)"))
        // Nothing was written through a link, nothing of the run went into nobody's folder, and the Swift
        // runtime was not sent to write the crash (registers, memory) into nobody's crashes/.
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root only\n")
        var info = stat()
        #expect(lstat(victim, &info) == 0 && info.st_mode & 0o7777 == 0o600 && info.st_uid == 0)
        for folder in ["crashes", "queue", "runs"] {
            #expect(try FileManager.default.contentsOfDirectory(atPath: shared + "/" + folder).isEmpty, "\(folder)")
            #expect(lstat(shared + "/" + folder, &info) == 0 && info.st_uid == 65534)
        }
        #expect(lstat(shared + "/last-run", &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK)
    }

    @Test func aGroupWritableFolderOfOurOwnIsRefused() async throws {
        let root = try TempFolder("f7-group")
        let state = root.path + "/state"
        #expect(mkdir(state, 0o700) == 0 && chmod(state, 0o770) == 0)
        let launch = try Launch(["--state-dir", state, "--send-timeout", "0", "--", "/bin/sh", "-c", "exit 7"])
        #expect(try await launch.wait() == .code(7))
        #expect(
            launch.lastErr.contains(
                "refusing the state folder \(state): it can be written by its group (mode 0770; chmod go-w \(state))"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).isEmpty)
    }

    @Test func aFolderOfOurOwnWorksAndItsCrashFolderIsPrivate() async throws {
        try #require(geteuid() == 0, "this test checks access as a second user: run the suite as root")
        let root = try TempFolder("f7-own")
        let state = root.path + "/state"
        // crashes/ there already, readable by everyone: the launcher makes it 0700 before the program runs.
        try FileManager.default.createDirectory(atPath: state + "/crashes", withIntermediateDirectories: true)
        #expect(chmod(state + "/crashes", 0o755) == 0)
        let launch = try Launch(["--state-dir", state, "--send-timeout", "0", "--", "/bin/sh", "-c", "exit 3"])
        #expect(try await launch.wait() == .code(3))
        var info = stat()
        #expect(lstat(state + "/crashes", &info) == 0 && info.st_mode & 0o777 == 0o700 && info.st_uid == 0)
        #expect(try Self.asNobody("ls \(state)/crashes").status != 0)  // the other user cannot look in
        #expect(try Self.asNobody("ls \(state)").status == 0)  // (while the state folder, 0755, is open to them)
        #expect(!launch.lastErr.contains("no crash reporting"), "\(launch.lastErr)")
        let queued = try FileManager.default.contentsOfDirectory(atPath: state + "/queue").filter {
            $0.hasSuffix(".gz")
        }
        #expect(queued.count == 2 && queued.allSatisfy { $0.contains("-session-") }, "\(queued)")
        #expect(try String(contentsOfFile: state + "/last-run", encoding: .utf8) == "exited\n")
    }
}
