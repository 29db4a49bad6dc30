import FaultlineCore
import GRDB

/// A row of `sessions`: the merged state of one session.
struct SessionRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "sessions"
    var projectID: Int64
    var sessionID: String
    var distinctID: String?
    var release: String
    var environment: String?
    var startedAt: Int64
    var status: String
    var errors: Int
    var duration: Double?
    var seq: Int64?
    var updatedAt: Int64
    /// Sessions the row stands for (1, or a counted aggregate's count; migration `v21-counted-sessions`).
    var sessionCount: Int

    enum CodingKeys: String, CodingKey {
        case projectID = "project_id", sessionID = "session_id", distinctID = "distinct_id", release, environment
        case startedAt = "started_at", status, errors, duration, seq, updatedAt = "updated_at", sessionCount =
            "session_count"
    }

    enum Columns {
        static let projectID = Column(CodingKeys.projectID)
        static let release = Column(CodingKeys.release)
        static let status = Column(CodingKeys.status)
    }

    init(project: ProjectID, state: SessionState, updatedAt: Int64) {
        projectID = project.rawValue
        sessionID = state.sessionID.rawValue
        distinctID = state.distinctID
        release = state.release
        environment = state.environment
        startedAt = Millis.from(state.started)
        status = state.status.rawValue
        errors = state.errors
        duration = state.duration
        seq = state.seq
        sessionCount = state.count
        self.updatedAt = updatedAt
    }

    /// The domain state; nil only if the row breaks the schema's CHECKs (impossible through this module).
    var state: SessionState? {
        guard let id = SessionID(sessionID), let status = SessionStatus(rawValue: status) else { return nil }
        return SessionState(
            sessionID: id, distinctID: distinctID, release: release, environment: environment,
            started: Millis.date(startedAt), status: status, errors: errors, duration: duration, seq: seq,
            count: sessionCount)
    }
}
