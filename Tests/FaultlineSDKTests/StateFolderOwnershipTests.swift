import Foundation
import TestSupport
import Testing

@testable import FaultlineSDK

/// Security #39, finding 7: a state, queue or crash folder another user could change is refused, and nothing is
/// ever written through a link planted in one. The other user is real: `nobody` (uid 65534), through `setpriv`
/// (the suite runs as root, here and in CI).
@Suite(.serialized) struct StateFolderOwnershipTests {
    static let nobody: uid_t = 65534

    /// A folder tree like `/tmp`: `pub` is world-writable and sticky, and in it `nobody` makes `shared` (0777)
    /// with links to `victim` (a root-only file) where the SDK writes temporary files, `crashes/` and `queue/`.
    struct Planted {
        let root: TempFolder
        var pub: String { root.path + "/pub" }
        var shared: String { pub + "/shared" }
        var victim: String { root.path + "/victim" }
        static let secret = "root only\n"

        init(linkNames: [String]) throws {
            try #require(geteuid() == 0, "these tests chown to a second user: run the suite as root")
            root = try TempFolder("f7-planted")
            try FileManager.default.createDirectory(atPath: pub, withIntermediateDirectories: false)
            #expect(chmod(pub, 0o1777) == 0)
            try Planted.secret.write(toFile: victim, atomically: false, encoding: .utf8)
            #expect(chmod(victim, 0o600) == 0)
            let steps =
                ["mkdir -m 777 \(shared) \(shared)/crashes \(shared)/queue \(shared)/runs"]
                + linkNames.map { "ln -s \(victim) \(shared)/\($0)" }
            let made = try Command.run(
                "setpriv",
                ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", steps.joined(separator: " && ")])
            try #require(made.status == 0, "nobody could not plant the folder: \(made.err)")
        }

        /// The victim is as it was: same bytes, still 0600 and root's.
        func expectVictimUntouched() throws {
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == Planted.secret)
            var info = stat()
            #expect(lstat(victim, &info) == 0)
            #expect(info.st_mode & 0o7777 == 0o600)
            #expect(info.st_uid == 0)
        }
    }

    static func configuration(_ state: String, crashDirectory: String? = nil) -> FaultlineClient.Configuration {
        FaultlineClient.Configuration(
            dsn: nil, release: "1.0", environment: nil, options: FaultlineOptions(), folder: StateFolder(path: state),
            program: "f7-test", launcherStateFile: nil, crashDirectory: crashDirectory)
    }

    static func refusal(_ body: () throws -> Void) -> SDKError? {
        do {
            try body()
            return nil
        } catch let error as SDKError {
            return error
        } catch {
            return SDKError(.io, "unexpected \(error)")
        }
    }

