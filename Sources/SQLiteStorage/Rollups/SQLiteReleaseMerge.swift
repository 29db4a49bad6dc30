import FaultlineCore
import GRDB

/// `ReleaseMerge` on SQLite (migration `v27-one-release`; the twin of `PostgresMigrations.mergeReleases`).
enum SQLiteReleaseMerge {
    /// Brings every stored release under the name `ReleaseName` gives it, in the migration's transaction.
    static func apply(_ db: Database) throws {
        let renames = ReleaseMerge.renames(try String.fetchAll(db, sql: ReleaseMerge.storedReleases))
        guard !renames.isEmpty else { return }
        try db.execute(
            sql: "CREATE TEMPORARY TABLE release_renames (old_release TEXT PRIMARY KEY, new_release TEXT NOT NULL)")
        for rename in renames {
            try db.execute(
                sql: "INSERT INTO release_renames (old_release, new_release) VALUES (?, ?)",
                arguments: [rename.old, rename.new])
        }
        for statement in ReleaseMerge.statements { try db.execute(sql: statement) }
        try db.execute(sql: "DROP TABLE release_renames")
    }
}
