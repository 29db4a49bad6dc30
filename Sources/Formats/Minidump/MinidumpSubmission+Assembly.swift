import FaultlineCore

extension MinidumpSubmission {
    /// The parts of a `multipart/form-data` body, each whole (a minidump form is small enough to hold: the body
    /// limit bounds it).
    enum FormParts {
        struct Part {
            var name: String
            var filename: String?
            var contentType: String?
            var bytes: [UInt8] = []
        }

        /// Reads every part. Text fields and the attached event and breadcrumb files may have at most
        /// `maxFieldBytes`; a part with a `Content-Transfer-Encoding` other than the identity ones is refused.
        static func read(_ body: [UInt8], contentType: String?, limits: Limits) throws -> [Part] {
            var parser = try MultipartParser(
                boundary: try MultipartParser.boundary(fromContentType: contentType), maxParts: limits.maxParts)
            var parts: [Part] = []
            for event in try parser.feed(body) {
                switch event {
                case .partStart(let headers):
                    if let encoding = headers.transferEncoding?.lowercased(),
                        !["7bit", "8bit", "binary"].contains(encoding)
                    {
                        throw FormatError(
                            .invalidField, "part \(headers.name) has Content-Transfer-Encoding \(encoding)",
                            field: headers.name)
                    }
                    parts.append(Part(name: headers.name, filename: headers.filename, contentType: headers.contentType))
                case .bodyData(let bytes):
                    guard var part = parts.popLast() else { continue }
                    part.bytes += bytes
                    let capped =
                        part.name != Names.dump && (part.filename == nil || Names.attachedFiles.contains(part.name))
                    if capped, part.bytes.count > limits.maxFieldBytes {
                        throw FormatError(
                            .tooLarge, "\(part.name) is larger than \(limits.maxFieldBytes) bytes", field: part.name)
                    }
                    parts.append(part)
                case .partEnd:
                    continue
                }
            }
            try parser.finish()
            return parts
        }
    }

    /// The query string's fields, for Crashpad's `product`, `version` and `guid`.
    struct QueryFields {
        var pairs: [(String, String)] = []

        init(_ query: String?) {
            pairs = query.map(SentryAuth.queryPairs) ?? []
        }

        subscript(name: String) -> String? { pairs.first { $0.0 == name }?.1 }
    }

    /// The pieces of a request that make its event, merged in Relay's order by `submission`.
    struct EventAssembly {
        /// Keys in one flattened field name (`sentry[user][geo][city]` has three); deeper names go to `extra`.
        static let maxPathDepth = 8

        var attachedEvent: JSONValue?
        var envelopeEventID: EventID?
        /// Text fields in form order.
        var fields: [(String, String)] = []
        var query = QueryFields(nil)
        var breadcrumbs1: [JSONValue]?
        var breadcrumbs2: [JSONValue]?
        var attachments: [Attachment] = []

        func submission(dump: [UInt8], filename: String?) throws -> MinidumpSubmission {
            let event = try assemble()
            let eventID = event["event_id"]?.string.flatMap(EventID.init) ?? envelopeEventID
            return MinidumpSubmission(
                dump: dump, filename: filename, event: event.serialized, eventID: eventID, attachments: attachments)
        }

