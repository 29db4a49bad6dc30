import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The native report format, v1, as the read API writes it (`docs/protocol.md`).
///
/// Wire structs mirror the JSON one to one (snake_case keys). Decoding does not go through them: it is
/// `NativeReportParser`, which reads the same shape straight into core types on the hot path. A test
/// checks that what these structs encode decodes back to the same report.
public struct NativeReportV1: Encodable, Equatable {
    var eventID: String?
    var kind: String?
    var timestamp: WireTimestamp?
    var sessionID: String?
    var userID: String?
    var installID: String?
    var environment: String?
    var app: App?
    var device: Device?
    var error: WireErrorInfo?
    var threads: [Thread]?
    var modules: [Module]?
    var breadcrumbs: [Crumb]?
    var customKeys: [String: WireCustomValue]?
    var fingerprint: [String]?
    var faultAddress: WireAddress?
    var crashMessage: String?

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id", kind, timestamp, sessionID = "session_id", userID = "user_id"
        case installID = "install_id", environment, app, device, error, threads, modules, breadcrumbs
        case customKeys = "custom_keys", fingerprint, faultAddress = "fault_address", crashMessage = "crash_message"
    }

    struct App: Encodable, Equatable {
        var id: String?
        var version: WireLooseString?
        var build: WireLooseString?
    }

    struct Device: Encodable, Equatable {
        var model: String?
        var os: String?
        var osVersion: String?
        var arch: String?
        var memory: UInt64?
        var freeDisk: UInt64?
        var locale: String?
        var osBuild: String?
        var simulator: Bool?
        enum CodingKeys: String, CodingKey {
            case model, os, osVersion = "os_version", arch, memory, freeDisk = "free_disk", locale, osBuild = "os_build"
            case simulator
        }
    }

    struct WireErrorInfo: Encodable, Equatable {
        var type: String?
        var domain: String?
        var code: WireLooseString?
        var message: String?
        var reason: String?
    }

    struct Thread: Encodable, Equatable {
        var name: String?
        var crashed: Bool?
        var registers: OrderedRegisters?
        var frames: [WireFrame]?
    }

    /// Registers as a JSON object in the client's order.
    struct OrderedRegisters: Encodable, Equatable {
        var registers: [Register]
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            for r in registers { try c.encode(WireAddress(r.value), forKey: Key(stringValue: r.name)) }
        }
    }

    struct WireFrame: Encodable, Equatable {
        var kind: String?
        var address: WireAddress?
        var module: String?
        var function: String?
        var file: String?
        var line: Int?
        var column: Int?
        /// How the server's stack walker found the frame (`FrameTrust`: `context`, `cfi`, `fp`, `scan`); only in
        /// answers, for the threads of a minidump report.
        var trust: String?
    }

    struct Module: Encodable, Equatable {
        var name: String?
        var path: String?
        var buildID: String?
        var baseAddress: WireAddress?
        var endAddress: WireAddress?
        var size: UInt64?
        enum CodingKeys: String, CodingKey {
            case name, path, buildID = "build_id", baseAddress = "base_address", endAddress = "end_address", size
        }
    }

    struct Crumb: Encodable, Equatable {
        var timestamp: WireTimestamp?
        var category: String?
        var level: String?
        var message: String?
        var data: [String: WireLooseString]?
    }
}

extension NativeReportV1 {
    /// The wire form of a core report (used to answer reads).
    init(_ report: Report) {
        eventID = report.eventID.rawValue
        kind = report.kind.rawValue
        timestamp = WireTimestamp(report.timestamp)
        sessionID = report.sessionID?.rawValue
        userID = report.userID
        installID = report.installID
        environment = report.environment
        app = App(
            id: report.app.id, version: report.app.version.map(WireLooseString.init),
            build: report.app.build.map(WireLooseString.init))
        let d = report.device
        device = Device(
            model: d.model, os: d.os, osVersion: d.osVersion, arch: d.arch, memory: d.memoryBytes,
            freeDisk: d.freeDiskBytes,
            locale: d.locale, osBuild: d.osBuild, simulator: d.simulator)
        error = report.error.map {
            WireErrorInfo(
                type: $0.type, domain: nil, code: $0.code.map(WireLooseString.init), message: $0.message, reason: nil)
        }
        threads = report.threads.map { t in
            Thread(
                name: t.name, crashed: t.crashed,
                registers: t.registers.isEmpty ? nil : OrderedRegisters(registers: t.registers),
                frames: t.frames.map {
                    WireFrame(
                        kind: $0.instructionKind?.rawValue, address: $0.address.map(WireAddress.init),
                        module: $0.module, function: $0.function, file: $0.file,
                        line: $0.line, column: $0.column, trust: $0.trust?.rawValue)
                })
        }
        modules = report.modules.map { m in
            Module(
                name: m.name, path: m.path, buildID: m.buildID?.rawValue, baseAddress: WireAddress(m.baseAddress),
                endAddress: m.size.map { WireAddress(m.baseAddress &+ $0) }, size: m.size)
        }
        breadcrumbs = report.breadcrumbs.map {
            Crumb(
                timestamp: WireTimestamp($0.timestamp), category: $0.category, level: $0.level, message: $0.message,
                data: Dictionary(uniqueKeysWithValues: $0.data.map { ($0.key, WireLooseString($0.value)) }))
        }
        customKeys = Dictionary(
            report.customKeys.map { ($0.key, WireCustomValue($0.value)) }, uniquingKeysWith: { a, _ in a })
        fingerprint = report.fingerprint
        faultAddress = report.faultAddress.map(WireAddress.init)
        crashMessage = report.crashMessage
    }
}

