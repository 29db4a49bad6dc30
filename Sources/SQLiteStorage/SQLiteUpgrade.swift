import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Upgrading a SQLite database from any earlier schema (issue #38): what an upgrade will do, said before it is done
/// (`faultline migrate --check`), without changing a byte of the file.
///
/// Every migration of `SQLiteMigrations` has a line here saying what it changes and the work it does (`steps`); a test
/// (`UpgradeSnapshotTests`) fails when one is missing, so a new migration is described where the operator reads it.
public enum SQLiteUpgrade {
    /// The identifiers of every migration this binary knows, oldest first.
    public static var migrations: [String] { SQLiteMigrations.migrator.migrations }

    /// What each migration does, in one line, and the work it does (what its cost grows with).
    static let steps: [String: (summary: String, work: UpgradePlan.Work)] = [
        "v1-projects-reports-sessions": ("projects, keys, payloads, reports and sessions", .schema),
        "v2-debug-files": ("the debug-file table", .schema),
        "v3-payload-format": ("payloads record their format", .schema),
        "v4-symbolication": ("symbolication state and results per report", .schema),
        "v5-issues-health-alerts": (
            "issues, their rollups, release health and alerts; every report queued for grouping",
            .rewrite(["reports", "sessions"])
        ),
        "v6-sentry": ("Sentry events, client reports, attachments, sentry-cli uploads", .rewrite(["payloads"])),
        "v7-debug-file-blobs": ("debug files name their blob", .schema),
        "v8-symbolication-attempts": ("poison-pill counting of symbolication attempts", .schema),
        "v9-admin-sessions": ("dashboard logins", .schema),
        "v10-privacy-settings": ("per-project PII scrubbing settings", .schema),
        "v11-report-modules": (
            "per report, the debug data each module was symbolicated with (from the stored results)",
            .rewrite(["report_symbols", "reports"])
        ),
        "v12-report-issue-index": ("an issue's reports by id", .index("reports")),
        "v13-grouping-v2": ("grouping version per report, title rank, in-app rules", .index("reports")),
        "v14-issue-status-history": ("who changed an issue's status, and its note", .schema),
        "v15-search-index": ("the search index, filled from the processed reports", .rewrite(["reports"])),
        "v16-source-bundles": ("source bundles as debug files", .rewrite(["debug_files"])),
        "v17-issue-list-order": ("indexes for the dashboard's issue lists", .index("issues")),
        "v18-storage-alerts": ("disk-full and disk-ok alerts", .rewrite(["alerts"])),
        "v19-webhook-priority": ("webhook deliveries have a priority", .rewrite(["webhook_deliveries"])),
        "v20-top-issues-covering-index": ("a covering index for the top issues", .index("reports")),
        "v21-counted-sessions": ("one session row counts several sessions", .schema),
        "v22-issue-created-at": ("issues record when they were made (new-issue cap)", .index("issues")),
        "v23-mask-emails-and-phones": ("e-mail and phone masking; a random identity key per project", .schema),
        "v24-hashed-rollup-users": (
            "per-user rollups hold a keyed hash of the user instead of the id",
            .rewrite(RollupUserKeys.tables.map(\.name))
        ),
        "v25-minidump-retention": ("minidump retention per project", .index("attachments")),
        "v26-crash-free-targets": ("crash-free targets per project", .schema),
        "v27-one-release": (
            "every spelling of a release stored under one name, rollups merged",
            .rewrite([
                "reports", "sessions", "issues", "issue_releases", "issue_release_users", "health_releases",
                "health_days", "health_release_users", "health_day_users",
            ])
        ),
        "v28-merged-issues": ("merged issues: fingerprint aliases and the numbers they replaced", .schema),
        "v29-retention-samples-trackers": (
            "sample reports kept past retention; issue trackers per project", .index("reports")
        ),
        "v30-people": ("people, their roles and invites; logins belong to a person", .schema),
        "v31-event-quotas": ("event quotas per project and what they counted; quota alerts", .rewrite(["alerts"])),
        "v32-fingerprint-rules": ("fingerprint rules per project; grouping facts per report; regroups", .schema),
        "v33-personal-tokens-totp": ("personal API tokens; TOTP second factors and recovery codes", .schema),
        "v34-audit": ("the audit trail of every change", .schema),
        "v35-alert-mail": ("alert mail preferences; the digest outbox", .schema),
        "v36-quota-counts-by-fingerprint": ("an index of refused events by fingerprint", .index("quota_counts")),
        "v37-login-tickets": ("logins waiting for their second factor's code", .schema),
        "v38-rotation": ("an end for old ingest keys after a rotation", .schema),
        "v39-issue-hangs": (
            "hangs and ANRs marked on their issues (from the titles of those filed before)", .index("issues")
        ),
        "v40-tag-users": ("users per device model, OS, environment and build of an issue", .schema),
    ]

    /// The migrations without a line in `steps` (a test keeps this empty).
    public static var undescribed: [String] { migrations.filter { steps[$0] == nil } }

    /// What opening the database at `path` with this binary would do, read without changing anything (a read-only
    /// connection: no migration, no WAL checkpoint, no new file).
    /// - Throws: `StorageError(.newerSchema)` for a database a newer faultline upgraded, `.openFailed` when the file
    ///   is missing or is not a database.
    public static func plan(path: String, rates: UpgradeRates = .measured) throws -> UpgradePlan {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StorageError(.openFailed, "there is no database at \(path)")
        }
        do {
            let queue = try readOnlyQueue(path: path)
            defer { try? queue.close() }
            return try queue.read { db in
                let (current, pending) = try UpgradePlan.pending(
                    known: migrations, applied: try SQLiteMigrations.migrator.appliedIdentifiers(db),
                    steps: steps)
                let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                let total = pages.multipliedReportingOverflow(by: pageSize)
                let databaseBytes = total.overflow ? Int64.max : total.partialValue
                return UpgradePlan.make(
                    current: current, pending: pending,
                    tableBytes: try tableBytes(db, fallback: databaseBytes), databaseBytes: databaseBytes,
                    rates: rates)
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.openFailed, "cannot read the database at \(path)", underlying: error)
        }
    }

    /// A read-only connection that leaves no file behind. A stopped server's database (WAL mode, no `-wal` file: a
    /// connection in WAL mode always has one) is opened `immutable`, so SQLite makes no `-wal` or `-shm` for it; one a
    /// server has open is read through the server's `-shm`, as any reader does. Without URI support in the SQLite
    /// library, the plain read-only open.
    static func readOnlyQueue(path: String) throws -> DatabaseQueue {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(10)
        if !FileManager.default.fileExists(atPath: path + "-wal") {
            let escaped = path.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "?", with: "%3f")
                .replacingOccurrences(of: "#", with: "%23")
            if let queue = try? DatabaseQueue(path: "file:" + escaped + "?immutable=1", configuration: config),
                (try? queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }) != nil
            {
                return queue
            }
        }
        return try DatabaseQueue(path: path, configuration: config)
    }

    /// Each table's bytes with its indexes in the database at `path` (read-only).
    public static func tableBytes(path: String) throws -> [String: Int64] {
        let queue = try readOnlyQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try tableBytes(db, fallback: 0) }
    }

    /// Each table's bytes with its indexes, from SQLite's `dbstat` (every page is read once; a 1 GB database takes
    /// about a second). Without `dbstat` (a SQLite built without it) each table counts as the whole database: the
    /// estimate is then an upper bound.
    static func tableBytes(_ db: Database, fallback: Int64) throws -> [String: Int64] {
        do {
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.tbl_name AS name, sum(s.pgsize) AS bytes FROM dbstat s JOIN sqlite_master m ON m.name = s.name
                    GROUP BY m.tbl_name
                    """)
            var sizes: [String: Int64] = [:]
            for row in rows { sizes[row["name"]] = row["bytes"] }
            return sizes
        } catch {
            let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            return Dictionary(names.map { ($0, fallback) }, uniquingKeysWith: { first, _ in first })
        }
    }
}
