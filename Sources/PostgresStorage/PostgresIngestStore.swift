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
///   read of its state to the write of the merge, so the health rollups move by each change exactly once. A group's
///   session updates are applied as a set (`PostgresSessionBatch`); a deadlock with another node's group commit
///   (both moving the same health rows) does the whole group again.
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
        let identities = database.identities
        var attempt = 1
        while true {
            do {
                return try await database.write { connection in
                    try await Self.perform(writes, identities: identities, connection, logger)
                }
            } catch  where PostgresErrors.isRefusal(error) {
                return try await commitEachInASavepoint(writes)
            } catch  where PostgresErrors.isConflictWithAnotherTransaction(error) && attempt < 5 {
                // A deadlock with another node's transaction (the health rollups' hot rows): nothing was committed,
                // the whole group is done again.
                attempt += 1
            }
        }
    }

    /// `commit`'s second try: each write in its own savepoint, a refused one failed alone.
    func commitEachInASavepoint(_ writes: [IngestWrite]) async throws -> [IngestOutcome] {
        let logger = database.logger
        let identities = database.identities
        return try await database.write { connection in
            var outcomes: [IngestOutcome] = []
            outcomes.reserveCapacity(writes.count)
            for write in writes {
                try await connection.query("SAVEPOINT write", logger: logger)
                do {
                    outcomes += try await Self.perform([write], identities: identities, connection, logger)
                    try await connection.query("RELEASE SAVEPOINT write", logger: logger)
                } catch  where PostgresErrors.isRefusal(error) {
                    try await connection.query("ROLLBACK TO SAVEPOINT write", logger: logger)
                    outcomes.append(
                        .failed("database refused the write: SQLSTATE \(PostgresErrors.sqlState(error) ?? "?")"))
                }
            }
            return outcomes
        }
    }

    /// The writes' outcomes, in order. The session updates of all of them (requests' and envelopes') are applied at
    /// the end, together, in their order (`PostgresSessionBatch`): a group commit of many one-session requests is one
    /// set of statements, not a set per request.
    static func perform(
        _ writes: [IngestWrite], identities: IdentityHashers?, _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> [IngestOutcome]
    {
        var outcomes: [IngestOutcome] = []
        outcomes.reserveCapacity(writes.count)
        var sessions: [(index: Int, batch: SessionBatch)] = []
        for (index, write) in writes.enumerated() {
            switch write {
            case .reports(let batch):
                outcomes.append(try await insert(batch, connection, logger))
            case .sessions(let batch):
                outcomes.append(.sessions(applied: 0, unchanged: 0))
                sessions.append((index, batch))
            case .envelope(let envelope):
                outcomes.append(try await store(envelope, connection, logger))
                if !envelope.sessions.isEmpty {
                    sessions.append(
                        (
                            index,
                            SessionBatch(
                                project: envelope.project, receivedAt: envelope.receivedAt, updates: envelope.sessions)
                        ))
                }
            }
        }
        let counts = try await PostgresSessionBatch.apply(
            sessions.map(\.batch), identities: identities, connection, logger)
        for ((index, _), count) in zip(sessions, counts) {
            switch outcomes[index] {
            case .sessions: outcomes[index] = .sessions(applied: count.applied, unchanged: count.unchanged)
            case .envelope(let stored, let duplicates, _, let attachments):
                outcomes[index] = .envelope(
                    stored: stored, duplicates: duplicates, sessionsApplied: count.applied, attachments: attachments)
            default: break
            }
        }
        return outcomes
    }

    static func insert(_ batch: ReportBatch, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> IngestOutcome
    {
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
        // All of the request's reports in one statement, as arrays (PostgresNIO binds no optional elements: a text
        // that is absent is "" with its `has` flag false). The claim of each event id is the duplicate check: a report
        // row is written only for a new claim, and within the request only for an event id's first report.
        var events: [String] = [], kinds: [String] = [], occurred: [Int64] = []
        var texts: [[String]] = Array(repeating: [], count: 6), has: [[Bool]] = Array(repeating: [], count: 6)
        var offsets: [Int64] = [], lengths: [Int64] = []
        var trims: [[Int64]] = Array(repeating: [], count: 6)
        for prepared in batch.reports {
            let report = prepared.report
            events.append(report.eventID.rawValue)
            kinds.append(report.kind.rawValue)
            occurred.append(Millis.from(report.timestamp))
            let optional: [String?] = [
                report.release, report.environment, report.userKey, report.sessionID?.rawValue, report.error?.type,
                report.error?.message.map { IngestLimits.truncate($0, toBytes: 512) },
            ]
            for (index, text) in optional.enumerated() {
                texts[index].append(text.map(T.storable) ?? "")
                has[index].append(text != nil)
            }
            offsets.append(Int64(prepared.range.lowerBound))
            lengths.append(Int64(prepared.range.count))
            let t = report.trimmed
            for (index, count) in [
                t.customKeysDropped, t.valuesTruncated, t.breadcrumbsDropped, t.threadsDropped, t.framesDropped,
                t.modulesDropped,
            ].enumerated() {
                trims[index].append(Int64(count))
            }
        }
        let rows = try await connection.query(
            """
            WITH input AS (
                SELECT * FROM unnest(\(events)::text[], \(kinds)::text[], \(occurred)::bigint[],
                    \(texts[0])::text[], \(has[0])::boolean[], \(texts[1])::text[], \(has[1])::boolean[],
                    \(texts[2])::text[], \(has[2])::boolean[], \(texts[3])::text[], \(has[3])::boolean[],
                    \(texts[4])::text[], \(has[4])::boolean[], \(texts[5])::text[], \(has[5])::boolean[],
                    \(offsets)::bigint[], \(lengths)::bigint[], \(trims[0])::bigint[], \(trims[1])::bigint[], \(trims[2])::bigint[],
                    \(trims[3])::bigint[], \(trims[4])::bigint[], \(trims[5])::bigint[])
                    WITH ORDINALITY AS u(event_id, kind, occurred_at, release, has_release, environment, has_environment,
                        user_key, has_user_key, session_id, has_session_id, error_type, has_error_type, error_message,
                        has_error_message, payload_offset, payload_length, t0, t1, t2, t3, t4, t5, ord)),
            first AS (SELECT DISTINCT ON (event_id) * FROM input ORDER BY event_id, ord),
            claimed AS (
                INSERT INTO report_event_ids (project_id, event_id, report_id, received_at)
                SELECT \(project), event_id, nextval('reports_id_seq'), \(receivedAt) FROM (SELECT event_id FROM first ORDER BY ord) AS o
                ON CONFLICT (project_id, event_id) DO NOTHING RETURNING event_id, report_id)
            INSERT INTO reports (id, project_id, event_id, kind, occurred_at, received_at, release, environment,
                user_key, session_id, error_type, error_message, payload_id, payload_offset, payload_length,
                custom_keys_dropped, values_truncated, breadcrumbs_dropped, threads_dropped, frames_dropped, modules_dropped)
            SELECT c.report_id, \(project), f.event_id, f.kind, f.occurred_at, \(receivedAt),
                CASE WHEN f.has_release THEN f.release END, CASE WHEN f.has_environment THEN f.environment END,
                CASE WHEN f.has_user_key THEN f.user_key END, CASE WHEN f.has_session_id THEN f.session_id END,
                CASE WHEN f.has_error_type THEN f.error_type END, CASE WHEN f.has_error_message THEN f.error_message END,
                \(payloadID), f.payload_offset, f.payload_length, f.t0, f.t1, f.t2, f.t3, f.t4, f.t5
            FROM first f JOIN claimed c USING (event_id)
            RETURNING event_id
            """, logger: logger)
        var new = Set<String>()
        for try await event in rows.decode(String.self) { new.insert(event) }
        // In request order: an event id's first report is stored when its claim was new; every other is a duplicate.
        var stored: [EventID] = []
        var duplicates: [EventID] = []
        for prepared in batch.reports {
            let id = prepared.report.eventID
            if new.remove(id.rawValue) != nil { stored.append(id) } else { duplicates.append(id) }
        }
        if stored.isEmpty {
            // A batch made only of retries keeps no second copy of its bytes.
            try await connection.query(
                "DELETE FROM payloads WHERE id = \(payloadID) AND received_at = \(receivedAt)", logger: logger)
        }
        return .reports(stored: stored, duplicates: duplicates)
    }

    /// An envelope's parts but its sessions (`perform` applies them with the group's), all or nothing (the caller's
    /// transaction or savepoint).
    static func store(_ envelope: EnvelopeWrite, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> IngestOutcome
    {
        var stored: [EventID] = []
        var duplicates: [EventID] = []
        if let event = envelope.event, case .reports(let s, let d) = try await insert(event, connection, logger) {
            stored = s
            duplicates = d
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
        return .envelope(stored: stored, duplicates: duplicates, sessionsApplied: 0, attachments: attachments)
    }

}

/// Reads of the `sessions` table shared by the ingest store and the readers.
enum PostgresSessions {
    static func state(project: ProjectID, id: SessionID, _ connection: PostgresConnection, _ logger: Logger)
        async throws
        -> SessionState?
    {
        try await states(project: project, ids: [id.rawValue], connection, logger)[ExactText(id.rawValue)]
    }

    /// The stored states of the sessions `ids` of `project` (the ones stored), by session id (byte for byte).
    static func states(project: ProjectID, ids: [String], _ connection: PostgresConnection, _ logger: Logger)
        async throws
        -> [ExactText: SessionState]
    {
        let rows = try await connection.query(
            """
            SELECT session_id, distinct_id, release, environment, started_at, status, errors, duration, seq, session_count
            FROM sessions WHERE project_id = \(project.rawValue) AND session_id = ANY(\(ids)::text[])
            """, logger: logger)
        var states: [ExactText: SessionState] = [:]
        for try await (id, distinct, release, environment, started, status, errors, duration, seq, count)
            in rows.decode(
                (String, String?, String, String?, Int64, String, Int64, Double?, Int64?, Int64).self)
        {
            guard let sessionID = SessionID(id), let status = SessionStatus(rawValue: status),
                let errors = Int(exactly: errors),
                let count = Int(exactly: count)
            else { continue }
            states[ExactText(id)] = SessionState(
                sessionID: sessionID, distinctID: distinct, release: release, environment: environment,
                started: Millis.date(started),
                status: status, errors: errors, duration: duration, seq: seq, count: count)
        }
        return states
    }
}

extension PostgresIngestStore: MinidumpStore {
    public func minidump(eventID: EventID, project: ProjectID) async throws -> [UInt8]? {
        let logger = database.logger
        return try await database.read { connection in
            for try await bytes in try await connection.query(
                """
                SELECT bytes FROM attachments
                WHERE project_id = \(project.rawValue) AND event_id = \(eventID.rawValue) AND attachment_type = 'event.minidump'
                ORDER BY received_at, id LIMIT 1
                """, logger: logger
            ).decode(Data.self) {
                return Array(bytes)
            }
            return nil
        }
    }

    public func minidumpBytes(project: ProjectID) async throws -> UInt64 {
        let logger = database.logger
        return try await database.read { connection in
            try await Self.minidumpBytes(project: project, connection, logger)
        }
    }

    /// Bytes of `project`'s stored minidumps, summed from the partial index `attachments_minidumps` (the project's dumps
    /// only, `size` carried in the index). Saturates rather than overflows.
    static func minidumpBytes(project: ProjectID, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> UInt64
    {
        let rows = try await connection.query(
            """
            SELECT least(coalesce(sum(size), 0), 9223372036854775807)::bigint FROM attachments
            WHERE project_id = \(project.rawValue) AND attachment_type = 'event.minidump'
            """, logger: logger)
        for try await total in rows.decode(Int64.self) { return UInt64(clamping: total) }
        return 0
    }
}
