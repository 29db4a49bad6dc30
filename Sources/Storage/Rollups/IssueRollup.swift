import FaultlineCore
import GRDB

/// The issue rollups: counters on `issues` and the per-release, per-day, per-user and per-tag tables.
///
/// `add` and `remove` are exact inverses, which is what lets a report move between issues (late symbols) and
/// keeps every counter equal to a recount from the reports (a storage test recounts).
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
        try db.cachedStatement(
            sql: """
                UPDATE issues SET events = events + 1,
                    first_release = CASE WHEN ?1 < first_seen OR first_release IS NULL THEN coalesce(?2, first_release)
                                         ELSE first_release END,
                    last_release = CASE WHEN ?1 >= last_seen OR last_release IS NULL THEN coalesce(?2, last_release)
                                        ELSE last_release END,
                    first_seen = min(first_seen, ?1), last_seen = max(last_seen, ?1),
                    early_events = early_events + ?3, timed_events = timed_events + ?4, updated_at = ?5
                WHERE id = ?6
                """
        ).execute(arguments: [c.occurredAt, release, early, timed, now, issue])
        try db.cachedStatement(
            sql: """
                INSERT INTO issue_releases (issue_id, release, events, first_seen, last_seen) VALUES (?1, ?2, 1, ?3, ?3)
                ON CONFLICT (issue_id, release) DO UPDATE SET events = events + 1, first_seen = min(first_seen, ?3),
                    last_seen = max(last_seen, ?3)
                """
        ).execute(arguments: [issue, c.release, c.occurredAt])
        try db.cachedStatement(
            sql: """
                INSERT INTO issue_days (issue_id, day, events) VALUES (?1, ?2, 1)
                ON CONFLICT (issue_id, day) DO UPDATE SET events = events + 1
                """
        ).execute(arguments: [issue, c.day.rawValue])
        try users(c, issue: issue, sign: 1, db)
        for tag in c.tags {
            try CountedRow.bump(Shapes.tags, values: [issue, tag.key, tag.value], by: [1], db)
        }
    }

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
        try users(c, issue: issue, sign: -1, db)
        for tag in c.tags {
            try CountedRow.bump(Shapes.tags, values: [issue, tag.key, tag.value], by: [-1], db)
        }
        return false
    }

    /// Distinct users of the issue, of the issue in the release and on the day; users with more than one event.
    private static func users(_ c: IssueContribution, issue: Int64, sign: Int, _ db: Database) throws {
        guard let user = c.user else { return }
        let (before, after) = try CountedRow.bumpValues(Shapes.users, values: [issue, user], by: [sign], db)
        let usersDelta = CounterDeltas.crossing(0, before: before[0], after: after[0])
        let repeatDelta = CounterDeltas.crossing(1, before: before[0], after: after[0])
        if usersDelta != 0 || repeatDelta != 0 {
            try db.cachedStatement(sql: "UPDATE issues SET users = users + ?, repeat_users = repeat_users + ? WHERE id = ?")
                .execute(arguments: [usersDelta, repeatDelta, issue])
        }
        let (releaseUsers, _) = try CountedRow.bump(Shapes.releaseUsers, values: [issue, c.release, user], by: [sign], db)
        if releaseUsers != 0 {
            try db.cachedStatement(sql: "UPDATE issue_releases SET users = users + ? WHERE issue_id = ? AND release = ?")
                .execute(arguments: [releaseUsers, issue, c.release])
        }
        let (dayUsers, _) = try CountedRow.bump(Shapes.dayUsers, values: [issue, c.day.rawValue, user], by: [sign], db)
        if dayUsers != 0 {
            try db.cachedStatement(sql: "UPDATE issue_days SET users = users + ? WHERE issue_id = ? AND day = ?")
                .execute(arguments: [dayUsers, issue, c.day.rawValue])
        }
    }
}
