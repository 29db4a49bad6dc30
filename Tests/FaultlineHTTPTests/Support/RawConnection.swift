import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to the server on 127.0.0.1, for what an HTTP client library will not do: send half a
/// header line and stall, lie about Content-Length, forge Host, break the chunked framing.
final class RawConnection: @unchecked Sendable {
    // @unchecked: used by one test at a time, never concurrently.
    let fd: Int32
    private(set) var received: [UInt8] = []

    /// - Parameters:
    ///   - source: the local address to connect from (another loopback address, such as `127.0.0.2`, is another client
    ///     to the server); nil: the system's choice.
    ///   - receiveBuffer: `SO_RCVBUF` in bytes, set before connecting (a small one makes a client that does not read
    ///     fill up quickly); nil: the system's.
    init(port: Int, source: String? = nil, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        if var size = receiveBuffer {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                Glibc.close(fd)
                throw TestFailure("bind(\(source)) failed: errno \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw TestFailure("connect() failed: errno \(errno)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { usleep(1000); continue }
                throw TestFailure("send() failed: errno \(errno)")
            }
            offset += n
        }
    }

    /// Reads what the server sends until it closes the connection or `limit` passes; true when it closed
    /// (an orderly close or a reset).
    func readUntilClosed(within limit: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try readAvailable() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        // One last look: on a busy machine the sleep above may end long after the deadline.
        return try readAvailable()
    }

    /// Reads until `received` holds a whole response head and `bodyBytes` after it (or the server closes).
    func readResponse(within limit: Duration) async throws -> RawResponse? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let closed = try readAvailable()
            if let response = RawResponse(received), response.complete || closed { return response }
            if closed { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
        // One last look: on a busy machine the sleep above may end long after the deadline.
        _ = try readAvailable()
        return RawResponse(received)
    }

    /// Reads what is there; true when the peer has closed.
    private func readAvailable() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n > 0 {
                received.append(contentsOf: buffer[0..<n])
                continue
            }
            if n == 0 { return true }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return false }
            if errno == ECONNRESET { return true }
            throw TestFailure("recv() failed: errno \(errno)")
        }
    }

    var text: String { String(decoding: received, as: UTF8.self) }
}

/// One HTTP/1.1 response as read off a raw connection (Content-Length bodies only).
struct RawResponse {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]
    let complete: Bool

    init?(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let headLength = text[..<end.upperBound].utf8.count
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        self.status = status
        self.headers = headers
        body = Array(bytes[headLength..<min(bytes.count, headLength + length)])
        complete = bytes.count >= headLength + length
    }

    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
}
