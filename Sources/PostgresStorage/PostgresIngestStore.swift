import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ingest port on PostgreSQL: a group of requests' reports and session updates in one transaction, the same
/// outcomes as `SQLiteIngestStore`.
///
/// - A retried report is recognised by `report_event_ids`' primary key, whatever node stored it first.
/// - A write the server refuses (a project deleted a moment ago, say) fails alone: PostgreSQL aborts a transaction at
///   its first error, so the group is first tried in one go, and only when that is refused done again with a
///   savepoint per write.
/// - Two nodes updating one session take turns: a transaction-level advisory lock on the session is held from the
///   read of its state to the write of the merge, so the health rollups move by each change exactly once.
public struct PostgresIngestStore: IngestStore {
    let database: PostgresEngine
    /// Client text for `text` columns (U+0000 cannot be stored; the parsers replace it already, this is the store's
    /// own guard for any caller).
    typealias T = PostgresText

    public init(database: PostgresEngine) {
        self.database = database
    }

    public func commit(_ writes: [IngestWrite]) async throws -> [IngestOutcome] {
        let logger = database.logger
        do {
            return try await database.write { connection in
                var outcomes: [IngestOutcome] = []
                outcomes.reserveCapacity(writes.count)
                for write in writes { outcomes.append(try await Self.perform(write, connection, logger)) }
                return outcomes
            }
        } catch where PostgresErrors.isRefusal(error) {
            return try await commitEachInASavepoint(writes)
        }
    }

    /// `commit`'s second try: each write in its own savepoint, a refused one failed alone.
    func commitEachInASavepoint(_ writes: [IngestWrite]) async throws -> [IngestOutcome] {
        let logger = database.logger
        return try await database.write { connection in
            var outcomes: [IngestOutcome] = []
            outcomes.reserveCapacity(writes.count)
            for write in writes {
                try await connection.query("SAVEPOINT write", logger: logger)
                do {
                    outcomes.append(try await Self.perform(write, connection, logger))
                    try await connection.query("RELEASE SAVEPOINT write", logger: logger)
                } catch where PostgresErrors.isRefusal(error) {
                    try await connection.query("ROLLBACK TO SAVEPOINT write", logger: logger)
                    outcomes.append(.failed("database refused the write: SQLSTATE \(PostgresErrors.sqlState(error) ?? "?")"))
                }
            }
            return outcomes
        }
    }

    static func perform(_ write: IngestWrite, _ connection: PostgresConnection, _ logger: Logger) async throws -> IngestOutcome {
        switch write {
        case .reports(let batch): return try await insert(batch, connection, logger)
        case .sessions(let batch): return try await apply(batch, connection, logger)
        case .envelope(let envelope): return try await store(envelope, connection, logger)
        }
    }

    static func insert(_ batch: ReportBatch, _ connection: PostgresConnection, _ logger: Logger) async throws -> IngestOutcome {
        let receivedAt = Millis.from(batch.receivedAt)
        let project = batch.project.rawValue
        let payload = batch.payload
        let payloadRows = try await connection.query(
            """
            INSERT INTO payloads (project_id, received_at, encoding, inflated_size, bytes, format)
            VALUES (\(project), \(receivedAt), \(payload.encoding.rawValue), \(Int64(payload.inflatedSize)), \(Data(payload.bytes)),
                \(payload.format.rawValue))
            RETURNING id
            """, logger: logger)
        var payloadID: Int64 = 0
        for try await id in payloadRows.decode(Int64.self) { payloadID = id }
        var stored: [EventID] = []
        var duplicates: [EventID] = []
        for prepared in batch.reports {
            let report = prepared.report
            let t = report.trimmed
            // Claiming the event id is the duplicate check; the report row is written only when the claim is new.
            let rows = try await connection.query(
                """
                WITH claimed AS (
                    INSERT INTO report_event_ids (project_id, event_id, report_id, received_at)
                    VALUES (\(project), \(report.eventID.rawValue), nextval('reports_id_seq'), \(receivedAt))
                    ON CONFLICT (project_id, event_id) DO NOTHING RETURNING report_id)
                INSERT INTO reports (id, project_id, event_id, kind, occurred_at, received_at, release, environment,
                    user_key, session_id, error_type, error_message, payload_id, payload_offset, payload_length,
                    custom_keys_dropped, values_truncated, breadcrumbs_dropped, threads_dropped, frames_dropped, modules_dropped)
                SELECT report_id, \(project), \(report.eventID.rawValue), \(report.kind.rawValue), \(Millis.from(report.timestamp)),
                    \(receivedAt), \(report.release.map(T.storable)), \(report.environment.map(T.storable)),
                    \(report.userKey.map(T.storable)), \(report.sessionID?.rawValue), \(report.error?.type.map(T.storable)),
                    \(report.error?.message.map { T.storable(IngestLimits.truncate($0, toBytes: 512)) }), \(payloadID),
                    \(Int64(prepared.range.lowerBound)), \(Int64(prepared.range.count)), \(t.customKeysDropped), \(t.valuesTruncated),
                    \(t.breadcrumbsDropped), \(t.threadsDropped), \(t.framesDropped), \(t.modulesDropped)
                FROM claimed RETURNING id
                """, logger: logger)
            var inserted = false
            for try await _ in rows { inserted = true }
            if inserted { stored.append(report.eventID) } else { duplicates.append(report.eventID) }
        }
        if stored.isEmpty {
            // A batch made only of retries keeps no second copy of its bytes.
            try await connection.query(
                "DELETE FROM payloads WHERE id = \(payloadID) AND received_at = \(receivedAt)", logger: logger)
        }
        return .reports(stored: stored, duplicates: duplicates)
    }

