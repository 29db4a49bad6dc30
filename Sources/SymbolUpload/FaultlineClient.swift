import AsyncHTTPClient
import FaultlineCore
import Formats
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Errors of `symupload`'s conversation with the server.
public struct UploadError: Error, CustomStringConvertible, Sendable {
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    public var description: String { message }
}

/// The debug-file API of a Faultline server, as `symupload` uses it: the missing-files question and
/// streamed, gzip'd uploads, with retries and backoff on 429, 5xx and connection failures.
public struct FaultlineClient: Sendable {
    let client: HTTPClient
    let base: String
    let token: String
    let attempts: Int
    let initialBackoff: Double

    public init(client: HTTPClient, server: String, token: String, attempts: Int = 4, initialBackoff: Double = 1) {
        self.client = client
        self.base = server.hasSuffix("/") ? String(server.dropLast()) : server
        self.token = token
        self.attempts = max(1, attempts)
        self.initialBackoff = initialBackoff
    }

    /// Asks which kinds of which build-ids the server lacks.
    public func missing(_ wants: [BuildID: Set<DebugFileKind>]) async throws -> [BuildID: Set<DebugFileKind>] {
        struct Want: Encodable {
            var build_id: String
            var kinds: [String]
        }
        struct Body: Encodable { var files: [Want] }
        struct Answer: Decodable {
            struct Missing: Decodable {
                var build_id: String
                var kinds: [String]
            }
            var missing: [Missing]
        }
        var out: [BuildID: Set<DebugFileKind>] = [:]
        // In pages, so that a huge tree does not make one huge request.
        let all = wants.sorted { $0.key < $1.key }
        for page in stride(from: 0, to: all.count, by: 5000) {
            let body = Body(
                files: all[page..<min(page + 5000, all.count)].map {
                    Want(build_id: $0.key.rawValue, kinds: $0.value.sorted().map(\.rawValue))
                })
            let bytes = try JSONEncoder().encode(body)
            let (status, data) = try await send(.POST, "/api/v1/debug-files/missing", contentType: "application/json") {
                .bytes(ByteBuffer(bytes: bytes))
            }
            guard status == 200 else { throw Self.failure(status, data, "asking which files are missing") }
            guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(data)) else {
                throw UploadError(
                    message: "the server's answer to the missing-files question is not understood", status: status)
            }
            for m in answer.missing {
                guard let id = BuildID(m.build_id) else { continue }
                out[id, default: []].formUnion(m.kinds.compactMap(DebugFileKind.init(rawValue:)))
            }
        }
        return out
    }

    /// Uploads `file`, gzip'd while it is read; `progress` gets the bytes of the file read so far.
    public func upload(_ file: LocalDebugFile, progress: @escaping @Sendable (UInt64) -> Void) async throws {
        guard let id = file.facts.buildID else {
            throw UploadError(message: "\(file.label) has no build-id", status: nil)
        }
        let name = file.uploadName
        let query = name.utf8.map { b -> String in
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                return String(UnicodeScalar(b))
            default:
                return "%" + String(b, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }.joined()
        let (status, data) = try await send(.PUT, "/api/v1/debug-files/\(id.rawValue)?name=\(query)", gzip: true) {
            .stream(
                GzipFileChunks(path: file.path, start: file.offset, count: file.size, progress: progress),
                length: .unknown)
        }
        guard status == 201 || status == 200 else { throw Self.failure(status, data, "uploading \(file.label)") }
    }

    func send(
        _ method: HTTPMethod, _ path: String, contentType: String? = nil, gzip: Bool = false,
        body: () -> HTTPClientRequest.Body
    ) async throws -> (Int, [UInt8]) {
        var delay = initialBackoff
        var lastError: (any Error)?
        for attempt in 1...attempts {
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "User-Agent", value: "symupload/1")
            if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            if gzip { request.headers.add(name: "Content-Encoding", value: "gzip") }
            request.body = body()
            do {
                let response = try await client.execute(request, timeout: .minutes(30))
                let data = Array(try await response.body.collect(upTo: 16 << 20).readableBytesView)
                let status = Int(response.status.code)
                let retryable = status == 429 || status == 502 || status == 503 || status == 504
                if retryable, attempt < attempts {
                    let retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init) ?? delay
                    try await Task.sleep(for: .seconds(min(max(retryAfter, delay), 60)))
                    delay *= 2
                    continue
                }
                return (status, data)
            } catch let error as UploadError {
                throw error
            } catch {
                lastError = error
                if attempt < attempts {
                    try await Task.sleep(for: .seconds(delay))
                    delay *= 2
                }
            }
        }
        throw UploadError(message: "cannot reach \(base): \(lastError.map { "\($0)" } ?? "unknown error")", status: nil)
    }

    static func failure(_ status: Int, _ data: [UInt8], _ doing: String) -> UploadError {
        struct Body: Decodable {
            var error: String?
            var message: String?
        }
        let body = try? JSONDecoder().decode(Body.self, from: Data(data))
        let detail = body?.message.map { ": \($0)" } ?? ""
        let hint = status == 401 ? " (check the upload token)" : ""
        return UploadError(
            message: "\(doing) failed with HTTP \(status)\(body?.error.map { " \($0)" } ?? "")\(detail)\(hint)",
            status: status)
    }
}

/// A range of a file (the whole file, or one slice of a universal Mach-O file) read in 1 MiB pieces and
/// gzip'd on the fly, as an upload body.
struct GzipFileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let path: String
    /// Where the range starts and how many bytes it has.
    let start: UInt64
    let count: UInt64
    let progress: @Sendable (UInt64) -> Void

    struct Iterator: AsyncIteratorProtocol {
        let source: FileByteSource?
        let deflater: StreamingDeflater?
        let start: UInt64
        let count: UInt64
        let progress: @Sendable (UInt64) -> Void
        /// Bytes of the range read so far.
        var offset: UInt64 = 0
        var done = false

        mutating func next() async throws -> ByteBuffer? {
            guard let source, let deflater else { throw UploadError(message: "cannot read the file", status: nil) }
            // The file may have changed since it was scanned: read only what is still there.
            guard start <= source.size else {
                throw UploadError(message: "the file became shorter since it was read", status: nil)
            }
            let end = start + Swift.min(count, source.size - start)
            while !done {
                let piece = Int(Swift.min(UInt64(1 << 20), end - start - offset))
                let bytes = piece > 0 ? try source.bytes(at: start + offset, count: piece) : []
                offset += UInt64(piece)
                progress(offset)
                let last = start + offset >= end
                let out = try deflater.compress(bytes, finish: last)
                if last { done = true }
                if !out.isEmpty { return ByteBuffer(bytes: out) }
            }
            return nil
        }
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(
            source: try? FileByteSource(path: path), deflater: try? StreamingDeflater(), start: start, count: count,
            progress: progress)
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
