import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A session update in the native v1 format (`POST /api/v1/sessions`, see `docs/protocol.md`).
struct NativeSessionV1: Codable, Equatable {
    var sessionID: String?
    var userID: String?
    var installID: String?
    var release: String?
    var app: NativeReportV1.App?
    var environment: String?
    var started: WireTimestamp?
    var status: String?
    var errors: Int?
    var duration: Double?
    var seq: Int64?

    enum CodingKeys: String, CodingKey {
        case sessionID = "session_id", userID = "user_id", installID = "install_id", release, app, environment, started
        case status, errors, duration, seq
    }

    func toUpdate(limits: IngestLimits) throws -> SessionUpdate {
        guard let raw = sessionID else { throw FormatError(.invalidField, "is required", field: "session_id") }
        guard let id = SessionID(raw) else {
            throw FormatError(.invalidField, "must be 1–128 printable ASCII characters", field: "session_id")
        }
        let appRelease = AppInfo(version: app?.version?.value, build: app?.build?.value).release
        guard let release = (release?.isEmpty == false ? release : nil) ?? appRelease else {
            throw FormatError(.invalidField, "is required (or app.version)", field: "release")
        }
        guard let started else { throw FormatError(.invalidField, "is required", field: "started") }
        guard let rawStatus = status else { throw FormatError(.invalidField, "is required", field: "status") }
        guard let status = SessionStatus(rawValue: rawStatus) else {
            throw FormatError(.invalidField, "must be one of ok, exited, crashed, abnormal", field: "status")
        }
        if let errors, errors < 0 { throw FormatError(.invalidField, "must not be negative", field: "errors") }
        if let duration, !(duration >= 0) { throw FormatError(.invalidField, "must not be negative", field: "duration") }
        let distinct = (userID ?? installID).map { IngestLimits.truncate($0, toBytes: limits.maxUserIDBytes) }
        return SessionUpdate(
            sessionID: id, distinctID: distinct, release: IngestLimits.truncate(release, toBytes: limits.maxKeyValueBytes),
            environment: environment, started: started.date, status: status, errors: errors ?? 0, duration: duration,
            seq: seq)
    }
}

/// Decoding of native v1 session bodies: one update, `{"sessions": [...]}` or a bare array.
public enum NativeSessions {
    public static let maxUpdatesPerBatch = 1000

    /// Decodes every update; any invalid update rejects the body (sessions are small and cheap to resend,
    /// and a partial session batch would make crash-free numbers silently wrong).
    public static func decode(_ bytes: [UInt8], limits: IngestLimits) throws -> [SessionUpdate] {
        switch try JSONBatchSplitter.split(bytes, batchKey: "sessions") {
        case .single(let range):
            return [try decodeJSON(NativeSessionV1.self, from: bytes[range]).toUpdate(limits: limits)]
        case .batch(let ranges):
            guard !ranges.isEmpty else { throw FormatError(.invalidField, "must hold at least one update", field: "sessions") }
            guard ranges.count <= maxUpdatesPerBatch else {
                throw FormatError(.tooLarge, "a batch holds at most \(maxUpdatesPerBatch) updates", field: "sessions")
            }
            return try ranges.enumerated().map { i, range in
                do {
                    return try decodeJSON(NativeSessionV1.self, from: bytes[range]).toUpdate(limits: limits)
                } catch let error as FormatError {
                    throw error.prefixed("sessions[\(i)]")
                }
            }
        }
    }
}