    /// An envelope's parts, all or nothing (the caller's transaction or savepoint).
    static func store(_ envelope: EnvelopeWrite, _ connection: PostgresConnection, _ logger: Logger) async throws -> IngestOutcome {
        var stored: [EventID] = []
        var duplicates: [EventID] = []
        if let event = envelope.event, case .reports(let s, let d) = try await insert(event, connection, logger) {
            stored = s
            duplicates = d
        }
        var applied = 0
        if !envelope.sessions.isEmpty,
           case .sessions(let a, _) = try await apply(
               SessionBatch(project: envelope.project, receivedAt: envelope.receivedAt, updates: envelope.sessions), connection, logger)
        {
            applied = a
        }
        let receivedAt = Millis.from(envelope.receivedAt)
        let project = envelope.project.rawValue
        for discarded in envelope.discarded where discarded.quantity > 0 {
            try await connection.query(
                """
                INSERT INTO client_reports (project_id, day, reason, category, quantity)
                VALUES (\(project), \(DayNumber(envelope.receivedAt).rawValue), \(T.storable(discarded.reason)), \(T.storable(discarded.category)),
                    \(Int64(discarded.quantity)))
                ON CONFLICT (project_id, day, reason, category) DO UPDATE SET quantity = client_reports.quantity + excluded.quantity
                """, logger: logger)
        }
        var attachments = 0
        // Attachments belong to a newly stored event; a retried envelope does not store them twice.
        if let eventID = envelope.eventID, stored.contains(eventID) || envelope.event == nil {
            for attachment in envelope.attachments {
                try await connection.query(
                    """
                    INSERT INTO attachments (project_id, event_id, filename, content_type, attachment_type, size, bytes, received_at)
                    VALUES (\(project), \(eventID.rawValue), \(T.storable(attachment.filename)), \(attachment.contentType.map(T.storable)),
                        \(attachment.attachmentType.map(T.storable)), \(Int64(attachment.bytes.count)), \(Data(attachment.bytes)), \(receivedAt))
                    """, logger: logger)
                attachments += 1
            }
        }
        return .envelope(stored: stored, duplicates: duplicates, sessionsApplied: applied, attachments: attachments)
    }

    static func apply(_ batch: SessionBatch, _ connection: PostgresConnection, _ logger: Logger) async throws -> IngestOutcome {
        var applied = 0
        var unchanged = 0
        let updatedAt = Millis.from(batch.receivedAt)
        let project = batch.project.rawValue
        for update in batch.updates.map(StoredText.clean) {
            let id = update.sessionID.rawValue
            // Held to the end of the transaction: another node's update of this session waits for this one.
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtextextended(\(id), \(project)))", logger: logger)
            let existing = try await PostgresSessions.state(project: batch.project, id: update.sessionID, connection, logger)
            guard let next = SessionState.merging(update, into: existing) else {
                unchanged += 1
                continue
            }
            try await connection.query(
                """
                INSERT INTO sessions (project_id, session_id, distinct_id, release, environment, started_at, status, errors,
                    duration, seq, updated_at)
                VALUES (\(project), \(id), \(next.distinctID.map(T.storable)), \(T.storable(next.release)), \(next.environment.map(T.storable)),
                    \(Millis.from(next.started)),
                    \(next.status.rawValue), \(Int64(next.errors)), \(next.duration), \(next.seq), \(updatedAt))
                ON CONFLICT (project_id, session_id) DO UPDATE SET distinct_id = excluded.distinct_id,
                    release = excluded.release, environment = excluded.environment, started_at = excluded.started_at,
                    status = excluded.status, errors = excluded.errors, duration = excluded.duration, seq = excluded.seq,
                    updated_at = excluded.updated_at
                """, logger: logger)
            // The health rollups move by the session's change, in this same transaction.
            try await PostgresHealthRollup.apply(
                project: batch.project, remove: existing.map(SessionContribution.init), add: SessionContribution(next),
                startedAt: Millis.from(next.started), connection, logger)
            applied += 1
        }
        return .sessions(applied: applied, unchanged: unchanged)
    }
}

/// Reads of the `sessions` table shared by the ingest store and the readers.
enum PostgresSessions {
    static func state(project: ProjectID, id: SessionID, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> SessionState?
    {
        let rows = try await connection.query(
            """
            SELECT distinct_id, release, environment, started_at, status, errors, duration, seq FROM sessions
            WHERE project_id = \(project.rawValue) AND session_id = \(id.rawValue)
            """, logger: logger)
        for try await (distinct, release, environment, started, status, errors, duration, seq) in rows.decode(
            (String?, String, String?, Int64, String, Int64, Double?, Int64?).self)
        {
            guard let status = SessionStatus(rawValue: status), let errors = Int(exactly: errors) else { return nil }
            return SessionState(
                sessionID: id, distinctID: distinct, release: release, environment: environment, started: Millis.date(started),
                status: status, errors: errors, duration: duration, seq: seq)
        }
        return nil
    }
}
