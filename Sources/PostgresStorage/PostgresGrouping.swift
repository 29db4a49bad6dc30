import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The row of a report that filing it reads (`SELECT … FOR UPDATE`: two nodes saving the same report take turns).
struct FiledReport {
    var id: Int64
    var receivedAt: Int64
    var project: ProjectID
    var kind: String
    var occurredAt: Int64
    var release: String?
    var userKey: String?
    var sessionID: String?
    var issueID: Int64?
    var early: Bool?
    var groupingVersion: Int

    static let columns =
        "id, received_at, project_id, kind, occurred_at, release, user_key, session_id, issue_id, early, grouping_version"
    typealias Columns = (Int64, Int64, Int64, String, Int64, String?, String?, String?, Int64?, Bool?, Int)

    init(_ c: Columns) {
        (id, receivedAt) = (c.0, c.1)
        project = ProjectID(c.2)
        (kind, occurredAt, release, userKey, sessionID, issueID, early, groupingVersion) = (
            c.3, c.4, c.5, c.6, c.7, c.8, c.9, c.10
        )
    }

    /// The report `id`, locked to the end of the transaction; nil when it is gone.
    static func lock(_ id: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> FiledReport? {
        try await lock([id], connection, logger)[id]
    }

    /// The reports `ids`, each locked to the end of the transaction, in id order (the order every node takes them in);
    /// those gone are absent.
    static func lock(_ ids: [Int64], _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64:
        FiledReport]
    {
        guard !ids.isEmpty else { return [:] }
        var reports: [Int64: FiledReport] = [:]
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT \(columns) FROM reports WHERE id = ANY($1) ORDER BY id FOR UPDATE",
                binds: PostgresBindings(values: [ids])),
            logger: logger)
        for try await row in rows.decode(Columns.self) { reports[row.0] = FiledReport(row) }
        return reports
    }
}

/// What a worker batch's transaction asks once instead of once per report (the twin of `BatchReads`): valid for one
/// transaction. Debug files may change under it on PostgreSQL (another node's upload commits mid-batch); that is
/// what `filesSeen` is for, and the rank read here only labels the result's modules, which a later requeue corrects.
final class PostgresBatchReads {
    private struct BuildKey: Hashable {
        var project: Int64
        var buildID: String
    }
    /// What `debug_files` held for a project's build-id when read: the best rank of its stored files, and the highest
    /// change sequence of its rows (nil: no row).
    private struct Stored {
        var rank: DebugDataRank
        var sequence: Int64?
    }
    private var stored: [BuildKey: Stored] = [:]
    private var settings: [Int64: AlertSettings] = [:]
    /// Keys the per-user rollups (`PostgresEngine.identities`).
    let identities: IdentityHashers?
    private var hashers: [Int64: (any IdentityHashing)?] = [:]

    init(identities: IdentityHashers?) { self.identities = identities }

    /// The hasher of `project`'s rollup users (`PostgresRollupUsers`), its key read once per transaction.
    func rollupHasher(project: ProjectID, _ connection: PostgresConnection, _ logger: Logger) async throws -> (
        any IdentityHashing
    )? {
        if let known = hashers[project.rawValue] { return known }
        let hasher = try await PostgresRollupUsers.hasher(project: project, identities: identities, connection, logger)
        hashers[project.rawValue] = hasher
        return hasher
    }

    /// Reads what `debug_files` holds for every (project, build-id) of `pairs` not read yet, in one statement.
    func load(_ pairs: [(project: ProjectID, buildID: String)], _ connection: PostgresConnection, _ logger: Logger)
        async throws
    {
        var wanted: [BuildKey] = []
        var seen: Set<BuildKey> = []
        for pair in pairs {
            let key = BuildKey(project: pair.project.rawValue, buildID: pair.buildID)
            if stored[key] == nil && seen.insert(key).inserted { wanted.append(key) }
        }
        guard !wanted.isEmpty else { return }
        var kinds: [BuildKey: [DebugFileKind]] = [:]
        var sequences: [BuildKey: Int64] = [:]
        for try await (project, buildID, kind, hasBlob, sequence) in try await connection.query(
            """
            SELECT d.project_id, d.build_id, d.kind, d.blob_sha256 IS NOT NULL, d.stored_seq
            FROM unnest(\(wanted.map(\.project))::bigint[], \(wanted.map(\.buildID))::text[]) AS u(p, b)
            JOIN debug_files d ON d.project_id = u.p AND d.build_id = u.b
            """, logger: logger
        ).decode((Int64, String, String, Bool, Int64).self) {
            let key = BuildKey(project: project, buildID: buildID)
            if hasBlob, let kind = DebugFileKind(rawValue: kind) { kinds[key, default: []].append(kind) }
            sequences[key] = max(sequences[key] ?? sequence, sequence)
        }
        for key in wanted {
            stored[key] = Stored(rank: DebugDataRank.best(of: kinds[key] ?? []), sequence: sequences[key])
        }
    }

