import FaultlineCore
import NIOCore

/// One minidump as a client sent it, whichever way it came: the dump's bytes and the event the request
/// describes around it.
///
/// The ways a dump arrives, each a pure function of the request's bytes and headers:
/// - `multipart`: Sentry's minidump endpoint (`upload_file_minidump`, from sentry-native, Electron, Breakpad's
///   uploader) and Crashpad's own upload (the same form, gzip'd and chunked, with `prod`/`ver`/`guid` fields and
///   `product`/`version`/`guid` in the query);
/// - `raw`: a bare `application/octet-stream` or `application/x-dmp` body;
/// - `envelope`: an envelope's `attachment` item with `attachment_type: event.minidump` (sentry-native's
///   breakpad and native backends).
///
/// The event is assembled as Relay does it: the attached event (`__sentry-event`, MessagePack or JSON; or the
/// envelope's event item) first, then the form's `sentry` field (JSON), `sentry__N` chunks, flattened
/// `sentry[release]`/`sentry[tags][k]` fields, and every other text field into `extra`. Breadcrumbs come from
/// `__sentry-breadcrumb1`/`2` (sentry-native's two rotating MessagePack files). Crashpad's annotations fill what
/// the event does not say: `release` from `prod@ver` and the user (one installation) from `guid`.
public struct MinidumpSubmission: Sendable, Equatable {
    /// The dump, checked to start with `MDMP` (a gzip'd dump part is inflated first).
    public var dump: [UInt8]
    /// The dump part's file name, when it had one.
    public var filename: String?
    /// The event, a JSON object in Sentry's event shape; `platform` is `native` and `level` `fatal` unless
    /// the request said otherwise.
    public var event: [UInt8]
    /// `event_id` as the request gave it (the attached event, the `sentry` field, the envelope header).
    public var eventID: EventID?
    /// The request's other files, kept as attachments of the event.
    public var attachments: [Attachment]

    /// Sizes past which a request is refused: a dump is processed whole, and every other part is held in memory
    /// until the request is read.
    public struct Limits: Sendable, Equatable {
        /// Bytes of the dump (after inflating a gzip'd dump part).
        public var maxDumpBytes = 16 * 1024 * 1024
        /// Bytes of the whole request body after inflating its `Content-Encoding`.
        public var maxBodyBytes = 20 * 1024 * 1024
        /// Bytes of one text field or of the attached event and breadcrumb files.
        public var maxFieldBytes = 256 * 1024
        /// Parts in one form.
        public var maxParts = 256
        /// Breadcrumbs read from the attached breadcrumb files (each).
        public var maxBreadcrumbs = 1000

        public init() {}
    }

    /// Part and attachment names with a meaning of their own.
    enum Names {
        static let dump = "upload_file_minidump"
        static let event = "__sentry-event"
        static let breadcrumbs1 = "__sentry-breadcrumb1"
        static let breadcrumbs2 = "__sentry-breadcrumb2"
    }

    /// Sentry's attachment type for minidumps in envelopes and on stored attachments.
    public static let attachmentType = "event.minidump"

    /// Inflates a request body as its `Content-Encoding` says, under the body limit.
    /// - Throws: `FormatError` (`.unsupportedEncoding`, `.tooLarge`, `.corruptCompression`).
    static func inflate(_ body: [UInt8], contentEncoding: String?, limits: Limits) throws -> [UInt8] {
        guard let encoding = BodyDecoding.ContentEncoding(header: contentEncoding) else {
            throw FormatError(
                .unsupportedEncoding, "Content-Encoding \(contentEncoding ?? "") is not gzip, deflate or br")
        }
        return try BodyDecoding.inflate(ByteBuffer(bytes: body), encoding: encoding, limit: limits.maxBodyBytes)
    }

    /// The dump from a part's or body's bytes: as it is, or inflated when gzip'd; refused unless it is `MDMP`.
    static func dump(_ bytes: [UInt8], limits: Limits) throws -> [UInt8] {
        var dump = bytes
        if dump.count >= 2, dump[0] == 0x1F, dump[1] == 0x8B {
            dump = try BodyDecoding.inflate(ByteBuffer(bytes: dump), encoding: .gzip, limit: limits.maxDumpBytes)
        }
        guard dump.count <= limits.maxDumpBytes else {
            throw FormatError(.tooLarge, "the minidump is larger than \(limits.maxDumpBytes) bytes", field: Names.dump)
        }
        guard dump.starts(with: Minidump.signature) else {
            throw FormatError(.invalidField, "the minidump does not start with MDMP", field: Names.dump)
        }
        return dump
    }

    /// A bare dump as the request body (`application/octet-stream`, `application/x-dmp`).
    /// - Parameter query: the request's query string: `product`/`version`/`guid` there describe the event.
    /// - Throws: `FormatError` for an encoding that does not inflate, a body past the limits, or one that is not
    ///   `MDMP`.
    public static func raw(
        _ body: [UInt8], contentEncoding: String? = nil, query: String? = nil, limits: Limits = Limits()
    )
        throws -> MinidumpSubmission
    {
        let dump = try dump(try inflate(body, contentEncoding: contentEncoding, limits: limits), limits: limits)
        var assembly = EventAssembly()
        assembly.query = QueryFields(query)
        return try assembly.submission(dump: dump, filename: nil)
    }

