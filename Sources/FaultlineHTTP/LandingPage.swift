import Hummingbird

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The page at `/`: the rendered projects page (`index.html` in the site folder) once the renderer has written it,
/// and this landing page before that.
enum LandingPage {
    static let html = """
        <!doctype html>
        <html lang="en">
        <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Faultline</title></head>
        <body>
        <main>
        <h1>Faultline is running</h1>
        <p>The dashboard has not been rendered yet. Reports and sessions are accepted at
        <code>/api/v1/reports</code> and <code>/api/v1/sessions</code> (see <code>docs/protocol.md</code>).</p>
        <ul><li><a href="/healthz">Health</a></li><li><a href="/metrics">Metrics</a></li></ul>
        </main>
        </body>
        </html>
        """

    /// The front door: the site's `index.html` when `site` names a folder holding it, else the landing page.
    static func front(site: String?) -> Response {
        if let site, let data = FileManager.default.contents(atPath: site + "/index.html") {
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        return response()
    }

    static func response() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
