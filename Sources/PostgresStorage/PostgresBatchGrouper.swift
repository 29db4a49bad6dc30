import FaultlineCore
import PostgresNIO

/// Files many reports under their issues at once: the set-based twin of `PostgresGrouper.file`, for reports never
/// filed before (the common case: every new crash). It reads what the decisions need in a few statements, asks
/// `IssueFiling.decide` (pure, in FaultlineCore) for each report in the batch's order against the issues' state as the
/// earlier reports of the batch left it, adds the rollup deltas up in memory, and writes each table once.
///
/// What makes it equal to filing one report at a time:
/// - The caller holds every fingerprint's advisory lock and every report's row (`saveInSets`). The issues of those
///   fingerprints are read `FOR UPDATE`, so their first/last event and releases, computed here one report after the
///   other (`IssueSpan`, the rule of `PostgresIssueRollup.add`), are written as values no one else moved meanwhile.
/// - Counters move by deltas; a distinct-user count moves by `CounterDeltas` applied to the per-user row's count
///   before and after the whole batch's delta, which is what the single steps add up to (each step's crossing of 0
///   or 1 telescopes).
/// - A report filed before (moving between issues, or migrating to a new grouping version) is never given here: those
///   take `PostgresGrouper.file` one at a time, in the batch's order (`saveInSets`). So `current` is always nil, and a
///   decision can only create an issue, hold a report in the overflow issue, retitle, add a report, reopen a regressed
///   issue and raise alerts.
/// - The new-issue cap: each project's count of issues created in the window is read once (`newIssueBudgets`) and
///   moved by the batch's own creations, as a read before each report would find it.
enum PostgresBatchGrouper {
    struct Filing {
        var report: FiledReport
        var input: GroupingInput
        var groupingJSON: String
    }

    /// The issue a report was filed under, and whether it came early in its session (nil: unknown).
    struct Filed {
        var issue: Int64
        var early: Bool?
    }

    /// Files `filings` (in the batch's order, none filed before) and applies every effect; the issue of each report.
    static func file(_ filings: [Filing], now: Int64, reads: PostgresBatchReads, _ connection: PostgresConnection, _ logger: Logger)
        async throws -> [Int64: Filed]
    {
        guard !filings.isEmpty else { return [:] }
        var plan = try await BatchPlan.read(filings, now: now, reads: reads, connection, logger)
        for filing in filings { try plan.decide(filing) }
        let created = try await plan.insertIssues(now: now, connection, logger)
        func id(_ key: Int64) throws -> Int64 {
            if key > 0 { return key }
            guard let id = created[key] else { throw StorageError(.conflict, "a new issue of the batch was not created") }
            return id
        }
        try await plan.deltas.write(resolving: id, plan: plan, now: now, connection, logger)
        let drafts = try plan.alerts.compactMap { alert in
            IssueAlerts.draft(
                alert.action,
                IssueAlerts.Context(
                    project: alert.project, issue: try id(alert.issue), title: alert.title, release: alert.release,
                    occurredAt: alert.occurredAt, now: now),
                settings: plan.settings[alert.project.rawValue] ?? AlertSettings())
        }
        try await PostgresAlertRecords.insert(drafts, at: now, connection, logger)
        return try plan.filed.mapValues { Filed(issue: try id($0.issue), early: $0.early) }
    }
}

/// An issue's first and last event and their releases, moved by one more event exactly as `PostgresIssueRollup.add`
/// moves them in SQL (every right-hand side sees the values before the event).
struct IssueSpan: Equatable {
    var firstSeen: Int64
    var lastSeen: Int64
    var firstRelease: String?
    var lastRelease: String?

    /// `release` nil: the report had none ('' counts as none, as in `add`).
    mutating func add(occurredAt: Int64, release: String?) {
        if occurredAt < firstSeen || firstRelease == nil { firstRelease = release ?? firstRelease }
        if occurredAt >= lastSeen || lastRelease == nil { lastRelease = release ?? lastRelease }
        firstSeen = min(firstSeen, occurredAt)
        lastSeen = max(lastSeen, occurredAt)
    }
}

/// The decisions of one batch before they are written: the issues as the batch's reports find them one after the
/// other, what to create, the rollup deltas, the alerts. New issues have negative keys until they are inserted.
struct BatchPlan {
    struct IssueKey: Hashable {
        var project: Int64
        var fingerprint: String
    }