/// Decoding and encoding of native v1 report bodies.
public enum NativeReports {
    /// One report of a body: decoded, or why it was refused.
    public typealias Item = Result<PreparedReport, FormatError>

    /// A decoded body: whether it was a batch, and each report's outcome in order.
    public struct Decoded: Sendable, Equatable {
        public var isBatch: Bool
        public var items: [Item]
    }

    /// Splits and decodes an inflated body.
    ///
    /// Structural errors (not JSON, a single report that is invalid) throw; in a batch, each invalid
    /// report becomes a failed item whose field path starts with `reports[i]`, and the rest still count.
    public static func decode(_ bytes: [UInt8], limits: IngestLimits) throws -> Decoded {
        if let report = single(bytes, limits: limits) { return Decoded(isBatch: false, items: [.success(report)]) }
        return try decodeSplitting(bytes, limits: limits)
    }

    /// `decode` with every body split first (`JSONBatchSplitter`): what `decode` answers for anything but one valid
    /// report, and for one valid report the same as its shortcut (`single`; the fuzz harness and NativeReportsTests
    /// compare the two).
    package static func decodeSplitting(_ bytes: [UInt8], limits: IngestLimits) throws -> Decoded {
        switch try JSONBatchSplitter.split(bytes) {
        case .single(let range):
            return Decoded(isBatch: false, items: [.success(try decodeOne(bytes, range: range, limits: limits))])
        case .batch(let ranges):
            guard !ranges.isEmpty else {
                throw FormatError(.invalidField, "must hold at least one report", field: "reports")
            }
            guard ranges.count <= limits.maxReportsPerBatch else {
                throw FormatError(
                    .tooLarge, "a batch holds at most \(limits.maxReportsPerBatch) reports", field: "reports")
            }
            let items: [Item] = ranges.enumerated().map { i, range in
                Result { try decodeOne(bytes, range: range, limits: limits) }
                    .mapError { ($0 as? FormatError ?? FormatError(.invalidField, "\($0)")).prefixed("reports[\(i)]") }
            }
            return Decoded(isBatch: true, items: items)
        }
    }

    /// A body that is one valid report, parsed without the splitter's walk over it first (the common case: an SDK
    /// sends a crash as it happens; the walk was ~8 % of decoding's instructions). Nil for anything else — a batch,
    /// an object with a `reports` array (which the splitter calls a batch), a report too large, any error — which
    /// then takes the splitter's path, so every answer is what that path gives: the same report and range (the
    /// object without the whitespace or byte order marks around it), the same errors. A refused single report is so
    /// parsed twice; refusals are rare, and a batch is known at its first byte or its `reports` key.
    static func single(_ bytes: [UInt8], limits: IngestLimits) -> PreparedReport? {
        bytes.withUnsafeBufferPointer { buffer -> PreparedReport? in
            guard let range = trimmedObject(buffer), range.count <= limits.maxReportBytes else { return nil }
            var reader = JSONReader(bytes: buffer, range: range)
            guard var report = try? NativeReportParser.parse(&reader, batchKey: true) else { return nil }
            limits.apply(to: &report)
            return PreparedReport(report: report, range: range)
        }
    }

