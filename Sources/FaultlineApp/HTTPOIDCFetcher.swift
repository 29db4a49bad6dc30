import AsyncHTTPClient
import NIOCore
import Pipeline
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Single sign-on's calls to the OpenID provider (discovery, key set, token endpoint) with AsyncHTTPClient.
///
/// Redirects are not followed (a discovery document or a token answer comes from the URL named, or not at all), each
/// answer is read up to the caller's limit and no further, and every call has a deadline. The client is made at the
/// first call, so a server without single sign-on opens nothing; ``Closer`` shuts it down with the server.
public final class HTTPOIDCFetcher: OIDCFetching {
    private let state = Mutex<(client: HTTPClient?, closed: Bool)>((nil, false))
    let timeout: TimeAmount

    public init(timeout: TimeAmount = .seconds(10)) {
        self.timeout = timeout
    }

    var client: HTTPClient? {
        state.withLock { state in
            if state.closed { return nil }
            if let client = state.client { return client }
            var configuration = HTTPClient.Configuration()
            configuration.timeout.connect = .seconds(5)
            configuration.redirectConfiguration = .disallow
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            state.client = client
            return client
        }
    }

    public func get(_ url: String, maxBytes: Int) async throws -> OIDCResponse {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        return try await execute(request, maxBytes: maxBytes)
    }

    public func postForm(
        _ url: String, fields: [(String, String)], basic: (user: String, password: String)?, maxBytes: Int
    ) async throws -> OIDCResponse {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        if let basic {
            let credentials = Array("\(basic.user):\(basic.password)".utf8)
            request.headers.add(name: "Authorization", value: "Basic " + Data(credentials).base64EncodedString())
        }
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(fields)))
        return try await execute(request, maxBytes: maxBytes)
    }

    func execute(_ request: HTTPClientRequest, maxBytes: Int) async throws -> OIDCResponse {
        var request = request
        request.headers.add(name: "User-Agent", value: "Faultline")
        guard let client else { throw CancellationError() }
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: maxBytes)
        return OIDCResponse(status: Int(response.status.code), body: Array(buffer: body))
    }

    /// Closes the client's connections.
    public func shutdown() async {
        let client = state.withLock { state in
            state.closed = true
            return state.client
        }
        try? await client?.shutdown()
    }

    /// Runs beside the server and shuts the fetcher's client down when the server stops.
    struct Closer: Service {
        let fetcher: HTTPOIDCFetcher
        func run() async throws {
            try? await gracefulShutdown()
            await fetcher.shutdown()
        }
    }
}
