import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON crash report the Swift runtime writes by itself
/// (`SWIFT_BACKTRACE=enable=yes,format=json,symbolicate=off,threads=all,images=all,output-to=DIR`):
/// `{timestamp, kind: "crashReport", description, faultAddress, platform, architecture,
/// threads[{name, crashed, registers, frames[{kind, address}]}], images[{name, buildId, path, baseAddress,
/// endOfText}], capturedMemory, backtraceTime}`.
///
/// The file says nothing about the app, the user or the session, so the client passes those beside it
/// (`SwiftCrashMetadata`). What is stored is an envelope holding both, the crash file byte for byte:
/// `{"faultline_meta": {...}, "swift_crash": <the file>}`; re-reading a stored report parses the envelope. Apple's own
/// crash reports use the same envelope with the file as a string under `apple_crash` (`AppleCrashReports`).
/// `capturedMemory` is not kept in the report (it can hold user data); it stays in the raw payload.
public enum SwiftCrashReports {
    /// What the client says about a crash file.
    public struct Metadata: Codable, Sendable, Equatable {
        public var eventID: String
        public var appID: String?
        public var appVersion: String?
        public var appBuild: String?
        public var userID: String?
        public var installID: String?
        public var sessionID: String?
        public var environment: String?
        /// What the crashing program printed (free text: scrub it with `scrubbed(by:)` before storing).
        public var message: String?

        enum CodingKeys: String, CodingKey {
            case eventID = "event_id", appID = "app_id", appVersion = "app_version", appBuild = "app_build"
            case userID = "user_id", installID = "install_id", sessionID = "session_id", environment, message
        }

        public init(
            eventID: String, appID: String? = nil, appVersion: String? = nil, appBuild: String? = nil,
            userID: String? = nil,
            installID: String? = nil, sessionID: String? = nil, environment: String? = nil, message: String? = nil
        ) {
            self.message = message
            self.eventID = eventID
            self.appID = appID
            self.appVersion = appVersion
            self.appBuild = appBuild
            self.userID = userID
            self.installID = installID
            self.sessionID = sessionID
            self.environment = environment
        }

        /// The metadata with its free text (`message`) passed through the project's PII rules, and a user id that
        /// is an e-mail address made pseudonymous (`Scrubber.identity(of:)`). The other fields are identities and
        /// protocol values the crash-free numbers need, kept as sent (docs/privacy.md).
        public func scrubbed(by scrubber: Scrubber) -> Metadata {
            var copy = self
            if let message, let clean = scrubber.scrub(message) { copy.message = clean }
            if let userID, let pseudonym = scrubber.identity(of: userID) { copy.userID = pseudonym }
            return copy
        }
    }

