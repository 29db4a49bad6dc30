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
