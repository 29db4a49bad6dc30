import FaultlineCore
import PostgresNIO

/// A group commit's session updates on PostgreSQL in a fixed number of statements, however many requests and updates
/// it gathered, with the results of applying them one at a time (as `SQLiteIngestStore` does, in-process; one at a
/// time here was ~12 round trips an update, ~380 updates/s):
/// 1. every session's advisory lock in one statement, in lock-key order: two nodes updating one session take turns,
///    and two nodes' group commits never wait for each other in a circle;
/// 2. per project (in id order), the stored states in one read; the updates merged in memory in the group's order
///    (`SessionState.merging`), so several updates of one session follow each other as they would one at a time;
/// 3. the final state of every changed session in one upsert;
/// 4. the health rollups moved by the sum of every applied update's change (`HealthDeltas`): the distinct-user rows
///    (`health_day_users`, `health_release_users`) locked in key order, then updated, deleted or inserted, their
///    counts before and after the batch giving the `users`/`crashed_users` deltas (the crossings of one update at a
///    time add up to the batch's); then `health_days` and `health_releases`, locked in key order, updated, and the
///    rows an added contribution needs inserted. Every node takes the tables in that order.
enum PostgresSessionBatch {
    /// Applies `batches` in order (requests' session updates, envelopes' sessions); each batch's applied and unchanged
    /// updates, in the same order.
    static func apply(
        _ batches: [SessionBatch], identities: IdentityHashers?, _ connection: PostgresConnection, _ logger: Logger
    ) async throws
        -> [(applied: Int, unchanged: Int)]
    {
        var counts = Array(repeating: (applied: 0, unchanged: 0), count: batches.count)
        let cleaned = batches.map { $0.updates.map(StoredText.clean) }
        var keys: Set<SessionKey> = []
        for (batch, updates) in zip(batches, cleaned) {
            for update in updates {
                keys.insert(SessionKey(project: batch.project.rawValue, id: ExactText(update.sessionID.rawValue)))
            }
        }
        guard !keys.isEmpty else { return counts }
        let locks = Array(keys)
        // The subquery's ORDER BY keeps it from being flattened: the locks are taken in key order.
        _ = try await PostgresRows.count(
            connection.query(
                """
                SELECT pg_advisory_xact_lock(k) FROM (
                    SELECT DISTINCT hashtextextended(s, p) AS k
                    FROM unnest(\(locks.map(\.id.text))::text[], \(locks.map(\.project))::bigint[]) AS u(s, p) ORDER BY k) AS ordered
                """, logger: logger))

        for project in Set(keys.map(\.project)).sorted() {
            let ids = keys.filter { $0.project == project }.map(\.id).sorted()
            let stored = try await PostgresSessions.states(
                project: ProjectID(project), ids: ids.map(\.text), connection, logger)
            var current = stored
            var updatedAt: [ExactText: Int64] = [:]
            var deltas = HealthDeltas()
            // The rollups count users by their keyed hash (`PostgresRollupUsers`), never their id.
            let hasher = try await PostgresRollupUsers.hasher(
                project: ProjectID(project), identities: identities, connection, logger)
            for (index, batch) in batches.enumerated() where batch.project.rawValue == project {
                for update in cleaned[index] {
                    let id = ExactText(update.sessionID.rawValue)
                    let existing = current[id]
                    guard let next = SessionState.merging(update, into: existing) else {
                        counts[index].unchanged += 1
                        continue
                    }
                    current[id] = next
                    updatedAt[id] = Millis.from(batch.receivedAt)
                    deltas.change(
                        remove: try PostgresRollupUsers.keyed(existing.map(SessionContribution.init), hasher),
                        add: try PostgresRollupUsers.keyed(SessionContribution(next), hasher),
                        startedAt: Millis.from(next.started))
                    counts[index].applied += 1
                }
            }
            guard !updatedAt.isEmpty else { continue }
            let changed = updatedAt.keys.sorted()
            try await upsert(
                changed.compactMap { current[$0] }, project: project, updatedAt: changed.map { updatedAt[$0] ?? 0 },
                connection, logger)
            try await deltas.write(project: project, connection, logger)
        }
        return counts
    }