    /// The stored form: metadata and the untouched crash file in one JSON object.
    public static func envelope(_ crash: [UInt8], metadata: Metadata) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let meta = try encoder.encode(metadata)
        return Array("{\"faultline_meta\":".utf8) + Array(meta) + Array(",\"swift_crash\":".utf8) + crash
            + Array("}".utf8)
    }

    /// The largest envelope `parse(envelope:)` reads: a crash file of the documented size (`maxBatchBytes`, checked
    /// on the file as uploaded, where it arrives) with room for what storing it adds. An Apple file is stored as a
    /// JSON string, so each `"`, `\\`, line break or tab in it takes 2 bytes, and the project's scrubbing may write
    /// `[Filtered]` over a shorter value: 3 × the limit holds any real report; only a file mostly of other control
    /// characters (6 bytes each) can exceed it, and is refused with 413 where it arrives. The metadata
    /// (query parameters) gets 1 MiB.
    public static func maxEnvelopeBytes(_ limits: IngestLimits) -> Int {
        let (file, overflow) = limits.maxBatchBytes.multipliedReportingOverflow(by: 3)
        let (total, overflowAgain) = file.addingReportingOverflow(1024 * 1024)
        return overflow || overflowAgain ? Int.max : total
    }

    /// Parses an envelope into a report (validated and trimmed like every report).
    /// - Throws: `FormatError`; `.tooLarge` for an envelope over `maxEnvelopeBytes(limits)`.
    public static func parse(envelope bytes: [UInt8], limits: IngestLimits) throws -> Report {
        guard bytes.count <= maxEnvelopeBytes(limits) else {
            throw FormatError(.tooLarge, "a stored crash report may be at most \(maxEnvelopeBytes(limits)) bytes")
        }
        var report = try JSONReader.with(bytes, range: 0..<bytes.count) { r in
            var meta: Metadata?
            var apple: String?
            var crash: Report?
            try r.readObject { r, key in
                if key.matches("faultline_meta") {
                    meta = try r.readMetadata()
                } else if key.matches("apple_crash") {
                    apple = try r.readString()  // Apple's .ips/.crash file, read below (`AppleCrashReports`)
                } else if key.matches("swift_crash") {
                    do {
                        crash = try r.readSwiftCrash()
                    } catch let error as FormatError {
                        throw error.field == nil || error.code == .malformedJSON
                            ? FormatError(error.code, error.message) : error
                    }
                } else {
                    try r.skipValue()
                }
            }
            try r.expectEnd()
            if let meta, let apple {
                return try AppleCrashReports.report(file: Array(apple.utf8), metadata: meta, limits: limits)
            }
            guard let meta, var crash else { throw FormatError(.malformedJSON, "not a stored Swift crash envelope") }
            guard let id = EventID(meta.eventID) else {
                throw FormatError(.invalidField, "must be a UUID or 32 hex digits", field: "event_id")
            }
            crash.eventID = id
            crash.app = AppInfo(id: meta.appID, version: meta.appVersion, build: meta.appBuild)
            crash.userID = meta.userID
            crash.installID = meta.installID
            if let raw = meta.sessionID {
                guard let session = SessionID(raw) else {
                    throw FormatError(.invalidField, "must be 1–128 printable ASCII characters", field: "session_id")
                }
                crash.sessionID = session
            }
            crash.environment = meta.environment
            crash.crashMessage = meta.message
            return crash
        }
        limits.apply(to: &report)
        return report
    }
}

extension JSONReader {
    mutating func readMetadata() throws -> SwiftCrashReports.Metadata {
        var m = SwiftCrashReports.Metadata(eventID: "")
        try readObject { r, key in
            if key.matches("event_id") {
                m.eventID = try r.readString()
            } else if key.matches("app_id") {
                m.appID = try r.optional("app_id") { try $0.readString() }
            } else if key.matches("app_version") {
                m.appVersion = try r.optional("app_version") { try $0.readString() }
            } else if key.matches("app_build") {
                m.appBuild = try r.optional("app_build") { try $0.readString() }
            } else if key.matches("user_id") {
                m.userID = try r.optional("user_id") { try $0.readString() }
            } else if key.matches("install_id") {
                m.installID = try r.optional("install_id") { try $0.readString() }
            } else if key.matches("session_id") {
                m.sessionID = try r.optional("session_id") { try $0.readString() }
            } else if key.matches("environment") {
                m.environment = try r.optional("environment") { try $0.readString() }
            } else if key.matches("message") {
                m.message = try r.optional("message") { try $0.readString() }
            } else {
                try r.skipValue()
            }
        }
        return m
    }

