import Foundation
import Glibc
import Synchronization

/// A blocking HTTP/1.1 listener on 127.0.0.1 (an ephemeral port) that records each request and answers `200` with a
/// fixed body, a thread per keep-alive connection. A body comes with a Content-Length or chunked (Crashpad's upload);
/// a chunked body is recorded with its framing removed. It serves until the process ends.
public final class LoopbackListener: Sendable {
    /// One request as it arrived: the headers' names are lower case; the body is still in its `Content-Encoding`.
    public struct Request: Sendable {
        public var method: String
        /// The request target: path and query.
        public var target: String
        public var headers: [String: String]
        /// Whether the body came with `Transfer-Encoding: chunked`.
        public var chunked: Bool
        public var body: [UInt8]
    }

    public let port: UInt16
    let socket: Int32
    let answer: [UInt8]
    let recorded = Mutex<[Request]>([])

    /// Listens, and serves on a thread of its own.
    /// - Parameters:
    ///   - response: the body of every answer.
    ///   - contentType: its Content-Type.
    public init(response: String = "{}", contentType: String = "application/json") throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard socket >= 0, bound, listen(socket, 16) == 0 else {
            if socket >= 0 { close(socket) }
            throw CommandError(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        self.socket = socket
        port = UInt16(bigEndian: address.sin_port)
        answer = Array(
            "HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nContent-Length: \(response.utf8.count)\r\n\r\n\(response)"
                .utf8)
        Thread { [self] in serve() }.start()
    }

    /// The requests answered so far, in the order they were read.
    public func requests() -> [Request] { recorded.withLock { $0 } }

    /// The first request, once it has come.
    /// - Throws: `CommandError` when none came within `seconds`.
    public func firstRequest(within seconds: Int) throws -> Request {
        for _ in 0..<(seconds * 100) {
            if let first = recorded.withLock({ $0.first }) { return first }
            usleep(10_000)
        }
        throw CommandError(description: "no request within \(seconds) s")
    }

    private func serve() {
        while true {
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else { return }
            // A thread per connection: a client keeps connections open and may use two at once.
            Thread { [self] in serve(connection) }.start()
        }
    }

    private func serve(_ connection: Int32) {
        var buffer: [UInt8] = []
        while let request = Self.read(connection, &buffer) {
            recorded.withLock { $0.append(request) }
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        close(connection)
    }

    /// One request from `connection` (bytes left over stay in `buffer`); nil at the end of the connection.
    static func read(_ connection: Int32, _ buffer: inout [UInt8]) -> Request? {
        func fill() -> Bool {
            var reader = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&reader, 1, 30_000) == 1 else { return false }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            buffer += chunk[0..<n]
            return true
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            end = (0..<max(0, buffer.count - 3)).first { buffer[$0..<$0 + 4].elementsEqual(separator) }
            if end == nil, !fill() { return nil }
        }
        let head = String(decoding: buffer[0..<end!], as: UTF8.self).components(separatedBy: "\r\n")
        let line = head[0].split(separator: " ")
        var headers: [String: String] = [:]
        for field in head.dropFirst() {
            guard let colon = field.firstIndex(of: ":") else { continue }
            headers[field[..<colon].lowercased()] = field[field.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let bodyStart = end! + 4
        let chunked = headers["transfer-encoding"]?.lowercased() == "chunked"
        var body: [UInt8]
        var consumed: Int
        if chunked {
            while true {
                if let (whole, used) = dechunk(buffer[bodyStart...]) {
                    (body, consumed) = (whole, used)
                    break
                }
                if !fill() { return nil }
            }
        } else {
            let length = Int(headers["content-length"] ?? "0") ?? 0
            while buffer.count < bodyStart + length { if !fill() { return nil } }
            (body, consumed) = (Array(buffer[bodyStart..<bodyStart + length]), length)
        }
        buffer.removeFirst(bodyStart + consumed)
        return Request(
            method: line.count > 0 ? String(line[0]) : "", target: line.count > 1 ? String(line[1]) : "",
            headers: headers, chunked: chunked, body: body)
    }

    /// A `Transfer-Encoding: chunked` body (hex size lines, data, CRLF, until a zero-size chunk and its CRLF) and the
    /// bytes it took; nil while it is incomplete (or broken, which the read then ends on).
    static func dechunk(_ bytes: ArraySlice<UInt8>) -> (body: [UInt8], consumed: Int)? {
        var out: [UInt8] = []
        var at = bytes.startIndex
        while true {
            guard
                let lineEnd = (at..<max(at, bytes.endIndex - 1)).first(where: {
                    bytes[$0] == 13 && bytes[$0 + 1] == 10
                }),
                let size = Int(
                    String(decoding: bytes[at..<lineEnd], as: UTF8.self).split(separator: ";").first ?? "", radix: 16)
            else { return nil }
            at = lineEnd + 2
            guard at + size + 2 <= bytes.endIndex else { return nil }
            if size == 0 { return (out, at + 2 - bytes.startIndex) }  // no trailers: the last chunk, then CRLF
            out += bytes[at..<(at + size)]
            at += size + 2
        }
    }
}
