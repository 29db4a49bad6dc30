import Hummingbird

/// The page at `/` until the dashboard renderer has written `index.html` into the site folder.
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

    static func response() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
