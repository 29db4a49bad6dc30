import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Projects and credential hashes on SQLite.
public struct SQLiteProjectStore: ProjectStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    public func createProject(
        slug: ProjectSlug, ingestKeyHash: SecretHash, uploadTokenHash: SecretHash, createdAt: Date,
        rateLimitPerSecond: Double
    ) async throws -> Project {
        do {
            return try await database.pool.write { db in
                let created = Millis.from(createdAt)
                try db.execute(
                    sql: "INSERT INTO projects (slug, created_at, rate_limit_per_second) VALUES (?, ?, ?)",
                    arguments: [slug.rawValue, created, rateLimitPerSecond])
                let id = db.lastInsertedRowID
                for (hash, kind) in [(ingestKeyHash, CredentialKind.ingest), (uploadTokenHash, .upload)] {
                    try db.execute(
                        sql: "INSERT INTO credentials (hash, kind, project_id, created_at) VALUES (?, ?, ?, ?)",
                        arguments: [hash.hex, kind.rawValue, id, created])
                }
                // The identity key is the trigger's (migration v23).
                let key = try Data.fetchOne(db, sql: "SELECT identity_key FROM projects WHERE id = ?", arguments: [id])
                return Project(
                    id: ProjectID(id), slug: slug, createdAt: createdAt, rateLimitPerSecond: rateLimitPerSecond,  // default privacy, as the columns' defaults
                    identityKey: key.map { Array($0) } ?? [])
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw StorageError(.conflict, "a project with the slug \"\(slug)\" exists already", underlying: error)
        }
    }

    public func allProjects() async throws -> [Project] {
        try await database.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM projects ORDER BY id")
                .compactMap(Self.project)
        }
    }

    public func project(slug: ProjectSlug) async throws -> Project? {
        try await database.pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.columns) FROM projects WHERE slug = ?",
                arguments: [slug.rawValue]
            ).flatMap(Self.project)
        }
    }

    public func project(id: ProjectID) async throws -> Project? {
        try await database.pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.columns) FROM projects WHERE id = ?",
                arguments: [id.rawValue]
            ).flatMap(Self.project)
        }
    }

    public func project(credential hash: SecretHash, kind: CredentialKind, at now: Date) async throws -> Project? {
        try await database.pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.columns) FROM credentials c
                    JOIN projects ON projects.id = c.project_id
                    WHERE c.hash = ? AND c.kind = ? AND (c.expires_at IS NULL OR c.expires_at > ?)
                    """,
                arguments: [hash.hex, kind.rawValue, Millis.from(now)]
            ).flatMap(Self.project)
        }
    }

    public func replaceCredential(
        _ kind: CredentialKind, of project: ProjectID, with hash: SecretHash, oldAcceptedUntil: Date?, at now: Date
    ) async throws -> Bool {
        try await database.pool.write { db in
            guard
                try Bool.fetchOne(db, sql: "SELECT 1 FROM projects WHERE id = ?", arguments: [project.rawValue])
                    ?? false
            else { return false }
            let nowMillis = Millis.from(now)
            try db.execute(
                sql: "DELETE FROM credentials WHERE project_id = ? AND kind = ? AND expires_at <= ?",
                arguments: [project.rawValue, kind.rawValue, nowMillis])
            if let oldAcceptedUntil, oldAcceptedUntil > now {
                let end = Millis.from(oldAcceptedUntil)
                try db.execute(
                    sql:
                        "UPDATE credentials SET expires_at = min(coalesce(expires_at, ?), ?) WHERE project_id = ? AND kind = ?",
                    arguments: [end, end, project.rawValue, kind.rawValue])
            } else {
                try db.execute(
                    sql: "DELETE FROM credentials WHERE project_id = ? AND kind = ?",
                    arguments: [project.rawValue, kind.rawValue])
            }
            try db.execute(
                sql: "INSERT INTO credentials (hash, kind, project_id, created_at) VALUES (?, ?, ?, ?)",
                arguments: [hash.hex, kind.rawValue, project.rawValue, nowMillis])
            return true
        }
    }

    public func setAdminTokenHash(_ hash: SecretHash, at date: Date) async throws {
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM credentials WHERE kind = 'admin'")
            // A new admin token ends every dashboard session made with the old one (people's sessions stay).
            try db.execute(sql: "DELETE FROM admin_sessions WHERE person_id IS NULL")
            try db.execute(
                sql: "INSERT INTO credentials (hash, kind, project_id, created_at) VALUES (?, 'admin', NULL, ?)",
                arguments: [hash.hex, Millis.from(date)])
        }
    }

    public func isAdminTokenHash(_ hash: SecretHash) async throws -> Bool {
        try await database.pool.read { db in try Self.isAdminTokenHash(hash, db) }
    }

    static func isAdminTokenHash(_ hash: SecretHash, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM credentials WHERE hash = ? AND kind = 'admin'", arguments: [hash.hex])
            ?? false
    }

    public func setPrivacy(_ settings: PrivacySettings, for project: ProjectID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE projects SET scrubbing = ?, keep_ip_addresses = ?, safe_fields = ?, sensitive_fields = ?,
                        mask_emails_and_phones = ?
                    WHERE id = ?
                    """,
                arguments: [
                    settings.scrubbing, settings.keepIPAddresses, StoredList.encode(settings.safeFields),
                    StoredList.encode(settings.sensitiveFields), settings.maskEmailsAndPhones, project.rawValue,
                ])
            return db.changesCount > 0
        }
    }

    public func setInAppRules(_ rules: InAppRules, for project: ProjectID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE projects SET in_app_include = ?, in_app_exclude = ? WHERE id = ?",
                arguments: [StoredList.encode(rules.include), StoredList.encode(rules.exclude), project.rawValue])
            return db.changesCount > 0
        }
    }

    public func setMinidumpRetention(_ retention: MinidumpRetention, for project: ProjectID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE projects SET minidump_retention = ? WHERE id = ?",
                arguments: [retention.rawValue, project.rawValue])
            return db.changesCount > 0
        }
    }

    public func setCrashFreeTargets(_ targets: CrashFreeTargets, for project: ProjectID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE projects SET crash_free_users_target = ?, crash_free_sessions_target = ? WHERE id = ?",
                arguments: [targets.users, targets.sessions, project.rawValue])
            return db.changesCount > 0
        }
    }

    public func setEventQuotas(_ quotas: EventQuotas, for project: ProjectID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE projects SET quota_per_minute = ?, quota_per_hour = ?, quota_per_month = ? WHERE id = ?",
                arguments: [quotas.perMinute, quotas.perHour, quotas.perMonth, project.rawValue])
            return db.changesCount > 0
        }
    }

    public func setTracker(_ tracker: IssueTracker?, for project: ProjectID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE projects SET tracker_kind = ?, tracker_url = ? WHERE id = ?",
                arguments: [tracker?.kind.rawValue, tracker?.url, project.rawValue])
            return db.changesCount > 0
        }
    }

    /// In-app patterns as stored (a JSON array of strings).
    static func patterns(_ text: String?) -> [String] { StoredList.decode(text) }

    /// The columns `project(_:)` reads (the `projects` table is aliased `p` where it is joined).
    static let columns =
        "projects.id, projects.slug, projects.created_at, projects.rate_limit_per_second, projects.scrubbing, "
        + "projects.keep_ip_addresses, projects.safe_fields, projects.sensitive_fields, projects.in_app_include, "
        + "projects.in_app_exclude, projects.mask_emails_and_phones, projects.identity_key, projects.minidump_retention, "
        + "projects.crash_free_users_target, projects.crash_free_sessions_target, "
        + "projects.quota_per_minute, projects.quota_per_hour, projects.quota_per_month, "
        + "projects.tracker_kind, projects.tracker_url"

    static func project(_ row: Row) -> Project? {
        guard let slug = ProjectSlug(row["slug"]) else { return nil }
        let privacy = PrivacySettings(
            scrubbing: row["scrubbing"], safeFields: StoredList.decode(row["safe_fields"]),
            sensitiveFields: StoredList.decode(row["sensitive_fields"]), keepIPAddresses: row["keep_ip_addresses"],
            maskEmailsAndPhones: row["mask_emails_and_phones"])
        var project = Project(
            id: ProjectID(row["id"]), slug: slug, createdAt: Millis.date(row["created_at"]),
            rateLimitPerSecond: row["rate_limit_per_second"], privacy: privacy,
            inApp: InAppRules(
                include: StoredList.decode(row["in_app_include"]), exclude: StoredList.decode(row["in_app_exclude"])),
            identityKey: (row["identity_key"] as Data?).map { Array($0) } ?? [],
            minidumps: MinidumpRetention(rawValue: row["minidump_retention"]) ?? .untilProcessed,
            targets: CrashFreeTargets(
                users: row["crash_free_users_target"], sessions: row["crash_free_sessions_target"]),
            quotas: EventQuotas(
                perMinute: row["quota_per_minute"], perHour: row["quota_per_hour"], perMonth: row["quota_per_month"]))
        if let kind = (row["tracker_kind"] as String?).flatMap(TrackerKind.init(rawValue:)),
            let url = row["tracker_url"] as String?
        {
            project.tracker = IssueTracker(kind: kind, url: url)
        }
        return project
    }
}
