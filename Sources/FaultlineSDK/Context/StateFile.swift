/// The run's context on disk, always current: a memory-mapped file (`MAP_SHARED`) the SDK writes into.
///
/// CONTRACT (owner: sdk-context helper). Writes go to the page cache through the mapping, so they survive
/// a crash or `SIGKILL` of the app (not a power loss) without a system call per write: that is what keeps
/// `Faultline.log` and `setCustomValue` well under a microsecond. The format is versioned and documented
/// in docs/sdk.md; a reader never trusts it (it may be torn, truncated or written by a newer SDK).
package final class StateFile: @unchecked Sendable {
    /// Makes a new state file for a run that is about to start (by the SDK, or by `faultline-run` before it
    /// starts its child); the file holds `context` (breadcrumbs and keys included).
    package static func create(at path: String, context: RunContext) throws -> StateFile {
        throw SDKError(.unimplemented, "StateFile.create")
    }

    /// Opens the state file `faultline-run` made for this process (`FAULTLINE_RUN_STATE`), to write into it.
    package static func open(at path: String) throws -> StateFile {
        throw SDKError(.unimplemented, "StateFile.open")
    }

    /// A snapshot of the file, typically of a run that has ended.
    package static func read(at path: String) throws -> RunContext {
        throw SDKError(.unimplemented, "StateFile.read")
    }

    package func log(_ message: String, timestamp: Double, category: String? = nil) {}
    package func setCustomValue(_ value: CustomValue?, forKey key: String) {}
    package func setUserID(_ id: String?) {}
    package func setPID(_ pid: Int32) {}
    package func incrementErrors() {}
    package func markExited() {}
    package func snapshot() -> RunContext? { nil }
}