    struct SessionKey: Hashable {
        var project: Int64
        var id: ExactText
    }

    /// Writes the final state of each session (sorted by id; `updatedAt`: when its last change arrived) in one statement.
    static func upsert(
        _ states: [SessionState], project: Int64, updatedAt: [Int64], _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        typealias T = PostgresText
        try await connection.query(
            """
            INSERT INTO sessions (project_id, session_id, distinct_id, release, environment, started_at, status, errors,
                duration, seq, updated_at, session_count)
            SELECT \(project), s.id, CASE WHEN s.has_distinct THEN s.distinct_id END, s.release,
                CASE WHEN s.has_environment THEN s.environment END, s.started_at, s.status, s.errors,
                CASE WHEN s.has_duration THEN s.duration END, CASE WHEN s.has_seq THEN s.seq END, s.updated_at, s.session_count
            FROM unnest(\(states.map(\.sessionID.rawValue))::text[], \(states.map { T.storable($0.distinctID ?? "") })::text[],
                        \(states.map { $0.distinctID != nil })::boolean[], \(states.map { T.storable($0.release) })::text[],
                        \(states.map { T.storable($0.environment ?? "") })::text[], \(states.map { $0.environment != nil })::boolean[],
                        \(states.map { Millis.from($0.started) })::bigint[], \(states.map(\.status.rawValue))::text[],
                        \(states.map { Int64($0.errors) })::bigint[], \(states.map { $0.duration ?? 0 })::float8[],
                        \(states.map { $0.duration != nil })::boolean[], \(states.map { $0.seq ?? 0 })::bigint[],
                        \(states.map { $0.seq != nil })::boolean[], \(updatedAt)::bigint[], \(states.map { Int64($0.count) })::bigint[])
                AS s(id, distinct_id, has_distinct, release, environment, has_environment, started_at, status, errors, duration,
                     has_duration, seq, has_seq, updated_at, session_count)
            ON CONFLICT (project_id, session_id) DO UPDATE SET distinct_id = excluded.distinct_id,
                release = excluded.release, environment = excluded.environment, started_at = excluded.started_at,
                status = excluded.status, errors = excluded.errors, duration = excluded.duration, seq = excluded.seq,
                updated_at = excluded.updated_at
            """, logger: logger)
    }
}

/// What a batch of session changes adds to the health rollups, summed per row in memory (the per-change rule of
/// `HealthRollup` in Sources/SQLiteStorage/Rollups, added up). Release `HealthSQL.allReleases` stands for all releases
/// together.
struct HealthDeltas {
    struct Counts {
        var sessions: Int64 = 0
        var crashed: Int64 = 0
        var abnormal: Int64 = 0
        var errored: Int64 = 0
        var users: Int64 = 0
        var crashedUsers: Int64 = 0
    }

    struct Span {
        var first: Int64
        var last: Int64
    }

    var days: [HealthDayKey: Counts] = [:]
    /// The `health_days` rows an added contribution touched: inserted when missing (as one change at a time would).
    var daysAdded: Set<HealthDayKey> = []
    var releases: [ExactText: Counts] = [:]
    /// The `health_releases` rows an added contribution touched, with the span of its sessions' starts.
    var releasesAdded: [ExactText: Span] = [:]
    var dayUsers: [HealthDayUserKey: [Int64]] = [:]
    var releaseUsers: [HealthReleaseUserKey: [Int64]] = [:]

    /// One session's change: its contribution before (`remove`) and after (`add`), both counted on the day it started.
    mutating func change(remove old: SessionContribution?, add new: SessionContribution?, startedAt: Int64) {
        guard old != new else { return }
        if let old { add(old, sign: -1, startedAt: startedAt) }
        if let new { add(new, sign: 1, startedAt: startedAt) }
    }

