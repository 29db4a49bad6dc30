import FaultlineCore

/// Why a request body could not be turned into domain values.
///
/// Shaped like swift-nio's errors: a code that can grow, a message fit for the client, and the field
/// path (`reports[3].threads[0].frames[2].address`) when one field is to blame. The HTTP module maps
/// codes to statuses; nothing here knows about HTTP.
public struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }
        /// The body is not well-formed JSON (or not the expected top-level shape).
        public static let malformedJSON = Code(name: "malformed_json")
        /// A field is missing or has a wrong type or value.
        public static let invalidField = Code(name: "invalid_field")
        /// The body, after inflating, or one report exceeds a size limit.
        public static let tooLarge = Code(name: "too_large")
        /// The content encoding is not one we inflate.
        public static let unsupportedEncoding = Code(name: "unsupported_encoding")
        /// The content type is not JSON.
        public static let unsupportedMediaType = Code(name: "unsupported_media_type")
        /// Compressed bytes that do not inflate.
        public static let corruptCompression = Code(name: "corrupt_compression")
        /// A Sentry envelope whose framing is broken: a payload running past the end, garbage between items.
        public static let malformedEnvelope = Code(name: "malformed_envelope")
    }

    public var code: Code
    public var message: String
    /// The offending field's path, when one field is to blame.
    public var field: String?

    public init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String {
        if let field { return "\(code): \(field): \(message)" }
        return "\(code): \(message)"
    }

    /// The same error with `prefix` put in front of the field path (`reports[2]` + `.kind`).
    func prefixed(_ prefix: String) -> FormatError {
        var copy = self
        if let field, !field.isEmpty {
            copy.field = field.hasPrefix("[") ? prefix + field : prefix + "." + field
        } else {
            copy.field = prefix
        }
        return copy
    }
}
