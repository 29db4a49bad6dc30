#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The address the server was last reached at, kept in the data folder (`server-url`) so that the CLI's DSNs name the
/// port the server really listens on (`serve --port 9000`), not a default.
///
/// `serve` writes it once it listens: its `--public-url`, else `http://HOST:PORT` (a wildcard host as `127.0.0.1`).
/// `projects create` (for the DSN) and `users invite` (for the link) read it when neither `--public-url` nor
/// `FAULTLINE_PUBLIC_URL` is given (``base(publicURL:folder:)``). A missing or unreadable record is no error: the
/// base then falls back to `FAULTLINE_HOST`/`FAULTLINE_PORT`, else port 8080.
enum ServerURLRecord {
    static let fileName = "server-url"

    /// The URL SDKs reach a server at that listens on `host`:`port`.
    static func url(host: String, port: Int, publicURL: String?) -> String {
        if let publicURL, !publicURL.isEmpty { return publicURL }
        let reachable = host == "0.0.0.0" || host == "::" || host.isEmpty ? "127.0.0.1" : host
        return "http://\(reachable.contains(":") ? "[\(reachable)]" : reachable):\(port)"
    }

    /// Records `url` in `folder` (best effort: a server that cannot write it still serves).
    static func write(_ url: String, folder: String) {
        try? Data((url + "\n").utf8).write(
            to: URL(fileURLWithPath: folder).appendingPathComponent(fileName), options: .atomic)
    }

    /// The base URL people and SDKs reach the server at, without a trailing `/`: `publicURL` (`--public-url`),
    /// `FAULTLINE_PUBLIC_URL`, the URL recorded in `folder`, else `http://FAULTLINE_HOST:FAULTLINE_PORT`
    /// (`127.0.0.1:8080` by default).
    ///
    /// - Throws: when `FAULTLINE_PUBLIC_URL` or `FAULTLINE_PORT` is set but not valid.
    static func base(publicURL: String?, folder: String) throws -> String {
        let env = Environment.current
        var base =
            try publicURL ?? env.url("FAULTLINE_PUBLIC_URL") ?? read(folder: folder)
            ?? "http://\(env.string("FAULTLINE_HOST") ?? "127.0.0.1"):\(try env.int("FAULTLINE_PORT", in: 0...65535) ?? 8080)"
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// The recorded URL, when there is one that starts with http:// or https://.
    static func read(folder: String) -> String? {
        guard
            let data = try? Data(contentsOf: URL(fileURLWithPath: folder).appendingPathComponent(fileName)),
            data.count < 4096
        else { return nil }
        let text = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
        guard let text, text.hasPrefix("http://") || text.hasPrefix("https://") else { return nil }
        return text
    }
}
