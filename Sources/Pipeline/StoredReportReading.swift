import FaultlineCore
import Synchronization

/// How the symbolication worker reads stored reports again: a payload is inflated once per batch, then each of
/// its reports is read from the inflated bytes.
///
/// A request body of 20 reports is one stored payload; reading each report with its own inflate would inflate it
/// 20 times per batch (it did: that was the worker's largest cost for batched SDK uploads).
public struct StoredReportReading: Sendable {
    /// A payload's inflated bytes (Formats: `NativeReports.inflate`).
    public var inflate: @Sendable (StoredPayload) throws -> [UInt8]
    /// One report of the payload, read from `inflated` (what `inflate` returned for `raw.payload`).
    public var read: @Sendable (_ inflated: [UInt8], _ raw: RawReport) throws -> Report

    public init(
        inflate: @escaping @Sendable (StoredPayload) throws -> [UInt8],
        read: @escaping @Sendable (_ inflated: [UInt8], _ raw: RawReport) throws -> Report
    ) {
        self.inflate = inflate
        self.read = read
    }

    /// Reads every report on its own with `reread` (nothing is inflated in common): for tests and tools that
    /// make reports without stored payloads.
    public static func perReport(_ reread: @escaping @Sendable (RawReport) throws -> Report) -> StoredReportReading {
        StoredReportReading(inflate: { _ in [] }, read: { _, raw in try reread(raw) })
    }
}

/// One batch's view of the symbolicator: a build-id the project has no debug file for is asked about once per
/// batch instead of once per frame (each ask locates the file in the database; a report of 100 raw frames in
/// modules without files asked 200 times).
///
/// Why a batch may remember "missing": every lookup of the batch is made after the batch's debug-file change
/// sequence was observed (`SymbolicationWorker.onFilesSeen`), so a file stored before the batch was read is found by
/// the first lookup. A file stored while the batch runs is not found by later lookups, as it might not have been
/// before; the store catches that case either way (`SymbolicationOutcome.filesSeen`: the report stays queued and is
/// done again). Found modules and other answers are not remembered (the module cache keeps those).
final class BatchLookups: AddressSymbolicating {
    struct Key: Hashable {
        var project: ProjectID
        var buildID: BuildID
    }

    let inner: any AddressSymbolicating
    let missing = Mutex<Set<Key>>([])

    init(_ inner: any AddressSymbolicating) {
        self.inner = inner
    }

    func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
        let key = Key(project: project, buildID: buildID)
        if missing.withLock({ $0.contains(key) }) { return .missingDebugFile }
        let answer = await inner.lookup(buildID: buildID, moduleOffset: moduleOffset, project: project)
        if answer == .missingDebugFile { missing.withLock { _ = $0.insert(key) } }
        return answer
    }

    func lookupSourceLine(buildID: BuildID, file: String, line: Int, project: ProjectID) async -> AddressLookup {
        await inner.lookupSourceLine(buildID: buildID, file: file, line: line, project: project)
    }
}
