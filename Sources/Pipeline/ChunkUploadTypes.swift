import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The inputs, outputs, limits and ports of `ChunkUploadService`.

/// SHA-1, as sentry-cli names chunks and files by it. Passed in: the hash implementation (swift-crypto)
/// lives in the HTTP module, like the secret hasher.
public protocol ChecksumHashing: Sendable {
    /// A new, empty SHA-1 computation.
    func sha1() -> any SHA1Digesting
    /// The SHA-1 of a file on disk, read in pieces.
    func sha1(ofFileAt path: String) throws -> ChunkChecksum
}

/// One SHA-1 computation fed piece by piece.
public protocol SHA1Digesting: AnyObject {
    func update(_ bytes: [UInt8])
    func finalize() -> ChunkChecksum
}

extension ChecksumHashing {
    /// The SHA-1 of `bytes`.
    public func sha1(_ bytes: [UInt8]) -> ChunkChecksum {
        let digest = sha1()
        digest.update(bytes)
        return digest.finalize()
    }
}

/// What the server tells sentry-cli in `GET …/chunk-upload/` and then holds it to.
public struct ChunkUploadLimits: Sendable, Equatable {
    /// Bytes of one chunk before compression (sentry-cli cuts files into pieces of this size).
    public var chunkSize: Int
    /// Most chunks in one request.
    public var chunksPerRequest: Int
    /// Most bytes of chunks in one request. sentry-cli batches by uncompressed size, so the request body
    /// itself is allowed a little more (see `requestBodyLimit`).
    public var maxRequestBytes: Int
    /// Requests sentry-cli may run in parallel.
    public var concurrency: Int
    /// Most files in one assemble request.
    public var maxFilesPerAssemble: Int
    /// Chunks unused for this long are removed by the sweep (abandoned uploads, failed assembles).
    public var chunkLifetime: TimeInterval
    /// How many times one chunk may be listed in one file. sentry-cli lists a chunk twice only when the file
    /// holds the same `chunkSize` bytes twice at chunk boundaries (long runs of one byte); a list that repeats a
    /// chunk more is refused before anything is written (see `ChunkAssemblyPlan`).
    public var maxChunkRepeats: Int
    /// How many files of one project may be assembled at once; past it, a file is answered `assembling` and
    /// sentry-cli asks again. sentry-cli itself asks for one file at a time.
    public var maxParallelAssembles: Int

    public init(
        chunkSize: Int = 8 << 20, chunksPerRequest: Int = 64, maxRequestBytes: Int = 32 << 20, concurrency: Int = 4,
        maxFilesPerAssemble: Int = 10_000, chunkLifetime: TimeInterval = 86_400, maxChunkRepeats: Int = 8,
        maxParallelAssembles: Int = 2
    ) {
        self.chunkSize = chunkSize
        self.chunksPerRequest = chunksPerRequest
        self.maxRequestBytes = maxRequestBytes
        self.concurrency = concurrency
        self.maxFilesPerAssemble = maxFilesPerAssemble
        self.chunkLifetime = chunkLifetime
        self.maxChunkRepeats = maxChunkRepeats
        self.maxParallelAssembles = maxParallelAssembles
    }

    /// The bounds of `ChunkAssemblyPlan` for files of at most `maxFileBytes`.
    public func assemblyLimits(maxFileBytes: UInt64) -> ChunkAssemblyPlan.Limits {
        ChunkAssemblyPlan.Limits(
            maxFileBytes: maxFileBytes, chunkSize: UInt64(max(1, chunkSize)), maxRepeats: maxChunkRepeats,
            maxParallel: maxParallelAssembles)
    }

    /// The hard limit on a chunk request's body: `maxRequestBytes` plus room for multipart headers and
    /// gzip's worst-case growth of incompressible chunks (sentry-cli fills a request up to
    /// `maxRequestBytes` of *uncompressed* chunks).
    public var requestBodyLimit: Int { maxRequestBytes + (1 << 20) }
}

/// One chunk as received: the checksum the client named it by, and its (inflated) bytes.
public struct UploadedChunk: Sendable, Equatable {
    public var claimed: ChunkChecksum
    public var bytes: [UInt8]
    public init(claimed: ChunkChecksum, bytes: [UInt8]) {
        self.claimed = claimed
        self.bytes = bytes
    }
}

/// What one chunk request stored.
public struct ChunkReceipt: Sendable, Equatable {
    /// Chunks that were new.
    public var stored: Int
    /// Chunks the project had already.
    public var duplicates: Int
}

/// One file sentry-cli asks to be assembled (a value of the assemble request's JSON object).
public struct DifAssembleRequest: Sendable, Equatable {
    /// The SHA-1 of the whole file.
    public var checksum: ChunkChecksum
    /// The file's name as the client gave it; for people only, never a path.
    public var name: String
    /// The debug id the client read from the file.
    public var debugID: String?
    /// The file's chunks in order.
    public var chunks: [ChunkChecksum]
    public init(checksum: ChunkChecksum, name: String, debugID: String?, chunks: [ChunkChecksum]) {
        self.checksum = checksum
        self.name = name
        self.debugID = debugID
        self.chunks = chunks
    }
}

/// The answer for one file of an assemble request.
public struct DifAssembleResult: Sendable, Equatable {
    /// sentry-cli's states: `not_found` (upload `missingChunks`, then ask again), `created`/`assembling`
    /// (ask again), `ok` (stored), `error` (failed, see `detail`).
    public enum State: String, Sendable {
        case notFound = "not_found", created, assembling, ok, error
    }
    public var checksum: ChunkChecksum
    public var state: State
    public var missingChunks: [ChunkChecksum]
    public var detail: String?
    public var dif: DifDescription?

    public init(
        checksum: ChunkChecksum, state: State, missingChunks: [ChunkChecksum] = [], detail: String? = nil,
        dif: DifDescription? = nil
    ) {
        self.checksum = checksum
        self.state = state
        self.missingChunks = missingChunks
        self.detail = detail
        self.dif = dif
    }
}

/// Why a chunk request or an assemble request was refused as a whole. The HTTP module maps codes to statuses.
public struct ChunkUploadError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// A chunk's bytes do not hash to the name it was sent under (400).
        case checksumMismatch = "checksum_mismatch"
        /// A chunk is larger than the chunk size (413).
        case chunkTooLarge = "chunk_too_large"
        /// More chunks in one request, or files in one assemble, than allowed (400).
        case tooMany = "too_many"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code.rawValue): \(message)" }
}
