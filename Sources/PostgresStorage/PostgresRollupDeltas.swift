import FaultlineCore
import PostgresNIO

/// Writes a filing plan's rollup deltas (`IssueRollupDeltas`, summed per row in memory by `FilingPlanner`) with one
/// statement per table: `issues`, `issue_releases`, `issue_days`, `issue_users`, `issue_release_users`,
/// `issue_day_users`, `issue_tags`, `issue_tag_users`. Issues are keyed by id, or by a negative plan id for an issue the batch creates.
///
/// Each table's rows are written once per statement (PostgreSQL refuses an upsert that changes one row twice), in
/// key order, so two nodes' statements lock rows in the same order.
extension IssueRollupDeltas {
    /// Writes the deltas, the issues of the batch's new keys resolved by `id`, with the first/last events, titles and
    /// reopenings `plan` decided for each issue.
    func write(
        resolving id: (Int64) throws -> Int64, plan: FilingPlan, _ connection: PostgresConnection, _ logger: Logger
    )
        async throws
    {
        let now = plan.now
        var issues: [Int64: Counts] = [:]
        for (issue, counts) in self.issues { issues[try id(issue)] = counts }
        var releases: [ReleaseKey: ReleaseCounts] = [:]
        for (key, counts) in self.releases {
            releases[ReleaseKey(issue: try id(key.issue), release: key.release)] = counts
        }
        var days: [DayKey: DayCounts] = [:]
        for (key, counts) in self.days { days[DayKey(issue: try id(key.issue), day: key.day)] = counts }

        // The distinct-user rows first: how their counts cross 0 and 1 moves the distinct-user counters above them.
        for (key, change) in try await Self.moveEvents(users, resolving: id, connection, logger) {
            issues[key.issue, default: Counts()].users &+= CounterDeltas.crossing(
                0, before: change.before, after: change.after)
            issues[key.issue, default: Counts()].repeatUsers &+= CounterDeltas.crossing(
                1, before: change.before, after: change.after)
        }
        for (key, change) in try await Self.moveEvents(releaseUsers, resolving: id, connection, logger) {
            releases[ReleaseKey(issue: key.issue, release: key.release)]?.users &+= CounterDeltas.crossing(
                0, before: change.before, after: change.after)
        }
        for (key, change) in try await Self.moveEvents(dayUsers, resolving: id, connection, logger) {
            days[DayKey(issue: key.issue, day: key.day)]?.users &+= CounterDeltas.crossing(
                0, before: change.before, after: change.after)
        }
        var tagUsers: [TagKey: Int64] = [:]
        for (key, change) in try await Self.moveEvents(self.tagUsers, resolving: id, connection, logger) {
            let crossed = CounterDeltas.crossing(0, before: change.before, after: change.after)
            if crossed != 0 { tagUsers[key.tag, default: 0] &+= crossed }
        }
        _ = try await Self.moveEvents(tags, resolving: id, connection, logger)
        // The tags' distinct users, once their rows exist (a row the batch emptied is gone: nothing to move).
        let tagKeys = tagUsers.filter { $0.value != 0 }.keys.sorted()
        if !tagKeys.isEmpty {
            try await connection.query(
                """
                UPDATE issue_tags t SET users = greatest(t.users + u.d, 0)
                FROM unnest(\(tagKeys.map(\.issue))::bigint[], \(tagKeys.map(\.key.text))::text[],
                        \(tagKeys.map(\.value.text))::text[], \(tagKeys.map { tagUsers[$0] ?? 0 })::bigint[]) AS u(i, k, v, d)
                WHERE t.issue_id = u.i AND t.key = u.k AND t.value = u.v
                """, logger: logger)
        }

        // A row a move emptied and later reports filled again: its bounds are theirs alone (set after its upsert).
        let restarted = releases.filter(\.value.replacesBounds).sorted { $0.key < $1.key }
        // Rows losing events (reports moved out of their issue) go at 0, else keep their bounds.
        let fewerReleases = releases.filter { $0.value.events <= 0 }.keys.sorted()
        if !fewerReleases.isEmpty {
            let counts = fewerReleases.compactMap { releases[$0] }
            try await connection.query(
                """
                DELETE FROM issue_releases r USING unnest(\(fewerReleases.map(\.issue))::bigint[], \(fewerReleases.map(\.release.text))::text[],
                        \(counts.map(\.events))::bigint[]) AS u(i, rel, e)
                WHERE r.issue_id = u.i AND r.release = u.rel AND r.events + u.e <= 0
                """, logger: logger)
            try await connection.query(
                """
                UPDATE issue_releases r SET events = r.events + u.e, users = greatest(r.users + u.us, 0),
                    first_seen = least(r.first_seen, u.f), last_seen = greatest(r.last_seen, u.l)
                FROM unnest(\(fewerReleases.map(\.issue))::bigint[], \(fewerReleases.map(\.release.text))::text[],
                        \(counts.map(\.events))::bigint[], \(counts.map(\.users))::bigint[],
                        \(counts.map(\.firstSeen))::bigint[], \(counts.map(\.lastSeen))::bigint[]) AS u(i, rel, e, us, f, l)
                WHERE r.issue_id = u.i AND r.release = u.rel
                """, logger: logger)
            for key in fewerReleases { releases[key] = nil }
        }
        let fewerDays = days.filter { $0.value.events <= 0 }.keys.sorted()
        if !fewerDays.isEmpty {
            let counts = fewerDays.compactMap { days[$0] }
            try await connection.query(
                """
                DELETE FROM issue_days d USING unnest(\(fewerDays.map(\.issue))::bigint[], \(fewerDays.map(\.day))::bigint[],
                        \(counts.map(\.events))::bigint[]) AS u(i, dy, e)
                WHERE d.issue_id = u.i AND d.day = u.dy AND d.events + u.e <= 0
                """, logger: logger)
            try await connection.query(
                """
                UPDATE issue_days d SET events = d.events + u.e, users = greatest(d.users + u.us, 0)
                FROM unnest(\(fewerDays.map(\.issue))::bigint[], \(fewerDays.map(\.day))::bigint[],
                        \(counts.map(\.events))::bigint[], \(counts.map(\.users))::bigint[]) AS u(i, dy, e, us)
                WHERE d.issue_id = u.i AND d.day = u.dy
                """, logger: logger)
            for key in fewerDays { days[key] = nil }
        }

        let releaseKeys = releases.keys.sorted()
        let releaseCounts = releaseKeys.compactMap { releases[$0] }
        try await connection.query(
            """
            INSERT INTO issue_releases (issue_id, release, events, users, first_seen, last_seen)
            SELECT * FROM unnest(\(releaseKeys.map(\.issue))::bigint[], \(releaseKeys.map(\.release.text))::text[],
                                 \(releaseCounts.map(\.events))::bigint[], \(releaseCounts.map(\.users))::bigint[],
                                 \(releaseCounts.map(\.firstSeen))::bigint[], \(releaseCounts.map(\.lastSeen))::bigint[])
            ON CONFLICT (issue_id, release) DO UPDATE SET events = issue_releases.events + excluded.events,
                users = issue_releases.users + excluded.users,
                first_seen = least(issue_releases.first_seen, excluded.first_seen),
                last_seen = greatest(issue_releases.last_seen, excluded.last_seen)
            """, logger: logger)
        if !restarted.isEmpty {
            try await connection.query(
                """
                UPDATE issue_releases r SET first_seen = u.f, last_seen = u.l
                FROM unnest(\(restarted.map(\.key.issue))::bigint[], \(restarted.map(\.key.release.text))::text[],
                        \(restarted.map(\.value.firstSeen))::bigint[], \(restarted.map(\.value.lastSeen))::bigint[]) AS u(i, rel, f, l)
                WHERE r.issue_id = u.i AND r.release = u.rel
                """, logger: logger)
        }
        let dayKeys = days.keys.sorted()
        let dayCounts = dayKeys.compactMap { days[$0] }
        try await connection.query(
            """
            INSERT INTO issue_days (issue_id, day, events, users)
            SELECT * FROM unnest(\(dayKeys.map(\.issue))::bigint[], \(dayKeys.map(\.day))::bigint[],
                                 \(dayCounts.map(\.events))::bigint[], \(dayCounts.map(\.users))::bigint[])
            ON CONFLICT (issue_id, day) DO UPDATE SET events = issue_days.events + excluded.events, users = issue_days.users + excluded.users
            """, logger: logger)
        try await writeIssues(issues, resolving: id, plan: plan, now: now, connection, logger)
    }

