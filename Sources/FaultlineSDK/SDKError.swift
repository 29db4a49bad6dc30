/// Why an SDK or launcher operation failed; `code` can grow, `message` is for people.
package struct SDKError: Error, Sendable, CustomStringConvertible {
    package enum Code: Sendable, Equatable {
        case invalidDSN
        case io
        /// A state, queue or crash folder that another user could change (``PrivateFolder``): reporting is off.
        case unsafeFolder
        case corruptStateFile
        case corruptCrashFile
        case transport
        case unimplemented
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
