import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes one native v1 report straight from JSON bytes into a `Report` (see `docs/protocol.md`).
///
/// The field rules are those of `NativeReportV1` (the wire structs that encode reports for the read API);
/// `NativeReportsTests` checks that what the read API writes decodes back to the same report.
/// Unknown keys are skipped, so newer SDKs can send fields this server does not know yet.
enum NativeReportParser {
    /// - Parameter breadcrumbs: false skips them (stored reports read again for processing, which has no use for them).
    static func parse(_ bytes: [UInt8], range: Range<Int>, breadcrumbs: Bool = true) throws -> Report {
        try JSONReader.with(bytes, range: range) { try parse(&$0, breadcrumbs: breadcrumbs) }
    }

    /// Thrown by `parse(_:batchKey:)` at a top-level `reports` array: the body is a batch (`JSONBatchSplitter`).
    struct BatchBody: Error {}

    /// With `batchKey`, a top-level `"reports": [` (unescaped, as `JSONBatchSplitter` compares it) throws `BatchBody`
    /// as soon as it is read, so that a body is parsed as one report before anything split it.
    static func parse(_ r: inout JSONReader, batchKey: Bool = false, breadcrumbs readBreadcrumbs: Bool = true) throws
        -> Report
    {
        var eventID: EventID?
        var kind: ReportKind?
        var timestamp: Date?
        var sessionID: SessionID?
        var userID: String?
        var installID: String?
        var environment: String?
        var app = AppInfo()
        var device = DeviceInfo()
        var error: ErrorInfo?
        var threads: [ThreadInfo] = []
        var modules: [LoadedModule] = []
        var breadcrumbs: [Breadcrumb] = []
        var customKeys: [(key: String, value: CustomValue)] = []
        var fingerprint: [String]?
        var faultAddress: UInt64?
        var crashMessage: String?

        if try r.peek() != .object { throw FormatError(.malformedJSON, "a report must be a JSON object") }
        try r.readObject { r, key in
            if key.matches("event_id") {
                guard let raw = try r.optional("event_id", { try $0.readString() }) else { return }
                guard let id = EventID(raw) else {
                    throw FormatError(.invalidField, "must be a UUID or 32 hex digits", field: "event_id")
                }
                eventID = id
            } else if key.matches("kind") {
                guard let raw = try r.optional("kind", { try $0.readString() }) else { return }
                guard let k = ReportKind(rawValue: raw) else {
                    throw FormatError(.invalidField, "must be \"crash\" or \"nonfatal\"", field: "kind")
                }
                kind = k
            } else if key.matches("timestamp") {
                timestamp = try r.optional("timestamp") { try $0.readTimestamp() }
            } else if key.matches("session_id") {
                guard let raw = try r.optional("session_id", { try $0.readString() }) else { return }
                guard let id = SessionID(raw) else {
                    throw FormatError(.invalidField, "must be 1–128 printable ASCII characters", field: "session_id")
                }
                sessionID = id
            } else if key.matches("user_id") {
                userID = try r.optional("user_id") { try $0.readString() }
            } else if key.matches("install_id") {
                installID = try r.optional("install_id") { try $0.readString() }
            } else if key.matches("environment") {
                environment = try r.optional("environment") { try $0.readString() }
            } else if key.matches("app") {
                app = try r.optional("app") { try $0.readApp() } ?? app
            } else if key.matches("device") {
                device = try r.optional("device") { try $0.readDevice() } ?? device
            } else if key.matches("error") {
                error = try r.optional("error") { try $0.readErrorInfo() }
            } else if key.matches("threads") {
                threads = try r.list("threads") { try $0.readThread() }
            } else if key.matches("modules") {
                modules = try r.list("modules") { try $0.readModule() }
            } else if key.matches("breadcrumbs") {
                if readBreadcrumbs {
                    breadcrumbs = try r.list("breadcrumbs") { try $0.readBreadcrumb() }
                } else {
                    try r.skipValue()
                }
            } else if key.matches("custom_keys") {
                customKeys =
                    try r.optional("custom_keys") { r in
                        var out: [(key: String, value: CustomValue)] = []
                        try r.readObject { r, key in
                            let name = key.string
                            do {
                                switch try r.peek() {
                                case .string: out.append((name, .string(try r.readString())))
                                case .number: out.append((name, .number(try r.readDouble())))
                                case .bool: out.append((name, .bool(try r.readBool())))
                                case .null: try r.literal("null")
                                default: throw FormatError(.invalidField, "expected a string, number or bool")
                                }
                            } catch let error as FormatError {
                                throw error.prefixed(name)
                            }
                        }
                        return out
                    } ?? []
            } else if key.matches("fault_address") {
                faultAddress = try r.optional("fault_address") { try $0.readAddress() }
            } else if key.matches("crash_message") {
                // What the crashing program printed (see `CrashMessage`); `IngestLimits` cuts it, never refuses it.
                crashMessage = try r.optional("crash_message") { try $0.readString() }
            } else if key.matches("fingerprint") {
                fingerprint = try r.optional("fingerprint") { r in
                    var out: [String] = []
                    try r.readArray { r, _ in out.append(try r.readString()) }
                    return out
                }
            } else {
                if batchKey, !key.hasEscapes, key.matches("reports"), try r.peek() == .array { throw BatchBody() }
                try r.skipValue()
            }
        }
        try r.expectEnd()

        guard let eventID else { throw FormatError(.invalidField, "is required", field: "event_id") }
        guard let kind else { throw FormatError(.invalidField, "is required", field: "kind") }
        guard let timestamp else { throw FormatError(.invalidField, "is required", field: "timestamp") }
        // Keys in order, last duplicate winning (what JSON parsers conventionally do).
        var seen = Set<String>()
        customKeys = customKeys.reversed().filter { seen.insert($0.key).inserted }.reversed()
        return Report(
            eventID: eventID, kind: kind, timestamp: timestamp, sessionID: sessionID, userID: userID,
            installID: installID,
            environment: environment, app: app, device: device, error: error, threads: threads, modules: modules,
            breadcrumbs: breadcrumbs, customKeys: customKeys, fingerprint: fingerprint, faultAddress: faultAddress,
            crashMessage: crashMessage)
    }
}

