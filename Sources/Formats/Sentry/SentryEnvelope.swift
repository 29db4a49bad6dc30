import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The framing of a Sentry envelope (client-protocols.md §1.3): a header line, then items of a header line
/// and a payload each. Only the framing is read here; payloads stay bytes, located by their range.
///
/// ```
/// {"event_id":"5cf0…","sent_at":"2026-11-22T05:08:09.158496Z"}\n      envelope header (one JSON line)
/// {"type":"event","length":3100}\n                                       item header (one JSON line)
/// <3100 bytes>\n                                                         payload (binary-safe), then \n
/// {"type":"attachment","filename":"app.log","length":22}\n
/// log line 1\nlog line 2\n\n
/// ```
///
/// With `length` a payload is exactly that many bytes (newlines included) and must be followed by `\n` or
/// the end; without it, the payload runs to the next `\n` or the end. Blank lines between items are
/// skipped. Everything here is framing, so every error is fatal for the envelope: a payload can only be
/// found by trusting the lengths before it.
public struct SentryEnvelope: Sendable, Equatable {
    /// Items per envelope (sentry-sdk sends at most ~100 sessions plus an event and attachments).
    public static let maxItems = 1000

    /// The envelope header. Other keys (`trace`, `sdk`) are ignored: the event payload is authoritative.
    public struct Header: Sendable, Equatable {
        /// The event's id, 32 hex (sentry-sdk) or hyphenated (sentry-cli); normalised.
        public var eventID: EventID?
        /// When the client sent the envelope, by its clock.
        public var sentAt: Date?
        /// The DSN, which browser SDKs put here when they send through a tunnel.
        public var dsn: String?
        /// Where the header line sits in the body.
        public var range: Range<Int>

        public init(eventID: EventID? = nil, sentAt: Date? = nil, dsn: String? = nil, range: Range<Int>) {
            self.eventID = eventID
            self.sentAt = sentAt
            self.dsn = dsn
            self.range = range
        }
    }

    /// One item: what its header said and where its payload is.
    public struct Item: Sendable, Equatable {
        /// `event`, `attachment`, `session`, `sessions`, `client_report`, `transaction`… (open-ended).
        public var type: String
        /// The header's `length`, when it had one.
        public var length: Int?
        public var contentType: String?
        /// An attachment's file name.
        public var filename: String?
        /// An attachment's kind (`event.attachment` when absent, `event.minidump`, …).
        public var attachmentType: String?
        /// Where the item header line sits in the body.
        public var headerRange: Range<Int>
        /// Where the payload sits in the body.
        public var payloadRange: Range<Int>

        public init(
            type: String, length: Int? = nil, contentType: String? = nil, filename: String? = nil,
            attachmentType: String? = nil, headerRange: Range<Int>, payloadRange: Range<Int>
        ) {
            self.type = type
            self.length = length
            self.contentType = contentType
            self.filename = filename
            self.attachmentType = attachmentType
            self.headerRange = headerRange
            self.payloadRange = payloadRange
        }
    }

    public var header: Header
    public var items: [Item]

    public init(header: Header, items: [Item]) {
        self.header = header
        self.items = items
    }

    /// Reads the framing of `bytes` (an inflated envelope body).
    ///
    /// - Parameter maxItems: items allowed; more is an error rather than a silent cut, so that a client
    ///   learns its envelope was not taken.
    /// - Throws: `FormatError` naming the part to blame: `header`, `header.event_id`, `items[2]` (not a JSON
    ///   object), `items[2].type`, `items[2].length` (negative, or running past the end), `items` (too many);
    ///   `.malformedEnvelope` for framing, `.malformedJSON`/`.invalidField` for the header lines' JSON,
    ///   `.tooLarge` for too many items.
    public static func parse(_ bytes: [UInt8], maxItems: Int = SentryEnvelope.maxItems) throws -> SentryEnvelope {
        try bytes.withUnsafeBufferPointer { buffer in
            var framer = Framer(bytes: buffer)
            return try framer.parse(maxItems: maxItems)
        }
    }

    /// Reads only the header line of `bytes` (to re-read a stored event's fallbacks without the items).
    static func parseHeader(_ bytes: [UInt8]) throws -> Header {
        try bytes.withUnsafeBufferPointer { buffer in
            let framer = Framer(bytes: buffer)
            return try framer.readHeader(0..<framer.lineEnd(from: 0))
        }
    }
}

/// The framing loop over one buffer (kept apart so the public type stays a plain value).
private struct Framer {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The index of the next `\n` at or after `start`, or the end.
    func lineEnd(from start: Int) -> Int {
        var i = start
        while i < bytes.count, bytes[i] != 0x0a { i += 1 }
        return i
    }

