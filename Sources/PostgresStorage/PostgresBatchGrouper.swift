import FaultlineCore
import PostgresNIO

/// Files a batch of reports under their issues: reads the state a filing plan needs (`readFilingState`), asks
/// `FilingPlanner.plan` (pure, in FaultlineCore), and writes the plan with each table written once (`write`). It decides
/// nothing itself. The twin of SQLite's `SQLiteBatchGrouper`.
///
/// What makes it equal to filing one report at a time (`FilingPlanner` says the rest):
/// - The caller holds every fingerprint's advisory lock and every report's row (`saveInSets`). The issues of those
///   fingerprints, and those reports filed before move out of, are read `FOR UPDATE`, so their first/last event and
///   releases, computed by the plan one report after the other, are written as values no one else moved meanwhile.
/// - Reports filed before (moving between issues after late symbols, or migrating to a new grouping version) are in the
///   same plan, in the batch's order; a report is given once per plan (`saveInSets` writes a plan before a repeat).
/// - The new-issue cap: each project's count of issues created in the window is read once (`newIssueBudgets`) and the
///   plan moves it by the batch's own creations and deletions.
enum PostgresBatchGrouper {
    struct Filing {
        var report: FiledReport
        var input: GroupingInput
        var groupingJSON: String
    }

    typealias Filed = FilingPlan.Filed

