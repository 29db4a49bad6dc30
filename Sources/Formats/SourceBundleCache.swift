import FaultlineCore
import Synchronization

/// Opened source bundles, for `/buildid/{id}/source/…` and the event pages' source lines: each stored bundle's
/// central directory and manifest are parsed once (`SourceBundle.Index`), then kept.
///
/// Why: a bundle whose manifest lists 250,000 files took 1.5 s to open, and every source request opened it again.
///
/// Keys: the path of the stored bundle. Stored debug files are content addressed (the path names the SHA-256 of
/// the bytes, `BlobFolder`), so a path always holds the same bytes and an entry never goes stale; a project that
/// replaces its bundle stores it under another path (another key), and the old entry ages out. The cache decides
/// nothing about access: callers locate the path for their project first, so a project never reaches another
/// project's bundle through it.
///
/// Budget: at most `byteBudget` bytes of indexes (`SourceBundle.Index.approximateBytes`: names, paths and a fixed
/// cost per entry) and at most `capacity` of them, least recently used dropped first; the newest stays even when it
/// alone is over the budget.
///
/// Negative entries: a bundle that fails to open is remembered with its error (the same bytes fail the same way),
/// up to `capacity` of them, so that a damaged bundle is not parsed on every request. A file that cannot be opened
/// at all (removed) is not remembered.
///
/// Work: opening and inflating run on `pool`, never on the caller's executor. The file is opened again for each
/// read: the cache holds memory, never file descriptors. Requests that miss at once queue on the pool, and each
/// looks again before it parses, so a bundle is parsed once unless the pool runs two of them at the same moment
/// (then the second result replaces the first); `opens` counts every parse.
public final class SourceBundleCache: Sendable {
    let pool: BlockingWorkPool
    /// What a bundle may make the reader do.
    public let limits: SourceBundle.Limits
    let byteBudget: Int
    let capacity: Int

    struct State {
        var indexes: [String: (index: SourceBundle.Index, used: UInt64)] = [:]
        var failures: [String: FormatError] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        var opens = 0
    }
    let state = Mutex(State())

    /// - Parameters:
    ///   - pool: where bundles are parsed and files inflated.
    ///   - byteBudget: most bytes of indexes kept (by `SourceBundle.Index.approximateBytes`).
    ///   - capacity: most indexes kept, and most failures remembered.
    public init(
        pool: BlockingWorkPool = BlockingWorkPool(), limits: SourceBundle.Limits = SourceBundle.Limits(),
        byteBudget: Int = 256 << 20, capacity: Int = 256
    ) {
        self.pool = pool
        self.limits = limits
        self.byteBudget = byteBudget
        self.capacity = max(1, capacity)
    }

    /// Bundles parsed so far (hits do not count).
    public var opens: Int { state.withLock { $0.opens } }

    /// The bytes of the source file the debug information calls `path` in the bundle stored at `bundlePath`, or nil
    /// when the bundle lacks it.
    /// - Throws: `FormatError` when the bundle or the entry is damaged, or the file cannot be opened.
    public func file(atPath path: String, inBundleAt bundlePath: String) async throws -> [UInt8]? {
        let index = try await index(ofBundleAt: bundlePath)
        let limits = self.limits
        return try await pool.run {
            try SourceBundle(try FileByteSource(path: bundlePath), index: index, limits: limits).file(atPath: path)
        }
    }

    /// The parsed central directory and manifest of the bundle stored at `bundlePath`, from the cache or parsed now.
    /// - Throws: `FormatError` when the bundle cannot be read (remembered), or the file's error when it cannot be opened.
    public func index(ofBundleAt bundlePath: String) async throws -> SourceBundle.Index {
        let known = state.withLock { state -> Result<SourceBundle.Index, FormatError>? in
            if let failure = state.failures[bundlePath] { return .failure(failure) }
            guard let hit = state.indexes[bundlePath] else { return nil }
            state.clock += 1
            state.indexes[bundlePath]?.used = state.clock
            return .success(hit.index)
        }
        if let known { return try known.get() }
        let limits = self.limits
        let opened = try await pool.run { () throws -> Result<SourceBundle.Index, FormatError> in
            // Requests that missed together queue here: those behind the first find its index.
            let earlier = self.state.withLock { state -> Result<SourceBundle.Index, FormatError>? in
                if let failure = state.failures[bundlePath] { return .failure(failure) }
                return state.indexes[bundlePath].map { .success($0.index) }
            }
            if let earlier { return earlier }
            let source = try FileByteSource(path: bundlePath)
            self.state.withLock { $0.opens += 1 }
            do {
                return .success(try SourceBundle(source, limits: limits).index)
            } catch let error as FormatError {
                return .failure(error)
            }
        }
        state.withLock { state in
            switch opened {
            case .success(let index):
                Self.insert(index, at: bundlePath, into: &state, budget: byteBudget, capacity: capacity)
            case .failure(let error):
                if state.failures.count >= capacity { state.failures.removeAll() }
                state.failures[bundlePath] = error
            }
        }
        return try opened.get()
    }

    /// Adds an index, then drops the least recently used others while over the budget or the capacity.
    static func insert(_ index: SourceBundle.Index, at key: String, into state: inout State, budget: Int, capacity: Int)
    {
        state.clock += 1
        if let old = state.indexes.updateValue((index, state.clock), forKey: key) {
            state.bytes -= old.index.approximateBytes
        }
        state.bytes += index.approximateBytes
        while state.indexes.count > 1, state.bytes > budget || state.indexes.count > capacity {
            guard let oldest = state.indexes.filter({ $0.key != key }).min(by: { $0.value.used < $1.value.used }) else {
                break
            }
            state.indexes[oldest.key] = nil
            state.bytes -= oldest.value.index.approximateBytes
        }
    }
}
