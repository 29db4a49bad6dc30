import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a Sentry event payload says, read field by field, before it is shaped into a `Report`.
///
/// Stacks are kept in Sentry's order (outermost caller first) until `SentryEvents` assembles threads.
struct SentryEventFields {
    var eventID: EventID?
    var timestamp: Date?
    var level: String?
    var platform: String?
    var release: String?
    var dist: String?
    var environment: String?
    var serverName: String?
    var exceptions: [SentryException] = []
    /// `message`, formatted.
    var message: String?
    /// `logentry`, formatted: the current name of `message`, which wins when both are sent.
    var logentry: String?
    /// The legacy top-level `stacktrace` interface (events without an exception).
    var stacktrace: SentryStacktrace?
    var threads: [SentryThread] = []
    var breadcrumbs: [SentryBreadcrumb] = []
    var tags: [(key: String, value: String)] = []
    var extras: [(key: String, value: CustomValue)] = []
    var userID: String?
    var userEmail: String?
    var userName: String?
    var device = DeviceInfo()
    var appContext = AppInfo()
    var sdk: SDKInfo?
    /// Every context but `device`, `os`, `app` and `culture` (read into `device`/`appContext`), in the order sent.
    var contexts: [ReportContext] = []
    var fingerprint: [String]?
    var modules: [LoadedModule] = []
}

/// One `exception.values[]` entry.
struct SentryException {
    var type: String?
    var value: String?
    var module: String?
    var threadID: String?
    var mechanismType: String?
    var handled: Bool?
    /// `mechanism.meta.signal.number`, else `mechanism.meta.errno.number`, as text.
    var code: String?
    /// `mechanism.meta.mach_exception` with `meta.signal.name` (Apple SDKs).
    var mach: MachException?
    /// `mechanism.data.relevant_address`: the address a bad access touched (Apple SDKs).
    var relevantAddress: UInt64?
    var stacktrace: SentryStacktrace?
}

/// A `stacktrace` interface: frames outermost first, registers, and how to read the addresses.
struct SentryStacktrace {
    var frames: [Frame] = []
    var registers: [Register] = []
    /// `instruction_addr_adjustment`: `auto` (absent), `all_but_first`, `all` or `none`.
    var adjustment: String?
}

/// One `threads.values[]` entry.
struct SentryThread {
    var id: String?
    var name: String?
    var crashed: Bool?
    var current: Bool?
    var stacktrace: SentryStacktrace?
}

/// A breadcrumb whose timestamp may be missing (then the event's is used).
struct SentryBreadcrumb {
    var timestamp: Date?
    var crumb: Breadcrumb
}

