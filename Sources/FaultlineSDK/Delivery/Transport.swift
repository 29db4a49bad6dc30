import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange; the seam tests use to script answers, and the only place that knows URLSession.
package protocol HTTPTransport: Sendable {
    /// Sends `body` (already gzip-compressed: `Content-Encoding: gzip`) with `headers`; answers the status and
    /// the response headers (lowercased names) and body, or throws `transport` when no answer came.
    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Double) async throws -> HTTPAnswer
}

package struct HTTPAnswer: Sendable {
    package var status: Int
    /// Lowercased header names.
    package var headers: [String: String]
    package var body: [UInt8]

    package init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// The transport apps use: the toolchain's `URLSession`. On Linux that is FoundationNetworking over libcurl, so
/// HTTPS (the system's CA store) and proxies (`https_proxy`, `http_proxy`, `no_proxy`) work as they do for curl.
///
/// Ephemeral: no cookies, no cache, no credentials kept. Redirects are followed by URLSession. What the server
/// answers is hostile like any input: at most ``maxAnswerBytes`` of a body are kept, and a request that has not
/// finished `timeout` seconds after it started is cancelled, however slowly the server keeps it alive.
package final class URLSessionTransport: HTTPTransport {
    /// The answer bytes kept (the server's answers are small JSON objects).
    package static let maxAnswerBytes = 64 * 1024

    private let session: URLSession
    private let exchanges: Exchanges

    package init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 2
        let exchanges = Exchanges()
        self.exchanges = exchanges
        session = URLSession(configuration: configuration, delegate: exchanges, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    package func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Double) async throws
        -> HTTPAnswer
    {
        guard let target = URL(string: url), target.scheme == "http" || target.scheme == "https" else {
            throw SDKError(.transport, "not an http(s) URL: \(url)")
        }
        let seconds = timeout.isFinite && timeout > 0 ? min(timeout, 3600) : 30
        var request = URLRequest(url: target)
        request.httpMethod = "POST"
        request.timeoutInterval = seconds
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = Data(body)
        let task = session.dataTask(with: request)
        let result: Result<(HTTPURLResponse, [UInt8]), SDKError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                exchanges.start(task, continuation: continuation)
                task.resume()
                // The hard limit: URLSession's own timeout only notices a connection that has gone quiet.
                let deadline = Task { [weak task] in
                    try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000) + 500))
                    task?.cancel()
                }
                exchanges.onEnd(task) { deadline.cancel() }
            }
        } onCancel: {
            task.cancel()
        }
        let (response, data) = try result.get()
        var lowered: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String else { continue }
            lowered[name.lowercased()] = (value as? String) ?? "\(value)"
        }
        return HTTPAnswer(status: response.statusCode, headers: lowered, body: data)
    }

    /// The delegate: collects each task's answer (bounded) and resumes its caller once, when the task ends.
    final class Exchanges: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // @unchecked: every stored property is behind `lock`.
        private struct Exchange {
            var continuation: CheckedContinuation<Result<(HTTPURLResponse, [UInt8]), SDKError>, Never>
            var response: HTTPURLResponse?
            var body: [UInt8] = []
            var onEnd: [@Sendable () -> Void] = []
            var host: String
        }
        private let lock = NSLock()
        private var exchanges: [Int: Exchange] = [:]

        func start(
            _ task: URLSessionTask,
            continuation: CheckedContinuation<Result<(HTTPURLResponse, [UInt8]), SDKError>, Never>
        ) {
            lock.withLock {
                exchanges[task.taskIdentifier] = Exchange(
                    continuation: continuation, host: task.originalRequest?.url?.host ?? "the server")
            }
        }

        func onEnd(_ task: URLSessionTask, _ action: @escaping @Sendable () -> Void) {
            let ended = lock.withLock { () -> Bool in
                guard exchanges[task.taskIdentifier] != nil else { return true }
                exchanges[task.taskIdentifier]?.onEnd.append(action)
                return false
            }
            if ended { action() }
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            lock.withLock { exchanges[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            lock.withLock {
                guard var exchange = exchanges[dataTask.taskIdentifier] else { return }
                let room = URLSessionTransport.maxAnswerBytes - exchange.body.count
                if room > 0 {
                    exchange.body.append(contentsOf: data.prefix(room))
                    exchanges[dataTask.taskIdentifier] = exchange
                }
            }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let exchange = lock.withLock({ exchanges.removeValue(forKey: task.taskIdentifier) }) else { return }
            for action in exchange.onEnd { action() }
            if let error {
                exchange.continuation.resume(
                    returning: .failure(
                        SDKError(.transport, "no answer from \(exchange.host): \(error.localizedDescription)")))
            } else if let response = exchange.response ?? (task.response as? HTTPURLResponse) {
                exchange.continuation.resume(returning: .success((response, exchange.body)))
            } else {
                exchange.continuation.resume(
                    returning: .failure(SDKError(.transport, "not an HTTP answer from \(exchange.host)")))
            }
        }
    }
}
