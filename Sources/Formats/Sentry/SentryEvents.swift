import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sentry event JSON → `Report` (client-protocols.md §1.4, §1.5).
///
/// The mapping, field by field:
/// - `event_id`: the payload's, else the envelope header's, else one derived from the payload bytes
///   (FNV-1a, so a retried body is recognised as a duplicate); both spellings are normalised.
/// - `timestamp` (ISO 8601 or unix seconds): else `fallbackTime` (the envelope's `sent_at`, else the
///   time received; pure code has no clock).
/// - `exception.values`: cause first, captured exception last, so the **last** value is the error
///   (`type`, `value` → message, `mechanism.meta.signal.number`/`errno.number` → code). The report is a
///   crash when any value has `mechanism.handled: false` or `level` is `fatal`, else a non-fatal.
///   Without an exception, `logentry`/`message` (params formatted) is the error message.
/// - Stacks: Sentry lists frames outermost first, Faultline innermost first, so they are reversed;
///   addresses are program counters or return addresses per `instruction_addr_adjustment`
///   (`SentryStacktrace.faultlineFrames`). The error's stack comes from the last exception that has one
///   (else the legacy top-level `stacktrace`). With `threads.values`, every thread is kept; the exception's
///   thread (`thread_id`, else `crashed: true`, else `current: true`) gets the exception's stack when it has
///   none of its own, is marked crashed for a crash, and is moved first. Without threads the exception's
///   stack is one unnamed thread.
/// - `release` + `dist` → `app.version` + `app.build` through `ReleaseName.parse` (the release is the version:
///   `com.x@2.4.0+240` and `2.4.0` with dist `240` are release `2.4.0`, build `240`, the name its sessions use, so
///   crash-free numbers meet); the release's package fills `app.id` when the context has none. Without a release,
///   `contexts.app.app_version` (+ `app_build`, else `dist`). `contexts.app.app_identifier` → `app.id`; `app_version`/`app_build` are also kept as `app.displayVersion`/`displayBuild`
///   (what the app says it is, shown beside the release). `contexts.device` (`model`, `arch`, `memory_size`,
///   `free_storage`, `simulator`), `contexts.os` (`name`, `version`, `build`) and `contexts.culture.locale` →
///   device; without `contexts.device.arch`, the first Mach-O image's `arch`.
/// - Apple crashes (Sentry Cocoa): `mechanism.meta.mach_exception` (+ `meta.signal.name`) → `error.mach`, from which
///   titles are written (`MachException.title`); `mechanism.data.relevant_address`, else a bad access's subcode →
///   `faultAddress`; a Mach or signal exception's value that is the Swift runtime's fatal-error line (Sentry Cocoa
///   copies libswiftCore's crash info there) → `crashMessage`.
/// - `user.id`, else `user.email`, else `user.username` → user id. `environment` as is.
/// - Tags (`Report.tags`), in priority order when the 64-tag limit bites: the event's own facts that Sentry indexes as
///   tags (`level`, `mechanism`, `platform`, `server_name`, `exception_module`), then `tags` (object or pairs; values
///   as strings; the last of a repeated key wins). Within each group keys are cut in sorted order; what is cut is
///   counted (`tagsDropped`).
/// - Custom keys: scalar `extra` values as `extra.<name>` (at most 64, cut in sorted order and counted). Nested
///   `extra` values are skipped: that is where SDKs put bulk such as `sys.argv` and `sentry-cli send-event`'s whole
///   process environment.
/// - `sdk` (`name`, `version`, `integrations`, `packages`) → `Report.sdk`.
/// - Every other context (not `device`, `os`, `app`, `culture`), such as `runtime`, `trace` or the app's own
///   `set_context("order", …)`, → one `ReportContext` each, values as text (`readSentryContext`); at most 32 blocks
///   of 64 values.
/// - `breadcrumbs` (`values` or a bare array): timestamp (else the event's), category, level, message,
///   `data` values as strings (nested ones as JSON text).
/// - `fingerprint` as sent, except that `["{{ default }}"]` means "the default grouping" (none).
/// - `debug_meta.images[]` with an `image_addr` → modules (`SentryEventParser`'s `readSentryImage`).
///
/// Then `IngestLimits.apply(to:)` trims the report. Unknown fields are ignored; wrong types of known fields
/// throw a `FormatError` naming the field (`exception.values[0].stacktrace.frames[3].lineno`).
public enum SentryEvents {
    /// Parses the event JSON at `range` of `bytes` (an envelope's `event` item, or a whole store body).
    ///
    /// - Parameters:
    ///   - fallbackEventID: the envelope header's `event_id`, used when the payload has none.
    ///   - fallbackTime: the event time when the payload has no `timestamp`.
    ///   - breadcrumbs: false skips them (a stored event read again for processing).
    /// - Throws: `FormatError` (`.tooLarge` past `limits.maxReportBytes`, else with the field to blame).
    public static func report(
        _ bytes: [UInt8], range: Range<Int>, fallbackEventID: EventID?, fallbackTime: Date, limits: IngestLimits,
        breadcrumbs: Bool = true
    ) throws -> Report {
        guard range.count <= limits.maxReportBytes else {
            throw FormatError(.tooLarge, "an event may be at most \(limits.maxReportBytes) bytes")
        }
        let fields = try JSONReader.with(bytes, checked: range) {
            try SentryEventParser.parse(&$0, limits: limits, breadcrumbs: breadcrumbs)
        }
        let eventID = fields.eventID ?? fallbackEventID ?? derivedEventID(bytes, range: range)
        var report = assemble(fields, eventID: eventID, timestamp: fields.timestamp ?? fallbackTime, limits: limits)
        limits.apply(to: &report)
        return report
    }

