/// An error of the dashboard renderer: what went wrong (`code`), a message naming the file or template, and the
/// error underneath when there is one.
public struct DashboardError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure; more may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// A file or folder the renderer needs is not there (the message names the path).
        public static let missingPath = Code(name: "missing_path")
        /// A template could not be parsed (the message names the file).
        public static let badTemplate = Code(name: "bad_template")
        /// A template produced no output (it is not registered).
        public static let renderFailed = Code(name: "render_failed")
        /// The code's name, e.g. `missing_path`.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, naming the file or template.
    public var message: String
    /// The error underneath (a file system or template parser error), if any.
    public var underlying: (any Error)?

    /// - Parameters:
    ///   - code: the kind of failure.
    ///   - message: what went wrong, naming the file or template.
    ///   - underlying: the error underneath, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The message, followed by the underlying error when there is one.
    public var description: String {
        underlying.map { "\(message) (\($0))" } ?? message
    }
}
