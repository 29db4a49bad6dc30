import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decoding of native v1 session bodies (`POST /api/v1/sessions`, see `docs/protocol.md`): one update,
/// `{"sessions": [...]}` or a bare array.
public enum NativeSessions {
    public static let maxUpdatesPerBatch = 1000

    /// Decodes every update; any invalid update rejects the body (sessions are small and cheap to resend,
    /// and a partial session batch would make crash-free numbers silently wrong).
    public static func decode(_ bytes: [UInt8], limits: IngestLimits) throws -> [SessionUpdate] {
        switch try JSONBatchSplitter.split(bytes, batchKey: "sessions") {
        case .single(let range):
            return [try parse(bytes, range: range, limits: limits)]
        case .batch(let ranges):
            guard !ranges.isEmpty else {
                throw FormatError(.invalidField, "must hold at least one update", field: "sessions")
            }
            guard ranges.count <= maxUpdatesPerBatch else {
                throw FormatError(.tooLarge, "a batch holds at most \(maxUpdatesPerBatch) updates", field: "sessions")
            }
            return try ranges.enumerated().map { i, range in
                do {
                    return try parse(bytes, range: range, limits: limits)
                } catch let error as FormatError {
                    throw error.prefixed("sessions[\(i)]")
                }
            }
        }
    }

    static func parse(_ bytes: [UInt8], range: Range<Int>, limits: IngestLimits) throws -> SessionUpdate {
        try JSONReader.with(bytes, range: range) { try parse(&$0, limits: limits) }
    }

    static func parse(_ r: inout JSONReader, limits: IngestLimits) throws -> SessionUpdate {
        var sessionID: String?
        var userID: String?
        var installID: String?
        var release: String?
        var app = AppInfo()
        var environment: String?
        var started: Date?
        var status: String?
        var errors = 0
        var duration: Double?
        var seq: Int64?
        if try r.peek() != .object { throw FormatError(.malformedJSON, "a session update must be a JSON object") }
        try r.readObject { r, key in
            if key.matches("session_id") {
                sessionID = try r.optional("session_id") { try $0.readString() }
            } else if key.matches("user_id") {
                userID = try r.optional("user_id") { try $0.readString() }
            } else if key.matches("install_id") {
                installID = try r.optional("install_id") { try $0.readString() }
            } else if key.matches("release") {
                release = try r.optional("release") { try $0.readString() }
            } else if key.matches("app") {
                app = try r.optional("app") { try $0.readApp() } ?? app
            } else if key.matches("environment") {
                environment = try r.optional("environment") { try $0.readString() }
            } else if key.matches("started") {
                started = try r.optional("started") { try $0.readTimestamp() }
            } else if key.matches("status") {
                status = try r.optional("status") { try $0.readString() }
            } else if key.matches("errors") {
                errors = try r.optional("errors") { try $0.readInt() } ?? 0
                guard errors >= 0 else { throw FormatError(.invalidField, "must not be negative", field: "errors") }
            } else if key.matches("duration") {
                duration = try r.optional("duration") { try $0.readDouble() }
                guard (duration ?? 0) >= 0 else {
                    throw FormatError(.invalidField, "must not be negative", field: "duration")
                }
            } else if key.matches("seq") {
                seq = try r.optional("seq") { Int64(try $0.readInt()) }
            } else {
                try r.skipValue()
            }
        }
        try r.expectEnd()

        guard let raw = sessionID else { throw FormatError(.invalidField, "is required", field: "session_id") }
        guard let id = SessionID(raw) else {
            throw FormatError(.invalidField, "must be 1–128 printable ASCII characters", field: "session_id")
        }
        // One release, as reports name it (`ReleaseName`): `2.4.0 (240)` and `2.4.0` + build 240 are `2.4.0`.
        guard let release = ReleaseName.parse(release)?.version ?? app.release else {
            throw FormatError(.invalidField, "is required (or app.version)", field: "release")
        }
        guard let started else { throw FormatError(.invalidField, "is required", field: "started") }
        guard let rawStatus = status else { throw FormatError(.invalidField, "is required", field: "status") }
        guard let status = SessionStatus(rawValue: rawStatus) else {
            throw FormatError(.invalidField, "must be one of ok, exited, crashed, abnormal", field: "status")
        }
        let distinct = (userID ?? installID).map { IngestLimits.truncate($0, toBytes: limits.maxUserIDBytes) }
        return SessionUpdate(
            sessionID: id, distinctID: distinct,
            release: IngestLimits.truncate(release, toBytes: limits.maxKeyValueBytes),
            environment: environment.map { IngestLimits.truncate($0, toBytes: limits.maxKeyValueBytes) },
            started: started, status: status, errors: errors, duration: duration, seq: seq)
    }
}