    /// An issue as the next report of the batch finds it.
    struct Planned {
        var state: IssueFiling.IssueState
        var title: String
        var span: IssueSpan
        /// Releases the issue has been seen in (read only for closed issues: only they can regress).
        var releases: Set<String>
        var retitle: Retitle?
        var reopened = false
    }

    struct Retitle {
        var grouping: String
        var title: String
        var culprit: String?
        var rank: Int
    }

    struct NewIssue {
        var key: IssueKey
        var kind: String
        var grouping: String
        var title: String
        var culprit: String?
        var titleRank: Int
        var occurredAt: Int64
        var release: String?
    }

    struct Alert {
        var action: IssueFiling.Action
        var project: ProjectID
        var issue: Int64
        var release: String?
        var title: String
        var occurredAt: Int64
    }

    struct SessionKey: Hashable {
        var project: Int64
        var session: String
    }

    var issues: [IssueKey: Planned]
    var settings: [Int64: AlertSettings]
    /// The hasher of each project's rollup users (nil: the engine has none).
    var hashers: [Int64: (any IdentityHashing)?]
    /// Each project's new-issue budget as the next report finds it (its overflow issue is in `issues`).
    var budgets: [Int64: IssueFiling.NewIssueBudget]
    var sessions: [SessionKey: Int64]
    var created: [NewIssue] = []
    var alerts: [Alert] = []
    var deltas = IssueRollupDeltas()
    var filed: [Int64: PostgresBatchGrouper.Filed] = [:]

    /// Reads what deciding `filings` needs: their issues (locked), the releases closed ones were seen in, the alert
    /// settings of their projects, the new-issue budget of those with a new fingerprint (and the overflow issue of those
    /// that may reach their cap), the start of their sessions. Seven statements at most, whatever the batch's size
    /// (plus one per overflow issue read).
    static func read(_ filings: [PostgresBatchGrouper.Filing], now: Int64, reads: PostgresBatchReads, _ connection: PostgresConnection,
                     _ logger: Logger) async throws -> BatchPlan {
        var keys: [IssueKey] = []
        var seenKeys: Set<IssueKey> = []
        for filing in filings {
            let key = IssueKey(project: filing.report.project.rawValue, fingerprint: filing.input.grouping.fingerprint.rawValue)
            if seenKeys.insert(key).inserted { keys.append(key) }
        }
        var issues: [IssueKey: Planned] = [:]
        for try await (id, project, fingerprint, status, rank, title, first, last, firstRelease, lastRelease) in try await connection.query(
            """
            SELECT i.id, i.project_id, i.fingerprint, i.status, i.title_rank, i.title, i.first_seen, i.last_seen, i.first_release, i.last_release
            FROM unnest(\(keys.map(\.project))::bigint[], \(keys.map(\.fingerprint))::text[]) AS u(p, f)
            JOIN issues i ON i.project_id = u.p AND i.fingerprint = u.f
            ORDER BY i.id FOR UPDATE OF i
            """, logger: logger
        ).decode((Int64, Int64, String, String, Int, String, Int64, Int64, String?, String?).self) {
            issues[IssueKey(project: project, fingerprint: fingerprint)] = Planned(
                state: PostgresGrouper.state((id, status, fingerprint, rank)), title: title,
                span: IssueSpan(firstSeen: first, lastSeen: last, firstRelease: firstRelease, lastRelease: lastRelease), releases: [])
        }
        // Whether a closed issue was seen in a report's release decides a regression.
        let closed = issues.values.filter { $0.state.status == .closed }.map(\.state.id)
        let releases = Array(Set(filings.compactMap(\.report.release)))
        if !closed.isEmpty && !releases.isEmpty {
            var byID: [Int64: IssueKey] = [:]
            for (key, issue) in issues { byID[issue.state.id] = key }
            for try await (issue, release) in try await connection.query(
                "SELECT issue_id, release FROM issue_releases WHERE issue_id = ANY(\(closed)) AND release = ANY(\(releases))", logger: logger
            ).decode((Int64, String).self) {
                if let key = byID[issue] { issues[key]?.releases.insert(release) }
            }
        }
        var settings: [Int64: AlertSettings] = [:]
        for project in Set(keys.map(\.project)) {
            settings[project] = try await reads.alertSettings(project: ProjectID(project), connection, logger)
        }
        var hashers: [Int64: (any IdentityHashing)?] = [:]
        for project in Set(filings.filter { $0.report.userKey != nil }.map(\.report.project.rawValue)) {
            hashers[project] = try await reads.rollupHasher(project: ProjectID(project), connection, logger)
        }
        // The cap matters only to a project with a fingerprint that has no issue yet. Each new fingerprint may create
        // one issue: the overflow issue is read too when the batch may reach the cap.
        var creating: [Int64: Int] = [:]
        for key in keys where issues[key] == nil { creating[key.project, default: 0] += 1 }
        let budgets = try await PostgresGrouper.newIssueBudgets(
            creating.sorted { $0.key < $1.key }.map { (ProjectID($0.key), settings[$0.key] ?? AlertSettings(), $0.value) }, now: now,
            connection, logger)
        for (project, budget) in budgets {
            guard let overflow = budget.overflow else { continue }
            issues[IssueKey(project: project, fingerprint: IssueFiling.overflowFingerprint.rawValue)] = try await planned(overflow, connection, logger)
        }
        // A report filed for the first time is early or not by its session's start.
        let sessionKeys = Array(Set(filings.compactMap { f in f.report.sessionID.map { SessionKey(project: f.report.project.rawValue, session: $0) } }))
        var sessions: [SessionKey: Int64] = [:]
        if !sessionKeys.isEmpty {
            for try await (project, session, started) in try await connection.query(
                """
                SELECT s.project_id, s.session_id, s.started_at
                FROM unnest(\(sessionKeys.map(\.project))::bigint[], \(sessionKeys.map(\.session))::text[]) AS u(p, s)
                JOIN sessions s ON s.project_id = u.p AND s.session_id = u.s
                """, logger: logger
            ).decode((Int64, String, Int64).self) {
                sessions[SessionKey(project: project, session: session)] = started
            }
        }
        return BatchPlan(issues: issues, settings: settings, hashers: hashers, budgets: budgets, sessions: sessions)
    }