    /// One statement for every issue the batch touched: counters by their deltas; first/last events and releases as
    /// `plan` computed them (the rows are locked); title and reopening as decided.
    private func writeIssues(
        _ issues: [Int64: Counts], resolving id: (Int64) throws -> Int64, plan: FilingPlan, now: Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        var planned: [Int64: FilingPlanner.Issue] = [:]
        for issue in plan.issuesByKey.values { planned[try id(issue.state.id)] = issue }
        let ids = Set(issues.keys).union(planned.keys).sorted()
        var rows: [(counts: Counts, issue: FilingPlanner.Issue)] = []
        for issue in ids {
            guard let plannedIssue = planned[issue] else {
                throw StorageError(.conflict, "issue \(issue) was counted but not planned")
            }
            rows.append((issues[issue] ?? Counts(), plannedIssue))
        }
        let counts = rows.map { $0.counts }
        let spans = rows.map { $0.issue.span }
        // A rekey gives the grouping, title and culprit too; a retitle after it wins.
        let retitles = rows.map { row in
            row.issue.retitle
                ?? row.issue.rekey.map {
                    FilingPlanner.Retitle(grouping: $0.grouping, title: $0.title, culprit: $0.culprit, rank: $0.rank)
                }
        }
        let rekeys = rows.map { $0.issue.rekey }
        try await connection.query(
            """
            UPDATE issues i SET events = greatest(i.events + u.events, 0), early_events = greatest(i.early_events + u.early, 0),
                timed_events = greatest(i.timed_events + u.timed, 0), users = i.users + u.users,
                repeat_users = i.repeat_users + u.repeats,
                fingerprint = CASE WHEN u.rekey THEN u.fingerprint ELSE i.fingerprint END,
                kind = CASE WHEN u.rekey THEN u.kind ELSE i.kind END,
                hang = CASE WHEN u.rekey THEN u.hang ELSE i.hang END,
                first_seen = u.first_seen, last_seen = u.last_seen,
                first_release = CASE WHEN u.has_first THEN u.first_release END,
                last_release = CASE WHEN u.has_last THEN u.last_release END,
                status = CASE WHEN u.reopen THEN 'open' ELSE i.status END,
                regressed = CASE WHEN u.reopen THEN true ELSE i.regressed END,
                status_changed_at = CASE WHEN u.reopen THEN \(now) ELSE i.status_changed_at END,
                status_changed_by = CASE WHEN u.reopen THEN NULL ELSE i.status_changed_by END,
                grouping = CASE WHEN u.retitle THEN u.grouping ELSE i.grouping END,
                title = CASE WHEN u.retitle THEN u.title ELSE i.title END,
                culprit = CASE WHEN NOT u.retitle THEN i.culprit WHEN u.has_culprit THEN u.culprit END,
                title_rank = CASE WHEN u.retitle THEN u.title_rank ELSE i.title_rank END,
                updated_at = \(now)
            FROM unnest(\(ids)::bigint[], \(counts.map(\.events))::bigint[], \(counts.map(\.early))::bigint[],
                        \(counts.map(\.timed))::bigint[], \(counts.map(\.users))::bigint[], \(counts.map(\.repeatUsers))::bigint[],
                        \(spans.map(\.firstSeen))::bigint[], \(spans.map(\.lastSeen))::bigint[],
                        \(spans.map { $0.firstRelease ?? "" })::text[], \(spans.map { $0.firstRelease != nil })::boolean[],
                        \(spans.map { $0.lastRelease ?? "" })::text[], \(spans.map { $0.lastRelease != nil })::boolean[],
                        \(rows.map { $0.issue.reopened })::boolean[], \(retitles.map { $0 != nil })::boolean[],
                        \(retitles.map { $0?.grouping ?? "" })::text[], \(retitles.map { $0?.title ?? "" })::text[],
                        \(retitles.map { $0?.culprit ?? "" })::text[], \(retitles.map { $0?.culprit != nil })::boolean[],
                        \(retitles.map { Int64($0?.rank ?? 0) })::bigint[], \(rekeys.map { $0 != nil })::boolean[],
                        \(rekeys.map { $0?.fingerprint ?? "" })::text[], \(rekeys.map { $0?.kind ?? "" })::text[],
                        \(rekeys.map { $0?.hang ?? false })::boolean[])
                AS u(id, events, early, timed, users, repeats, first_seen, last_seen, first_release, has_first, last_release, has_last,
                     reopen, retitle, grouping, title, culprit, has_culprit, title_rank, rekey, fingerprint, kind, hang)
            WHERE i.id = u.id
            """, logger: logger)
    }