    private mutating func add(_ c: SessionContribution, sign: Int64, startedAt: Int64) {
        // A counted row (an aggregate's) moves the counters by its count; its user, if any, is one user.
        let sessions = sign &* Int64(c.sessions)
        let crashed: Int64 = c.crashed ? sessions : 0
        let abnormal: Int64 = c.abnormal ? sessions : 0
        let errored: Int64 = c.errored ? sessions : 0
        let day = Int64(c.day.rawValue)
        func bump(_ counts: inout Counts) {
            counts.sessions &+= sessions
            counts.crashed &+= crashed
            counts.abnormal &+= abnormal
            counts.errored &+= errored
        }
        let release = ExactText(c.release)
        for slice in [release, ExactText(HealthSQL.allReleases)] {
            let key = HealthDayKey(release: slice, day: day)
            bump(&days[key, default: Counts()])
            if sign > 0 { daysAdded.insert(key) }
            if let user = c.user.map(ExactText.init) {
                let userKey = HealthDayUserKey(release: slice, day: day, user: user)
                let counts = dayUsers[userKey] ?? [0, 0]
                dayUsers[userKey] = [counts[0] &+ sessions, counts[1] &+ crashed]
            }
        }
        bump(&releases[release, default: Counts()])
        if sign > 0 {
            let span = releasesAdded[release]
            releasesAdded[release] = Span(
                first: min(span?.first ?? startedAt, startedAt), last: max(span?.last ?? startedAt, startedAt))
        }
        if let user = c.user.map(ExactText.init) {
            let userKey = HealthReleaseUserKey(release: release, user: user)
            let counts = releaseUsers[userKey] ?? [0, 0]
            releaseUsers[userKey] = [counts[0] &+ sessions, counts[1] &+ crashed]
        }
    }

