import Foundation
import Synchronization
import Testing

/// The tags that split the test suite into CI's two stages (docs/testing.md).
///
/// A suite without `.endToEnd` belongs to the fast stage: it runs in-process, needs no network and no service, and
/// the whole stage reports within minutes of the build. A suite that starts a real server, a browser, a database or
/// a client from PyPI carries `.endToEnd`, plus a tag for each thing it needs, so that a developer can run or skip
/// those alone. `tools/test --fast` and `tools/test --e2e` select by these tags (Swift 6.3's `swift test` cannot, so
/// `tools/lib/test-stages.py` turns a tag into a `--filter`/`--skip` of test IDs). Tag the `@Suite`, not each test:
/// a test inherits its suite's tags.
extension Tag {
    /// The second stage: real `faultline`/`symupload` processes on 127.0.0.1, Chromium, PostgreSQL, several nodes,
    /// or the real Sentry clients. Untagged suites form the fast stage.
    @Tag public static var endToEnd: Self

    /// Needs the throwaway PostgreSQL server that `tools/test` starts (`FAULTLINE_TEST_POSTGRES_URL`).
    @Tag public static var postgres: Self

    /// Drives headless Chromium through chromium-driver (the rendered pages, axe-core).
    @Tag public static var chromium: Self

    /// Runs a real Sentry client from PyPI: sentry-cli 3.8.2 or the Python sentry-sdk 2.75.0.
    @Tag public static var sentryClients: Self

    /// Runs a real SMTP server from PyPI (aiosmtpd 1.4.6) on 127.0.0.1.
    @Tag public static var smtp: Self

    /// Runs the small OpenID provider built from authlib (PyPI) that the single sign-on tests sign in through.
    @Tag public static var oidcProvider: Self

    /// Runs several `faultline serve` nodes on one database.
    @Tag public static var multiNode: Self

    /// Asserts what a server does within a second or two of real time (read timeouts, a client that stops reading).
    /// `tools/test` runs these suites after the other end-to-end suites, alone, so that sixty suites sharing two cores
    /// cannot pause a test's client past the timeout it measures.
    @Tag public static var timing: Self
}

/// Installs what a suite's tags say it needs, once per test process, before the suite's tests run
/// (`tools/lib/test-needs`): the end-to-end apt packages, Chromium with selenium and axe-core, the Sentry clients from
/// PyPI, a throwaway PostgreSQL server. So a plain `swift test` provides its own tools rather than failing for a
/// missing one; under `tools/test` everything is already there and each check takes a moment. A need that cannot be
/// met (no network, not root and no sudo) fails the suite with the installer's message: never a silent skip.
///
/// Set it on the `@Suite` line after the tags: `@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned)`.
public struct Provisioned: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        for tag in test.tags.compactMap(Self.need) { try await provisioner.ensure(tag) }
        try await function()
    }

    /// The argument of `tools/lib/test-needs` for a tag, or nil when the tag needs nothing installed.
    static func need(_ tag: Tag) -> String? {
        switch tag {
        case .endToEnd: "endToEnd"
        case .chromium: "chromium"
        case .sentryClients: "sentryClients"
        case .oidcProvider: "oidcProvider"
        case .smtp: "smtp"
        case .postgres: TestEnvironment.value("FAULTLINE_TEST_POSTGRES_URL") == nil ? "postgres" : nil
        default: nil
        }
    }
}

extension Trait where Self == Provisioned {
    /// Installs what the suite's tags say it needs before it runs (see `Provisioned`).
    public static var provisioned: Self { Provisioned() }
}

/// Runs `tools/lib/test-needs` at most once per need and process; suites that need the same thing wait for it.
private actor Provisioner {
    private var started: [String: Task<Void, any Error>] = [:]

    func ensure(_ need: String) async throws {
        if let running = started[need] { return try await running.value }
        let task = Task.detached { try Self.provide(need) }
        started[need] = task
        try await task.value
    }

    /// Runs the installer; keeps the `KEY=VALUE` lines it prints (``TestEnvironment``), and stops a server it started
    /// at exit.
    private static func provide(_ need: String) throws {
        let result = try Command.run("bash", [TestTools.needsScript, need])
        guard result.status == 0 else {
            throw CommandError(
                description: "tools/lib/test-needs \(need) failed (\(result.status)): \(result.err.suffix(2000))")
        }
        for line in result.out.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals]), value = String(line[line.index(after: equals)...])
            if key == "FAULTLINE_TEST_POSTGRES_STOP" {
                stopScripts.withLock { $0.append(value) }
                atexit { for stop in stopScripts.withLock({ $0 }) { _ = system("sh '\(stop)'") } }
            } else {
                TestEnvironment.provide(key, value)
            }
        }
    }
}

private let provisioner = Provisioner()
/// Scripts that stop the servers this process started (run at exit).
private let stopScripts = Mutex<[String]>([])