/// Reads a Sentry event payload (client-protocols.md §1.4, §1.5) with the strict `JSONReader`.
///
/// Unknown fields are skipped. Known fields of the wrong type are errors naming the field
/// (`exception.values[0].stacktrace.frames[3].lineno`): a client that sends them is broken, and saying so
/// beats storing half an event.
enum SentryEventParser {
    /// - Parameter breadcrumbs: false skips them (stored events read again for processing, which has no use for them).
    static func parse(_ r: inout JSONReader, limits: IngestLimits, breadcrumbs readBreadcrumbs: Bool = true) throws
        -> SentryEventFields
    {
        var e = SentryEventFields()
        guard try r.peek() == .object else { throw FormatError(.malformedJSON, "an event must be a JSON object") }
        try r.readObject { r, key in
            if key.matches("event_id") {
                guard let raw = try r.optional("event_id", { try $0.readString() }) else { return }
                guard let id = EventID(raw) else {
                    throw FormatError(.invalidField, "must be a UUID or 32 hex digits", field: "event_id")
                }
                e.eventID = id
            } else if key.matches("timestamp") {
                e.timestamp = try r.optional("timestamp") { try $0.readTimestamp() }
            } else if key.matches("level") {
                e.level = try r.optional("level") { try $0.readString().lowercased() }
            } else if key.matches("platform") {
                e.platform = try r.optional("platform") { try $0.readString() }
            } else if key.matches("release") {
                e.release = try r.optional("release") { try $0.readLooseString() }
            } else if key.matches("dist") {
                e.dist = try r.optional("dist") { try $0.readLooseString() }
            } else if key.matches("environment") {
                e.environment = try r.optional("environment") { try $0.readString() }
            } else if key.matches("server_name") {
                e.serverName = try r.optional("server_name") { try $0.readString() }
            } else if key.matches("exception") {
                e.exceptions = try r.optional("exception") { try $0.readValues { try $0.readSentryException() } } ?? []
            } else if key.matches("message") {
                e.message = try r.optional("message") { try $0.readSentryMessage() } ?? nil
            } else if key.matches("logentry") {
                e.logentry = try r.optional("logentry") { try $0.readSentryMessage() } ?? nil
            } else if key.matches("stacktrace") {
                e.stacktrace = try r.optional("stacktrace") { try $0.readSentryStacktrace() }
            } else if key.matches("threads") {
                e.threads = try r.optional("threads") { try $0.readValues { try $0.readSentryThread() } } ?? []
            } else if key.matches("breadcrumbs") {
                if readBreadcrumbs {
                    e.breadcrumbs =
                        try r.optional("breadcrumbs") { r in
                            try r.readValues { try $0.readSentryBreadcrumb(limits: limits) }
                        } ?? []
                } else {
                    try r.skipValue()
                }
            } else if key.matches("tags") {
                e.tags = try r.optional("tags") { try $0.readSentryTags() } ?? []
            } else if key.matches("extra") {
                e.extras = try r.optional("extra") { try $0.readSentryExtras() } ?? []
            } else if key.matches("user") {
                _ = try r.optional("user") { r in
                    try r.readObject { r, key in
                        if key.matches("id") {
                            e.userID = try r.optional("id") { try $0.readLooseString() }
                        } else if key.matches("email") {
                            e.userEmail = try r.optional("email") { try $0.readString() }
                        } else if key.matches("username") {
                            e.userName = try r.optional("username") { try $0.readLooseString() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if key.matches("contexts") {
                _ = try r.optional("contexts") { try $0.readSentryContexts(into: &e) }
            } else if key.matches("sdk") {
                e.sdk = try r.optional("sdk") { try $0.readSentrySDK() } ?? nil
            } else if key.matches("fingerprint") {
                e.fingerprint = try r.optional("fingerprint") { r in
                    var out: [String] = []
                    try r.readArray { r, _ in out.append(try r.readLooseString()) }
                    return out
                }
            } else if key.matches("debug_meta") {
                _ = try r.optional("debug_meta") { r in
                    try r.readObject { r, key in
                        if key.matches("images") {
                            e.modules =
                                try r.optional("images") { r in
                                    var out: [LoadedModule] = []
                                    try r.readArray { r, _ in
                                        if let module = try r.readSentryImage() { out.append(module) }
                                    }
                                    return out
                                } ?? []
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else {
                try r.skipValue()
            }
        }
        try r.expectEnd()
        return e
    }
}

extension JSONReader {
    /// `with(_:range:_:)` for public entry points: a range outside `array` is an error, not a trap.
    static func with<T>(
        _ array: [UInt8], checked range: Range<Int>, _ body: (inout JSONReader) throws -> T
    ) throws -> T {
        guard range.lowerBound >= 0, range.upperBound <= array.count else {
            throw FormatError(.malformedJSON, "the range \(range) is outside the \(array.count)-byte body")
        }
        return try with(array, range: range, body)
    }

    /// A Sentry "values" list: `{"values": [...]}` or, as older SDKs send it, a bare array.
    mutating func readValues<T>(_ element: (inout JSONReader) throws -> T) throws -> [T] {
        var out: [T] = []
        switch try peek() {
        case .array:
            try readArray { r, _ in out.append(try element(&r)) }
        case .object:
            try readObject { r, key in
                if key.matches("values") {
                    out = try r.list("values", element)
                } else {
                    try r.skipValue()
                }
            }
        default:
            throw FormatError(.invalidField, "expected {\"values\": [...]} or an array")
        }
        return out
    }

    /// The value's JSON text as it appears in the input (for nested values shown as strings).
    mutating func readRawJSON() throws -> String {
        skipWhitespace()
        let start = index
        try skipValue()
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}
