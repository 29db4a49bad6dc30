import AsyncHTTPClient
import NIOCore

/// One GET of a running server's read API with a bearer token: how a CLI command asks a server it has no database of
/// (`faultline gate --server URL` on a CI runner). Redirects are not followed (a token is never sent elsewhere).
public enum ServerRead {
    /// The server's answer: its status and at most ``maxBody`` bytes of its body.
    public struct Answer: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    /// The largest answer read (a gate's JSON is a few kilobytes).
    public static let maxBody = 4 << 20

    /// GETs `url` with `Authorization: Bearer token`.
    /// - Throws: AsyncHTTPClient's error when the server cannot be reached or answers too slowly.
    public static func get(_ url: String, token: String, timeout: TimeAmount = .seconds(30)) async throws -> Answer {
        try await send(url, body: nil, token: token, timeout: timeout)
    }

    /// POSTs `body` (text) to `url` with `Authorization: Bearer token`: a read that takes its question in the body
    /// (`faultline grouping try --server URL` sends the rules), changing nothing.
    /// - Throws: AsyncHTTPClient's error when the server cannot be reached or answers too slowly.
    public static func post(_ url: String, body: [UInt8], token: String, timeout: TimeAmount = .seconds(120))
        async throws -> Answer
    {
        try await send(url, body: body, token: token, timeout: timeout)
    }

    static func send(_ url: String, body: [UInt8]?, token: String, timeout: TimeAmount) async throws -> Answer {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout.connect = .seconds(10)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            var request = HTTPClientRequest(url: url)
            request.method = body == nil ? .GET : .POST
            if let body {
                request.body = .bytes(ByteBuffer(bytes: body))
                request.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            }
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "User-Agent", value: "faultline-cli")
            let response = try await client.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: maxBody)
            try await client.shutdown()
            return Answer(status: Int(response.status.code), body: Array(body.readableBytesView))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}