    /// Files `filings` (in the batch's order, each report once) and applies every effect; the issue of each report.
    static func file(
        _ filings: [Filing], now: Int64, reads: PostgresBatchReads, _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> [Int64: Filed]
    {
        guard !filings.isEmpty else { return [:] }
        let reports = try await facts(filings, reads: reads, connection, logger)
        let state = try await readFilingState(for: reports, now: now, reads: reads, connection, logger)
        let plan = try FilingPlanner.plan(reports, state: state, now: now)
        return try await write(plan, connection, logger)
    }

    /// The planner's facts of `filings`, each user replaced by its rollup key (`PostgresRollupUsers`).
    static func facts(
        _ filings: [Filing], reads: PostgresBatchReads, _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> [FilingPlanner.Report]
    {
        var reports: [FilingPlanner.Report] = []
        reports.reserveCapacity(filings.count)
        for filing in filings {
            let report = filing.report
            var user: String?
            if let id = report.userKey {
                guard let hasher = try await reads.rollupHasher(project: report.project, connection, logger) else {
                    throw PostgresRollupUsers.missingHasher()
                }
                user = RollupUser.key(of: id, hasher: hasher)
            }
            reports.append(
                FilingPlanner.Report(
                    id: report.id, project: report.project, kind: report.kind, occurredAt: report.occurredAt,
                    release: report.release,
                    user: user, sessionID: report.sessionID, issueID: report.issueID, early: report.early,
                    groupingVersion: report.groupingVersion, grouping: filing.input.grouping,
                    groupingJSON: filing.groupingJSON,
                    tags: filing.input.tags.map { (key: $0.key, value: $0.value) }, hang: filing.input.hang))
        }
        return reports
    }

    /// Reads what planning `reports` needs: their issues (locked), else the issues their fingerprints were merged
    /// into, which of the issues they move out of others were merged into, the releases closed ones and those
    /// reports move out of were seen in, the alert settings of their projects, the new-issue budget of those with a
    /// new fingerprint (and the overflow issue of those that may reach their cap), the start of their sessions. Eight
    /// statements at most, whatever the batch's size (plus one per overflow issue read).
    static func readFilingState(
        for reports: [FilingPlanner.Report], now: Int64, reads: PostgresBatchReads,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> FilingPlanner.State {
        let needs = FilingPlanner.Needs(reports)
        var state = FilingPlanner.State()
        let keys = needs.keys
        for try await (id, project, fingerprint, status, rank, title, first, last, firstRelease, lastRelease)
            in try await connection.query(
                """
                SELECT i.id, i.project_id, i.fingerprint, i.status, i.title_rank, i.title, i.first_seen, i.last_seen, i.first_release, i.last_release
                FROM unnest(\(keys.map(\.project))::bigint[], \(keys.map(\.fingerprint))::text[]) AS u(p, f)
                JOIN issues i ON i.project_id = u.p AND i.fingerprint = u.f
                ORDER BY i.id FOR UPDATE OF i
                """, logger: logger
            ).decode((Int64, Int64, String, String, Int, String, Int64, Int64, String?, String?).self)
        {
            state.issues[FilingPlanner.IssueKey(project: project, fingerprint: fingerprint)] = FilingPlanner.Issue(
                state: PostgresGrouper.state((id, status, fingerprint, rank)), title: title,
                span: IssueSpan(firstSeen: first, lastSeen: last, firstRelease: firstRelease, lastRelease: lastRelease))
        }
        // A fingerprint with no issue of its own may have been merged into one (`IssueMerge`): that issue, locked.
        let unowned = keys.filter { state.issues[$0] == nil }
        if !unowned.isEmpty {
            for try await (project, alias, id, fingerprint, status, rank, title, first, last, firstRelease, lastRelease)
                in try await connection.query(
                    """
                    SELECT a.project_id, a.fingerprint, i.id, i.fingerprint, i.status, i.title_rank, i.title, i.first_seen, i.last_seen,
                        i.first_release, i.last_release
                    FROM unnest(\(unowned.map(\.project))::bigint[], \(unowned.map(\.fingerprint))::text[]) AS u(p, f)
                    JOIN issue_aliases a ON a.project_id = u.p AND a.fingerprint = u.f
                    JOIN issues i ON i.id = a.issue_id
                    ORDER BY i.id FOR UPDATE OF i
                    """, logger: logger
                ).decode((Int64, String, Int64, String, String, Int, String, Int64, Int64, String?, String?).self)
            {
                state.issues[FilingPlanner.IssueKey(project: project, fingerprint: fingerprint)] = FilingPlanner.Issue(
                    state: PostgresGrouper.state((id, status, fingerprint, rank)), title: title,
                    span: IssueSpan(
                        firstSeen: first, lastSeen: last, firstRelease: firstRelease, lastRelease: lastRelease))
                state.aliases[FilingPlanner.IssueKey(project: project, fingerprint: alias)] = id
            }
        }
        // The issues reports filed before move out of, with what only moves need (`current`).
        if !needs.current.isEmpty {
            for try await row in try await connection.query(
                """
                SELECT id, project_id, fingerprint, status, title_rank, title, first_seen, last_seen, first_release, last_release,
                    events, regressed, status_changed_at, status_changed_by, created_at
                FROM issues WHERE id = ANY(\(needs.current)) ORDER BY id FOR UPDATE
                """, logger: logger
            ).decode(
                (
                    Int64, Int64, String, String, Int, String, Int64, Int64, String?, String?, Int64, Bool, Int64?,
                    String?, Int64?
                ).self)
            {
                var issue = FilingPlanner.Issue(
                    state: PostgresGrouper.state((row.0, row.3, row.2, row.4)), title: row.5,
                    span: IssueSpan(firstSeen: row.6, lastSeen: row.7, firstRelease: row.8, lastRelease: row.9),
                    events: row.10)
                (issue.regressed, issue.statusChangedAt, issue.statusChangedBy, issue.createdAt) = (
                    row.11, row.12, row.13, row.14
                )
                state.issues[FilingPlanner.IssueKey(project: row.1, fingerprint: row.2)] = issue
            }
            // Those others were merged into keep a migration's reports together.
            for try await id in try await connection.query(
                "SELECT DISTINCT issue_id FROM issue_aliases WHERE issue_id = ANY(\(needs.current))", logger: logger
            ).decode(Int64.self) {
                state.survivors.insert(id)
            }
        }
        // Whether a closed issue was seen in a report's release decides a regression; the events of the rows reports
        // move out of tell when a move empties one (`FilingPlanner.Issue.releaseEvents`).
        let moving = Set(needs.current)
        let counted = state.issues.values.filter { $0.state.status == .closed || moving.contains($0.state.id) }
            .map(\.state.id)
        if !counted.isEmpty && !needs.releases.isEmpty {
            var byID: [Int64: FilingPlanner.IssueKey] = [:]
            for (key, issue) in state.issues { byID[issue.state.id] = key }
            for try await (issue, release, events) in try await connection.query(
                "SELECT issue_id, release, events FROM issue_releases WHERE issue_id = ANY(\(counted)) AND release = ANY(\(needs.releases))",
                logger: logger
            ).decode((Int64, String, Int64).self) {
                guard let key = byID[issue] else { continue }
                state.issues[key]?.releases.insert(release)
                state.issues[key]?.releaseEvents[release] = events
            }
        }
        for project in needs.projects {
            state.settings[project] = try await reads.alertSettings(project: ProjectID(project), connection, logger)
        }
        // The cap matters only to a project with a fingerprint that has no issue yet. Each new fingerprint may create
        // one issue: the overflow issue is read too when the batch may reach the cap.
        let creating = needs.creating(given: state.issues, aliases: state.aliases)
        state.budgets = try await PostgresGrouper.newIssueBudgets(
            creating.sorted { $0.key < $1.key }.map {
                (ProjectID($0.key), state.settings[$0.key] ?? AlertSettings(), $0.value, needs.moving[$0.key] ?? 0)
            }, now: now,
            connection, logger)
        for (project, budget) in state.budgets {
            guard let overflow = budget.overflow, state.issues[.overflow(project: project)] == nil else { continue }
            state.issues[.overflow(project: project)] = try await issue(overflow, connection, logger)
        }
        // A report filed for the first time is early or not by its session's start.
        if !needs.sessions.isEmpty {
            for try await (project, session, started) in try await connection.query(
                """
                SELECT s.project_id, s.session_id, s.started_at
                FROM unnest(\(needs.sessions.map(\.project))::bigint[], \(needs.sessions.map(\.session))::text[]) AS u(p, s)
                JOIN sessions s ON s.project_id = u.p AND s.session_id = u.s
                """, logger: logger
            ).decode((Int64, String, Int64).self) {
                state.sessions[FilingPlanner.SessionKey(project: project, session: session)] = started
            }
        }
        return state
    }

    /// The overflow issue as the batch's first report finds it (read after the budget locked it).
    static func issue(_ overflow: IssueFiling.IssueState, _ connection: PostgresConnection, _ logger: Logger)
        async throws
        -> FilingPlanner.Issue
    {
        for try await (title, first, last, firstRelease, lastRelease) in try await connection.query(
            "SELECT title, first_seen, last_seen, first_release, last_release FROM issues WHERE id = \(overflow.id)",
            logger: logger
        ).decode((String, Int64, Int64, String?, String?).self) {
            return FilingPlanner.Issue(
                state: overflow, title: title,
                span: IssueSpan(firstSeen: first, lastSeen: last, firstRelease: firstRelease, lastRelease: lastRelease))
        }
        throw StorageError(.conflict, "the overflow issue \(overflow.id) is gone")
    }

    /// Writes `plan`: its new issues (one statement, or one per run between deletions) and deletions in the plan's
    /// order, the rollup deltas and issue updates (one statement a table), its alerts (one statement); each report's
    /// issue, its plan id resolved.
    static func write(_ plan: FilingPlan, _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64:
        Filed]
    {
        var created: [Int64: Int64] = [:]
        func id(_ key: Int64) throws -> Int64 {
            if key > 0 { return key }
            guard let id = created[key] else {
                throw StorageError(.conflict, "a new issue of the batch was not created")
            }
            return id
        }
        var inserted = 0
        for deletion in plan.deletions {
            created.merge(
                try await insertIssues(plan, from: inserted, to: deletion.afterNewIssues, connection, logger)
            ) { _, new in new }
            inserted = max(inserted, deletion.afterNewIssues)
            if let to = deletion.alertsTo {
                try await connection.query(
                    "UPDATE alerts SET issue_id = \(try id(to)) WHERE issue_id = \(deletion.issue)", logger: logger)
            }
            // Its rollup rows go with it (ON DELETE CASCADE).
            try await connection.query("DELETE FROM issues WHERE id = \(deletion.issue)", logger: logger)
        }
        created.merge(try await insertIssues(plan, from: inserted, to: plan.newIssues.count, connection, logger)) {
            _, new in new
        }
        if !plan.newAliases.isEmpty {
            let aliases = plan.newAliases
            try await connection.query(
                """
                INSERT INTO issue_aliases (project_id, fingerprint, issue_id, created_at)
                SELECT p, f, i, \(plan.now) FROM unnest(\(aliases.map(\.key.project))::bigint[],
                    \(aliases.map(\.key.fingerprint))::text[], \(try aliases.map { try id($0.issue) })::bigint[]) AS u(p, f, i)
                ON CONFLICT (project_id, fingerprint) DO UPDATE SET issue_id = excluded.issue_id
                """, logger: logger)
        }
        try await plan.deltas.write(resolving: id, plan: plan, connection, logger)
        try await PostgresAlertRecords.insert(try plan.drafts(resolving: id), at: plan.now, connection, logger)
        return try plan.filed.mapValues { Filed(issue: try id($0.issue), early: $0.early) }
    }

    /// Inserts the plan's new issues `from..<to` in one statement; their ids by their plan ids.
    static func insertIssues(
        _ plan: FilingPlan, from: Int, to: Int, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [Int64: Int64] {
        guard from < min(to, plan.newIssues.count) else { return [:] }
        let range = from..<min(to, plan.newIssues.count)
        let created = Array(plan.newIssues[range])
        let now = plan.now
        var keys: [FilingPlanner.IssueKey: Int64] = [:]
        for (index, issue) in zip(range, created) { keys[issue.key] = FilingPlan.newIssueID(at: index) }
        var ids: [Int64: Int64] = [:]
        for try await (id, project, fingerprint) in try await connection.query(
            """
            INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, title_rank, first_seen, last_seen,
                first_release, last_release, updated_at, created_at, status, regressed, status_changed_at, status_changed_by, hang)
            SELECT p, f, k, g, t, CASE WHEN hc THEN c END, r, o, o, CASE WHEN hr THEN rel END, CASE WHEN hr THEN rel END, \(now), \(now),
                st, rg, CASE WHEN ha THEN sa END, CASE WHEN hb THEN sb END, hg
            FROM unnest(\(created.map(\.key.project))::bigint[], \(created.map(\.key.fingerprint))::text[], \(created.map(\.kind))::text[],
                        \(created.map(\.grouping))::text[], \(created.map(\.title))::text[], \(created.map { $0.culprit ?? "" })::text[],
                        \(created.map { $0.culprit != nil })::boolean[], \(created.map { Int64($0.titleRank) })::bigint[],
                        \(created.map(\.occurredAt))::bigint[], \(created.map { $0.release ?? "" })::text[],
                        \(created.map { $0.release != nil })::boolean[], \(created.map(\.status.rawValue))::text[],
                        \(created.map(\.regressed))::boolean[], \(created.map { $0.statusChangedAt ?? 0 })::bigint[],
                        \(created.map { $0.statusChangedAt != nil })::boolean[], \(created.map { $0.statusChangedBy ?? "" })::text[],
                        \(created.map { $0.statusChangedBy != nil })::boolean[], \(created.map(\.hang))::boolean[])
                WITH ORDINALITY AS u(p, f, k, g, t, c, hc, r, o, rel, hr, st, rg, sa, ha, sb, hb, hg, n)
            ORDER BY n
            RETURNING id, project_id, fingerprint
            """, logger: logger
        ).decode((Int64, Int64, String).self) {
            if let key = keys[FilingPlanner.IssueKey(project: project, fingerprint: fingerprint)] { ids[key] = id }
        }
        return ids
    }
}
