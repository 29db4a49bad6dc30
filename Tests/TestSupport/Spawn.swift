import Foundation
import Synchronization

/// Starts the tests' child processes one at a time.
///
/// Foundation's `Process.run()` on Linux crashed the whole test process (SIGSEGV in `memcpy` inside `run()`) twice in
/// three CI runs, each time while many end-to-end suites were starting servers, tools and browsers at once; every
/// server that process had started then ran on as an orphan and slowed the next run. Starting a process takes
/// milliseconds, so one lock around it costs nothing a test can notice. Every `Process` a test starts goes through
/// here (`Command.run` and the servers' helpers do).
public enum Spawn {
    private static let lock = Mutex(())

    /// Starts `process` (as `process.run()` does), never beside another start.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}

/// Values the test process learns while it runs (what `tools/lib/test-needs` provisions: the PostgreSQL URL, the
/// axe-core path), kept here instead of in the process environment: `setenv` while other threads read the
/// environment or start processes that copy it is a data race the C library does not guard against.
public enum TestEnvironment {
    private static let provided = Mutex<[String: String]>([:])

    /// `key`'s provisioned value, else the one the process was started with.
    public static func value(_ key: String) -> String? {
        provided.withLock { $0[key] } ?? ProcessInfo.processInfo.environment[key]
    }

    /// Records a provisioned value (read back by ``value(_:)``).
    static func provide(_ key: String, _ value: String) {
        provided.withLock { $0[key] = value }
    }
}