    /// The best kind `project` held for `buildID` when first asked in this transaction.
    func bestRank(project: ProjectID, buildID: String, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> DebugDataRank
    {
        try await load([(project, buildID)], connection, logger)
        return stored[BuildKey(project: project.rawValue, buildID: buildID)]?.rank ?? DebugDataRank.none
    }

    /// Whether `project` stored a debug file for one of `buildIDs` after the change sequence `seen`.
    func storedAfter(
        _ seen: Int64, project: ProjectID, buildIDs: [String], _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> Bool
    {
        try await load(buildIDs.map { (project, $0) }, connection, logger)
        return buildIDs.contains { buildID in
            (stored[BuildKey(project: project.rawValue, buildID: buildID)]?.sequence).map { $0 > seen } ?? false
        }
    }

    func alertSettings(project: ProjectID, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> AlertSettings
    {
        if let known = settings[project.rawValue] { return known }
        let read = try await PostgresAlertRecords.settings(project: project, connection, logger)
        settings[project.rawValue] = read
        return read
    }
}

/// Alert rows and alert settings, shared by the grouping transaction and the alert store.
enum PostgresAlertRecords {
    /// Records `draft` unless an alert with its dedupe key exists; returns whether it was recorded.
    @discardableResult
    static func insert(_ draft: AlertDraft, at now: Int64, _ connection: PostgresConnection, _ logger: Logger)
        async throws -> Bool
    {
        try await insert([draft], at: now, connection, logger) == 1
    }

    /// Records `drafts` in their order, each unless an alert with its dedupe key exists (also one earlier in
    /// `drafts`), in one statement; returns how many were recorded.
    @discardableResult
    static func insert(_ drafts: [AlertDraft], at now: Int64, _ connection: PostgresConnection, _ logger: Logger)
        async throws -> Int
    {
        guard !drafts.isEmpty else { return 0 }
        let reasons = drafts.map { StoredJSON.encode(reason: $0.reason) }
        // Arrays of non-optional values: an absent issue or release is 0 or "" with its flag false.
        return try await PostgresRows.count(
            connection.query(
                """
                INSERT INTO alerts (project_id, kind, dedupe_key, issue_id, release, title, reason, created_at)
                SELECT p, k, d, CASE WHEN hi THEN i END, CASE WHEN hr THEN r END, t, reason, \(now)
                FROM unnest(\(drafts.map(\.project.rawValue))::bigint[], \(drafts.map(\.kind.rawValue))::text[], \(drafts.map(\.dedupeKey))::text[],
                            \(drafts.map { $0.issue?.rawValue ?? 0 })::bigint[], \(drafts.map { $0.issue != nil })::boolean[],
                            \(drafts.map { $0.release ?? "" })::text[], \(drafts.map { $0.release != nil })::boolean[],
                            \(drafts.map(\.title))::text[], \(reasons)::text[]) WITH ORDINALITY AS u(p, k, d, i, hi, r, hr, t, reason, n)
                ORDER BY n
                ON CONFLICT (project_id, dedupe_key) DO NOTHING RETURNING 1
                """, logger: logger))
    }

    /// The project's settings, or the defaults when none were saved.
    static func settings(project: ProjectID, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> AlertSettings
    {
        for try await json in try await connection.query(
            "SELECT settings FROM alert_settings WHERE project_id = \(project.rawValue)", logger: logger
        ).decode(String.self) {
            return (try? JSONDecoder().decode(AlertSettings.self, from: Data(json.utf8))) ?? AlertSettings()
        }
        return AlertSettings()
    }
}

/// The locks and reads filing shares on PostgreSQL (`PostgresBatchGrouper` plans and writes).
///
/// Several nodes: the caller holds a transaction-level advisory lock on each report's fingerprint, so two nodes
/// filing reports of one new crash do not both create its issue; the report's row is locked (`FiledReport.lock`).
enum PostgresGrouper {
    /// Takes the fingerprint's advisory lock, to the end of the transaction. Keyed by the fingerprint alone (seed 1,
    /// apart from the blobs' seed 0), so the report's project need not be read first: one crash's fingerprint in two
    /// projects only makes their filings take turns.
    static func lock(fingerprint: Fingerprint, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await lock(fingerprints: [fingerprint.rawValue], connection, logger)
    }

    /// Takes the locks of `fingerprints` (sorted, each once) in their order, in one statement: the order every node takes
    /// them in, one at a time or a batch at once, so that two nodes never wait for each other in a circle.
    static func lock(fingerprints: [String], _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !fingerprints.isEmpty else { return }
        // The subquery's ORDER BY keeps it from being flattened: the locks are taken in the array's order.
        _ = try await PostgresRows.count(
            connection.query(
                """
                SELECT pg_advisory_xact_lock(k) FROM (
                    SELECT hashtextextended(f, 1) AS k FROM unnest(\(fingerprints)::text[]) WITH ORDINALITY AS u(f, n) ORDER BY n) AS ordered
                """, logger: logger))
    }

    /// The new-issue budget of each of `projects` in the window of its settings that holds `now`: the issues each
    /// created in it, counted in the index `issues_by_created (project_id, created_at)` and no further than its cap and
    /// `beyond` more (the issues the batch may delete; one statement), and the overflow issue (locked) of each project
    /// that is at its cap or may reach it by creating `more` issues.
    static func newIssueBudgets(
        _ projects: [(project: ProjectID, settings: AlertSettings, more: Int, beyond: Int)], now: Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [Int64: IssueFiling.NewIssueBudget] {
        guard !projects.isEmpty else { return [:] }
        let windows = projects.map { IssueFiling.window(containing: now, minutes: $0.settings.newIssueWindowMinutes) }
        var budgets: [Int64: IssueFiling.NewIssueBudget] = [:]
        for try await (project, created) in try await connection.query(
            """
            SELECT u.p, (SELECT count(*) FROM (
                    SELECT 1 FROM issues i WHERE i.project_id = u.p AND i.created_at >= u.s AND i.created_at < u.e LIMIT u.c) AS w)
            FROM unnest(\(projects.map(\.project.rawValue))::bigint[], \(windows.map(\.lowerBound))::bigint[],
                        \(windows.map(\.upperBound))::bigint[], \(projects.map { Int64(max(0, $0.settings.newIssueCap)) &+ Int64(max(0, $0.beyond)) })::bigint[]) AS u(p, s, e, c)
            """, logger: logger
        ).decode((Int64, Int64).self) {
            let cap =
                projects.first { $0.project.rawValue == project }?.settings.newIssueCap ?? AlertSettings().newIssueCap
            budgets[project] = IssueFiling.NewIssueBudget(cap: cap, createdInWindow: Int(created), overflow: nil)
        }
        let reached = projects.filter { p in
            budgets[p.project.rawValue].map {
                $0.createdInWindow.addingReportingOverflow(p.more).partialValue >= $0.cap
            } ?? false
        }.map(\.project.rawValue)
        if !reached.isEmpty {
            for try await row in try await connection.query(
                """
                SELECT id, status, fingerprint, title_rank, project_id FROM issues
                WHERE project_id = ANY(\(reached)) AND fingerprint = \(IssueFiling.overflowFingerprint.rawValue)
                ORDER BY id FOR UPDATE
                """, logger: logger
            ).decode((Int64, String, String, Int, Int64).self) {
                budgets[row.4]?.overflow = state((row.0, row.1, row.2, row.3))
            }
        }
        return budgets
    }

    typealias StateColumns = (Int64, String, String, Int)

    static func state(_ row: StateColumns) -> IssueFiling.IssueState {
        IssueFiling.IssueState(id: row.0, status: row.1, fingerprint: row.2, titleRank: row.3)
    }
}
