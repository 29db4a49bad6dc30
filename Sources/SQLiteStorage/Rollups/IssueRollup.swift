import FaultlineCore
import GRDB

/// The issue rollups: counters on `issues` and the per-release, per-day, per-user and per-tag tables, written by
/// `SQLiteBatchGrouper.write` from a filing plan's deltas (`IssueRollupDeltas`). A report's contribution is added and taken
/// off by exactly inverse deltas, which is what lets a report move between issues (late symbols) and keeps every
/// counter equal to a recount from the reports (a storage test recounts). A contribution's user is already its rollup
/// key (`RollupUserKeys`): the per-user tables never hold a user id.
enum IssueRollup {
    /// The counted tables' statements, written once.
    enum Shapes {
        static let users = CountedRow.Shape(table: "issue_users", keys: ["issue_id", "user_key"], counters: ["events"])
        static let releaseUsers = CountedRow.Shape(
            table: "issue_release_users", keys: ["issue_id", "release", "user_key"], counters: ["events"])
        static let dayUsers = CountedRow.Shape(
            table: "issue_day_users", keys: ["issue_id", "day", "user_key"], counters: ["events"])
    }

    /// Tags an upsert writes at most (a report has a handful: device, OS, environment).
    static let tagsPerInsert = 16
}