    /// Parses one event payload on its own (no envelope): without a `timestamp` the event is dated
    /// 1970-01-01, without an `event_id` it gets one derived from its bytes.
    public static func report(_ bytes: [UInt8], limits: IngestLimits) throws -> Report {
        try report(
            bytes, range: 0..<bytes.count, fallbackEventID: nil, fallbackTime: Date(timeIntervalSince1970: 0),
            limits: limits)
    }

    /// Re-reads a stored event: `bytes` is the stored envelope (or store body), `range` its event payload.
    ///
    /// The fallbacks come from the envelope header when there is one (`event_id`, `sent_at`), so an event
    /// that relied on them reads back the same. The one thing not stored is the time received: an event with
    /// neither `timestamp` nor `sent_at` reads back dated 1970-01-01 (the stored row keeps the real time).
    static func reread(_ bytes: [UInt8], range: Range<Int>, limits: IngestLimits, breadcrumbs: Bool = true) throws
        -> Report
    {
        let header = range.lowerBound > 0 ? try? SentryEnvelope.parseHeader(bytes) : nil
        return try report(
            bytes, range: range, fallbackEventID: header?.eventID,
            fallbackTime: header?.sentAt ?? Date(timeIntervalSince1970: 0), limits: limits, breadcrumbs: breadcrumbs)
    }

    /// An id for an event that came without one: 128 bits of FNV-1a over its bytes (two seeds), so the
    /// same bytes always get the same id and a resent event is a duplicate rather than a second event.
    static func derivedEventID(_ bytes: [UInt8], range: Range<Int>) -> EventID {
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for i in range {
                hash ^= UInt64(bytes[i])
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return hash
        }
        let hex =
            Hex.encode(withUnsafeBytes(of: fnv(0xcbf2_9ce4_8422_2325).bigEndian, Array.init))
            + Hex.encode(withUnsafeBytes(of: fnv(0x8422_2325_cbf2_9ce4).bigEndian, Array.init))
        return EventID(hex)!  // 32 hex digits by construction
    }

    static func assemble(_ e: SentryEventFields, eventID: EventID, timestamp: Date, limits: IngestLimits) -> Report {
        let kind: ReportKind = e.level == "fatal" || e.exceptions.contains { $0.handled == false } ? .crash : .nonfatal
        let primary = e.exceptions.last
        let message = nonEmpty(e.logentry) ?? nonEmpty(e.message)
        var error: ErrorInfo?
        var crashMessage: String?
        if let primary {
            error = ErrorInfo(
                type: primary.type, code: primary.code, message: primary.value ?? message, mach: primary.mach)
            // Sentry Cocoa puts the Swift runtime's last words (`App/Cart.swift:12: Fatal error: Index out of range`,
            // from libswiftCore's crash info) in a Mach exception's value: they are the crash message.
            if kind == .crash,
                primary.mach != nil || primary.mechanismType == "mach" || primary.mechanismType == "signal",
                let value = primary.value, let parsed = CrashMessage.parse(value), parsed.kind == .swiftFatalError
            {
                crashMessage = value
            }
        } else if let message {
            error = ErrorInfo(message: message)
        }
        var faultAddress = primary?.relevantAddress
        if faultAddress == nil, let mach = primary?.mach, mach.codeName() != nil { faultAddress = mach.subcode }
        var device = e.device
        if device.arch == nil { device.arch = e.modules.first(where: { $0.format == .macho && $0.arch != nil })?.arch }

        var app = AppInfo(id: e.appContext.id)
        // One release, as the sessions name it (`ReleaseName`): `release` + `dist`, or `package@version+build`,
        // is the version with the build beneath it, so crashes and sessions of a release meet.
        if let release = ReleaseName.parse(e.release, build: e.dist) {
            app.version = release.version
            app.build = release.build
            if app.id == nil { app.id = release.package }
        } else if let release = ReleaseName.parse(e.appContext.version, build: nonEmpty(e.appContext.build) ?? e.dist) {
            app.version = release.version
            app.build = release.build
        }
        app.displayVersion = nonEmpty(e.appContext.version)
        app.displayBuild = nonEmpty(e.appContext.build)

        var fingerprint = e.fingerprint
        if let parts = fingerprint, parts.allSatisfy({ isDefaultPlaceholder($0) }) { fingerprint = nil }

        let (tagPairs, tagsDropped) = Self.tags(e, primary: primary, limits: limits)
        let (customKeys, dropped) = prioritised(
            [e.extras.map { (key: "extra." + $0.key, value: $0.value) }], limit: limits.maxCustomKeys)
        var trimmed = TrimCounts()
        trimmed.customKeysDropped = dropped
        trimmed.tagsDropped = tagsDropped
        var report = Report(
            eventID: eventID, kind: kind, timestamp: timestamp,
            userID: nonEmpty(e.userID) ?? nonEmpty(e.userEmail) ?? nonEmpty(e.userName),
            environment: nonEmpty(e.environment), app: app, device: device, error: error,
            threads: threads(e, primary: primary, kind: kind), modules: e.modules,
            breadcrumbs: e.breadcrumbs.map { b in
                var crumb = b.crumb
                crumb.timestamp = b.timestamp ?? timestamp
                return crumb
            },
            customKeys: customKeys, fingerprint: fingerprint, faultAddress: faultAddress, trimmed: trimmed,
            crashMessage: crashMessage)
        report.tags = tagPairs
        report.sdk = e.sdk
        report.contexts = e.contexts
        // A minidump's event (`MinidumpSubmission.sentryEnvelope`): its threads are walked from the stored dump.
        report.walksMinidump = primary?.mechanismType == "minidump"
        return report
    }