    /// The overflow issue as the batch's first report finds it (read after the budget locked it).
    static func planned(_ overflow: IssueFiling.IssueState, _ connection: PostgresConnection, _ logger: Logger) async throws -> Planned {
        for try await (title, first, last, firstRelease, lastRelease) in try await connection.query(
            "SELECT title, first_seen, last_seen, first_release, last_release FROM issues WHERE id = \(overflow.id)", logger: logger
        ).decode((String, Int64, Int64, String?, String?).self) {
            return Planned(
                state: overflow, title: title,
                span: IssueSpan(firstSeen: first, lastSeen: last, firstRelease: firstRelease, lastRelease: lastRelease), releases: [])
        }
        throw StorageError(.conflict, "the overflow issue \(overflow.id) is gone")
    }

    /// Decides `filing` against the issues as the batch's earlier reports left them, and records its effects.
    mutating func decide(_ filing: PostgresBatchGrouper.Filing) throws {
        let report = filing.report
        let g = filing.input.grouping
        var key = IssueKey(project: report.project.rawValue, fingerprint: g.fingerprint.rawValue)
        let overflowKey = IssueKey(project: key.project, fingerprint: IssueFiling.overflowFingerprint.rawValue)
        let settings = self.settings[key.project] ?? AlertSettings()
        let target = issues[key]
        let seenInRelease = target.map { target in report.release.map { target.releases.contains($0) } ?? true } ?? false
        var budget = target == nil ? budgets[key.project] : nil
        budget?.overflow = issues[overflowKey]?.state
        let actions = IssueFiling.decide(IssueFiling.Input(
            grouping: g, current: nil, reportGroupingVersion: report.groupingVersion, target: target?.state,
            targetSeenInRelease: seenInRelease, release: report.release, alertOnNewIssue: settings.alertOnNewIssue,
            alertOnRegression: settings.alertOnRegression, newIssues: budget))
        var contribution = try PostgresRollupUsers.keyed(
            IssueContribution(
                release: report.release ?? "", day: DayNumber(Millis.date(report.occurredAt)), occurredAt: report.occurredAt,
                user: report.userKey, tags: filing.input.tags.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) },
                early: report.early),
            hashers[key.project] ?? nil)
        var muted = target?.state.status == .muted
        for action in actions {
            switch action {
            case .createIssue(statusFrom: nil):
                let id = -Int64(created.count + 1)
                created.append(NewIssue(
                    key: key, kind: report.kind, grouping: filing.groupingJSON, title: g.title, culprit: g.culprit, titleRank: g.titleRank,
                    occurredAt: report.occurredAt, release: report.release))
                issues[key] = Planned(
                    state: IssueFiling.IssueState(id: id, status: .open, groupingVersion: g.fingerprint.version, titleRank: g.titleRank),
                    title: g.title,
                    span: IssueSpan(
                        firstSeen: report.occurredAt, lastSeen: report.occurredAt, firstRelease: report.release, lastRelease: report.release),
                    releases: [])
                budgets[key.project]?.createdInWindow += 1
                muted = false
            case .holdInOverflow(let existing):
                key = overflowKey
                if existing != nil {
                    muted = issues[key]?.state.status == .muted
                    break
                }
                let overflow = IssueFiling.overflowGrouping
                let id = -Int64(created.count + 1)
                created.append(NewIssue(
                    key: key, kind: report.kind, grouping: StoredJSON.encode(overflow), title: overflow.title, culprit: overflow.culprit,
                    titleRank: overflow.titleRank, occurredAt: report.occurredAt, release: report.release))
                issues[key] = Planned(
                    state: IssueFiling.IssueState(
                        id: id, status: .open, groupingVersion: overflow.fingerprint.version, titleRank: overflow.titleRank, isOverflow: true),
                    title: overflow.title,
                    span: IssueSpan(
                        firstSeen: report.occurredAt, lastSeen: report.occurredAt, firstRelease: report.release, lastRelease: report.release),
                    releases: [])
                budgets[key.project]?.createdInWindow += 1
                muted = false
            case .retitle:
                issues[key]?.retitle = Retitle(grouping: filing.groupingJSON, title: g.title, culprit: g.culprit, rank: g.titleRank)
                issues[key]?.title = g.title
                issues[key]?.state.titleRank = g.titleRank
            case .move(from: nil, _):
                guard let issue = issues[key]?.state.id else { break }
                if let session = report.sessionID {
                    contribution.early = sessions[SessionKey(project: key.project, session: session)].map {
                        IssueSignals.isEarly(secondsIntoSession: Double(report.occurredAt &- $0) / 1000)
                    }
                }
                deltas.add(contribution, to: issue)
                issues[key]?.span.add(occurredAt: report.occurredAt, release: contribution.release.isEmpty ? nil : contribution.release)
                issues[key]?.releases.insert(contribution.release)
            case .reopenRegressed:
                issues[key]?.state.status = .open
                issues[key]?.reopened = true
            case .alertNewIssue, .alertNewIssuesHeld, .alertRegression:
                guard let issue = issues[key], !muted else { break }
                alerts.append(Alert(
                    action: action, project: report.project, issue: issue.state.id, release: report.release, title: issue.title,
                    occurredAt: report.occurredAt))
            case .createIssue, .rekey, .move:
                // Only for a report filed before, which never comes here.
                throw StorageError(.conflict, "report \(report.id) was filed before: it is filed one at a time")
            }
        }
        guard let issue = issues[key]?.state.id else { throw StorageError(.conflict, "grouping decided no issue for report \(report.id)") }
        filed[report.id] = PostgresBatchGrouper.Filed(issue: issue, early: contribution.early)
    }

    /// Inserts the batch's new issues in one statement; their ids by their negative keys.
    func insertIssues(now: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64: Int64] {
        guard !created.isEmpty else { return [:] }
        var keys: [IssueKey: Int64] = [:]
        for (index, issue) in created.enumerated() { keys[issue.key] = -Int64(index + 1) }
        var ids: [Int64: Int64] = [:]
        for try await (id, project, fingerprint) in try await connection.query(
            """
            INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, title_rank, first_seen, last_seen,
                first_release, last_release, updated_at, created_at)
            SELECT p, f, k, g, t, CASE WHEN hc THEN c END, r, o, o, CASE WHEN hr THEN rel END, CASE WHEN hr THEN rel END, \(now), \(now)
            FROM unnest(\(created.map(\.key.project))::bigint[], \(created.map(\.key.fingerprint))::text[], \(created.map(\.kind))::text[],
                        \(created.map(\.grouping))::text[], \(created.map(\.title))::text[], \(created.map { $0.culprit ?? "" })::text[],
                        \(created.map { $0.culprit != nil })::boolean[], \(created.map { Int64($0.titleRank) })::bigint[],
                        \(created.map(\.occurredAt))::bigint[], \(created.map { $0.release ?? "" })::text[],
                        \(created.map { $0.release != nil })::boolean[])
                WITH ORDINALITY AS u(p, f, k, g, t, c, hc, r, o, rel, hr, n)
            ORDER BY n
            RETURNING id, project_id, fingerprint
            """, logger: logger
        ).decode((Int64, Int64, String).self) {
            if let key = keys[IssueKey(project: project, fingerprint: fingerprint)] { ids[key] = id }
        }
        return ids
    }
}