    /// Moves each row's `events` by its delta: the positive ones by `addEvents`, the negative ones by `takeEvents`
    /// (a row reaching 0 is deleted); each row's events before and after.
    static func moveEvents<Key: CountedEventsKey>(
        _ deltas: [Key: Int64], resolving id: (Int64) throws -> Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws
        -> [Key: (before: Int64, after: Int64)]
    {
        let fewer = deltas.filter { $0.value < 0 }
        guard !fewer.isEmpty else { return try await addEvents(deltas, resolving: id, connection, logger) }
        var changes = try await addEvents(deltas.filter { $0.value > 0 }, resolving: id, connection, logger)
        changes.merge(try await takeEvents(fewer, resolving: id, connection, logger)) { _, new in new }
        return changes
    }

    /// Takes each (negative) delta off the `events` of its row, deleting the rows it brings to 0 or below (two
    /// statements); each row's events before and after. Rows missing stay missing.
    static func takeEvents<Key: CountedEventsKey>(
        _ deltas: [Key: Int64], resolving id: (Int64) throws -> Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws
        -> [Key: (before: Int64, after: Int64)]
    {
        let (_, binds, arrays) = try Key.unnest(deltas, resolving: id)
        let table = Key.table
        let columns = Key.columns.map(\.name)
        let match = columns.map { "t.\($0) = u.\($0)" }.joined(separator: " AND ")
        let returning = columns.map { "t.\($0)" }.joined(separator: ", ")
        let aliases = (columns + ["delta"]).joined(separator: ", ")
        var changes: [Key: (before: Int64, after: Int64)] = [:]
        for sql in [
            "DELETE FROM \(table) t USING unnest(\(arrays)) AS u(\(aliases)) WHERE \(match) AND t.events + u.delta <= 0 RETURNING \(returning), t.events, 0::bigint",
            "UPDATE \(table) t SET events = t.events + u.delta FROM unnest(\(arrays)) AS u(\(aliases)) WHERE \(match) RETURNING \(returning), t.events - u.delta, t.events",
        ] {
            for try await row in try await connection.query(
                PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            {
                let cells = row.makeRandomAccess()
                let key = try Key(cells)
                changes[key] = (
                    try cells[Key.columns.count].decode(Int64.self), try cells[Key.columns.count + 1].decode(Int64.self)
                )
            }
        }
        return changes
    }

    /// Adds each delta to the `events` of its row (inserting the rows missing) in one statement; each row's events
    /// before and after. The keys' issues are resolved by `id` first.
    static func addEvents<Key: CountedEventsKey>(
        _ deltas: [Key: Int64], resolving id: (Int64) throws -> Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws
        -> [Key: (before: Int64, after: Int64)]
    {
        guard !deltas.isEmpty else { return [:] }
        let (resolved, binds, arrays) = try Key.unnest(deltas, resolving: id)
        let columns = Key.columns.map(\.name).joined(separator: ", ")
        let table = Key.table
        var changes: [Key: (before: Int64, after: Int64)] = [:]
        for try await row in try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(table) (\(columns), events) SELECT * FROM unnest(\(arrays))
                    ON CONFLICT (\(columns)) DO UPDATE SET events = \(table).events + excluded.events
                    RETURNING \(columns), events
                    """,
                binds: binds),
            logger: logger)
        {
            let cells = row.makeRandomAccess()
            let key = try Key(cells)
            let after = try cells[Key.columns.count].decode(Int64.self)
            changes[key] = (max(0, after &- (resolved[key] ?? 0)), after)
        }
        return changes
    }
}

extension CountedEventsKey {
    /// `deltas` with their issues resolved by `id`, and the parts of a statement reading them from `unnest`: the key
    /// columns' arrays then the deltas' as binds (keys in order, the order every node locks rows in), and the binds'
    /// placeholders cast to arrays (`$1::bigint[], …`).
    static func unnest(_ deltas: [Self: Int64], resolving id: (Int64) throws -> Int64) throws -> (
        resolved: [Self: Int64], binds: PostgresBindings, arrays: String
    ) {
        var resolved: [Self: Int64] = [:]
        for (key, delta) in deltas { resolved[key.with(issue: try id(key.issue))] = delta }
        let keys = resolved.keys.sorted()
        var binds = PostgresBindings()
        for array in arrays(keys) { binds.append(array) }
        binds.append(keys.map { resolved[$0] ?? 0 })
        let placeholders = (columns.map(\.type) + ["bigint"]).enumerated().map { "$\($0 + 1)::\($1)[]" }
        return (resolved, binds, placeholders.joined(separator: ", "))
    }
}

/// The key of a per-issue row counting events (`issue_users`, `issue_release_users`, `issue_day_users`,
/// `issue_tags`, `issue_tag_users`): its columns, bound as one array each.
protocol CountedEventsKey: Hashable, Comparable {
    static var table: String { get }
    /// Key columns in order, with their PostgreSQL types; the first is `issue_id`.
    static var columns: [(name: String, type: String)] { get }
    /// The keys' columns as arrays, in `columns`' order.
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable]
    /// The key of a returned row (its first `columns.count` cells).
    init(_ cells: PostgresRandomAccessRow) throws
    var issue: Int64 { get }
    func with(issue: Int64) -> Self
}

extension IssueRollupDeltas.UserKey: CountedEventsKey {
    static let table = "issue_users"
    static let columns = [(name: "issue_id", type: "bigint"), (name: "user_key", type: "text")]
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable] {
        [keys.map(\.issue), keys.map(\.user.text)]
    }
    init(issue: Int64, user: String) { self.init(issue: issue, user: ExactText(user)) }
    init(_ cells: PostgresRandomAccessRow) throws {
        self.init(issue: try cells[0].decode(Int64.self), user: ExactText(try cells[1].decode(String.self)))
    }
    func with(issue: Int64) -> Self { Self(issue: issue, user: user) }
}

extension IssueRollupDeltas.ReleaseUserKey: CountedEventsKey {
    static let table = "issue_release_users"
    static let columns = [
        (name: "issue_id", type: "bigint"), (name: "release", type: "text"), (name: "user_key", type: "text"),
    ]
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable] {
        [keys.map(\.issue), keys.map(\.release.text), keys.map(\.user.text)]
    }
    init(issue: Int64, release: String, user: String) {
        self.init(issue: issue, release: ExactText(release), user: ExactText(user))
    }
    init(_ cells: PostgresRandomAccessRow) throws {
        self.init(
            issue: try cells[0].decode(Int64.self), release: ExactText(try cells[1].decode(String.self)),
            user: ExactText(try cells[2].decode(String.self)))
    }
    func with(issue: Int64) -> Self { Self(issue: issue, release: release, user: user) }
}

extension IssueRollupDeltas.DayUserKey: CountedEventsKey {
    static let table = "issue_day_users"
    static let columns = [
        (name: "issue_id", type: "bigint"), (name: "day", type: "bigint"), (name: "user_key", type: "text"),
    ]
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable] {
        [keys.map(\.issue), keys.map(\.day), keys.map(\.user.text)]
    }
    init(issue: Int64, day: Int64, user: String) { self.init(issue: issue, day: day, user: ExactText(user)) }
    init(_ cells: PostgresRandomAccessRow) throws {
        self.init(
            issue: try cells[0].decode(Int64.self), day: try cells[1].decode(Int64.self),
            user: ExactText(try cells[2].decode(String.self)))
    }
    func with(issue: Int64) -> Self { Self(issue: issue, day: day, user: user) }
}

extension IssueRollupDeltas.TagKey: CountedEventsKey {
    static let table = "issue_tags"
    static let columns = [
        (name: "issue_id", type: "bigint"), (name: "key", type: "text"), (name: "value", type: "text"),
    ]
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable] {
        [keys.map(\.issue), keys.map(\.key.text), keys.map(\.value.text)]
    }
    init(issue: Int64, key: String, value: String) {
        self.init(issue: issue, key: ExactText(key), value: ExactText(value))
    }
    init(_ cells: PostgresRandomAccessRow) throws {
        self.init(
            issue: try cells[0].decode(Int64.self), key: ExactText(try cells[1].decode(String.self)),
            value: ExactText(try cells[2].decode(String.self)))
    }
    func with(issue: Int64) -> Self { Self(issue: issue, key: key, value: value) }
}

extension IssueRollupDeltas.TagUserKey: CountedEventsKey {
    static let table = "issue_tag_users"
    static let columns = [
        (name: "issue_id", type: "bigint"), (name: "key", type: "text"), (name: "value", type: "text"),
        (name: "user_key", type: "text"),
    ]
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable] {
        [keys.map(\.issue), keys.map(\.key.text), keys.map(\.value.text), keys.map(\.user.text)]
    }
    init(_ cells: PostgresRandomAccessRow) throws {
        self.init(
            issue: try cells[0].decode(Int64.self), key: ExactText(try cells[1].decode(String.self)),
            value: ExactText(try cells[2].decode(String.self)), user: ExactText(try cells[3].decode(String.self)))
    }
    func with(issue: Int64) -> Self { Self(issue: issue, key: key, value: value, user: user) }
}