    /// Writes the deltas of `project`: the distinct-user rows first (their crossings move `users` and
    /// `crashed_users` of the rows above them), then `health_days` and `health_releases`.
    func write(project: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws {
        var days = self.days
        var releases = self.releases
        for (key, change) in try await HealthUserRows.bump(dayUsers, project: project, connection, logger) {
            let moved = CounterDeltas.row(before: change.before, after: change.after)
            let day = HealthDayKey(release: key.release, day: key.day)
            days[day, default: Counts()].users &+= moved.exists
            days[day, default: Counts()].crashedUsers &+= moved.flagged
        }
        for (key, change) in try await HealthUserRows.bump(releaseUsers, project: project, connection, logger) {
            let moved = CounterDeltas.row(before: change.before, after: change.after)
            releases[key.release, default: Counts()].users &+= moved.exists
            releases[key.release, default: Counts()].crashedUsers &+= moved.flagged
        }
        try await Self.writeDays(days, added: daysAdded, project: project, connection, logger)
        try await Self.writeReleases(releases, added: releasesAdded, project: project, connection, logger)
    }

    /// `health_days`: the batch's rows that exist locked in key order and moved by their deltas; the missing ones an
    /// added contribution touched inserted (added to, should another node have inserted one meanwhile).
    private static func writeDays(
        _ days: [HealthDayKey: Counts], added: Set<HealthDayKey>, project: Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        let keys = days.keys.sorted()
        guard !keys.isEmpty else { return }
        var existing: Set<HealthDayKey> = []
        for try await (release, day) in try await connection.query(
            """
            SELECT release, day::bigint FROM health_days
            WHERE project_id = \(project) AND (release, day) IN (
                SELECT * FROM unnest(\(keys.map(\.release.text))::text[], \(keys.map(\.day))::bigint[]))
            ORDER BY release, day FOR UPDATE
            """, logger: logger
        ).decode((String, Int64).self) {
            existing.insert(HealthDayKey(release: ExactText(release), day: day))
        }
        let update = keys.filter { existing.contains($0) }
        if !update.isEmpty {
            let counts = update.map { days[$0] ?? Counts() }
            try await connection.query(
                """
                UPDATE health_days h SET sessions = h.sessions + u.sessions, crashed = h.crashed + u.crashed,
                    abnormal = h.abnormal + u.abnormal, errored = h.errored + u.errored, users = h.users + u.users,
                    crashed_users = h.crashed_users + u.crashed_users
                FROM unnest(\(update.map(\.release.text))::text[], \(update.map(\.day))::bigint[], \(counts.map(\.sessions))::bigint[],
                            \(counts.map(\.crashed))::bigint[], \(counts.map(\.abnormal))::bigint[], \(counts.map(\.errored))::bigint[],
                            \(counts.map(\.users))::bigint[], \(counts.map(\.crashedUsers))::bigint[])
                    AS u(release, day, sessions, crashed, abnormal, errored, users, crashed_users)
                WHERE h.project_id = \(project) AND h.release = u.release AND h.day = u.day
                """, logger: logger)
        }
        let insert = keys.filter { !existing.contains($0) && added.contains($0) }
        guard !insert.isEmpty else { return }
        let counts = insert.map { days[$0] ?? Counts() }
        try await connection.query(
            """
            INSERT INTO health_days (project_id, release, day, sessions, crashed, abnormal, errored, users, crashed_users)
            SELECT \(project), * FROM unnest(\(insert.map(\.release.text))::text[], \(insert.map(\.day))::integer[],
                \(counts.map { max(0, $0.sessions) })::bigint[], \(counts.map { max(0, $0.crashed) })::bigint[],
                \(counts.map { max(0, $0.abnormal) })::bigint[], \(counts.map { max(0, $0.errored) })::bigint[],
                \(counts.map { max(0, $0.users) })::bigint[], \(counts.map { max(0, $0.crashedUsers) })::bigint[])
            ON CONFLICT (project_id, release, day) DO UPDATE SET sessions = health_days.sessions + excluded.sessions,
                crashed = health_days.crashed + excluded.crashed, abnormal = health_days.abnormal + excluded.abnormal,
                errored = health_days.errored + excluded.errored, users = health_days.users + excluded.users,
                crashed_users = health_days.crashed_users + excluded.crashed_users
            """, logger: logger)
    }

    /// `health_releases`, as `writeDays`; an added contribution also widens the release's first and last seen.
    private static func writeReleases(
        _ releases: [ExactText: Counts], added: [ExactText: Span], project: Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        let keys = releases.keys.sorted()
        guard !keys.isEmpty else { return }
        var existing: Set<ExactText> = []
        for try await release in try await connection.query(
            """
            SELECT release FROM health_releases WHERE project_id = \(project) AND release = ANY(\(keys.map(\.text))::text[])
            ORDER BY release FOR UPDATE
            """, logger: logger
        ).decode(String.self) {
            existing.insert(ExactText(release))
        }
        let update = keys.filter { existing.contains($0) }
        if !update.isEmpty {
            let counts = update.map { releases[$0] ?? Counts() }
            let spans = update.map { added[$0] }
            try await connection.query(
                """
                UPDATE health_releases h SET sessions = h.sessions + u.sessions, crashed = h.crashed + u.crashed,
                    abnormal = h.abnormal + u.abnormal, errored = h.errored + u.errored, users = h.users + u.users,
                    crashed_users = h.crashed_users + u.crashed_users,
                    first_seen = CASE WHEN u.seen THEN least(h.first_seen, u.first_seen) ELSE h.first_seen END,
                    last_seen = CASE WHEN u.seen THEN greatest(h.last_seen, u.last_seen) ELSE h.last_seen END
                FROM unnest(\(update.map(\.text))::text[], \(counts.map(\.sessions))::bigint[], \(counts.map(\.crashed))::bigint[],
                            \(counts.map(\.abnormal))::bigint[], \(counts.map(\.errored))::bigint[], \(counts.map(\.users))::bigint[],
                            \(counts.map(\.crashedUsers))::bigint[], \(spans.map { $0 != nil })::boolean[],
                            \(spans.map { $0?.first ?? 0 })::bigint[], \(spans.map { $0?.last ?? 0 })::bigint[])
                    AS u(release, sessions, crashed, abnormal, errored, users, crashed_users, seen, first_seen, last_seen)
                WHERE h.project_id = \(project) AND h.release = u.release
                """, logger: logger)
        }
        let insert = keys.filter { !existing.contains($0) && added[$0] != nil }
        guard !insert.isEmpty else { return }
        let counts = insert.map { releases[$0] ?? Counts() }
        let spans = insert.compactMap { added[$0] }
        try await connection.query(
            """
            INSERT INTO health_releases (project_id, release, first_seen, last_seen, sessions, crashed, abnormal, errored, users,
                crashed_users)
            SELECT \(project), * FROM unnest(\(insert.map(\.text))::text[], \(spans.map(\.first))::bigint[], \(spans.map(\.last))::bigint[],
                \(counts.map { max(0, $0.sessions) })::bigint[], \(counts.map { max(0, $0.crashed) })::bigint[],
                \(counts.map { max(0, $0.abnormal) })::bigint[], \(counts.map { max(0, $0.errored) })::bigint[],
                \(counts.map { max(0, $0.users) })::bigint[], \(counts.map { max(0, $0.crashedUsers) })::bigint[])
            ON CONFLICT (project_id, release) DO UPDATE SET sessions = health_releases.sessions + excluded.sessions,
                crashed = health_releases.crashed + excluded.crashed, abnormal = health_releases.abnormal + excluded.abnormal,
                errored = health_releases.errored + excluded.errored, users = health_releases.users + excluded.users,
                crashed_users = health_releases.crashed_users + excluded.crashed_users,
                first_seen = least(health_releases.first_seen, excluded.first_seen),
                last_seen = greatest(health_releases.last_seen, excluded.last_seen)
            """, logger: logger)
    }
}

struct HealthDayKey: Hashable, Comparable {
    var release: ExactText
    var day: Int64
    static func < (a: Self, b: Self) -> Bool { (a.release, a.day) < (b.release, b.day) }
}

/// The key of a distinct-user health row (`health_day_users`, `health_release_users`; counters sessions, crashed).
protocol HealthUserRowKey: Hashable, Comparable {
    static var table: String { get }
    /// Key columns after `project_id`, in order, with their PostgreSQL types.
    static var columns: [(name: String, type: String)] { get }
    /// The keys' columns as arrays, in `columns`' order.
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable]
    /// The key of a returned row (its first `columns.count` cells).
    init(_ cells: PostgresRandomAccessRow) throws
}