    mutating func parse(maxItems: Int) throws -> SentryEnvelope {
        guard !bytes.isEmpty else { throw FormatError(.malformedEnvelope, "the envelope is empty", field: "header") }
        let headerEnd = lineEnd(from: 0)
        let header = try readHeader(0..<headerEnd)
        position = min(headerEnd + 1, bytes.count)

        var items: [SentryEnvelope.Item] = []
        while true {
            // Blank lines (and stray whitespace) between items carry nothing.
            while position < bytes.count,
                bytes[position] == 0x0a || bytes[position] == 0x0d || bytes[position] == 0x20
                    || bytes[position] == 0x09
            {
                position += 1
            }
            guard position < bytes.count else { break }
            let index = items.count
            guard index < maxItems else {
                throw FormatError(.tooLarge, "an envelope holds at most \(maxItems) items", field: "items")
            }
            do {
                items.append(try readItem())
            } catch let error as FormatError {
                throw error.prefixed("items[\(index)]")
            }
        }
        return SentryEnvelope(header: header, items: items)
    }

    func readHeader(_ range: Range<Int>) throws -> SentryEnvelope.Header {
        var header = SentryEnvelope.Header(range: range)
        do {
            var r = JSONReader(bytes: bytes, range: range)
            guard (try? r.peek()) == .object else {
                throw FormatError(.malformedEnvelope, "the envelope header is not a JSON object")
            }
            try r.readObject { r, key in
                if key.matches("event_id") {
                    guard let raw = try r.optional("event_id", { try $0.readString() }) else { return }
                    guard let id = EventID(raw) else {
                        throw FormatError(.invalidField, "must be a UUID or 32 hex digits", field: "event_id")
                    }
                    header.eventID = id
                } else if key.matches("sent_at") {
                    header.sentAt = try r.optional("sent_at") { try $0.readTimestamp() }
                } else if key.matches("dsn") {
                    header.dsn = try r.optional("dsn") { try $0.readString() }
                } else {
                    try r.skipValue()
                }
            }
            try r.expectEnd()
        } catch let error as FormatError {
            throw error.prefixed("header")
        }
        return header
    }

    mutating func readItem() throws -> SentryEnvelope.Item {
        let headerStart = position
        let headerEnd = lineEnd(from: headerStart)
        var type: String?
        var length: Int?
        var contentType: String?
        var filename: String?
        var attachmentType: String?
        var r = JSONReader(bytes: bytes, range: headerStart..<headerEnd)
        guard (try? r.peek()) == .object else {
            throw FormatError(.malformedEnvelope, "expected an item header (a JSON object) at byte \(headerStart)")
        }
        try r.readObject { r, key in
            if key.matches("type") {
                type = try r.optional("type") { try $0.readString() }
            } else if key.matches("length") {
                length = try r.optional("length") { try $0.readInt() }
            } else if key.matches("content_type") {
                contentType = try r.optional("content_type") { try $0.readString() }
            } else if key.matches("filename") {
                filename = try r.optional("filename") { try $0.readString() }
            } else if key.matches("attachment_type") {
                attachmentType = try r.optional("attachment_type") { try $0.readString() }
            } else {
                try r.skipValue()
            }
        }
        try r.expectEnd()
        guard let type, !type.isEmpty else { throw FormatError(.invalidField, "is required", field: "type") }

        let payloadStart = min(headerEnd + 1, bytes.count)
        let payload: Range<Int>
        if let length {
            guard length >= 0 else { throw FormatError(.invalidField, "must not be negative", field: "length") }
            let left = bytes.count - payloadStart
            guard length <= left else {
                throw FormatError(
                    .malformedEnvelope,
                    "the payload runs past the end of the envelope (\(length) bytes declared, \(left) left)",
                    field: "length")
            }
            payload = payloadStart..<(payloadStart + length)
            position = payload.upperBound
            if position < bytes.count {
                guard bytes[position] == 0x0a else {
                    throw FormatError(
                        .malformedEnvelope, "expected a newline after the \(length)-byte payload at byte \(position)",
                        field: "length")
                }
                position += 1
            }
        } else {
            payload = payloadStart..<lineEnd(from: payloadStart)
            position = min(payload.upperBound + 1, bytes.count)
        }
        return SentryEnvelope.Item(
            type: type, length: length, contentType: contentType, filename: filename, attachmentType: attachmentType,
            headerRange: headerStart..<headerEnd, payloadRange: payload)
    }
}
