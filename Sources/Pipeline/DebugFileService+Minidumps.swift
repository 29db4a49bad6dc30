import FaultlineCore

/// Minidumps count against the project's debug-file quota (`quotaBytes`, `--debug-file-quota-mb`): its debug files and
/// the dumps it stores must fit together. The debug-file store counts the stored dumps in `bytesUsed` (so an upload's
/// allowance and its check in the store's transaction see them); a dump is checked here, before it is stored.
///
/// The dump's check is made before its write, not in the ingest transaction (the hot path, shared by every report):
/// dumps arriving at the same moment can pass it together and overshoot the quota by at most those dumps, each within
/// the minidump size limit. The next dump sees them.
extension DebugFileService {
    /// Whether `project` may store a minidump of `bytes` bytes now: its debug files, the dumps it stores and this one
    /// fit in `quotaBytes`. A negative size counts as nothing; a sum past `UInt64.max` does not fit.
    public func minidumpBytesAllowed(project: Project, adding bytes: Int) async throws -> Bool {
        try await minidumpQuotaUse(project: project, adding: bytes) <= quotaBytes
    }

    /// Throws ``IngestError`` `.quotaExceeded` (the HTTP edge answers 429 `quota_exceeded`, so Crashpad keeps the
    /// report and retries) when a minidump of `bytes` bytes does not fit `project`'s quota (see
    /// ``minidumpBytesAllowed(project:adding:)``); returns when it fits.
    public func checkMinidumpQuota(project: Project, adding bytes: Int) async throws {
        let wouldUse = try await minidumpQuotaUse(project: project, adding: bytes)
        guard wouldUse > quotaBytes else { return }
        throw minidumpQuotaError(project, wouldUse: wouldUse)
    }

    /// The error for a minidump that does not fit `project`'s quota: it names the quota and the option that sets it.
    public func minidumpQuotaError(_ project: Project, wouldUse: UInt64) -> IngestError {
        IngestError(
            .quotaExceeded,
            "project \(project.slug) has a \(quotaBytes >> 20) MiB quota for debug files and minidumps "
                + "(--debug-file-quota-mb), and this minidump would make its use \(Self.mebibytesRoundedUp(wouldUse)) MiB: "
                + "the dump is refused; keep it and send it again once the project has room",
            retryAfter: Self.minidumpRetryAfter)
    }

    /// Seconds a client is asked to wait after a dump over quota: room comes back when retention prunes, a dump is
    /// processed, or an operator raises the quota, none of which is a matter of seconds.
    public static let minidumpRetryAfter = 3600

    /// What the project's quota use would be with a dump of `bytes` more.
    func minidumpQuotaUse(project: Project, adding bytes: Int) async throws -> UInt64 {
        let used = try await store.bytesUsed(project: project.id, excluding: nil)
        let (total, overflow) = used.addingReportingOverflow(UInt64(clamping: max(bytes, 0)))
        return overflow ? .max : total
    }

    static func mebibytesRoundedUp(_ bytes: UInt64) -> UInt64 {
        bytes >> 20 + (bytes & ((1 << 20) - 1) == 0 ? 0 : 1)
    }
}