    /// The range of `bytes` without the JSON whitespace and UTF-8 byte order marks before and after it (what
    /// `JSONBatchSplitter` skips), when it starts with `{` and ends with `}`.
    static func trimmedObject(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        let range = trimmed(bytes)
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "{"),
            bytes[range.upperBound - 1] == UInt8(ascii: "}")
        else { return nil }
        return range
    }

    /// The range of `bytes` without the JSON whitespace and UTF-8 byte order marks before and after it.
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d }
        var start = 0
        var end = bytes.count
        while start < end {
            if isSpace(bytes[start]) {
                start += 1
            } else if end - start >= 3, bytes[start] == 0xef, bytes[start + 1] == 0xbb, bytes[start + 2] == 0xbf {
                start += 3
            } else {
                break
            }
        }
        // Backwards is unambiguous: no byte of a mark is whitespace.
        while end > start {
            if isSpace(bytes[end - 1]) {
                end -= 1
            } else if end - start >= 3, bytes[end - 1] == 0xbf, bytes[end - 2] == 0xbb, bytes[end - 3] == 0xef {
                end -= 3
            } else {
                break
            }
        }
        return start..<end
    }

    static func decodeOne(_ bytes: [UInt8], range: Range<Int>, limits: IngestLimits, breadcrumbs: Bool = true) throws
        -> PreparedReport
    {
        guard range.count <= limits.maxReportBytes else {
            throw FormatError(.tooLarge, "a report may be at most \(limits.maxReportBytes) bytes")
        }
        var report = try NativeReportParser.parse(bytes, range: range, breadcrumbs: breadcrumbs)
        limits.apply(to: &report)
        return PreparedReport(report: report, range: range)
    }

    /// Re-reads one stored report from its inflated payload, in the payload's format (the same validation
    /// and trimming as at ingest, so the result is what was accepted).
    public static func reread(_ payload: StoredPayload, range: Range<Int>, limits: IngestLimits) throws -> Report {
        try reread(inflated: inflate(payload), format: payload.format, range: range, limits: limits)
    }

    /// A stored payload's inflated bytes (at most its recorded inflated size): inflate once, then `reread(inflated:…)`
    /// each report of it.
    public static func inflate(_ payload: StoredPayload) throws -> [UInt8] {
        try BodyDecoding.inflateStored(payload.bytes, limit: payload.inflatedSize)
    }

    /// What a stored report is read again for.
    public enum RereadPurpose: Sendable {
        /// All of it (the read API, the dashboard).
        case everything
        /// What processing reads (symbolication, grouping, the search entry): a native report's or a Sentry
        /// event's breadcrumbs are skipped, not built (nothing there reads them; they were a third of the worker's
        /// parse of a native report).
        case processing
    }

    /// Re-reads one stored report from its payload's inflated bytes (`inflate`), in the payload's format.
    public static func reread(
        inflated bytes: [UInt8], format: StoredPayload.Format, range: Range<Int>, limits: IngestLimits,
        purpose: RereadPurpose = .everything
    ) throws -> Report {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else {
            throw FormatError(.malformedJSON, "stored payload is shorter than the report's range")
        }
        switch format {
        case .nativeV1:
            return try decodeOne(bytes, range: range, limits: limits, breadcrumbs: purpose == .everything).report
        case .swiftCrash: return try SwiftCrashReports.parse(envelope: Array(bytes[range]), limits: limits)
        case .sentryEvent:
            return try SentryEvents.reread(bytes, range: range, limits: limits, breadcrumbs: purpose == .everything)
        }
    }

    /// The read API's JSON for a stored report: the native v1 shape plus what the server recorded.
    public static func encode(_ stored: StoredReport, symbolication: SymbolicatedReport? = nil) throws -> [UInt8] {
        /// A resolved frame as stored, plus `function_short`: the readable name (`FunctionNames.simplified`)
        /// beside the full demangled `function`.
        struct FrameOut: Encodable {
            var frame: ResolvedFrame
            func encode(to encoder: any Encoder) throws {
                try frame.encode(to: encoder)
                var c = encoder.container(keyedBy: Extra.self)
                try c.encodeIfPresent(frame.function.map(FunctionNames.simplified), forKey: .functionShort)
            }
            enum Extra: String, CodingKey { case functionShort = "function_short" }
        }
        struct SlotOut: Encodable {
            var frames: [FrameOut]
            var buildID: String?
            var status: String
            var offset: UInt64?
            enum CodingKeys: String, CodingKey { case frames, buildID = "build_id", status, offset }
            init(_ slot: SymbolicatedFrameSlot) {
                frames = slot.frames.map(FrameOut.init)
                buildID = slot.buildID
                status = slot.status
                offset = slot.offset
            }
        }
        struct SymbolicationOut: Encodable {
            var state: String
            var missing: [MissingModule]
            var threads: [[SlotOut]]
            var failureReason: String?
            /// Where the crash message's file:line is in the app's code, when the stack never reached it.
            var messageSite: SlotOut?
            enum CodingKeys: String, CodingKey {
                case state, missing, threads, failureReason = "failure_reason", messageSite = "message_site"
            }
        }
        struct Out: Encodable {
            var report: NativeReportV1
            var projectID: Int64
            var release: String?
            var receivedAt: WireTimestamp
            var trimmed: TrimmedOut
            var symbolication: SymbolicationOut?
            var issueID: Int64?
            var crashMessage: String?
            var tags: OrderedStrings
            var sdk: SDKOut?
            var contexts: [String: OrderedStrings]
            func encode(to encoder: any Encoder) throws {
                try report.encode(to: encoder)
                var c = encoder.container(keyedBy: Extra.self)
                try c.encode(tags, forKey: .tags)
                try c.encodeIfPresent(sdk, forKey: .sdk)
                try c.encode(contexts, forKey: .contexts)
                try c.encode(projectID, forKey: .projectID)
                try c.encodeIfPresent(release, forKey: .release)
                try c.encode(receivedAt, forKey: .receivedAt)
                try c.encode(trimmed, forKey: .trimmed)
                try c.encodeIfPresent(symbolication, forKey: .symbolication)
                // Always present: null says "not grouped yet", which a client polling for the issue needs to see.
                try c.encode(issueID, forKey: .issueID)
                try c.encodeIfPresent(crashMessage, forKey: .crashMessage)
            }
            enum Extra: String, CodingKey {
                case projectID = "project_id", release, receivedAt = "received_at", trimmed, symbolication
                case issueID = "issue_id", crashMessage = "crash_message", tags, sdk, contexts
            }
        }
        let contexts = stored.report.contexts.map { context in
            (context.name, OrderedStrings(pairs: (context.type.map { [("type", $0)] } ?? []) + context.values))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let out = Out(
            report: NativeReportV1(stored.report), projectID: stored.project.rawValue, release: stored.report.release,
            receivedAt: WireTimestamp(stored.receivedAt), trimmed: TrimmedOut(stored.report.trimmed),
            symbolication: symbolication.map {
                SymbolicationOut(
                    state: $0.state.rawValue, missing: $0.missing, threads: $0.threads.map { $0.map(SlotOut.init) },
                    failureReason: $0.failure, messageSite: $0.messageSite.map(SlotOut.init))
            },
            issueID: stored.issue?.rawValue, crashMessage: stored.report.crashMessage,
            tags: OrderedStrings(pairs: stored.report.tags), sdk: stored.report.sdk.map(SDKOut.init),
            contexts: Dictionary(contexts, uniquingKeysWith: { first, _ in first }))
        return Array(try encoder.encode(out))
    }
}