    /// The report's threads (see the type's documentation).
    static func threads(_ e: SentryEventFields, primary: SentryException?, kind: ReportKind) -> [ThreadInfo] {
        var threads = e.threads.map { t in
            ThreadInfo(
                name: t.name, crashed: t.crashed ?? false, frames: t.stacktrace?.faultlineFrames ?? [],
                registers: t.stacktrace?.registers ?? [])
        }
        let stack = e.exceptions.last(where: { !($0.stacktrace?.frames.isEmpty ?? true) })?.stacktrace ?? e.stacktrace
        guard primary != nil || stack != nil else { return threads }

        var match: Int?
        if let id = primary?.threadID { match = e.threads.firstIndex { $0.id == id } }
        if match == nil { match = e.threads.firstIndex { $0.crashed == true } }
        if match == nil, primary != nil { match = e.threads.firstIndex { $0.current == true } }

        if let match {
            var thread = threads.remove(at: match)
            if thread.frames.isEmpty, let stack {
                thread.frames = stack.faultlineFrames
                if thread.registers.isEmpty { thread.registers = stack.registers }
            }
            thread.crashed = thread.crashed || kind == .crash
            threads.insert(thread, at: 0)
        } else if let stack, !stack.frames.isEmpty || !stack.registers.isEmpty {
            threads.insert(
                ThreadInfo(crashed: kind == .crash, frames: stack.faultlineFrames, registers: stack.registers), at: 0)
        }
        return threads
    }

    /// Tags with what did not fit counted (see the type's documentation for the priorities).
    static func tags(
        _ e: SentryEventFields, primary: SentryException?, limits: IngestLimits
    ) -> (keys: [(key: String, value: String)], dropped: Int) {
        let builtins: [(String, String?)] = [
            // The mechanism under the name filing reads it by (a hang tracker's mechanism makes a hang).
            ("level", e.level), (IssueCategory.mechanismTag, primary?.mechanismType), ("platform", e.platform),
            ("server_name", e.serverName), ("exception_module", primary?.module),
        ]
        var own: [(key: String, value: String)] = []
        for case (let key, let value?) in builtins where !value.isEmpty { own.append((key, value)) }
        return prioritised([own, e.tags], limit: limits.maxCustomKeys)
    }

    /// `groups` merged in priority order, at most `limit` keys: within a group the last of a repeated key wins and
    /// keys are cut in sorted order; a key a higher-priority group took stays. Returns what was cut as `dropped`.
    static func prioritised<Value>(
        _ groups: [[(key: String, value: Value)]], limit: Int
    ) -> (keys: [(key: String, value: Value)], dropped: Int) {
        var keys: [(key: String, value: Value)] = []
        var taken = Set<String>()
        var dropped = 0
        for group in groups {
            var latest: [String: Value] = [:]
            for (key, value) in group { latest[key] = value }
            let sorted = latest.filter { !taken.contains($0.key) }.sorted { $0.key < $1.key }
            let room = max(0, limit - keys.count)
            for (key, value) in sorted.prefix(room) {
                keys.append((key, value))
                taken.insert(key)
            }
            dropped += max(0, sorted.count - room)
        }
        return (keys, dropped)
    }

    static func isDefaultPlaceholder(_ part: String) -> Bool {
        part.filter { $0 != " " } == "{{default}}"
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
