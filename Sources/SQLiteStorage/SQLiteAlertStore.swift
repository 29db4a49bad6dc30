import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Alert settings, alerts and the webhook outbox on SQLite. An alert and its outbox rows are separate steps,
/// each one transaction: a crash between them leaves the alert undispatched, and the next step dispatches it.
public struct SQLiteAlertStore: AlertStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    public func settings(project: ProjectID) async throws -> AlertSettings {
        try await database.pool.read { db in try AlertRecords.settings(project: project, db) }
    }

    public func saveSettings(_ settings: AlertSettings, project: ProjectID, at date: Date) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(settings), as: UTF8.self)
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO alert_settings (project_id, settings, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (project_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at
                    """,
                arguments: [project.rawValue, json, Millis.from(date)])
        }
    }

    public func velocityCandidates(project: ProjectID, from: Date, through: Date) async throws -> [VelocityCandidate] {
        let start = Millis.from(from)
        let end = Millis.from(through)
        return try await database.pool.read { db in
            let issues = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, title FROM issues WHERE project_id = ? AND last_seen >= ? AND kind = 'crash' AND status = 'open'
                    """,
                arguments: [project.rawValue, start])
            var releaseStats: [String: (sessions: Int, users: Int)] = [:]
            var out: [VelocityCandidate] = []
            for issue in issues {
                let id: Int64 = issue["id"]
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT release, count(DISTINCT coalesce(session_id, event_id)) AS sessions,
                            count(DISTINCT user_key) AS users
                        FROM reports WHERE issue_id = ? AND occurred_at BETWEEN ? AND ? AND release IS NOT NULL
                        GROUP BY release
                        """,
                    arguments: [id, start, end])
                for row in rows {
                    let release: String = row["release"]
                    if releaseStats[release] == nil {
                        let stats = try Row.fetchOne(
                            db,
                            sql: """
                                SELECT coalesce(sum(session_count), 0) AS sessions, count(DISTINCT distinct_id) AS users FROM sessions
                                WHERE project_id = ? AND release = ? AND updated_at >= ?
                                """,
                            arguments: [project.rawValue, release, start])
                        releaseStats[release] = (stats?["sessions"] ?? 0, stats?["users"] ?? 0)
                    }
                    let stats = releaseStats[release]!
                    out.append(
                        VelocityCandidate(
                            project: project, title: issue["title"],
                            window: VelocityWindow(
                                issue: IssueID(id), release: release, issueSessions: row["sessions"],
                                issueUsers: row["users"],
                                releaseSessions: stats.sessions, releaseUsers: stats.users)))
                }
            }
            return out
        }
    }

    public func dayHealth(project: ProjectID, day: DayNumber) async throws -> [String: ReleaseHealth] {
        try await database.pool.read { db in
            var out: [String: ReleaseHealth] = [:]
            for row in try Row.fetchAll(
                db,
                sql: "SELECT release, \(HealthSQL.countColumns) FROM health_days WHERE project_id = ? AND day = ?",
                arguments: [project.rawValue, day.rawValue])
            {
                out[row[0]] = try HealthSQL.health(SQLiteRow(row), at: 1)
            }
            return out
        }
    }

    public func record(_ draft: AlertDraft, at date: Date) async throws -> Bool {
        try await database.pool.write { db in try AlertRecords.insert(draft, at: Millis.from(date), db) }
    }

    /// The alerts not yet handed to the outbox, the operator's storage alerts first, then oldest first.
    public func alertsToDispatch(limit: Int) async throws -> [Alert] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM alerts WHERE dispatched = 0
                    ORDER BY kind IN (\(Self.priorityKinds)) DESC, id LIMIT ?
                    """, arguments: [limit]
            ).compactMap(AlertRecords.alert)
        }
    }

    /// Alert kinds whose deliveries go before the others (`webhook_deliveries.priority` 1).
    static let priorityKinds = "'\(AlertKind.storageFull.rawValue)', '\(AlertKind.storageOK.rawValue)'"

    /// Marks `alerts` dispatched and queues `deliveries`, in one transaction. An alert another dispatcher marked in
    /// the meantime (the alert service and the storage-alert service both dispatch) gets no second delivery.
    public func enqueue(
        _ deliveries: [(alert: Int64, url: String, body: [UInt8])], dispatched alerts: [Int64], at date: Date
    )
        async throws
    {
        let now = Millis.from(date)
        try await database.pool.write { db in
            var claimed = Set<Int64>()
            for alert in alerts {
                try db.execute(
                    sql: "UPDATE alerts SET dispatched = 1 WHERE id = ? AND dispatched = 0", arguments: [alert])
                if db.changesCount > 0 { claimed.insert(alert) }
            }
            for delivery in deliveries where claimed.contains(delivery.alert) {
                try db.execute(
                    sql: """
                        INSERT INTO webhook_deliveries (alert_id, url, body, next_attempt_at, priority)
                        SELECT id, ?, ?, ?, kind IN (\(Self.priorityKinds)) FROM alerts WHERE id = ?
                        """,
                    arguments: [delivery.url, Data(delivery.body), now, delivery.alert])
            }
        }
    }

    public func dueDeliveries(now: Date, limit: Int) async throws -> [WebhookDelivery] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, alert_id, url, body, attempts FROM webhook_deliveries
                    WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY priority DESC, next_attempt_at, id LIMIT ?
                    """,
                arguments: [Millis.from(now), limit]
            ).map {
                WebhookDelivery(
                    id: $0["id"], alert: $0["alert_id"], url: $0["url"], body: [UInt8]($0["body"] as Data),
                    attempts: $0["attempts"])
            }
        }
    }

    public func recordAttempt(_ delivery: Int64, outcome: DeliveryOutcome, at date: Date) async throws {
        let now = Millis.from(date)
        try await database.pool.write { db in
            switch outcome {
            case .delivered(let status):
                try db.execute(
                    sql: """
                        UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, last_status = ?,
                            last_error = NULL, delivered_at = ? WHERE id = ?
                        """,
                    arguments: [status, now, delivery])
            case .retry(let next, let status, let error):
                try db.execute(
                    sql: """
                        UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = ?, last_error = ?,
                            next_attempt_at = ? WHERE id = ?
                        """,
                    arguments: [status, error, Millis.from(next), delivery])
            case .failed(let status, let error):
                try db.execute(
                    sql: """
                        UPDATE webhook_deliveries SET state = 'failed', attempts = attempts + 1, last_status = ?, last_error = ?
                        WHERE id = ?
                        """,
                    arguments: [status, error, delivery])
            }
        }
    }

    public func deliveries(project: ProjectID) async throws -> [DeliveryStatus] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT d.alert_id, d.state, d.attempts, d.last_status, d.last_error FROM webhook_deliveries d
                    JOIN alerts a ON a.id = d.alert_id WHERE a.project_id = ? ORDER BY d.id DESC LIMIT 1000
                    """,
                arguments: [project.rawValue]
            ).map {
                DeliveryStatus(
                    alert: $0["alert_id"], state: $0["state"], attempts: $0["attempts"], lastStatus: $0["last_status"],
                    lastError: $0["last_error"])
            }
        }
    }
}
