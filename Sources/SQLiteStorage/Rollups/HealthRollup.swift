import FaultlineCore
import GRDB

/// Release-health rollups: per project × release × day, per project × release, with per-user rows that keep
/// the distinct-user counts exact, keyed by the user's rollup key (`RollupUserKeys`), never the session's distinct id.
///
/// A session update calls `apply(project:remove:add:)` with the session's contribution before and after; the
/// rollups move by the difference, in the same transaction as the session row. Release `HealthSQL.allReleases`
/// stands for all releases together (a user of two releases is one user of the project that day).
enum HealthRollup {
    /// The per-user rows: a user's sessions and crashed sessions per release and day, and per release. `bump` returns
    /// how the distinct users and crashed users change (a row whose sessions reach 0 is deleted). Made once: a session
    /// update bumps up to four of them, and a shape builds and hashes its statements' text.
    enum Shapes {
        static let dayUsers = CountedRow.Shape(
            table: "health_day_users", keys: ["project_id", "release", "day", "user_key"],
            counters: ["sessions", "crashed"])
        static let releaseUsers = CountedRow.Shape(
            table: "health_release_users", keys: ["project_id", "release", "user_key"],
            counters: ["sessions", "crashed"])
    }

    /// Moves the rollups from `old` to `new` (either may be nil: a new session, or none).
    ///
    /// - Parameter users: what gives the per-user rows the user's rollup key (`RollupUserKeys`), as every write does
    ///   (one for a whole batch reads its project's key once); nil only for the backfill of an old migration, whose
    ///   rows `v24-hashed-rollup-users` rewrites.
    static func apply(
        project: ProjectID, remove old: SessionContribution?, add new: SessionContribution?, startedAt: Int64,
        users: RollupUserKeys.Keyer?, _ db: Database
    ) throws {
        guard old != new else { return }
        if let old { try change(project: project, old, sign: -1, startedAt: startedAt, users: users, db) }
        if let new { try change(project: project, new, sign: 1, startedAt: startedAt, users: users, db) }
    }

    private static func change(
        project: ProjectID, _ contribution: SessionContribution, sign: Int, startedAt: Int64,
        users: RollupUserKeys.Keyer?, _ db: Database
    ) throws {
        var c = contribution
        if let users { c.user = try users.key(c.user, project: project, db) }
        // A counted row (an aggregate's) moves the counters by its count; its user, if any, is one user.
        let sessions = sign * c.sessions
        let crashed = c.crashed ? sessions : 0
        let abnormal = c.abnormal ? sessions : 0
        let errored = c.errored ? sessions : 0
        for release in [c.release, HealthSQL.allReleases] {
            // Removing only ever updates (a CHECK would refuse an upsert's negative VALUES row before the conflict).
            try db.cachedStatement(
                sql: sign > 0
                    ? """
                    INSERT INTO health_days (project_id, release, day, sessions, crashed, abnormal, errored)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                    ON CONFLICT (project_id, release, day) DO UPDATE SET sessions = sessions + ?4,
                        crashed = crashed + ?5, abnormal = abnormal + ?6, errored = errored + ?7
                    """
                    : """
                    UPDATE health_days SET sessions = sessions + ?4, crashed = crashed + ?5, abnormal = abnormal + ?6,
                        errored = errored + ?7 WHERE project_id = ?1 AND release = ?2 AND day = ?3
                    """
            ).execute(arguments: [project.rawValue, release, c.day.rawValue, sessions, crashed, abnormal, errored])
            if let user = c.user {
                let (users, crashedUsers) = try CountedRow.bump(
                    Shapes.dayUsers, values: [project.rawValue, release, c.day.rawValue, user],
                    by: [sessions, crashed], db)
                if users != 0 || crashedUsers != 0 {
                    try db.cachedStatement(
                        sql: """
                            UPDATE health_days SET users = users + ?, crashed_users = crashed_users + ?
                            WHERE project_id = ? AND release = ? AND day = ?
                            """
                    ).execute(arguments: [users, crashedUsers, project.rawValue, release, c.day.rawValue])
                }
            }
        }
        try db.cachedStatement(
            sql: sign > 0
                ? """
                INSERT INTO health_releases (project_id, release, first_seen, last_seen, sessions, crashed, abnormal, errored)
                VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (project_id, release) DO UPDATE SET sessions = sessions + ?4, crashed = crashed + ?5,
                    abnormal = abnormal + ?6, errored = errored + ?7,
                    first_seen = min(first_seen, ?3), last_seen = max(last_seen, ?3)
                """
                : """
                UPDATE health_releases SET sessions = sessions + ?4, crashed = crashed + ?5, abnormal = abnormal + ?6,
                    errored = errored + ?7 WHERE project_id = ?1 AND release = ?2 AND ?3 = ?3
                """
        ).execute(arguments: [project.rawValue, c.release, startedAt, sessions, crashed, abnormal, errored])
        if let user = c.user {
            let (users, crashedUsers) = try CountedRow.bump(
                Shapes.releaseUsers, values: [project.rawValue, c.release, user], by: [sessions, crashed], db)
            if users != 0 || crashedUsers != 0 {
                try db.cachedStatement(
                    sql:
                        "UPDATE health_releases SET users = users + ?, crashed_users = crashed_users + ? WHERE project_id = ? AND release = ?"
                ).execute(arguments: [users, crashedUsers, project.rawValue, c.release])
            }
        }
    }

    /// Fills the rollups from the sessions already stored (run once, by the migration that adds them).
    static func backfill(_ db: Database) throws {
        let rows = try Row.fetchCursor(
            db,
            sql:
                "SELECT project_id, session_id, distinct_id, release, environment, started_at, status, errors FROM sessions"
        )
        while let row = try rows.next() {
            guard let id = SessionID(row["session_id"]), let status = SessionStatus(rawValue: row["status"]) else {
                continue
            }
            let started: Int64 = row["started_at"]
            let state = SessionState(
                sessionID: id, distinctID: row["distinct_id"], release: row["release"], environment: row["environment"],
                started: Millis.date(started), status: status, errors: row["errors"], duration: nil, seq: nil)
            try apply(
                project: ProjectID(row["project_id"] as Int64), remove: nil, add: SessionContribution(state),
                startedAt: started,
                users: nil, db)
        }
    }
}