    /// A `multipart/form-data` body: Sentry's minidump endpoint, or Crashpad's upload.
    /// - Parameters:
    ///   - contentType: the request's `Content-Type` (its boundary).
    ///   - contentEncoding: the request's `Content-Encoding` (Crashpad sends `gzip`).
    ///   - query: the request's query string (Crashpad adds `product`, `version` and `guid`).
    /// - Throws: `FormatError` for a form that does not parse, has no `upload_file_minidump`, or passes a limit.
    public static func multipart(
        _ body: [UInt8], contentType: String?, contentEncoding: String? = nil, query: String? = nil,
        limits: Limits = Limits()
    ) throws -> MinidumpSubmission {
        let inflated = try inflate(body, contentEncoding: contentEncoding, limits: limits)
        let parts = try FormParts.read(inflated, contentType: contentType, limits: limits)
        var assembly = EventAssembly()
        assembly.query = QueryFields(query)
        var dumpPart: FormParts.Part?
        for part in parts {
            switch part.name {
            case Names.dump where dumpPart == nil: dumpPart = part
            case Names.event: assembly.attachedEvent = try attachedValue(part.bytes, limits: limits, field: part.name)
            case Names.breadcrumbs1:
                assembly.breadcrumbs1 = try breadcrumbs(part.bytes, limits: limits, field: part.name)
            case Names.breadcrumbs2:
                assembly.breadcrumbs2 = try breadcrumbs(part.bytes, limits: limits, field: part.name)
            default:
                if part.filename != nil {
                    assembly.attachments.append(
                        Attachment(
                            filename: part.filename ?? part.name, contentType: part.contentType, attachmentType: nil,
                            bytes: part.bytes))
                } else {
                    assembly.fields.append((part.name, String(decoding: part.bytes, as: UTF8.self)))
                }
            }
        }
        guard let dumpPart else {
            throw FormatError(.invalidField, "the form has no \(Names.dump) part", field: Names.dump)
        }
        return try assembly.submission(dump: try dump(dumpPart.bytes, limits: limits), filename: dumpPart.filename)
    }

    /// An envelope's minidump: its `attachment` item with `attachment_type: event.minidump`, the event item as the
    /// event, and the other attachments (`__sentry-event`/`__sentry-breadcrumb1`/`2` read as in a form).
    /// - Returns: nil when the envelope holds no minidump (it is an ordinary envelope).
    /// - Throws: `FormatError` for broken framing, an event item that is not JSON, or a dump that is not `MDMP`.
    public static func envelope(_ bytes: [UInt8], limits: Limits = Limits()) throws -> MinidumpSubmission? {
        let envelope = try SentryEnvelope.parse(bytes)
        guard
            let dumpItem = envelope.items.first(where: {
                $0.type == "attachment" && $0.attachmentType == attachmentType
            })
        else { return nil }
        var assembly = EventAssembly()
        assembly.envelopeEventID = envelope.header.eventID
        for item in envelope.items {
            let payload = Array(bytes[item.payloadRange])
            switch (item.type, item.filename) {
            case ("event", _):
                assembly.attachedEvent = try attachedValue(payload, limits: limits, field: "event")
            case ("attachment", Names.event?):
                assembly.attachedEvent = try attachedValue(payload, limits: limits, field: Names.event)
            case ("attachment", Names.breadcrumbs1?):
                assembly.breadcrumbs1 = try breadcrumbs(payload, limits: limits, field: Names.breadcrumbs1)
            case ("attachment", Names.breadcrumbs2?):
                assembly.breadcrumbs2 = try breadcrumbs(payload, limits: limits, field: Names.breadcrumbs2)
            case ("attachment", _) where item.payloadRange != dumpItem.payloadRange:
                assembly.attachments.append(
                    Attachment(
                        filename: item.filename ?? "attachment", contentType: item.contentType,
                        attachmentType: item.attachmentType, bytes: payload))
            default: break
            }
        }
        return try assembly.submission(
            dump: try dump(Array(bytes[dumpItem.payloadRange]), limits: limits), filename: dumpItem.filename)
    }

    /// An attached event: a JSON object or a MessagePack map.
    static func attachedValue(_ bytes: [UInt8], limits: Limits, field: String) throws -> JSONValue {
        guard bytes.count <= limits.maxFieldBytes else {
            throw FormatError(.tooLarge, "\(field) is larger than \(limits.maxFieldBytes) bytes", field: field)
        }
        let value: JSONValue
        do {
            if bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") {
                value = try JSONValue.parse(bytes)
            } else {
                value = try MessagePack.values(bytes, limit: 1).first ?? .object([])
            }
        } catch let error as FormatError {
            throw FormatError(
                error.code, "\(field) is neither a JSON object nor MessagePack: \(error.message)", field: field)
        }
        guard case .object = value else { throw FormatError(.invalidField, "\(field) is not an object", field: field) }
        return value
    }

    /// Breadcrumbs: MessagePack values back to back (sentry-native), or a JSON array.
    static func breadcrumbs(_ bytes: [UInt8], limits: Limits, field: String) throws -> [JSONValue] {
        guard bytes.count <= limits.maxFieldBytes else {
            throw FormatError(.tooLarge, "\(field) is larger than \(limits.maxFieldBytes) bytes", field: field)
        }
        do {
            if bytes.first == UInt8(ascii: "[") {
                guard case .array(let values) = try JSONValue.parse(bytes) else { return [] }
                return Array(values.suffix(limits.maxBreadcrumbs))
            }
            return try MessagePack.values(bytes, limit: limits.maxBreadcrumbs)
        } catch let error as FormatError {
            throw FormatError(error.code, "\(field): \(error.message)", field: field)
        }
    }
}
