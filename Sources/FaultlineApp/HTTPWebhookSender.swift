import AsyncHTTPClient
import NIOCore
import Pipeline
import Synchronization

/// Webhook POSTs with AsyncHTTPClient. The dispatcher decides about retries, so the client's own retrying of
/// refused connections is off (it would otherwise hold an attempt until its deadline). The client is made at the
/// first POST: a sender that never posts (a server without webhooks, an in-process test) has nothing to shut down.
public final class HTTPWebhookSender: WebhookSending {
    private let state = Mutex<(client: HTTPClient?, closed: Bool)>((nil, false))
    let timeout: TimeAmount

    public init(timeout: TimeAmount = .seconds(10)) {
        self.timeout = timeout
    }

    /// The client, made at the first use; nil once shut down.
    var client: HTTPClient? {
        state.withLock { state in
            if state.closed { return nil }
            if let client = state.client { return client }
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.timeout.connect = .seconds(5)
            configuration.redirectConfiguration = .disallow
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            state.client = client
            return client
        }
    }

    /// - Throws: a ``WebhookFailure`` class, never the client's error (its text is not stored or shown).
    public func post(url: String, body: [UInt8]) async throws -> Int {
        do {
            return try await send(url: url, body: body)
        } catch let error as HTTPClientError {
            switch error {
            case .invalidURL, .emptyHost, .emptyScheme: throw WebhookFailure.invalidURL
            case .connectTimeout, .readTimeout, .deadlineExceeded, .writeTimeout, .tlsHandshakeTimeout:
                throw WebhookFailure.timeout
            default: throw WebhookFailure.connectionFailed
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw WebhookFailure.connectionFailed
        }
    }

    func send(url: String, body: [UInt8]) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Faultline")
        request.body = .bytes(ByteBuffer(bytes: body))
        guard let client else { throw CancellationError() }  // shut down: the server is stopping
        let response = try await client.execute(request, timeout: timeout)
        // Read (and drop) the answer so the connection can be reused; only the status is kept.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        return Int(response.status.code)
    }

    /// Closes the client's connections.
    public func shutdown() async {
        let client = state.withLock { state in
            state.closed = true
            return state.client
        }
        try? await client?.shutdown()
    }
}
