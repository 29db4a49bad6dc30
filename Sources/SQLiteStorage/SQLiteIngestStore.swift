import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ingest port on SQLite: commits many requests' reports and session updates in one transaction.
///
/// Each write runs in its own savepoint, so one bad write (say, a project deleted a moment ago) fails
/// alone while the rest of the group commits. Statements are cached: the hot path prepares nothing.
public struct SQLiteIngestStore: IngestStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    /// Commits `writes` in one transaction. A full disk fails the whole transaction with
    /// `StorageError(.diskFull)` (nothing of it is acknowledged); other per-write refusals are `.failed` outcomes.
    public func commit(_ writes: [IngestWrite]) async throws -> [IngestOutcome] {
        do {
            return try await commitUnmapped(writes)
        } catch {
            throw StorageError.mapped(error)
        }
    }

    /// Every write in one transaction. First without savepoints: a savepoint makes SQLite copy each page it
    /// changes into the statement journal before changing it, for every write of every group commit. Only when the
    /// database refuses a write is the transaction rolled back and done again with a savepoint per write, so that
    /// the one refused write fails alone and the others commit.
    func commitUnmapped(_ writes: [IngestWrite]) async throws -> [IngestOutcome] {
        do {
            return try await database.pool.write { db in try writes.map { try Self.perform($0, db) } }
        } catch let error as DatabaseError where error.resultCode != .SQLITE_FULL {
            return try await commitEachInASavepoint(writes)
        }
    }

    /// `commitUnmapped`'s second try: each write in its own savepoint, a refused one failed alone.
    func commitEachInASavepoint(_ writes: [IngestWrite]) async throws -> [IngestOutcome] {
        try await database.pool.write { db in
            var outcomes: [IngestOutcome] = []
            outcomes.reserveCapacity(writes.count)
            for write in writes {
                var outcome = IngestOutcome.failed("not committed")
                do {
                    try db.inSavepoint {
                        outcome = try Self.perform(write, db)
                        return .commit
                    }
                } catch let error as DatabaseError where error.resultCode != .SQLITE_FULL {
                    outcome = .failed("database refused the write: \(error.resultCode)")
                }
                outcomes.append(outcome)
            }
            return outcomes
        }
    }

    static func perform(_ write: IngestWrite, _ db: Database) throws -> IngestOutcome {
        switch write {
        case .reports(let batch): return try insert(batch, db)
        case .sessions(let batch): return try apply(batch, db)
        case .envelope(let envelope): return try store(envelope, db)
        }
    }

    static func insert(_ batch: ReportBatch, _ db: Database) throws -> IngestOutcome {
        let receivedAt = Millis.from(batch.receivedAt)
        var stored: [EventID] = []
        var duplicates: [EventID] = []
        try db.cachedStatement(
            sql:
                "INSERT INTO payloads (project_id, received_at, encoding, inflated_size, bytes, format) VALUES (?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [
            batch.project.rawValue, receivedAt, batch.payload.encoding.rawValue, batch.payload.inflatedSize,
            Data(batch.payload.bytes), batch.payload.format.rawValue,
        ])
        let payloadID = db.lastInsertedRowID
        // One statement per report: the UNIQUE(project_id, event_id) constraint is the duplicate check.
        let insertReport = try db.cachedStatement(
            sql: """
                INSERT INTO reports (project_id, event_id, kind, occurred_at, received_at, release, environment,
                    user_key, session_id, error_type, error_message, payload_id, payload_offset, payload_length,
                    custom_keys_dropped, values_truncated, breadcrumbs_dropped, threads_dropped, frames_dropped,
                    modules_dropped)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (project_id, event_id) DO NOTHING
                """)
        for prepared in batch.reports {
            let report = prepared.report
            let t = report.trimmed
            try insertReport.execute(
                arguments: StatementArguments(
                    [
                        batch.project.rawValue, report.eventID.rawValue, report.kind.rawValue,
                        Millis.from(report.timestamp),
                        receivedAt, StoredText.clean(report.release), StoredText.clean(report.environment),
                        StoredText.clean(report.userKey),
                        report.sessionID?.rawValue, StoredText.clean(report.error?.type),
                        report.error?.message.map { StoredText.clean(IngestLimits.truncate($0, toBytes: 512)) },
                        payloadID, prepared.range.lowerBound, prepared.range.count,
                        t.customKeysDropped, t.valuesTruncated, t.breadcrumbsDropped, t.threadsDropped, t.framesDropped,
                        t.modulesDropped,
                    ] as [(any DatabaseValueConvertible)?]))
            if db.changesCount == 1 { stored.append(report.eventID) } else { duplicates.append(report.eventID) }
        }
        if stored.isEmpty {
            // A batch made only of retries keeps no second copy of its bytes.
            try db.execute(sql: "DELETE FROM payloads WHERE id = ?", arguments: [payloadID])
        }
        return .reports(stored: stored, duplicates: duplicates)
    }

    /// An envelope's parts, all or nothing (the caller's savepoint).
    static func store(_ envelope: EnvelopeWrite, _ db: Database) throws -> IngestOutcome {
        var stored: [EventID] = []
        var duplicates: [EventID] = []
        if let event = envelope.event, case .reports(let s, let d) = try insert(event, db) {
            stored = s
            duplicates = d
        }
        var applied = 0
        if !envelope.sessions.isEmpty,
            case .sessions(let a, _) = try apply(
                SessionBatch(project: envelope.project, receivedAt: envelope.receivedAt, updates: envelope.sessions), db
            )
        {
            applied = a
        }
        let receivedAt = Millis.from(envelope.receivedAt)
        for discarded in envelope.discarded where discarded.quantity > 0 {
            try db.cachedStatement(
                sql: """
                    INSERT INTO client_reports (project_id, day, reason, category, quantity) VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT (project_id, day, reason, category) DO UPDATE SET quantity = quantity + ?5
                    """
            ).execute(arguments: [
                envelope.project.rawValue, DayNumber(envelope.receivedAt).rawValue, StoredText.clean(discarded.reason),
                StoredText.clean(discarded.category),
                discarded.quantity,
            ])
        }
        var attachments = 0
        // Attachments belong to a newly stored event; a retried envelope does not store them twice.
        if let eventID = envelope.eventID, stored.contains(eventID) || envelope.event == nil {
            for attachment in envelope.attachments {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO attachments (project_id, event_id, filename, content_type, attachment_type, size, bytes, received_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """
                ).execute(arguments: [
                    envelope.project.rawValue, eventID.rawValue, StoredText.clean(attachment.filename),
                    StoredText.clean(attachment.contentType), StoredText.clean(attachment.attachmentType),
                    attachment.bytes.count,
                    Data(attachment.bytes), receivedAt,
                ])
                attachments += 1
            }
        }
        return .envelope(stored: stored, duplicates: duplicates, sessionsApplied: applied, attachments: attachments)
    }

    static func apply(_ batch: SessionBatch, _ db: Database) throws -> IngestOutcome {
        var applied = 0
        var unchanged = 0
        let updatedAt = Millis.from(batch.receivedAt)
        let users = RollupUserKeys.Keyer()
        for update in batch.updates.map(StoredText.clean) {
            // Cached statements: this runs once per session update, the hottest write after reports.
            let existing = try SessionRecord.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM sessions WHERE project_id = ? AND session_id = ?"),
                arguments: [batch.project.rawValue, update.sessionID.rawValue])
            guard let next = SessionState.merging(update, into: existing?.state) else {
                unchanged += 1
                continue
            }
            let record = SessionRecord(project: batch.project, state: next, updatedAt: updatedAt)
            try db.cachedStatement(
                sql: """
                    INSERT INTO sessions (project_id, session_id, distinct_id, release, environment, started_at, status, errors,
                        duration, seq, updated_at, session_count)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (project_id, session_id) DO UPDATE SET distinct_id = excluded.distinct_id,
                        release = excluded.release, environment = excluded.environment, started_at = excluded.started_at,
                        status = excluded.status, errors = excluded.errors, duration = excluded.duration, seq = excluded.seq,
                        updated_at = excluded.updated_at
                    """
            ).execute(arguments: [
                record.projectID, record.sessionID, record.distinctID, record.release, record.environment,
                record.startedAt,
                record.status, record.errors, record.duration, record.seq, record.updatedAt, record.sessionCount,
            ])
            // The health rollups move by the session's change, in this same transaction.
            try HealthRollup.apply(
                project: batch.project, remove: existing?.state.map(SessionContribution.init),
                add: SessionContribution(next),
                startedAt: Millis.from(next.started), users: users, db)
            applied += 1
        }
        return .sessions(applied: applied, unchanged: unchanged)
    }
}

extension SQLiteIngestStore: MinidumpStore {
    public func minidump(eventID: EventID, project: ProjectID) async throws -> [UInt8]? {
        try await database.pool.read { db in
            try Data.fetchOne(
                db,
                sql: """
                    SELECT bytes FROM attachments WHERE project_id = ? AND event_id = ? AND attachment_type = 'event.minidump'
                    ORDER BY id LIMIT 1
                    """,
                arguments: [project.rawValue, eventID.rawValue]
            ).map { Array($0) }
        }
    }

    public func minidumpBytes(project: ProjectID) async throws -> UInt64 {
        try await database.pool.read { db in try Self.minidumpBytes(project: project, db) }
    }

    /// Bytes of `project`'s stored minidumps, summed from the partial index `attachments_minidumps` (the project's
    /// dumps only). Saturates rather than overflows.
    static func minidumpBytes(project: ProjectID, _ db: Database) throws -> UInt64 {
        var total: UInt64 = 0
        let sizes = try Int64.fetchCursor(
            db.cachedStatement(
                sql: "SELECT size FROM attachments WHERE project_id = ? AND attachment_type = 'event.minidump'"),
            arguments: [project.rawValue])
        while let size = try sizes.next() {
            let (sum, overflow) = total.addingReportingOverflow(UInt64(clamping: size))
            total = overflow ? .max : sum
        }
        return total
    }
}
