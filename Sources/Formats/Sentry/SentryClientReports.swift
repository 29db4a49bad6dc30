import FaultlineCore

/// Sentry `client_report` items (client-protocols.md §1.7): what an SDK dropped before sending.
///
/// `discarded_events[]` entries are `{reason, category, quantity}` (reasons `ratelimit_backoff`,
/// `network_error`, `send_error`, `sample_rate`…; categories `error`, `session`, `attachment` — quantity in
/// bytes —, `internal`…). Relay also accepts `rate_limited_events`, `filtered_events` and
/// `filtered_sampling_events` of the same shape; their entries keep the list in the reason, as
/// `rate_limited:<reason>`, `filtered:<reason>` and `filtered_sampling:<reason>`. Zero quantities are
/// dropped; reasons and categories are cut to 64 bytes.
public enum SentryClientReports {
    /// Entries one report may hold (an SDK sends a handful).
    public static let maxEntries = 1000

    /// Parses a `client_report` item's payload at `range` of `bytes`.
    /// - Throws: `FormatError` naming the field (`discarded_events[0].quantity`).
    public static func discarded(_ bytes: [UInt8], range: Range<Int>) throws -> [DiscardedEvents] {
        var out: [DiscardedEvents] = []
        try JSONReader.with(bytes, checked: range) { r in
            guard try r.peek() == .object else {
                throw FormatError(.malformedJSON, "a client report must be a JSON object")
            }
            try r.readObject { r, key in
                let prefix: String
                if key.matches("discarded_events") {
                    prefix = ""
                } else if key.matches("rate_limited_events") {
                    prefix = "rate_limited:"
                } else if key.matches("filtered_events") {
                    prefix = "filtered:"
                } else if key.matches("filtered_sampling_events") {
                    prefix = "filtered_sampling:"
                } else {
                    return try r.skipValue()
                }
                let entries = try r.list(key.string) { try $0.readDiscardedEvents(reasonPrefix: prefix) }
                out += entries.compactMap { $0 }
                guard out.count <= maxEntries else {
                    throw FormatError(
                        .tooLarge, "a client report may hold at most \(maxEntries) entries", field: key.string)
                }
            }
            try r.expectEnd()
        }
        return out
    }
}

extension JSONReader {
    /// One `{reason, category, quantity}` entry; nil when its quantity is 0.
    mutating func readDiscardedEvents(reasonPrefix: String) throws -> DiscardedEvents? {
        var reason: String?
        var category: String?
        var quantity: Int?
        try readObject { r, key in
            if key.matches("reason") {
                reason = try r.optional("reason") { try $0.readString() }
            } else if key.matches("category") {
                category = try r.optional("category") { try $0.readString() }
            } else if key.matches("quantity") {
                quantity = try r.optional("quantity") { try $0.readInt() }
            } else {
                try r.skipValue()
            }
        }
        guard let reason, !reason.isEmpty else { throw FormatError(.invalidField, "is required", field: "reason") }
        guard let category, !category.isEmpty else {
            throw FormatError(.invalidField, "is required", field: "category")
        }
        guard let quantity else { throw FormatError(.invalidField, "is required", field: "quantity") }
        guard quantity >= 0 else { throw FormatError(.invalidField, "must not be negative", field: "quantity") }
        guard quantity > 0 else { return nil }
        return DiscardedEvents(
            reason: IngestLimits.truncate(reasonPrefix + reason, toBytes: 64),
            category: IngestLimits.truncate(category, toBytes: 64), quantity: quantity)
    }
}