        func assemble() throws -> JSONValue {
            var event = attachedEvent ?? .object([])
            var chunks: [(Int, String)] = []
            for (name, value) in fields {
                if name == "sentry" || name.hasPrefix("sentry___") {
                    // A JSON event (custom clients), or a namespace of one.
                    guard let parsed = try? JSONValue.parse(Array(value.utf8)), case .object = parsed else {
                        throw FormatError(.malformedJSON, "the \(name) field is not a JSON object", field: name)
                    }
                    event.merge(parsed)
                } else if name.hasPrefix("sentry__"), let index = Int(name.dropFirst("sentry__".count)) {
                    chunks.append((index, value))  // Electron splits a long event into sentry__1, sentry__2, …
                } else if let path = Self.bracketPath(name) {
                    event.set(path: path[...], .string(value))  // Breakpad's flattened sentry[key][key]
                } else {
                    event.set(path: ["extra", name], .string(value))
                }
            }
            if !chunks.isEmpty {
                let joined = chunks.sorted { $0.0 < $1.0 }.map(\.1).joined()
                guard let parsed = try? JSONValue.parse(Array(joined.utf8)), case .object = parsed else {
                    throw FormatError(
                        .malformedJSON, "the sentry__N chunks do not join into a JSON object", field: "sentry__1")
                }
                event.merge(parsed)
            }
            if let crumbs = Self.mergedBreadcrumbs(breadcrumbs1, breadcrumbs2) {
                event.set("breadcrumbs", .object([("values", .array(crumbs))]))
            }
            applyCrashpadAnnotations(to: &event)
            if event["platform"] == nil { event.set("platform", .string("native")) }
            if event["level"] == nil { event.set("level", .string("fatal")) }
            if event["event_id"] == nil, let envelopeEventID {
                event.set("event_id", .string(envelopeEventID.rawValue))
            }
            return event
        }

        /// Crashpad's `prod`, `ver` and `guid` (form fields, else `product`, `version`, `guid` in the query) give the
        /// release (`prod@ver`, or `ver`) and the user (the installation's id) when the event has none.
        func applyCrashpadAnnotations(to event: inout JSONValue) {
            let form = Dictionary(fields, uniquingKeysWith: { first, _ in first })
            let product = form["prod"] ?? query["product"]
            let version = form["ver"] ?? query["version"]
            if event["release"] == nil, let version, !version.isEmpty {
                event.set("release", .string(product.map { $0.isEmpty ? version : "\($0)@\(version)" } ?? version))
            }
            if event["user"]?["id"] == nil, let guid = form["guid"] ?? query["guid"], !guid.isEmpty {
                event.set(path: ["user", "id"], .string(guid))
            }
        }

        /// `sentry[a][b]` → `["a", "b"]`; nil for any other name, and for more than `maxPathDepth` keys.
        static func bracketPath(_ name: String) -> [String]? {
            guard name.hasPrefix("sentry[") else { return nil }
            var path: [String] = []
            var rest = name.dropFirst("sentry".count)
            while !rest.isEmpty {
                guard path.count < maxPathDepth, rest.first == "[", let close = rest.firstIndex(of: "]") else {
                    return nil
                }
                let key = rest[rest.index(after: rest.startIndex)..<close]
                guard !key.isEmpty else { return nil }
                path.append(String(key))
                rest = rest[rest.index(after: close)...]
            }
            return path.isEmpty ? nil : path
        }

        /// sentry-native writes breadcrumbs into two files in turn, starting the other when one is full: the file
        /// whose first crumb is newer holds the latest ones. Kept: as many as the fuller file holds, newest last.
        static func mergedBreadcrumbs(_ one: [JSONValue]?, _ two: [JSONValue]?) -> [JSONValue]? {
            guard let one, let two else { return one ?? two }
            let keep = max(one.count, two.count)
            let (older, newer) = isNewer(one.first, than: two.first) ? (two, one) : (one, two)
            return Array(older.suffix(max(0, keep - newer.count))) + newer
        }

        /// Whether breadcrumb `a` has a later timestamp than `b` (RFC 3339 strings compare as text; numbers as numbers).
        static func isNewer(_ a: JSONValue?, than b: JSONValue?) -> Bool {
            switch (a?["timestamp"], b?["timestamp"]) {
            case (.string(let x)?, .string(let y)?): return x > y
            case (let x?, let y?): return (x.number ?? 0) > (y.number ?? 0)
            case (.some, nil): return true
            default: return false
            }
        }
    }
}

extension MinidumpSubmission.Names {
    /// Files read as part of the event, under the field limit.
    static let attachedFiles: Set<String> = [event, breadcrumbs1, breadcrumbs2]
}

extension JSONValue {
    var number: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d): return d
        default: return nil
        }
    }
}