extension JSONReader {
    /// An ISO 8601 string or unix seconds.
    mutating func readTimestamp() throws -> Date {
        switch try peek() {
        case .number:
            let seconds = try readDouble()
            guard abs(seconds) < 1e11 else { throw FormatError(.invalidField, "unix seconds out of range") }
            return Date(timeIntervalSince1970: seconds)
        case .string:
            guard let date = Timestamps.parseISO8601(try readString()) else {
                throw FormatError(.invalidField, "expected an ISO 8601 date-time string or unix seconds")
            }
            return date
        default:
            throw FormatError(.invalidField, "expected an ISO 8601 date-time string or unix seconds")
        }
    }

    /// A `0x` hex string (any string is read as hex) or a non-negative integer.
    mutating func readAddress() throws -> UInt64 {
        switch try peek() {
        case .string:
            // Parsed in place: addresses are the most frequent value of a crash report.
            let key = try rawString()
            try scrubbingCheckRaw(key)
            var digits = key.raw
            if digits.count > 2, digits.first == UInt8(ascii: "0"),
                digits[digits.startIndex + 1] == UInt8(ascii: "x") || digits[digits.startIndex + 1] == UInt8(ascii: "X")
            {
                digits = digits.dropFirst(2)
            }
            guard !key.hasEscapes, (1...16).contains(digits.count) else {
                throw FormatError(.invalidField, "expected a hex address like \"0x1a2b\"")
            }
            var value: UInt64 = 0
            for b in digits {
                let d: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - 48
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - 87
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - 55
                default: throw FormatError(.invalidField, "expected a hex address like \"0x1a2b\"")
                }
                value = value << 4 | UInt64(d)
            }
            return value
        case .number:
            return try readUInt64()
        default:
            throw FormatError(.invalidField, "expected a hex address string or an integer")
        }
    }

    mutating func readApp() throws -> AppInfo {
        var app = AppInfo()
        try readObject { r, key in
            if key.matches("id") {
                app.id = try r.optional("id") { try $0.readString() }
            } else if key.matches("version") {
                app.version = try r.optional("version") { try $0.readLooseString() }
            } else if key.matches("build") {
                app.build = try r.optional("build") { try $0.readLooseString() }
            } else {
                try r.skipValue()
            }
        }
        return app
    }

    mutating func readDevice() throws -> DeviceInfo {
        var d = DeviceInfo()
        try readObject { r, key in
            if key.matches("model") {
                d.model = try r.optional("model") { try $0.readString() }
            } else if key.matches("os") {
                d.os = try r.optional("os") { try $0.readString() }
            } else if key.matches("os_version") {
                d.osVersion = try r.optional("os_version") { try $0.readLooseString() }
            } else if key.matches("arch") {
                d.arch = try r.optional("arch") { try $0.readString() }
            } else if key.matches("memory") {
                d.memoryBytes = try r.optional("memory") { try $0.readUInt64() }
            } else if key.matches("free_disk") {
                d.freeDiskBytes = try r.optional("free_disk") { try $0.readUInt64() }
            } else if key.matches("locale") {
                d.locale = try r.optional("locale") { try $0.readString() }
            } else if key.matches("os_build") {
                d.osBuild = try r.optional("os_build") { try $0.readLooseString() }
            } else if key.matches("simulator") {
                d.simulator = try r.optional("simulator") { try $0.readBool() }
            } else {
                try r.skipValue()
            }
        }
        return d
    }

    mutating func readErrorInfo() throws -> ErrorInfo {
        var type: String?
        var domain: String?
        var code: String?
        var message: String?
        var reason: String?
        try readObject { r, key in
            if key.matches("type") {
                type = try r.optional("type") { try $0.readString() }
            } else if key.matches("domain") {
                domain = try r.optional("domain") { try $0.readString() }
            } else if key.matches("code") {
                code = try r.optional("code") { try $0.readLooseString() }
            } else if key.matches("message") {
                message = try r.optional("message") { try $0.readString() }
            } else if key.matches("reason") {
                reason = try r.optional("reason") { try $0.readString() }
            } else {
                try r.skipValue()
            }
        }
        return ErrorInfo(type: type ?? domain, code: code, message: message ?? reason)
    }

    mutating func readThread() throws -> ThreadInfo {
        var thread = ThreadInfo()
        try readObject { r, key in
            if key.matches("name") {
                thread.name = try r.optional("name") { try $0.readString() }
            } else if key.matches("crashed") {
                thread.crashed = try r.optional("crashed") { try $0.readBool() } ?? false
            } else if key.matches("registers") {
                thread.registers = try r.registers("registers")
            } else if key.matches("frames") {
                thread.frames = try r.list("frames") { try $0.readFrame() }
            } else {
                try r.skipValue()
            }
        }
        return thread
    }

    mutating func readFrame() throws -> Frame {
        var frame = Frame()
        try readObject { r, key in
            if key.matches("address") {
                frame.address = try r.optional("address") { try $0.readAddress() }
            } else if key.matches("module") {
                frame.module = try r.optional("module") { try $0.readString() }
            } else if key.matches("function") {
                frame.function = try r.optional("function") { try $0.readString() }
            } else if key.matches("file") {
                frame.file = try r.optional("file") { try $0.readString() }
            } else if key.matches("line") {
                frame.line = try r.optional("line") { try $0.readInt() }
            } else if key.matches("column") {
                frame.column = try r.optional("column") { try $0.readInt() }
            } else if key.matches("kind") {
                guard let raw = try r.optional("kind", { try $0.readString() }) else { return }
                guard let kind = InstructionKind(rawValue: raw) else {
                    throw FormatError(.invalidField, "must be \"pc\" or \"return\"", field: "kind")
                }
                frame.instructionKind = kind
            } else {
                try r.skipValue()
            }
        }
        guard frame.address != nil || frame.function != nil else {
            throw FormatError(.invalidField, "needs an address or a function")
        }
        return frame
    }

    mutating func readModule() throws -> LoadedModule {
        var name: String?
        var path: String?
        var buildID: BuildID?
        var base: UInt64?
        var endAddress: UInt64?
        var size: UInt64?
        try readObject { r, key in
            if key.matches("name") {
                name = try r.optional("name") { try $0.readString() }
            } else if key.matches("path") {
                path = try r.optional("path") { try $0.readString() }
            } else if key.matches("build_id") {
                guard let raw = try r.optional("build_id", { try $0.readString() }) else { return }
                // Apple-style UUIDs arrive hyphenated; the hyphens carry nothing.
                guard let parsed = BuildID(String(decoding: raw.utf8.filter { $0 != UInt8(ascii: "-") }, as: UTF8.self))
                else {
                    throw FormatError(.invalidField, "must be an even number of hex digits (2–128)", field: "build_id")
                }
                buildID = parsed
            } else if key.matches("base_address") {
                base = try r.optional("base_address") { try $0.readAddress() }
            } else if key.matches("end_address") {
                endAddress = try r.optional("end_address") { try $0.readAddress() }
            } else if key.matches("size") {
                size = try r.optional("size") { try $0.readUInt64() }
            } else {
                try r.skipValue()
            }
        }
        guard let name = name ?? path else { throw FormatError(.invalidField, "needs a name or a path") }
        guard let base else { throw FormatError(.invalidField, "is required", field: "base_address") }
        if let endAddress {
            guard endAddress > base else {
                throw FormatError(.invalidField, "must be above base_address", field: "end_address")
            }
            size = endAddress - base
        }
        return LoadedModule(name: name, path: path, buildID: buildID, baseAddress: base, size: size)
    }

    mutating func readBreadcrumb() throws -> Breadcrumb {
        var timestamp: Date?
        var crumb = Breadcrumb(timestamp: Date(timeIntervalSince1970: 0))
        try readObject { r, key in
            if key.matches("timestamp") {
                timestamp = try r.optional("timestamp") { try $0.readTimestamp() }
            } else if key.matches("category") {
                crumb.category = try r.optional("category") { try $0.readString() }
            } else if key.matches("level") {
                crumb.level = try r.optional("level") { try $0.readString() }
            } else if key.matches("message") {
                crumb.message = try r.optional("message") { try $0.readString() }
            } else if key.matches("data") {
                crumb.data =
                    try r.optional("data") { r in
                        var out: [BreadcrumbData.Element] = []
                        try r.readObject { r, key in
                            let name = key.string
                            if let value = try r.optional(name, { try $0.readLooseString() }) {
                                out.append((name, value))
                            }
                        }
                        return BreadcrumbData(out)
                    } ?? [:]
            } else {
                try r.skipValue()
            }
        }
        guard let timestamp else { throw FormatError(.invalidField, "is required", field: "timestamp") }
        crumb.timestamp = timestamp
        return crumb
    }
}
