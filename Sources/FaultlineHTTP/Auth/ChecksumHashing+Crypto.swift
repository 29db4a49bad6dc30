import Crypto
import FaultlineCore
import Foundation
import Pipeline

/// SHA-1 with swift-crypto: the checksums sentry-cli names chunks and files by. (SHA-1 is what the client
/// protocol fixes; it identifies uploads, it does not protect anything.)
public struct SHA1ChecksumHasher: ChecksumHashing {
    public init() {}

    public func sha1() -> any SHA1Digesting { Digester() }

    public func sha1(ofFileAt path: String) throws -> ChunkChecksum {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var hash = Insecure.SHA1()
        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
            hash.update(data: data)
        }
        return ChunkChecksum(digest: Array(hash.finalize()))!
    }

    /// One computation; used by one task at a time (the service creates it, feeds it and reads it).
    final class Digester: SHA1Digesting {
        var hash = Insecure.SHA1()
        func update(_ bytes: [UInt8]) { hash.update(data: bytes) }
        func finalize() -> ChunkChecksum { ChunkChecksum(digest: Array(hash.finalize()))! }
    }
}