/// String pairs as one JSON object, in their order (tags, a context's values).
struct OrderedStrings: Encodable {
    var pairs: [(key: String, value: String)]
    typealias Name = NativeReportV1.OrderedRegisters.Key
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Name.self)
        for (key, value) in pairs { try c.encode(value, forKey: Name(stringValue: key)) }
    }
}

/// A report's `sdk` in the read API: `name`, `version`, `integrations`, `packages` (`[{name, version}]`).
struct SDKOut: Encodable {
    struct Package: Encodable {
        var name: String
        var version: String?
    }
    var name: String
    var version: String?
    var integrations: [String]
    var packages: [Package]
    init(_ sdk: SDKInfo) {
        name = sdk.name
        version = sdk.version
        integrations = sdk.integrations
        packages = sdk.packages.map { Package(name: $0.name, version: $0.version) }
    }
}

/// The `trimmed` object of stored reports: what the limits removed.
public struct TrimmedOut: Codable, Equatable, Sendable {
    public var customKeysDropped: Int
    public var valuesTruncated: Int
    public var breadcrumbsDropped: Int
    public var threadsDropped: Int
    public var framesDropped: Int
    public var modulesDropped: Int
    /// Counted when a report is read whole (`GET /reports/{id}`), not stored with its row: present only when not 0.
    public var tagsDropped: Int?
    public var contextsDropped: Int?
    public var contextKeysDropped: Int?
    enum CodingKeys: String, CodingKey {
        case customKeysDropped = "custom_keys_dropped", valuesTruncated = "values_truncated"
        case breadcrumbsDropped = "breadcrumbs_dropped", threadsDropped = "threads_dropped"
        case framesDropped = "frames_dropped", modulesDropped = "modules_dropped"
        case tagsDropped = "tags_dropped", contextsDropped = "contexts_dropped"
        case contextKeysDropped = "context_keys_dropped"
    }
    public init(_ t: TrimCounts) {
        customKeysDropped = t.customKeysDropped
        valuesTruncated = t.valuesTruncated
        breadcrumbsDropped = t.breadcrumbsDropped
        threadsDropped = t.threadsDropped
        framesDropped = t.framesDropped
        modulesDropped = t.modulesDropped
        tagsDropped = t.tagsDropped == 0 ? nil : t.tagsDropped
        contextsDropped = t.contextsDropped == 0 ? nil : t.contextsDropped
        contextKeysDropped = t.contextKeysDropped == 0 ? nil : t.contextKeysDropped
    }
}
