import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Alert settings, alerts and the webhook outbox on PostgreSQL (the twin of `SQLiteAlertStore`), for several nodes.
///
/// - Every node evaluates alerts; an alert is recorded once by its dedupe key (`UNIQUE (project_id, dedupe_key)`).
/// - An alert is handed to the outbox once: `enqueue` marks it dispatched only where it was not (`… AND NOT
///   dispatched`, which a second node's update waits for and then finds false), and queues deliveries only for the
///   alerts it marked.
/// - A delivery is attempted by one node at a time: `dueDeliveries` claims what it returns (its next attempt moved
///   `deliveryLease` ahead, with `FOR UPDATE SKIP LOCKED`), and `recordAttempt` sets the real next time or the end
///   state. A node that dies mid-delivery leaves the delivery to be retried by any node after the lease: webhooks are
///   delivered at least once, as they were on one node across a crash.
public struct PostgresAlertStore: AlertStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    /// How long a node holds a delivery it is attempting (ms): far above a webhook's 10 s timeout times the 8 a
    /// dispatcher fetches at once.
    static let deliveryLease: Int64 = 5 * 60 * 1000

    public func settings(project: ProjectID) async throws -> AlertSettings {
        let logger = database.logger
        return try await database.read { connection in
            try await PostgresAlertRecords.settings(project: project, connection, logger)
        }
    }

    public func saveSettings(_ settings: AlertSettings, project: ProjectID, at date: Date) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(settings), as: UTF8.self)
        let logger = database.logger
        try await database.write { connection in
            try await connection.query(
                """
                INSERT INTO alert_settings (project_id, settings, updated_at) VALUES (\(project.rawValue), \(json), \(Millis.from(date)))
                ON CONFLICT (project_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at
                """, logger: logger)
        }
    }

    public func velocityCandidates(project: ProjectID, from: Date, through: Date) async throws -> [VelocityCandidate] {
        let start = Millis.from(from)
        let end = Millis.from(through)
        let logger = database.logger
        return try await database.read { connection in
            var issues: [(Int64, String)] = []
            for try await row in try await connection.query(
                """
                SELECT id, title FROM issues WHERE project_id = \(project.rawValue) AND last_seen >= \(start) AND kind = 'crash'
                    AND status = 'open'
                """, logger: logger
            ).decode((Int64, String).self) {
                issues.append(row)
            }
            var releaseStats: [String: (sessions: Int, users: Int)] = [:]
            var out: [VelocityCandidate] = []
            for (id, title) in issues {
                var rows: [(String, Int, Int)] = []
                for try await row in try await connection.query(
                    """
                    SELECT release, count(DISTINCT coalesce(session_id, event_id)), count(DISTINCT user_key)
                    FROM reports WHERE issue_id = \(id) AND occurred_at BETWEEN \(start) AND \(end) AND release IS NOT NULL
                    GROUP BY release
                    """, logger: logger
                ).decode((String, Int, Int).self) {
                    rows.append(row)
                }
                for (release, sessions, users) in rows {
                    if releaseStats[release] == nil {
                        var stats = (sessions: 0, users: 0)
                        for try await (s, u) in try await connection.query(
                            """
                            SELECT coalesce(sum(session_count), 0)::bigint, count(DISTINCT distinct_id) FROM sessions
                            WHERE project_id = \(project.rawValue) AND release = \(release) AND updated_at >= \(start)
                            """, logger: logger
                        ).decode((Int, Int).self) {
                            stats = (s, u)
                        }
                        releaseStats[release] = stats
                    }
                    let stats = releaseStats[release] ?? (0, 0)
                    out.append(
                        VelocityCandidate(
                            project: project, title: title,
                            window: VelocityWindow(
                                issue: IssueID(id), release: release, issueSessions: sessions, issueUsers: users,
                                releaseSessions: stats.sessions, releaseUsers: stats.users)))
                }
            }
            return out
        }
    }

    public func dayHealth(project: ProjectID, day: DayNumber) async throws -> [String: ReleaseHealth] {
        let logger = database.logger
        return try await database.read { connection in
            var out: [String: ReleaseHealth] = [:]
            for try await (release, sessions, crashed, abnormal, errored, users, crashedUsers)
                in try await connection.query(
                    """
                    SELECT release, sessions, crashed, abnormal, errored, users, crashed_users FROM health_days
                    WHERE project_id = \(project.rawValue) AND day = \(day.rawValue)
                    """, logger: logger
                ).decode((String, Int, Int, Int, Int, Int, Int).self)
            {
                out[release] = ReleaseHealth(
                    sessions: sessions, crashedSessions: crashed, abnormalSessions: abnormal, erroredSessions: errored,
                    users: users,
                    crashedUsers: crashedUsers)
            }
            return out
        }
    }

    public func record(_ draft: AlertDraft, at date: Date) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresAlertRecords.insert(draft, at: Millis.from(date), connection, logger)
        }
    }

    /// Alert kinds whose deliveries go before the others (`webhook_deliveries.priority` 1).
    static let priorityKinds = [AlertKind.storageFull.rawValue, AlertKind.storageOK.rawValue]

    /// The alerts not yet handed to the outbox, the operator's storage alerts first, then oldest first.
    public func alertsToDispatch(limit: Int) async throws -> [Alert] {
        let logger = database.logger
        return try await database.read { connection in
            try await PostgresAlertRecords.alerts(
                connection.query(
                    """
                    SELECT \(unescaped: PostgresAlertRecords.columns) FROM alerts WHERE NOT dispatched
                    ORDER BY kind = ANY(\(Self.priorityKinds)) DESC, id LIMIT \(Int64(max(1, limit)))
                    """, logger: logger))
        }
    }

    public func enqueue(
        _ deliveries: [(alert: Int64, url: String, body: [UInt8])], dispatched alerts: [Int64], at date: Date
    ) async throws {
        let now = Millis.from(date)
        let logger = database.logger
        try await database.write { connection in
            var claimed = Set<Int64>()
            for try await id in try await connection.query(
                "UPDATE alerts SET dispatched = true WHERE id = ANY(\(alerts)) AND NOT dispatched RETURNING id",
                logger: logger
            ).decode(Int64.self) {
                claimed.insert(id)
            }
            for delivery in deliveries where claimed.contains(delivery.alert) {
                try await connection.query(
                    """
                    INSERT INTO webhook_deliveries (alert_id, url, body, next_attempt_at, priority)
                    SELECT id, \(delivery.url), \(Data(delivery.body)), \(now), CASE WHEN kind = ANY(\(Self.priorityKinds)) THEN 1 ELSE 0 END
                    FROM alerts WHERE id = \(delivery.alert)
                    """, logger: logger)
            }
        }
    }

    public func dueDeliveries(now: Date, limit: Int) async throws -> [WebhookDelivery] {
        let at = Millis.from(now)
        let logger = database.logger
        return try await database.write { connection in
            // RETURNING keeps no order: the claimed rows are put back in the order they were taken in.
            var due: [(order: (Int, Int64, Int64), delivery: WebhookDelivery)] = []
            for try await (id, alert, url, body, attempts, priority, dueAt) in try await connection.query(
                """
                WITH taken AS (
                    SELECT id, priority, next_attempt_at FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= \(at)
                    ORDER BY priority DESC, next_attempt_at, id LIMIT \(Int64(max(1, limit))) FOR UPDATE SKIP LOCKED)
                UPDATE webhook_deliveries d SET next_attempt_at = \(at &+ Self.deliveryLease) FROM taken t WHERE d.id = t.id
                RETURNING d.id, d.alert_id, d.url, d.body, d.attempts, t.priority, t.next_attempt_at
                """, logger: logger
            ).decode((Int64, Int64, String, Data, Int, Int, Int64).self) {
                due.append(
                    (
                        (-priority, dueAt, id),
                        WebhookDelivery(id: id, alert: alert, url: url, body: Array(body), attempts: attempts)
                    ))
            }
            return due.sorted { $0.order < $1.order }.map(\.delivery)
        }
    }

    public func recordAttempt(_ delivery: Int64, outcome: DeliveryOutcome, at date: Date) async throws {
        let now = Millis.from(date)
        let logger = database.logger
        try await database.write { connection in
            switch outcome {
            case .delivered(let status):
                try await connection.query(
                    """
                    UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, last_status = \(status),
                        last_error = NULL, delivered_at = \(now) WHERE id = \(delivery)
                    """, logger: logger)
            case .retry(let next, let status, let error):
                try await connection.query(
                    """
                    UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = \(status), last_error = \(error),
                        next_attempt_at = \(Millis.from(next)) WHERE id = \(delivery)
                    """, logger: logger)
            case .failed(let status, let error):
                try await connection.query(
                    """
                    UPDATE webhook_deliveries SET state = 'failed', attempts = attempts + 1, last_status = \(status),
                        last_error = \(error) WHERE id = \(delivery)
                    """, logger: logger)
            }
        }
    }

    public func deliveries(project: ProjectID) async throws -> [DeliveryStatus] {
        let logger = database.logger
        return try await database.read { connection in
            var out: [DeliveryStatus] = []
            for try await (alert, state, attempts, status, error) in try await connection.query(
                """
                SELECT d.alert_id, d.state, d.attempts, d.last_status, d.last_error FROM webhook_deliveries d
                JOIN alerts a ON a.id = d.alert_id WHERE a.project_id = \(project.rawValue) ORDER BY d.id DESC LIMIT 1000
                """, logger: logger
            ).decode((Int64, String, Int, Int?, String?).self) {
                out.append(
                    DeliveryStatus(alert: alert, state: state, attempts: attempts, lastStatus: status, lastError: error)
                )
            }
            return out
        }
    }
}

extension PostgresAlertRecords {
    /// The columns `alerts(_:)` reads, in order.
    static let columns = "id, project_id, kind, issue_id, release, title, reason, created_at"

    static func alerts(_ rows: PostgresRowSequence) async throws -> [Alert] {
        var out: [Alert] = []
        for try await (id, project, kind, issue, release, title, reason, created) in rows.decode(
            (Int64, Int64, String, Int64?, String?, String, String, Int64).self)
        {
            guard let kind = AlertKind(rawValue: kind) else { continue }
            out.append(
                Alert(
                    id: id, project: ProjectID(project), kind: kind, issue: issue.map { IssueID($0) }, release: release,
                    title: title,
                    reason: (try? JSONDecoder().decode([String: Double].self, from: Data(reason.utf8))) ?? [:],
                    createdAt: Millis.date(created)))
        }
        return out
    }
}
