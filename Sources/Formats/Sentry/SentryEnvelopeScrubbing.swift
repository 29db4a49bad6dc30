import FaultlineCore

extension SentryEnvelope {
    /// Item types left as sent by the scrubber: attachments are binary and stored apart. Every other item is
    /// scrubbed as JSON (one that is not JSON becomes `{}`), because the stored event keeps the envelope's bytes
    /// around its event item.
    static let unscrubbedItemTypes: Set<String> = ["attachment"]

    /// An envelope after scrubbing.
    public struct Scrubbed: Sendable {
        /// The re-framed envelope, or nil when nothing changed (keep the client's bytes).
        public var bytes: [UInt8]?
        /// Event items (by index) that could not be scrubbed (not well-formed JSON, or nested too deep), with
        /// why: they are left as sent, so the caller must not store an event read from one of them.
        public var unscrubbedEvents: [Int: FormatError]
    }

    /// The envelope with its JSON items scrubbed and re-framed (each changed item's header gets its new
    /// `length`), or nil bytes when nothing changed — then the caller keeps the client's bytes.
    ///
    /// An item that is not well-formed JSON cannot be scrubbed: an `event` or `transaction` is left as it is and
    /// listed in `unscrubbedEvents` (its parser normally rejects it too), any other item but an attachment is
    /// replaced with `{}` so that its bytes are never kept in the stored envelope.
    /// - Throws: `FormatError` for broken framing (as `parse` does).
    public static func scrub(_ bytes: [UInt8], scrubber: Scrubber) throws -> Scrubbed {
        guard scrubber.isActive else { return Scrubbed(bytes: nil, unscrubbedEvents: [:]) }
        let envelope = try parse(bytes)
        var replacements: [Int: [UInt8]] = [:]
        var unscrubbed: [Int: FormatError] = [:]
        for (index, item) in envelope.items.enumerated() where !unscrubbedItemTypes.contains(item.type) {
            do {
                if let scrubbed = try JSONScrubbing.scrub(bytes, range: item.payloadRange, scrubber: scrubber) {
                    replacements[index] = scrubbed
                }
            } catch {
                if item.type != "event" && item.type != "transaction" {
                    replacements[index] = Array("{}".utf8)
                } else {
                    unscrubbed[index] = (error as? FormatError ?? FormatError(.malformedJSON, "\(error)")).prefixed(
                        "items[\(index)]")
                }
            }
        }
        guard !replacements.isEmpty, let first = envelope.items.first else {
            return Scrubbed(bytes: nil, unscrubbedEvents: unscrubbed)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 64)
        out.append(contentsOf: bytes[0..<first.headerRange.lowerBound])
        for (index, item) in envelope.items.enumerated() {
            if let payload = replacements[index] {
                if item.length != nil {
                    out.append(contentsOf: try header(bytes, range: item.headerRange, length: payload.count))
                } else {
                    out.append(contentsOf: bytes[item.headerRange])
                }
                out.append(contentsOf: bytes[item.headerRange.upperBound..<item.payloadRange.lowerBound])
                out.append(contentsOf: payload)
            } else {
                out.append(contentsOf: bytes[item.headerRange.lowerBound..<item.payloadRange.upperBound])
            }
            let next = index + 1 < envelope.items.count ? envelope.items[index + 1].headerRange.lowerBound : bytes.count
            out.append(contentsOf: bytes[item.payloadRange.upperBound..<next])
        }
        return Scrubbed(bytes: out, unscrubbedEvents: unscrubbed)
    }

    /// An item header with its `length` set to `length`, every other member copied as sent.
    static func header(_ bytes: [UInt8], range: Range<Int>, length: Int) throws -> [UInt8] {
        try JSONReader.with(bytes, range: range) { r in
            var out: [UInt8] = [UInt8(ascii: "{")]
            try r.readObject { r, key in
                r.skipWhitespace()
                let start = r.index
                try r.skipValue()
                guard !key.matches("length") else { return }
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: key.raw)
                out.append(contentsOf: Array("\":".utf8))
                out.append(contentsOf: r.bytes[start..<r.index])
                out.append(UInt8(ascii: ","))
            }
            out.append(contentsOf: Array("\"length\":\(length)}".utf8))
            return out
        }
    }
}
