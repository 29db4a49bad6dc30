#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The address the server was last reached at, kept in the data folder (`server-url`) so that the CLI's DSNs name the
/// port the server really listens on (`serve --port 9000`), not a default.
///
/// `serve` writes it once it listens: its `--public-url`, else `http://HOST:PORT` (a wildcard host as `127.0.0.1`).
/// `projects create` reads it when neither `--public-url` nor `FAULTLINE_PUBLIC_URL` is given. A missing or
/// unreadable record is no error: the DSN then falls back to `FAULTLINE_HOST`/`FAULTLINE_PORT`, else port 8080.
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