    @Test func anotherUsersFolderIsRefusedAndItsLinksAreNeverFollowed() throws {
        // Given nobody's folder, with links where this process (its pid is known) would write temporary files.
        let pid = getpid()
        let planted = try Planted(linkNames: [
            "install-id.tmp-\(pid)", "last-run.tmp-\(pid)", "settings.tmp-\(pid)", "queue/.tmp-counters-\(pid)",
        ])

        // When the SDK starts there, and when its queue is opened: refused, with the reason.
        let error = Self.refusal { _ = try FaultlineClient(configuration: Self.configuration(planted.shared)) }
        #expect(error?.code == .unsafeFolder)
        #expect(error?.message.contains("owned by uid 65534, not by this user (uid 0)") == true)
        let queueError = Self.refusal { _ = try DeliveryQueue(directory: planted.shared + "/queue") }
        #expect(queueError?.code == .unsafeFolder)

        // Then nothing was written through a link, and nothing of ours was left in nobody's folder.
        try planted.expectVictimUntouched()
        let names = try FileManager.default.contentsOfDirectory(atPath: planted.shared).sorted()
        #expect(
            names == [
                "crashes", "install-id.tmp-\(pid)", "last-run.tmp-\(pid)", "queue", "runs", "settings.tmp-\(pid)",
            ])
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted.shared + "/runs").isEmpty)
    }

    @Test func theRealSDKInAProgramTurnsItselfOffAndTheProgramRuns() throws {
        let planted = try Planted(linkNames: ["install-id", "last-run", "settings"])
        let run = try Command.run(
            RunSurvivalTests.fixture, ["start", "log:hello", "nonfatal:1", "did-crash", "exit:0"],
            environment: ["FAULTLINE_STATE_DIR": planted.shared, "FAULTLINE_RUN_STATE": "", "SWIFT_BACKTRACE": ""])
        #expect(run.status == 0)
        #expect(run.out.contains("did-crash=false"))
        #expect(run.err.contains("faultline: not started: refusing the state folder \(planted.shared)"))
        #expect(run.err.contains("owned by uid 65534"))
        try planted.expectVictimUntouched()
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted.shared + "/queue").isEmpty)
    }

    @Test func foldersOthersCanWriteOrSwapAreRefused() throws {
        try #require(geteuid() == 0, "these tests chown to a second user: run the suite as root")
        let folder = try TempFolder("f7-modes")

        // Our own folder, writable by its group: refused, and the message says how to fix it.
        let groupWritable = folder.path + "/group"
        #expect(mkdir(groupWritable, 0o700) == 0 && chmod(groupWritable, 0o770) == 0)
        let group = Self.refusal { _ = try FaultlineClient(configuration: Self.configuration(groupWritable)) }
        #expect(group?.code == .unsafeFolder)
        #expect(group?.message.contains("can be written by its group (mode 0770; chmod go-w \(groupWritable))") == true)

        // A state folder whose queue others can write: refused too (they could drop or forge reports).
        let state = folder.path + "/state"
        #expect(mkdir(state, 0o700) == 0 && mkdir(state + "/queue", 0o700) == 0 && chmod(state + "/queue", 0o703) == 0)
        let queue = Self.refusal { _ = try FaultlineClient(configuration: Self.configuration(state)) }
        #expect(
            queue?.message.contains("refusing the queue folder \(state)/queue: it can be written by others") == true)

        // A link, even to a folder of ours: refused.
        let real = folder.path + "/real"
        #expect(mkdir(real, 0o700) == 0 && symlink(real, folder.path + "/link") == 0)
        let link = Self.refusal { _ = try PrivateFolder.make(folder.path + "/link") }
        #expect(link?.message.contains("it is a symbolic link") == true)

        // Our own folder inside one another user owns: they could swap it, so it is refused.
        let theirs = folder.path + "/theirs"
        #expect(mkdir(theirs, 0o755) == 0 && chown(theirs, Self.nobody, Self.nobody) == 0)
        let swapped = Self.refusal { _ = try PrivateFolder.make(theirs + "/mine") }
        #expect(swapped?.message.contains("its parent \(theirs) is owned by uid 65534") == true)

        // A parent others can write without the sticky bit: refused; with it (as /tmp): accepted.
        let open = folder.path + "/open"
        #expect(mkdir(open, 0o700) == 0 && chmod(open, 0o777) == 0)
        let unsticky = Self.refusal { _ = try PrivateFolder.make(open + "/mine") }
        #expect(
            unsticky?.message.contains("its parent \(open) can be written by its group and others (mode 0777)") == true)
        #expect(chmod(open, 0o1777) == 0)
        #expect(try PrivateFolder.make(open + "/mine") == open + "/mine")
    }

    @Test func aFolderOfOurOwnWorksAndStaleLinksInsideAreReplacedNotFollowed() throws {
        let planted = try Planted(linkNames: [])
        let state = planted.root.path + "/state"
        let pid = getpid()
        // Made 0700 with its parents; the path answered is the one checked.
        #expect(try PrivateFolder.make(state + "/a/b") == state + "/a/b")
        var info = stat()
        #expect(lstat(state, &info) == 0 && info.st_mode & 0o777 == 0o700 && info.st_uid == 0)

        // Links in our own folder (left by anyone, or by an earlier run with our pid) are never followed: a
        // temporary file is always new, and a link at a file's own name is read as missing.
        for name in ["settings.tmp-\(pid)", "last-run.tmp-\(pid)", "install-id.tmp-\(pid)", "settings", "last-run"] {
            #expect(symlink(planted.victim, state + "/" + name) == 0)
        }
        let client = try FaultlineClient(configuration: Self.configuration(state))
        client.setCollectionEnabled(false)
        #expect(!StateFolder(path: state).collectionEnabled())
        client.processExiting()
        #expect(StateFolder(path: state).lastRun() == .exited)
        try planted.expectVictimUntouched()
        for name in ["settings", "last-run", "install-id"] {
            #expect(lstat(state + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG, "\(name)")
        }
        #expect(try String(contentsOfFile: state + "/settings", encoding: .utf8) == "collection=off\n")
        #expect(StateFolder.validID(try String(contentsOfFile: state + "/install-id", encoding: .utf8)) != nil)
        #expect(!FileManager.default.fileExists(atPath: state + "/settings.tmp-\(pid)"))
        #expect(client.queue.pending().map(\.kind) == [.session, .session])
    }

    @Test func aCrashFolderOfAnotherUserIsNotRead() throws {
        let planted = try Planted(linkNames: [])
        let state = planted.root.path + "/state"
        // A forged crash file of this program in nobody's crash folder.
        let forged = try Command.run(
            "setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c",
                "echo '{\"timestamp\": \"2026-11-23T05:19:28Z\", \"kind\": \"crashReport\"}' > \(planted.shared)/crashes/f7-test-4242-0.0.json",
            ])
        #expect(forged.status == 0)
        let client = try FaultlineClient(
            configuration: Self.configuration(state, crashDirectory: planted.shared + "/crashes"))
        // The SDK runs (its own folder is fine); crashes are off, so the forged file is neither read nor removed.
        #expect(client.configuration.crashDirectory == nil)
        #expect(client.queue.pending().map(\.kind) == [.session])
        #expect(FileManager.default.fileExists(atPath: planted.shared + "/crashes/f7-test-4242-0.0.json"))

        // A crash folder of our own that does not exist yet is made private (0700) and used.
        let own = try FaultlineClient(configuration: Self.configuration(state, crashDirectory: state + "/crashes"))
        #expect(own.configuration.crashDirectory == state + "/crashes")
        var info = stat()
        #expect(lstat(state + "/crashes", &info) == 0 && info.st_mode & 0o777 == 0o700)
    }
}