struct HealthDayUserKey: HealthUserRowKey {
    var release: ExactText
    var day: Int64
    var user: ExactText
    static let table = "health_day_users"
    static let columns = [
        (name: "release", type: "text"), (name: "day", type: "integer"), (name: "user_key", type: "text"),
    ]
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable] {
        [keys.map(\.release.text), keys.map { Int32(truncatingIfNeeded: $0.day) }, keys.map(\.user.text)]
    }
    init(release: ExactText, day: Int64, user: ExactText) { (self.release, self.day, self.user) = (release, day, user) }
    init(_ cells: PostgresRandomAccessRow) throws {
        (release, day, user) = (
            ExactText(try cells[0].decode(String.self)), Int64(try cells[1].decode(Int32.self)),
            ExactText(try cells[2].decode(String.self))
        )
    }
    static func < (a: Self, b: Self) -> Bool { (a.release, a.day, a.user) < (b.release, b.day, b.user) }
}

struct HealthReleaseUserKey: HealthUserRowKey {
    var release: ExactText
    var user: ExactText
    static let table = "health_release_users"
    static let columns = [(name: "release", type: "text"), (name: "user_key", type: "text")]
    static func arrays(_ keys: [Self]) -> [any PostgresNonThrowingEncodable] {
        [keys.map(\.release.text), keys.map(\.user.text)]
    }
    init(release: ExactText, user: ExactText) { (self.release, self.user) = (release, user) }
    init(_ cells: PostgresRandomAccessRow) throws {
        (release, user) = (ExactText(try cells[0].decode(String.self)), ExactText(try cells[1].decode(String.self)))
    }
    static func < (a: Self, b: Self) -> Bool { (a.release, a.user) < (b.release, b.user) }
}

