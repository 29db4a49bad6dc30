import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange; the seam tests use to script answers, and the only place that knows URLSession.
///
/// CONTRACT (owner: sdk-delivery helper).
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
/// Ephemeral: no cookies, no cache, no credentials kept. Redirects are followed by URLSession.
package final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    package init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 2
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    package func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Double) async throws -> HTTPAnswer {
        guard let target = URL(string: url) else { throw SDKError(.transport, "not a URL: \(url)") }
        var request = URLRequest(url: target)
        request.httpMethod = "POST"
        request.timeoutInterval = timeout.isFinite && timeout > 0 ? timeout : 30
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = Data(body)
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw SDKError(.transport, "no answer from \(target.host ?? url): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else { throw SDKError(.transport, "not an HTTP answer from \(url)") }
        var lowered: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String else { continue }
            lowered[name.lowercased()] = (value as? String) ?? "\(value)"
        }
        return HTTPAnswer(status: http.statusCode, headers: lowered, body: [UInt8](data))
    }
}
