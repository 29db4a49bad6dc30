import Logging

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A swift-log handler writing one JSON object per line to standard error:
/// `{"ts":"…","level":"info","label":"…","msg":"…", <metadata>}`.
struct JSONLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level
    let label: String

    init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata { fields[key] = "\(value)" }
        for (key, value) in event.metadata ?? [:] { fields[key] = "\(value)" }
        var line = "{\"ts\":\(Self.quote(Date().formatted(.iso8601))),\"level\":\(Self.quote(event.level.rawValue))"
        line += ",\"label\":\(Self.quote(label)),\"msg\":\(Self.quote("\(event.message)"))"
        for key in fields.keys.sorted() where !["ts", "level", "label", "msg"].contains(key) {
            line += ",\(Self.quote(key)):\(Self.quote(fields[key]!))"
        }
        line += "}\n"
        Console.write(line, fd: 2)
    }

    /// A JSON string literal for `text`.
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
