import Crypto
import FaultlineCore
import Foundation

/// SHA-256 with swift-crypto: how debug-file blobs are named and deduplicated (see `SQLiteDebugFileStore`).
public struct SHA256ContentHasher: ContentHashing {
    public init() {}

    public func sha256() -> any ContentDigesting { Digester() }

    public func sha256(ofFileAt path: String) throws -> ContentHash {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var hash = SHA256()
        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
            hash.update(data: data)
        }
        return ContentHash(digest: Array(hash.finalize()))!
    }

    /// One computation; used by one task at a time (the upload that created it feeds it and reads it).
    final class Digester: ContentDigesting {
        var hash = SHA256()
        func update(_ bytes: [UInt8]) { hash.update(data: bytes) }
        func finalize() -> ContentHash { ContentHash(digest: Array(hash.finalize()))! }
    }
}