/// The distinct-user health rows of a batch: a row exists while its `sessions` is above 0.
enum HealthUserRows {
    /// Adds `deltas` ([sessions, crashed] per key) to the rows of `project`: the rows that exist locked in key order
    /// and set to their new counts (deleted at 0 sessions), the missing ones with sessions inserted (added to, should
    /// another node have inserted one meanwhile). Returns each row's counts before and after.
    static func bump<Key: HealthUserRowKey>(
        _ deltas: [Key: [Int64]], project: Int64, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> [Key: (before: [Int64], after: [Int64])] {
        let keys = deltas.keys.filter { deltas[$0] != [0, 0] }.sorted()
        guard !keys.isEmpty else { return [:] }
        let names = Key.columns.map(\.name)
        let list = names.joined(separator: ", ")
        func arrays(_ keys: [Key], from first: Int) -> (binds: PostgresBindings, sql: String) {
            var binds = PostgresBindings()
            binds.append(project)
            for array in Key.arrays(keys) { binds.append(array) }
            let sql = Key.columns.enumerated().map { "$\($0.offset + first)::\($0.element.type)[]" }.joined(
                separator: ", ")
            return (binds, sql)
        }
        let match = names.map { "t.\($0) = u.\($0)" }.joined(separator: " AND ")

        var before: [Key: [Int64]] = [:]
        let locked = arrays(keys, from: 2)
        for try await row in try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(list), sessions, crashed FROM \(Key.table)
                    WHERE project_id = $1 AND (\(list)) IN (SELECT * FROM unnest(\(locked.sql)))
                    ORDER BY \(list) FOR UPDATE
                    """,
                binds: locked.binds),
            logger: logger)
        {
            let cells = row.makeRandomAccess()
            let count = Key.columns.count
            before[try Key(cells)] = [try cells[count].decode(Int64.self), try cells[count + 1].decode(Int64.self)]
        }

        var changes: [Key: (before: [Int64], after: [Int64])] = [:]
        var deleted: [Key] = []
        var updated: [Key] = []
        var inserted: [Key] = []
        for key in keys {
            let delta = deltas[key] ?? [0, 0]
            let old = before[key] ?? [0, 0]
            let new = [max(0, old[0] &+ delta[0]), max(0, old[1] &+ delta[1])]
            if before[key] != nil {
                if new[0] <= 0 { deleted.append(key) } else { updated.append(key) }
                changes[key] = (old, new[0] <= 0 ? [0, 0] : new)
            } else if new[0] > 0 {
                inserted.append(key)
            }
        }
        if !deleted.isEmpty {
            let (binds, sql) = arrays(deleted, from: 2)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL:
                        "DELETE FROM \(Key.table) t USING unnest(\(sql)) AS u(\(list)) WHERE t.project_id = $1 AND \(match)",
                    binds: binds),
                logger: logger)
        }
        if !updated.isEmpty {
            var (binds, sql) = arrays(updated, from: 2)
            let next = Key.columns.count + 2
            binds.append(updated.map { changes[$0]?.after[0] ?? 0 })
            binds.append(updated.map { changes[$0]?.after[1] ?? 0 })
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        UPDATE \(Key.table) t SET sessions = u.sessions, crashed = u.crashed
                        FROM unnest(\(sql), $\(next)::bigint[], $\(next + 1)::bigint[]) AS u(\(list), sessions, crashed)
                        WHERE t.project_id = $1 AND \(match)
                        """,
                    binds: binds),
                logger: logger)
        }
        if !inserted.isEmpty {
            var (binds, sql) = arrays(inserted, from: 2)
            let next = Key.columns.count + 2
            let values = inserted.map { key in (deltas[key] ?? [0, 0]).map { max(0, $0) } }
            binds.append(values.map { $0[0] })
            binds.append(values.map { $0[1] })
            var added: [Key: [Int64]] = [:]
            for (key, value) in zip(inserted, values) { added[key] = value }
            for try await row in try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO \(Key.table) (project_id, \(list), sessions, crashed)
                        SELECT $1, * FROM unnest(\(sql), $\(next)::bigint[], $\(next + 1)::bigint[])
                        ON CONFLICT (project_id, \(list)) DO UPDATE SET sessions = \(Key.table).sessions + excluded.sessions,
                            crashed = \(Key.table).crashed + excluded.crashed
                        RETURNING \(list), sessions, crashed
                        """,
                    binds: binds),
                logger: logger)
            {
                let cells = row.makeRandomAccess()
                let key = try Key(cells)
                let count = Key.columns.count
                let after = [try cells[count].decode(Int64.self), try cells[count + 1].decode(Int64.self)]
                let mine = added[key] ?? [0, 0]
                changes[key] = ([max(0, after[0] &- mine[0]), max(0, after[1] &- mine[1])], after)
            }
        }
        return changes
    }
}
