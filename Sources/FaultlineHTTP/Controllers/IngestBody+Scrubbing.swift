import FaultlineCore
import Formats

extension IngestBody {
    /// What to store: the client's own bytes (its gzip kept) when scrubbing changed nothing, else the scrubbed
    /// bytes compressed once — never the original bytes, which may hold what was scrubbed.
    func storedPayload(scrubbed: [UInt8]?) throws -> StoredPayload {
        guard let scrubbed else { return try storedPayload() }
        return StoredPayload(bytes: try BodyDecoding.deflateForStorage(scrubbed), encoding: .deflate, inflatedSize: scrubbed.count)
    }
}
