#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A symbolication outcome as both engines store it: the result's bytes (its JSON, compressed by the store's codec
/// when that shrinks it) and the grouping's JSON.
///
/// Why compressed: a result repeats build-ids, paths and keys frame after frame, ~10 KB a report, and was the biggest
/// table by far; every byte of it is written twice (log, then table) inside the writer that ingest shares. Readers
/// tell the two forms apart by the first byte (`StoredBlobCodec.isPlain`).
public struct StoredOutcome: Sendable {
    public var result: Data
    /// Nil: the outcome has no grouping.
    public var grouping: String?
    /// `SymbolicationOutcome.touchedBuildIDs` (the result's and the walk's), found here with the encoding (on every
    /// core) instead of in the store's transaction.
    public var touched: [String]

    /// The stored bytes of `outcome`: its JSON (sorted keys, as every stored result; `StoredJSON` writes
    /// `JSONEncoder`'s bytes), compressed by `codec` when that shrinks it.
    public static func encode(_ outcome: SymbolicationOutcome, codec: StoredBlobCodec) -> StoredOutcome {
        let json = StoredJSON.encode(outcome.result)
        let result = codec.compress(Array(json)).map { Data($0) } ?? json
        return StoredOutcome(
            result: result, grouping: outcome.grouping.map { StoredJSON.encode($0.grouping) },
            touched: outcome.touchedBuildIDs)
    }

    /// `encode` for every outcome, in order, split over the cores: made before a store's transaction, because encoding
    /// was more than half of the transaction's time, and the writer is what ingest and the worker share.
    public static func encodeAll(_ outcomes: [SymbolicationOutcome], codec: StoredBlobCodec) async -> [StoredOutcome] {
        let parts = max(1, min(outcomes.count / 64, ProcessInfo.processInfo.activeProcessorCount))
        let encode: @Sendable (SymbolicationOutcome) -> StoredOutcome = { Self.encode($0, codec: codec) }
        guard parts > 1 else { return outcomes.map(encode) }
        let size = (outcomes.count + parts - 1) / parts
        return await withTaskGroup(of: (Int, [StoredOutcome]).self) { group in
            for part in 0..<parts {
                let slice = Array(outcomes[min(outcomes.count, part * size)..<min(outcomes.count, (part + 1) * size)])
                group.addTask { (part, slice.map(encode)) }
            }
            var done = [[StoredOutcome]](repeating: [], count: parts)
            while let (part, encoded) = await group.next() { done[part] = encoded }
            return done.flatMap { $0 }
        }
    }

    /// The largest JSON a stored result may inflate to: far above any real one (the ingest limits bound threads
    /// and frames), and low enough that a damaged blob cannot make a reader allocate without end.
    public static let resultLimit = 64 << 20

    /// The JSON of a stored result: as it is when written plain (before compression, or without a codec), else
    /// inflated by `codec`.
    public static func json(ofStored blob: Data, codec: StoredBlobCodec) throws -> Data {
        if StoredBlobCodec.isPlain(blob) { return blob }
        return Data(try codec.decompress(Array(blob), resultLimit))
    }

    /// What a store answers for a report's result, from its stored state, failure and result bytes (nil: none stored).
    public static func read(state text: String, failure: String?, result blob: Data?, codec: StoredBlobCodec) throws
        -> (state: SymbolicationState, report: SymbolicatedReport?)
    {
        guard let state = SymbolicationState(rawValue: text) else { return (.pending, nil) }
        var report = try blob.map {
            try JSONDecoder().decode(SymbolicatedReport.self, from: json(ofStored: $0, codec: codec))
        }
        // Queued again (a better debug file arrived, or the result was made while one was being stored): the
        // frames shown are the previous result's, but its state says the report is not settled yet.
        if state == .pending { report?.state = .pending }
        if let failure {
            if report == nil { report = SymbolicatedReport(state: state, threads: [], missing: []) }
            report?.failure = failure
        }
        return (state, report)
    }
}