    /// The Swift runtime's crash report, without the client's metadata (the event id is filled in later).
    mutating func readSwiftCrash() throws -> Report {
        var timestamp: Date?
        var kind: String?
        var description: String?
        var faultAddress: UInt64?
        var platform: String?
        var architecture: String?
        var threads: [ThreadInfo] = []
        var modules: [LoadedModule] = []
        guard try peek() == .object else { throw FormatError(.malformedJSON, "the crash report must be a JSON object") }
        try readObject { r, key in
            if key.matches("timestamp") {
                timestamp = try r.optional("timestamp") { try $0.readTimestamp() }
            } else if key.matches("kind") {
                kind = try r.optional("kind") { try $0.readString() }
            } else if key.matches("description") {
                description = try r.optional("description") { try $0.readString() }
            } else if key.matches("faultAddress") {
                faultAddress = try r.optional("faultAddress") { try $0.readAddress() }
            } else if key.matches("platform") {
                platform = try r.optional("platform") { try $0.readString() }
            } else if key.matches("architecture") {
                architecture = try r.optional("architecture") { try $0.readString() }
            } else if key.matches("threads") {
                threads = try r.list("threads") { try $0.readSwiftThread() }
            } else if key.matches("images") {
                modules = try r.list("images") { try $0.readSwiftImage() }
            } else {
                try r.skipValue()  // capturedMemory, backtraceTime, and whatever later runtimes add
            }
        }
        guard kind == "crashReport" else {
            throw FormatError(
                .invalidField, "must be \"crashReport\" (is this a Swift runtime crash file?)", field: "kind")
        }
        guard let timestamp else { throw FormatError(.invalidField, "is required", field: "timestamp") }
        guard !threads.isEmpty else {
            throw FormatError(.invalidField, "must hold at least one thread", field: "threads")
        }
        return Report(
            eventID: EventID(String(repeating: "0", count: 32))!, kind: .crash, timestamp: timestamp,
            device: DeviceInfo(os: platform, arch: architecture),
            error: ErrorInfo(type: description.map(Self.errorType), message: description),
            threads: threads, modules: modules, faultAddress: faultAddress)
    }

    /// "Fatal error: Index out of range" → "Fatal error"; "Illegal instruction" stays.
    static func errorType(_ description: String) -> String {
        guard let colon = description.firstIndex(of: ":") else { return description }
        return String(description[..<colon])
    }

    mutating func readSwiftThread() throws -> ThreadInfo {
        var thread = ThreadInfo()
        try readObject { r, key in
            if key.matches("name") {
                thread.name = try r.optional("name") { try $0.readString() }
            } else if key.matches("crashed") {
                thread.crashed = try r.optional("crashed") { try $0.readBool() } ?? false
            } else if key.matches("registers") {
                thread.registers = try r.registers("registers")
            } else if key.matches("frames") {
                thread.frames =
                    try r.optional("frames") { r in
                        var out: [Frame] = []
                        try r.readArray { r, _ in
                            if let frame = try r.readSwiftFrame() { out.append(frame) }
                        }
                        return out
                    } ?? []
            } else {
                try r.skipValue()
            }
        }
        return thread
    }

    /// A frame, or nil for the markers without an address (`truncated`, `omittedFrames`).
    mutating func readSwiftFrame() throws -> Frame? {
        var kind: String?
        var address: UInt64?
        try readObject { r, key in
            if key.matches("kind") {
                kind = try r.optional("kind") { try $0.readString() }
            } else if key.matches("address") {
                address = try r.optional("address") { try $0.readAddress() }
            } else {
                try r.skipValue()
            }
        }
        guard let address else { return nil }
        switch kind {
        case "programCounter", "asyncResumePoint": return Frame(address: address, instructionKind: .programCounter)
        case "returnAddress": return Frame(address: address, instructionKind: .returnAddress)
        default: return Frame(address: address)
        }
    }

    mutating func readSwiftImage() throws -> LoadedModule {
        var name: String?
        var path: String?
        var buildID: BuildID?
        var base: UInt64?
        var endOfText: UInt64?
        try readObject { r, key in
            if key.matches("name") {
                name = try r.optional("name") { try $0.readString() }
            } else if key.matches("path") {
                path = try r.optional("path") { try $0.readString() }
            } else if key.matches("buildId") {
                guard let raw = try r.optional("buildId", { try $0.readString() }) else { return }
                guard let id = BuildID(raw) else {
                    throw FormatError(.invalidField, "must be hex digits", field: "buildId")
                }
                buildID = id
            } else if key.matches("baseAddress") {
                base = try r.optional("baseAddress") { try $0.readAddress() }
            } else if key.matches("endOfText") {
                endOfText = try r.optional("endOfText") { try $0.readAddress() }
            } else {
                try r.skipValue()
            }
        }
        guard let base else { throw FormatError(.invalidField, "is required", field: "baseAddress") }
        let size = endOfText.flatMap { $0 > base ? $0 - base : nil }
        return LoadedModule(name: name ?? path ?? "?", path: path, buildID: buildID, baseAddress: base, size: size)
    }
}
