import Foundation
import Testing

/// Issue #39, finding 1, against the real `faultline` binary on 127.0.0.1 with raw sockets: a body that trickles is
/// cut at its minimum rate, a client that pipelines requests and never reads the answers is dropped, and one address
/// at its share of the connection cap does not stop another from being served.
@Suite(.serialized, .tags(.endToEnd, .timing), .provisioned) struct SlowClientEndToEndTests {
    static let healthz = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

    /// Sends `request` on new connections (from `source`) until one is answered other than `503`, for up to ~10 s
    /// (a slot is released a moment after its client or the server closed it); that answer, or nil.
    static func firstServed(_ request: String, port: Int, source: String? = nil) async throws -> RawResponse? {
        for _ in 0..<100 {
            let probe = try RawConnection(port: port, source: source)
            try probe.send(request)
            if let response = try await probe.readResponse(within: .seconds(10)), response.status != 503 {
                return response
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    @Test func aTricklingBodyIsAnswered408AtItsMinimumRate() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        // Given a 1 s read timeout and the default minimum rate (1 KiB/s after a grace of the timeout).
        let server = try await ServerProcess(folder: folder, arguments: ["--read-timeout-seconds", "1"])
        defer { server.cleanUp() }
        let connection = try RawConnection(port: server.port)
        try connection.send(
            "POST /api/v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(project.ingest)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        // When a byte comes every 200 ms: no pause reaches the timeout, but that is 5 bytes a second.
        var closed = false
        for _ in 0..<50 where !closed {
            try? connection.send(" ")
            closed = try await connection.readUntilClosed(within: .milliseconds(200))
        }
        // Then the body is cut (a little after the 1 s grace; the loop gives it 10 s) with a 408.
        #expect(closed)
        let response = try #require(RawResponse(connection.received))
        #expect(response.status == 408)
        #expect(response.json["error"] as? String == "request_timeout")
    }

    @Test func aSlowButSteadyBodyLongerThanTheTimeoutIsAccepted() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        // A 6 s timeout: this client's pauses must stay below it even on a busy machine (the whole suite on two cores
        // has paused this test's task for 3.4 s).
        let server = try await ServerProcess(folder: folder, arguments: ["--read-timeout-seconds", "6"])
        defer { server.cleanUp() }
        // Given sixteen reports (~60 KB) sent 1.5 KB every 200 ms: ~7.5 KB/s, over ~8 s (more than the timeout).
        let body = Array(Payloads.batch(0..<16).utf8)
        let connection = try RawConnection(port: server.port)
        try connection.send(
            "POST /api/v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(project.ingest)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n")
        let started = ContinuousClock.now
        var last = started
        var longestPause = Duration.zero
        for start in stride(from: 0, to: body.count, by: 1536) {
            let now = ContinuousClock.now
            longestPause = max(longestPause, now - last)
            last = now
            do {
                try connection.send(Array(body[start..<min(body.count, start + 1536)]))
            } catch {
                Issue.record("closed after \(now - started), the longest pause \(longestPause): \(error)")
                return
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        // Then it is stored like any other.
        #expect(ContinuousClock.now - started > .seconds(6))
        let response = try #require(try await connection.readResponse(within: .seconds(20)))
        #expect(response.status == 202)
    }

    @Test func aClientThatPipelinesAndNeverReadsIsDropped() async throws {
        let folder = ServerProcess.newFolder()
        // Given a 4 MiB file in the site folder (served at /big.txt on a public dashboard) and room for one connection.
        let big = 4 << 20
        try FileManager.default.createDirectory(atPath: folder + "/site", withIntermediateDirectories: true)
        try Data(repeating: 0x61, count: big).write(to: URL(fileURLWithPath: folder + "/site/big.txt"))
        let server = try await ServerProcess(
            folder: folder, arguments: ["--read-timeout-seconds", "1", "--max-connections", "1", "--public-dashboard"])
        defer { server.cleanUp() }
        // When a client with a small receive buffer (answered once, so it holds the slot) asks for it eight times in
        // a row and reads nothing more.
        let nonReader = try RawConnection(port: server.port, receiveBuffer: 4096)
        try nonReader.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let first = try #require(try await nonReader.readResponse(within: .seconds(10)))
        #expect(first.status == 200)
        let answered = nonReader.received.count
        try nonReader.send(String(repeating: "GET /big.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: 8))

        // Then it holds the only slot for a while (others get 503)…
        var refusedOnce = false
        for _ in 0..<100 where !refusedOnce {
            let probe = try RawConnection(port: server.port)
            try probe.send(Self.healthz)
            refusedOnce = try await probe.readResponse(within: .seconds(10))?.status == 503
        }
        #expect(refusedOnce)
        // …until the server drops it (a timeout after its output stopped moving): another client is served again,
        // while the non-reader has still read nothing.
        #expect(try await Self.firstServed(Self.healthz, port: server.port)?.status == 200)
        #expect(nonReader.received.count == answered)
        // What it reads now ends before the eight answers: the rest was dropped with the connection. (How much of
        // it arrives first is the kernels' business: a close with the client's requests unread is a reset, which may
        // discard what was in flight.)
        #expect(try await nonReader.readUntilClosed(within: .seconds(30)))
        #expect(nonReader.received.count - answered < 8 * big)
        // (The file is served whole to a client that reads: the answers the non-reader left were big ones.)
        let whole = try await Self.firstServed(
            "GET /big.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(whole?.status == 200)
        #expect(whole?.body.count == big)
    }

    @Test func oneAddressAtItsShareDoesNotStopAnotherFromBeingServed() async throws {
        let folder = ServerProcess.newFolder()
        // A long timeout: the idle connections stay until the test closes them.
        let server = try await ServerProcess(
            folder: folder,
            arguments: [
                "--read-timeout-seconds", "120", "--max-connections", "6", "--max-connections-per-address", "2",
            ])
        defer { server.cleanUp() }
        // Given 127.0.0.1 asking for every slot of the cap, each connection answered once and kept open.
        var held: [RawConnection] = []
        var refused: [RawConnection] = []
        for _ in 0..<6 {
            let connection = try RawConnection(port: server.port, source: "127.0.0.1")
            try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let response = try #require(try await connection.readResponse(within: .seconds(10)))
            if response.status == 200 {
                held.append(connection)
            } else {
                #expect(response.status == 503)
                #expect(response.json["error"] as? String == "too_many_connections")
                #expect((response.json["message"] as? String)?.contains("your address") == true)
                refused.append(connection)
            }
        }
        // Then it got its share, two…
        #expect(held.count == 2)
        #expect(refused.count == 4)
        // …and another address is still served.
        let other = try RawConnection(port: server.port, source: "127.0.0.2")
        try other.send(Self.healthz)
        #expect(try await other.readResponse(within: .seconds(10))?.status == 200)
        // A refused connection is answered and ended at once, and closed by the server within seconds (it is not
        // counted, so it must not stay): what the client sends then is refused by the peer (a reset).
        for connection in refused { #expect(try await connection.readUntilClosed(within: .seconds(10))) }
        var reset = false
        for _ in 0..<100 where !reset {
            do { try refused[0].send("x") } catch { reset = true }
            if !reset { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(reset)

        // Closing the two releases the address's slots.
        held.removeAll()
        #expect(try await Self.firstServed(Self.healthz, port: server.port, source: "127.0.0.1")?.status == 200)
    }
}
