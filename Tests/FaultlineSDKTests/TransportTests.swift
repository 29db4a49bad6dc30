import Foundation
import Synchronization
import Testing

@testable import FaultlineSDK

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A one-connection HTTP server on 127.0.0.1 that reads a request and answers with `reply` (or nothing).
final class OneShotServer: Sendable {
    final class Received: Sendable {
        let bytes = Mutex<[UInt8]>([])
    }
    let listener: Int32
    let port: Int
    let received = Received()
    private let done = DispatchSemaphore(value: 0)

    init(reply: [UInt8]?, holdOpen: Double = 0) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw SDKError(.io, "could not listen") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let received = self.received
        let done = self.done
        Thread.detachNewThread {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { done.signal(); return }
            // Read the head and the body (Content-Length), bounded.
            var buffer = [UInt8](repeating: 0, count: 65536)
            var all: [UInt8] = []
            while all.count < 1 << 20 {
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 { break }
                all += buffer[0..<n]
                let text = String(decoding: all, as: UTF8.self)
                if let head = text.range(of: "\r\n\r\n") {
                    let length =
                        text[..<head.lowerBound].split(separator: "\r\n")
                        .first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                    if all.count >= text[..<head.upperBound].utf8.count + length { break }
                }
            }
            received.bytes.withLock { $0 = all }
            if let reply {
                var sent = 0
                while sent < reply.count {
                    let n = reply[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    if n <= 0 { break }
                    sent += n
                }
            }
            if holdOpen > 0 { Thread.sleep(forTimeInterval: holdOpen) }
            close(fd)
            done.signal()
        }
    }

    var request: String { String(decoding: received.bytes.withLock { $0 }, as: UTF8.self) }

    func finish() {
        done.wait()
        close(listener)
    }
}

@Suite struct TransportTests {
    @Test func postsTheBodyWithItsHeadersAndReadsABoundedAnswer() async throws {
        let big = String(repeating: "x", count: 5 << 20)
        let reply = Array(
            "HTTP/1.1 202 Accepted\r\nContent-Length: \(big.utf8.count)\r\nX-Custom-Header: Value\r\nRetry-After: 7\r\nConnection: close\r\n\r\n\(big)"
                .utf8)
        let server = try OneShotServer(reply: reply)
        let body = try Gzip.compress(Array(#"{"hello":"world"}"#.utf8))
        let answer = try await URLSessionTransport().post(
            url: "http://127.0.0.1:\(server.port)/api/v1/reports",
            headers: [("Authorization", "Bearer k"), ("Content-Encoding", "gzip"), ("User-Agent", Uploader.userAgent)],
            body: body, timeout: 30)
        server.finish()
        #expect(answer.status == 202)
        #expect(answer.headers["x-custom-header"] == "Value")
        #expect(answer.headers["retry-after"] == "7")
        #expect(answer.body.count == URLSessionTransport.maxAnswerBytes)
        let request = server.request
        #expect(request.hasPrefix("POST /api/v1/reports HTTP/1.1\r\n"))
        #expect(request.contains("Authorization: Bearer k\r\n"))
        #expect(request.lowercased().contains("content-encoding: gzip\r\n"))
        #expect(request.contains("User-Agent: faultline-swift/"))
        let sentBody = server.received.bytes.withLock { $0 }.suffix(body.count)
        #expect(Array(sentBody) == body)
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let server = try OneShotServer(reply: nil, holdOpen: 6)
        do {
            _ = try await URLSessionTransport().post(
                url: "http://127.0.0.1:\(server.port)/x", headers: [], body: [1, 2, 3], timeout: 1)
            Issue.record("an answer came from a silent server")
        } catch let error as SDKError {
            #expect(error.code == .transport)
        }
        server.finish()
    }

    @Test func nothingListeningIsATransportError() async throws {
        // A port that was just free: bind, note it, close.
        let server = try OneShotServer(reply: nil)
        let port = server.port
        close(server.listener)
        await #expect(throws: SDKError.self) {
            _ = try await URLSessionTransport().post(
                url: "http://127.0.0.1:\(port)/x", headers: [], body: [], timeout: 5)
        }
        await #expect(throws: SDKError.self) {
            _ = try await URLSessionTransport().post(url: "ftp://127.0.0.1/x", headers: [], body: [], timeout: 5)
        }
    }
}
