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

    static let columns = "id, received_at, project_id, kind, occurred_at, release, user_key, session_id, issue_id, early, grouping_version"
    typealias Columns = (Int64, Int64, Int64, String, Int64, String?, String?, String?, Int64?, Bool?, Int)

    init(_ c: Columns) {
        (id, receivedAt) = (c.0, c.1)
        project = ProjectID(c.2)
        (kind, occurredAt, release, userKey, sessionID, issueID, early, groupingVersion) = (c.3, c.4, c.5, c.6, c.7, c.8, c.9, c.10)
    }

    /// The report `id`, locked to the end of the transaction; nil when it is gone.
    static func lock(_ id: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> FiledReport? {
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT \(columns) FROM reports WHERE id = $1 FOR UPDATE", binds: PostgresBindings(values: [id])),
            logger: logger)
        for try await row in rows.decode(Columns.self) { return FiledReport(row) }
        return nil
    }

    /// The reports `ids`, each locked to the end of the transaction, in id order (the order every node takes them in);
    /// those gone are absent.
    static func lock(_ ids: [Int64], _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64: FiledReport] {
        guard !ids.isEmpty else { return [:] }
        var reports: [Int64: FiledReport] = [:]
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT \(columns) FROM reports WHERE id = ANY($1) ORDER BY id FOR UPDATE", binds: PostgresBindings(values: [ids])),
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
    func rollupHasher(project: ProjectID, _ connection: PostgresConnection, _ logger: Logger) async throws -> (any IdentityHashing)? {
        if let known = hashers[project.rawValue] { return known }
        let hasher = try await PostgresRollupUsers.hasher(project: project, identities: identities, connection, logger)
        hashers[project.rawValue] = hasher
        return hasher
    }

    /// Reads what `debug_files` holds for every (project, build-id) of `pairs` not read yet, in one statement.
    func load(_ pairs: [(project: ProjectID, buildID: String)], _ connection: PostgresConnection, _ logger: Logger) async throws {
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
    func bestRank(project: ProjectID, buildID: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> DebugDataRank {
        try await load([(project, buildID)], connection, logger)
        return stored[BuildKey(project: project.rawValue, buildID: buildID)]?.rank ?? DebugDataRank.none
    }

    /// Whether `project` stored a debug file for one of `buildIDs` after the change sequence `seen`.
    func storedAfter(_ seen: Int64, project: ProjectID, buildIDs: [String], _ connection: PostgresConnection, _ logger: Logger)
        async throws -> Bool
    {
        try await load(buildIDs.map { (project, $0) }, connection, logger)
        return buildIDs.contains { buildID in
            (stored[BuildKey(project: project.rawValue, buildID: buildID)]?.sequence).map { $0 > seen } ?? false
        }
    }

    func alertSettings(project: ProjectID, _ connection: PostgresConnection, _ logger: Logger) async throws -> AlertSettings {
        if let known = settings[project.rawValue] { return known }
        let read = try await PostgresAlertRecords.settings(project: project, connection, logger)
        settings[project.rawValue] = read
        return read
    }
}

/// Alert rows and alert settings, shared by the grouping transaction and (later) the alert store.
enum PostgresAlertRecords {
    /// Records `draft` unless an alert with its dedupe key exists; returns whether it was recorded.
    @discardableResult
    static func insert(_ draft: AlertDraft, at now: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> Bool {
        try await insert([draft], at: now, connection, logger) == 1
    }

    /// Records `drafts` in their order, each unless an alert with its dedupe key exists (also one earlier in
    /// `drafts`), in one statement; returns how many were recorded.
    @discardableResult
    static func insert(_ drafts: [AlertDraft], at now: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int {
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
    static func settings(project: ProjectID, _ connection: PostgresConnection, _ logger: Logger) async throws -> AlertSettings {
        for try await json in try await connection.query(
            "SELECT settings FROM alert_settings WHERE project_id = \(project.rawValue)", logger: logger
        ).decode(String.self) {
            return (try? JSONDecoder().decode(AlertSettings.self, from: Data(json.utf8))) ?? AlertSettings()
        }
        return AlertSettings()
    }
}

/// The issue rollups on PostgreSQL, the twin of `IssueRollup` (Sources/Storage/Rollups): counters on `issues` and the
/// per-release, per-day, per-user and per-tag tables; `add` and `remove` are exact inverses, so every counter equals a
/// recount from the reports.
enum PostgresIssueRollup {
    enum Shapes {
        static let tags = PostgresCountedRow.Shape(table: "issue_tags", keys: ["issue_id", "key", "value"], counters: ["events"])
        static let releases = PostgresCountedRow.Shape(table: "issue_releases", keys: ["issue_id", "release"], counters: ["events"])
        static let days = PostgresCountedRow.Shape(table: "issue_days", keys: ["issue_id", "day"], counters: ["events"])
        static let users = PostgresCountedRow.Shape(table: "issue_users", keys: ["issue_id", "user_key"], counters: ["events"])
        static let releaseUsers = PostgresCountedRow.Shape(
            table: "issue_release_users", keys: ["issue_id", "release", "user_key"], counters: ["events"])
        static let dayUsers = PostgresCountedRow.Shape(table: "issue_day_users", keys: ["issue_id", "day", "user_key"], counters: ["events"])
    }

    static func add(_ c: IssueContribution, to issue: Int64, now: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let early: Int64 = c.early == true ? 1 : 0
        let timed: Int64 = c.early == nil ? 0 : 1
        let release: String? = c.release.isEmpty ? nil : c.release
        try await connection.query(
            """
            UPDATE issues SET events = events + 1,
                first_release = CASE WHEN \(c.occurredAt) < first_seen OR first_release IS NULL
                                     THEN coalesce(\(release), first_release) ELSE first_release END,
                last_release = CASE WHEN \(c.occurredAt) >= last_seen OR last_release IS NULL
                                    THEN coalesce(\(release), last_release) ELSE last_release END,
                first_seen = least(first_seen, \(c.occurredAt)), last_seen = greatest(last_seen, \(c.occurredAt)),
                early_events = early_events + \(early), timed_events = timed_events + \(timed), updated_at = \(now)
            WHERE id = \(issue)
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO issue_releases (issue_id, release, events, first_seen, last_seen) VALUES (\(issue), \(c.release), 1, \(c.occurredAt), \(c.occurredAt))
            ON CONFLICT (issue_id, release) DO UPDATE SET events = issue_releases.events + 1,
                first_seen = least(issue_releases.first_seen, excluded.first_seen),
                last_seen = greatest(issue_releases.last_seen, excluded.last_seen)
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO issue_days (issue_id, day, events) VALUES (\(issue), \(c.day.rawValue), 1)
            ON CONFLICT (issue_id, day) DO UPDATE SET events = issue_days.events + 1
            """, logger: logger)
        try await users(c, issue: issue, sign: 1, connection, logger)
        for tag in c.tags {
            try await PostgresCountedRow.bump(Shapes.tags, keys: PostgresBindings(values: [issue, tag.key, tag.value]), by: [1], connection, logger)
        }
    }

    /// Removes a contribution; deletes the issue when it has no events left. Returns true when it was deleted.
    @discardableResult
    static func remove(_ c: IssueContribution, from issue: Int64, now: Int64, _ connection: PostgresConnection, _ logger: Logger)
        async throws -> Bool
    {
        let early: Int64 = c.early == true ? 1 : 0
        let timed: Int64 = c.early == nil ? 0 : 1
        var events: Int64 = 0
        for try await left in try await connection.query(
            """
            UPDATE issues SET events = greatest(events - 1, 0), early_events = greatest(early_events - \(early), 0),
                timed_events = greatest(timed_events - \(timed), 0), updated_at = \(now)
            WHERE id = \(issue) RETURNING events
            """, logger: logger
        ).decode(Int64.self) {
            events = left
        }
        if events == 0 {
            // Its rollup rows go with it (ON DELETE CASCADE).
            try await connection.query("DELETE FROM issues WHERE id = \(issue)", logger: logger)
            return true
        }
        try await PostgresCountedRow.bump(Shapes.releases, keys: PostgresBindings(values: [issue, c.release]), by: [-1], connection, logger)
        try await PostgresCountedRow.bump(Shapes.days, keys: PostgresBindings(values: [issue, c.day.rawValue]), by: [-1], connection, logger)
        try await users(c, issue: issue, sign: -1, connection, logger)
        for tag in c.tags {
            try await PostgresCountedRow.bump(Shapes.tags, keys: PostgresBindings(values: [issue, tag.key, tag.value]), by: [-1], connection, logger)
        }
        return false
    }

    /// Distinct users of the issue, of the issue in the release and on the day; users with more than one event.
    private static func users(_ c: IssueContribution, issue: Int64, sign: Int64, _ connection: PostgresConnection, _ logger: Logger)
        async throws
    {
        guard let user = c.user else { return }
        let (before, after) = try await PostgresCountedRow.bumpValues(Shapes.users, keys: PostgresBindings(values: [issue, user]), by: [sign], connection, logger)
        let usersDelta = CounterDeltas.crossing(0, before: before[0], after: after[0])
        let repeatDelta = CounterDeltas.crossing(1, before: before[0], after: after[0])
        if usersDelta != 0 || repeatDelta != 0 {
            try await connection.query(
                "UPDATE issues SET users = users + \(usersDelta), repeat_users = repeat_users + \(repeatDelta) WHERE id = \(issue)",
                logger: logger)
        }
        let (releaseUsers, _) = try await PostgresCountedRow.bump(
            Shapes.releaseUsers, keys: PostgresBindings(values: [issue, c.release, user]), by: [sign], connection, logger)
        if releaseUsers != 0 {
            try await connection.query(
                "UPDATE issue_releases SET users = users + \(releaseUsers) WHERE issue_id = \(issue) AND release = \(c.release)",
                logger: logger)
        }
        let (dayUsers, _) = try await PostgresCountedRow.bump(
            Shapes.dayUsers, keys: PostgresBindings(values: [issue, c.day.rawValue, user]), by: [sign], connection, logger)
        if dayUsers != 0 {
            try await connection.query(
                "UPDATE issue_days SET users = users + \(dayUsers) WHERE issue_id = \(issue) AND day = \(c.day.rawValue)",
                logger: logger)
        }
    }
}

/// Files a report under its issue inside the result's transaction (the twin of `Grouper`): reads the state the
/// decision needs, asks `IssueFiling.decide` (pure, in FaultlineCore) and applies its actions, so new-issue and
/// regression alerts are recorded exactly once, with the decision.
///
/// Several nodes: the caller holds a transaction-level advisory lock on the report's fingerprint, so two nodes
/// filing reports of one new crash do not both create its issue; the report's row is locked (`FiledReport.lock`).
enum PostgresGrouper {
    /// Takes the fingerprint's advisory lock, to the end of the transaction. Keyed by the fingerprint alone (seed 1,
    /// apart from the blobs' seed 0), so the report's project need not be read first: one crash's fingerprint in two
    /// projects only makes their filings take turns.
    static func lock(fingerprint: Fingerprint, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(fingerprint.rawValue), 1))", logger: logger)
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

    static func file(report: FiledReport, grouping input: GroupingInput, groupingJSON: String, now: Int64, reads: PostgresBatchReads,
                     _ connection: PostgresConnection, _ logger: Logger) async throws -> IssueID {
        let project = report.project
        let g = input.grouping
        var current: IssueFiling.IssueState?
        if let issue = report.issueID { current = try await state(issueID: issue, connection, logger) }
        let target = try await state(project: project, fingerprint: g.fingerprint, connection, logger)
        var seenInRelease = false
        if let target {
            if let release = report.release {
                seenInRelease = try await PostgresRows.count(
                    connection.query(
                        "SELECT 1 FROM issue_releases WHERE issue_id = \(target.id) AND release = \(release)", logger: logger)) > 0
            } else {
                seenInRelease = true
            }
        }
        let settings = try await reads.alertSettings(project: project, connection, logger)
        var budget: IssueFiling.NewIssueBudget?
        if target == nil {
            budget = try await newIssueBudgets([(project, settings, 0)], now: now, connection, logger)[project.rawValue]
        }
        let decision = IssueFiling.Input(
            grouping: g, current: current, reportGroupingVersion: report.groupingVersion, target: target,
            targetSeenInRelease: seenInRelease, release: report.release, alertOnNewIssue: settings.alertOnNewIssue,
            alertOnRegression: settings.alertOnRegression, newIssues: budget)
        let actions = IssueFiling.decide(decision)

        var issueID = target?.id ?? report.issueID
        var contribution = try PostgresRollupUsers.keyed(
            IssueContribution(
                release: report.release, occurredAt: report.occurredAt, user: report.userKey, tags: input.tags,
                early: report.early),
            report.userKey == nil ? nil : try await reads.rollupHasher(project: project, connection, logger))
        var muted = target?.status == .muted
        for action in actions {
            switch action {
            case .createIssue(let statusFrom):
                var inherited: (String, Bool, Int64?, String?)?
                if let statusFrom {
                    for try await row in try await connection.query(
                        "SELECT status, regressed, status_changed_at, status_changed_by FROM issues WHERE id = \(statusFrom)", logger: logger
                    ).decode((String, Bool, Int64?, String?).self) {
                        inherited = row
                    }
                }
                let status = inherited?.0 ?? IssueStatus.open.rawValue
                for try await id in try await connection.query(
                    """
                    INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, title_rank, first_seen, last_seen,
                        first_release, last_release, updated_at, status, regressed, status_changed_at, status_changed_by, created_at)
                    VALUES (\(project.rawValue), \(g.fingerprint.rawValue), \(report.kind), \(groupingJSON), \(g.title), \(g.culprit),
                        \(g.titleRank), \(report.occurredAt), \(report.occurredAt), \(report.release), \(report.release), \(now), \(status),
                        \(inherited?.1 ?? false), \(inherited?.2), \(inherited?.3), \(now))
                    RETURNING id
                    """, logger: logger
                ).decode(Int64.self) {
                    issueID = id
                }
                muted = status == IssueStatus.muted.rawValue
            case .holdInOverflow(let existing):
                if let existing {
                    issueID = existing
                    muted = budget?.overflow?.status == .muted
                } else {
                    issueID = try await createOverflowIssue(project: project, report: report, now: now, connection, logger)
                    muted = false
                }
            case .rekey(let issue):
                try await connection.query(
                    """
                    UPDATE issues SET fingerprint = \(g.fingerprint.rawValue), grouping = \(groupingJSON), title = \(g.title),
                        culprit = \(g.culprit), title_rank = \(g.titleRank), kind = \(report.kind), updated_at = \(now)
                    WHERE id = \(issue)
                    """, logger: logger)
                issueID = issue
            case .retitle:
                guard let target else { break }
                try await connection.query(
                    """
                    UPDATE issues SET grouping = \(groupingJSON), title = \(g.title), culprit = \(g.culprit), title_rank = \(g.titleRank),
                        updated_at = \(now) WHERE id = \(target.id)
                    """, logger: logger)
            case .move(let from, let carryHistory):
                guard let to = issueID else { break }
                if let from {
                    if carryHistory {
                        // The old issue may empty and go: its alert history follows its events.
                        var left: Int64 = 0
                        for try await events in try await connection.query("SELECT events FROM issues WHERE id = \(from)", logger: logger)
                            .decode(Int64.self)
                        {
                            left = events
                        }
                        if left <= 1 {
                            try await connection.query("UPDATE alerts SET issue_id = \(to) WHERE issue_id = \(from)", logger: logger)
                        }
                    }
                    try await PostgresIssueRollup.remove(contribution, from: from, now: now, connection, logger)
                } else if let session = report.sessionID {
                    var started: Int64?
                    for try await value in try await connection.query(
                        "SELECT started_at FROM sessions WHERE project_id = \(project.rawValue) AND session_id = \(session)", logger: logger
                    ).decode(Int64.self) {
                        started = value
                    }
                    contribution.early = started.map {
                        IssueSignals.isEarly(occurredAt: report.occurredAt, sessionStartedAt: $0)
                    }
                }
                try await PostgresIssueRollup.add(contribution, to: to, now: now, connection, logger)
            case .reopenRegressed:
                guard let to = issueID else { break }
                try await connection.query(
                    """
                    UPDATE issues SET status = 'open', regressed = true, status_changed_at = \(now), status_changed_by = NULL
                    WHERE id = \(to)
                    """, logger: logger)
            case .alertNewIssue, .alertNewIssuesHeld, .alertRegression:
                guard let to = issueID, !muted else { break }
                var title = g.title
                for try await stored in try await connection.query("SELECT title FROM issues WHERE id = \(to)", logger: logger)
                    .decode(String.self)
                {
                    title = stored
                }
                let context = IssueAlerts.Context(
                    project: project, issue: to, title: title, release: report.release, occurredAt: report.occurredAt, now: now)
                if let draft = IssueAlerts.draft(action, context, settings: settings) {
                    try await PostgresAlertRecords.insert(draft, at: now, connection, logger)
                }
            }
        }
        guard let issueID else { throw StorageError(.conflict, "grouping decided no issue for report \(report.id)") }
        try await connection.query(
            """
            UPDATE reports SET issue_id = \(issueID), early = \(contribution.early), grouping_version = \(Grouping.version)
            WHERE id = \(report.id) AND received_at = \(report.receivedAt)
            """, logger: logger)
        return IssueID(issueID)
    }

    /// The new-issue budget of each of `projects` in the window of its settings that holds `now`: the issues each
    /// created in it, counted in the index `issues_by_created (project_id, created_at)` and no further than its cap (one
    /// statement), and the overflow issue (locked) of each project that is at its cap or may reach it by creating
    /// `more` issues.
    static func newIssueBudgets(_ projects: [(project: ProjectID, settings: AlertSettings, more: Int)], now: Int64,
                                _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64: IssueFiling.NewIssueBudget] {
        guard !projects.isEmpty else { return [:] }
        let windows = projects.map { IssueFiling.window(containing: now, minutes: $0.settings.newIssueWindowMinutes) }
        var budgets: [Int64: IssueFiling.NewIssueBudget] = [:]
        for try await (project, created) in try await connection.query(
            """
            SELECT u.p, (SELECT count(*) FROM (
                    SELECT 1 FROM issues i WHERE i.project_id = u.p AND i.created_at >= u.s AND i.created_at < u.e LIMIT u.c) AS w)
            FROM unnest(\(projects.map(\.project.rawValue))::bigint[], \(windows.map(\.lowerBound))::bigint[],
                        \(windows.map(\.upperBound))::bigint[], \(projects.map { Int64(max(0, $0.settings.newIssueCap)) })::bigint[]) AS u(p, s, e, c)
            """, logger: logger
        ).decode((Int64, Int64).self) {
            let cap = projects.first { $0.project.rawValue == project }?.settings.newIssueCap ?? AlertSettings().newIssueCap
            budgets[project] = IssueFiling.NewIssueBudget(cap: cap, createdInWindow: Int(created), overflow: nil)
        }
        let reached = projects.filter { p in
            budgets[p.project.rawValue].map { $0.createdInWindow.addingReportingOverflow(p.more).partialValue >= $0.cap } ?? false
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

    /// Creates `project`'s overflow issue (`IssueFiling.overflowGrouping`) unless it exists; its id. Nodes filing at once
    /// do not lock its fingerprint: the second insert waits for the first to commit and then finds its row.
    static func createOverflowIssue(project: ProjectID, report: FiledReport, now: Int64, _ connection: PostgresConnection, _ logger: Logger)
        async throws -> Int64
    {
        let g = IssueFiling.overflowGrouping
        for try await id in try await connection.query(
            """
            INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, title_rank, first_seen, last_seen,
                first_release, last_release, updated_at, created_at)
            VALUES (\(project.rawValue), \(g.fingerprint.rawValue), \(report.kind), \(StoredJSON.encode(g)), \(g.title), \(g.culprit),
                \(g.titleRank), \(report.occurredAt), \(report.occurredAt), \(report.release), \(report.release), \(now), \(now))
            ON CONFLICT (project_id, fingerprint) DO NOTHING
            RETURNING id
            """, logger: logger
        ).decode(Int64.self) {
            return id
        }
        guard let existing = try await state(project: project, fingerprint: g.fingerprint, connection, logger) else {
            throw StorageError(.conflict, "the overflow issue of project \(project.rawValue) was neither created nor found")
        }
        return existing.id
    }

    typealias StateColumns = (Int64, String, String, Int)

    static func state(issueID: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> IssueFiling.IssueState? {
        for try await row in try await connection.query(
            "SELECT id, status, fingerprint, title_rank FROM issues WHERE id = \(issueID)", logger: logger
        ).decode(StateColumns.self) {
            return state(row)
        }
        return nil
    }

    static func state(project: ProjectID, fingerprint: Fingerprint, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> IssueFiling.IssueState?
    {
        for try await row in try await connection.query(
            """
            SELECT id, status, fingerprint, title_rank FROM issues WHERE project_id = \(project.rawValue) AND fingerprint = \(fingerprint.rawValue)
            """, logger: logger
        ).decode(StateColumns.self) {
            return state(row)
        }
        return nil
    }

    static func state(_ row: StateColumns) -> IssueFiling.IssueState {
        IssueFiling.IssueState(id: row.0, status: row.1, fingerprint: row.2, titleRank: row.3)
    }
}
