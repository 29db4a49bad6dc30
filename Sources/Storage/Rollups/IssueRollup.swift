import FaultlineCore
import GRDB

/// The issue rollups: counters on `issues` and the per-release, per-day, per-user and per-tag tables.
///
/// `add` and `remove` are exact inverses, which is what lets a report move between issues (late symbols) and
/// keeps every counter equal to a recount from the reports (a storage test recounts). A contribution's user is already
/// its rollup key (`RollupUserKeys`, made by `Grouper.file`): the per-user tables never hold a user id.
enum IssueRollup {
    /// The counted tables' statements, written once.
    enum Shapes {
        static let tags = CountedRow.Shape(table: "issue_tags", keys: ["issue_id", "key", "value"], counters: ["events"])
        static let releases = CountedRow.Shape(table: "issue_releases", keys: ["issue_id", "release"], counters: ["events"])
        static let days = CountedRow.Shape(table: "issue_days", keys: ["issue_id", "day"], counters: ["events"])
        static let users = CountedRow.Shape(table: "issue_users", keys: ["issue_id", "user_key"], counters: ["events"])
        static let releaseUsers = CountedRow.Shape(
            table: "issue_release_users", keys: ["issue_id", "release", "user_key"], counters: ["events"])
        static let dayUsers = CountedRow.Shape(table: "issue_day_users", keys: ["issue_id", "day", "user_key"], counters: ["events"])
    }

    static func add(_ c: IssueContribution, to issue: Int64, now: Int64, _ db: Database) throws {
        let early = c.early == true ? 1 : 0
        let timed = c.early == nil ? 0 : 1
        let release: String? = c.release.isEmpty ? nil : c.release
        // The per-user rows first: what they change in the distinct-user counters is written by the counters'
        // own statements below (one statement per table instead of two).
        let users = try userDeltas(c, issue: issue, sign: 1, db)
        try db.cachedStatement(
            sql: """
                UPDATE issues SET events = events + 1,
                    first_release = CASE WHEN ?1 < first_seen OR first_release IS NULL THEN coalesce(?2, first_release)
                                         ELSE first_release END,
                    last_release = CASE WHEN ?1 >= last_seen OR last_release IS NULL THEN coalesce(?2, last_release)
                                        ELSE last_release END,
                    first_seen = min(first_seen, ?1), last_seen = max(last_seen, ?1),
                    early_events = early_events + ?3, timed_events = timed_events + ?4, updated_at = ?5,
                    users = users + ?7, repeat_users = repeat_users + ?8
                WHERE id = ?6
                """
        ).execute(arguments: [c.occurredAt, release, early, timed, now, issue, users.issue, users.repeated])
        try db.cachedStatement(
            sql: """
                INSERT INTO issue_releases (issue_id, release, events, users, first_seen, last_seen) VALUES (?1, ?2, 1, ?4, ?3, ?3)
                ON CONFLICT (issue_id, release) DO UPDATE SET events = events + 1, users = users + excluded.users,
                    first_seen = min(first_seen, ?3), last_seen = max(last_seen, ?3)
                """
        ).execute(arguments: [issue, c.release, c.occurredAt, users.release])
        try db.cachedStatement(
            sql: """
                INSERT INTO issue_days (issue_id, day, events, users) VALUES (?1, ?2, 1, ?3)
                ON CONFLICT (issue_id, day) DO UPDATE SET events = events + 1, users = users + excluded.users
                """
        ).execute(arguments: [issue, c.day.rawValue, users.day])
        // The report's tags in one upsert that returns nothing: nothing here reads a tag's count back, and an upsert
        // per tag with RETURNING (an ephemeral table each) was a ninth of the worker's transaction (issue #13).
        try MultiRowInsert.run(
            c.tags, into: "issue_tags", columns: ["issue_id", "key", "value", "events"], perStatement: tagsPerInsert,
            onConflict: "(issue_id, key, value) DO UPDATE SET events = events + excluded.events", db
        ) { tag in [issue, tag.key, tag.value, 1] }
    }

    /// Tags an upsert of `add` writes at most (a report has a handful: device, OS, environment).
    static let tagsPerInsert = 16

    /// Removes a contribution; deletes the issue when it has no events left. Returns true when it was deleted.
    @discardableResult
    static func remove(_ c: IssueContribution, from issue: Int64, now: Int64, _ db: Database) throws -> Bool {
        let early = c.early == true ? 1 : 0
        let timed = c.early == nil ? 0 : 1
        try db.cachedStatement(
            sql: """
                UPDATE issues SET events = max(events - 1, 0), early_events = max(early_events - ?, 0),
                    timed_events = max(timed_events - ?, 0), updated_at = ? WHERE id = ?
                """
        ).execute(arguments: [early, timed, now, issue])
        let events = try Int.fetchOne(db.cachedStatement(sql: "SELECT events FROM issues WHERE id = ?"), arguments: [issue]) ?? 0
        if events == 0 {
            // Its rollup rows go with it (ON DELETE CASCADE).
            try db.cachedStatement(sql: "DELETE FROM issues WHERE id = ?").execute(arguments: [issue])
            return true
        }
        try CountedRow.bump(Shapes.releases, values: [issue, c.release], by: [-1], db)
        try CountedRow.bump(Shapes.days, values: [issue, c.day.rawValue], by: [-1], db)
        try removeUser(c, issue: issue, db)
        for tag in c.tags {
            try CountedRow.bump(Shapes.tags, values: [issue, tag.key, tag.value], by: [-1], db)
        }
        return false
    }

    /// What one report of `c.user` changes (`sign` 1: added, -1: removed) in the distinct users of the issue, of the
    /// issue in the release and on the day, and in its users with more than one event: the per-user rows are
    /// bumped here; the counters are the caller's to write.
    private static func userDeltas(_ c: IssueContribution, issue: Int64, sign: Int, _ db: Database) throws
        -> (issue: Int, repeated: Int, release: Int, day: Int)
    {
        guard let user = c.user else { return (0, 0, 0, 0) }
        let (before, after) = try CountedRow.bumpValues(Shapes.users, values: [issue, user], by: [sign], db)
        let (release, _) = try CountedRow.bump(Shapes.releaseUsers, values: [issue, c.release, user], by: [sign], db)
        let (day, _) = try CountedRow.bump(Shapes.dayUsers, values: [issue, c.day.rawValue, user], by: [sign], db)
        return (CounterDeltas.crossing(0, before: before[0], after: after[0]), CounterDeltas.crossing(1, before: before[0], after: after[0]),
                release, day)
    }

    /// Removes one report's user from the distinct-user counters (`userDeltas` with the counters written).
    private static func removeUser(_ c: IssueContribution, issue: Int64, _ db: Database) throws {
        let users = try userDeltas(c, issue: issue, sign: -1, db)
        if users.issue != 0 || users.repeated != 0 {
            try db.cachedStatement(sql: "UPDATE issues SET users = users + ?, repeat_users = repeat_users + ? WHERE id = ?")
                .execute(arguments: [users.issue, users.repeated, issue])
        }
        if users.release != 0 {
            try db.cachedStatement(sql: "UPDATE issue_releases SET users = users + ? WHERE issue_id = ? AND release = ?")
                .execute(arguments: [users.release, issue, c.release])
        }
        if users.day != 0 {
            try db.cachedStatement(sql: "UPDATE issue_days SET users = users + ? WHERE issue_id = ? AND day = ?")
                .execute(arguments: [users.day, issue, c.day.rawValue])
        }
    }
}
