/// Brings releases stored before ``ReleaseName`` under one name (migrations `v27-one-release` and
/// `pg12-one-release`): `2.4.0 (240)` joins `2.4.0`, `com.x@2.4.0+240` too, in every table that names a release.
///
/// Each engine reads ``storedReleases``, passes them to ``renames(_:)``, writes the pairs to a temporary table
/// `release_renames (old_release, new_release)` and runs ``statements``, all in the migration's transaction. Plain
/// columns are renamed in place. Rollups keyed by release are rebuilt from their rows grouped by the new name:
/// counters summed, first/last seen the earliest/latest, and the distinct-user counters recounted from the per-user
/// rows (which hold one row per user and key, so the recount is exact). Rows of releases no rename touches are left
/// alone. The builds the old names carried are not kept in the rollups (they never had a build column); reports keep
/// theirs in their payloads, which are read again through `ReleaseName`.
public enum ReleaseMerge {
    /// Every release name stored, once (the project-wide health rows' '' included: no rename touches it).
    public static let storedReleases = """
        SELECT release FROM reports WHERE release IS NOT NULL
        UNION SELECT release FROM sessions
        UNION SELECT release FROM health_releases
        UNION SELECT release FROM issue_releases
        UNION SELECT first_release FROM issues WHERE first_release IS NOT NULL
        UNION SELECT last_release FROM issues WHERE last_release IS NOT NULL
        UNION SELECT release FROM report_modules WHERE release IS NOT NULL
        UNION SELECT release FROM alerts WHERE release IS NOT NULL
        """

    /// The stored names that ``ReleaseName`` reads as another release, each with that release.
    public static func renames(_ stored: [String]) -> [(old: String, new: String)] {
        stored.compactMap { old in
            let new = ReleaseName.release(of: old)
            return new == old ? nil : (old, new)
        }
    }

    /// A rollup keyed by release: its other key columns, summed counters, earliest/latest times and the statement
    /// recounting its distinct users (`?` stands for the renamed releases).
    struct Rollup {
        var name: String
        var keys: [String]
        var sums: [String]
        var zeroed: [String] = []
        var earliest: [String] = []
        var latest: [String] = []
        var recount: String? = nil
    }

    static let rollups = [
        Rollup(
            name: "issue_releases", keys: ["issue_id"], sums: ["events"], zeroed: ["users"], earliest: ["first_seen"],
            latest: ["last_seen"],
            recount: """
                UPDATE issue_releases SET users = (SELECT count(*) FROM issue_release_users u
                    WHERE u.issue_id = issue_releases.issue_id AND u.release = issue_releases.release)
                """),
        Rollup(name: "issue_release_users", keys: ["issue_id", "user_key"], sums: ["events"]),
        Rollup(
            name: "health_days", keys: ["project_id", "day"], sums: ["sessions", "crashed", "abnormal", "errored"],
            zeroed: ["users", "crashed_users"],
            recount: """
                UPDATE health_days SET
                    users = (SELECT count(*) FROM health_day_users u WHERE u.project_id = health_days.project_id
                        AND u.release = health_days.release AND u.day = health_days.day),
                    crashed_users = (SELECT count(*) FROM health_day_users u WHERE u.project_id = health_days.project_id
                        AND u.release = health_days.release AND u.day = health_days.day AND u.crashed > 0)
                """),
        Rollup(name: "health_day_users", keys: ["project_id", "day", "user_key"], sums: ["sessions", "crashed"]),
        Rollup(
            name: "health_releases", keys: ["project_id"], sums: ["sessions", "crashed", "abnormal", "errored"],
            zeroed: ["users", "crashed_users"], earliest: ["first_seen"], latest: ["last_seen"],
            recount: """
                UPDATE health_releases SET
                    users = (SELECT count(*) FROM health_release_users u WHERE u.project_id = health_releases.project_id
                        AND u.release = health_releases.release),
                    crashed_users = (SELECT count(*) FROM health_release_users u
                        WHERE u.project_id = health_releases.project_id AND u.release = health_releases.release
                        AND u.crashed > 0)
                """),
        Rollup(name: "health_release_users", keys: ["project_id", "user_key"], sums: ["sessions", "crashed"]),
    ]

    /// Columns that name a release, renamed in place.
    static let plainColumns = [
        ("reports", "release"), ("sessions", "release"), ("report_modules", "release"), ("alerts", "release"),
        ("issues", "first_release"), ("issues", "last_release"),
    ]

    static let touched =
        "(SELECT old_release FROM release_renames UNION SELECT new_release FROM release_renames)"

    /// The statements that apply `release_renames` (the same text on both engines).
    public static let statements: [String] = {
        var statements: [String] = []
        for (table, column) in plainColumns {
            statements.append(
                """
                UPDATE \(table) SET \(column) = (SELECT new_release FROM release_renames WHERE old_release = \(table).\(column))
                WHERE \(column) IN (SELECT old_release FROM release_renames)
                """)
        }
        for rollup in rollups {
            let outputs =
                rollup.keys + ["release"] + rollup.sums + rollup.zeroed + rollup.earliest + rollup.latest
            let selects =
                rollup.keys.map { "t.\($0)" } + ["coalesce(r.new_release, t.release) AS release"]
                + rollup.sums.map { "sum(t.\($0)) AS \($0)" } + rollup.zeroed.map { "0 AS \($0)" }
                + rollup.earliest.map { "min(t.\($0)) AS \($0)" } + rollup.latest.map { "max(t.\($0)) AS \($0)" }
            let groups = rollup.keys.map { "t.\($0)" } + ["coalesce(r.new_release, t.release)"]
            statements += [
                """
                CREATE TEMPORARY TABLE merged_release_rows AS
                SELECT \(selects.joined(separator: ", "))
                FROM \(rollup.name) t LEFT JOIN release_renames r ON r.old_release = t.release
                WHERE t.release IN \(touched)
                GROUP BY \(groups.joined(separator: ", "))
                """,
                "DELETE FROM \(rollup.name) WHERE release IN \(touched)",
                """
                INSERT INTO \(rollup.name) (\(outputs.joined(separator: ", ")))
                SELECT \(outputs.joined(separator: ", ")) FROM merged_release_rows
                """,
                "DROP TABLE merged_release_rows",
            ]
        }
        // Recount after every per-user table is merged; only the rows of renamed releases.
        for rollup in rollups {
            guard let recount = rollup.recount else { continue }
            statements.append(recount + "\nWHERE release IN (SELECT new_release FROM release_renames)")
        }
        return statements
    }()
}
