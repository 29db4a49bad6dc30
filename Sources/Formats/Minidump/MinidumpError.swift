/// Why bytes are not a minidump the reader can use. Every malformed or hostile input ends here, never in a
/// trap or an unbounded loop.
///
/// Shaped like swift-nio's errors: a code that can grow and a message that names what is wrong (the
/// stream, the field, the offset), fit to show to the client that uploaded the dump.
public struct MinidumpError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }
        /// The bytes do not start with the `MDMP` signature.
        public static let notMinidump = Code(name: "not_minidump")
        /// A stream, record or string runs past the end of the file.
        public static let truncated = Code(name: "truncated")
        /// A count, size or value that no writer produces (a list larger than its stream, a context of
        /// the wrong size).
        public static let malformed = Code(name: "malformed")
        /// More streams, records or bytes than the reader accepts.
        public static let tooLarge = Code(name: "too_large")
        /// A well-formed dump of a kind the reader does not convert (a CPU or platform other than
        /// Linux/Android on x86-64 or arm64).
        public static let unsupported = Code(name: "unsupported")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
