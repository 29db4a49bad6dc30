import Foundation
import Synchronization

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
