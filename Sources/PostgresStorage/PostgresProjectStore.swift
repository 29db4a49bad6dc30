import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Projects and credential hashes on PostgreSQL (the SQLite twin: `SQLiteProjectStore`).
public struct PostgresProjectStore: ProjectStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    public func createProject(
        slug: ProjectSlug, ingestKeyHash: SecretHash, uploadTokenHash: SecretHash, createdAt: Date,
        rateLimitPerSecond: Double
    ) async throws -> Project {
        let logger = database.logger
        let created = Millis.from(createdAt)
        do {
            return try await database.write { connection in
                let rows = try await connection.query(
                    """
                    INSERT INTO projects (slug, created_at, rate_limit_per_second)
                    VALUES (\(slug.rawValue), \(created), \(rateLimitPerSecond)) RETURNING id, identity_key
                    """, logger: logger)
                var id: Int64 = 0
                var key = Data()
                for try await (value, identityKey) in rows.decode((Int64, Data).self) {
                    (id, key) = (value, identityKey)
                }
                for (hash, kind) in [(ingestKeyHash, CredentialKind.ingest), (uploadTokenHash, .upload)] {
                    try await connection.query(
                        "INSERT INTO credentials (hash, kind, project_id, created_at) VALUES (\(hash.hex), \(kind.rawValue), \(id), \(created))",
                        logger: logger)
                }
                return Project(
                    id: ProjectID(id), slug: slug, createdAt: createdAt, rateLimitPerSecond: rateLimitPerSecond,
                    identityKey: Array(key))
            }
        } catch  where PostgresErrors.sqlState(error) == PostgresErrors.uniqueViolation {
            throw StorageError(.conflict, "a project with the slug \"\(slug)\" exists already", underlying: error)
        }
    }

    public func allProjects() async throws -> [Project] {
        try await projects(PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM projects ORDER BY id"))
    }

    public func project(slug: ProjectSlug) async throws -> Project? {
        var query = PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM projects WHERE slug = $1")
        query.binds.append(slug.rawValue)
        return try await projects(query).first
    }

    public func project(id: ProjectID) async throws -> Project? {
        var query = PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM projects WHERE id = $1")
        query.binds.append(id.rawValue)
        return try await projects(query).first
    }

    public func project(credential hash: SecretHash, kind: CredentialKind, at now: Date) async throws -> Project? {
        var query = PostgresQuery(
            unsafeSQL: """
                SELECT \(Self.columns) FROM credentials c JOIN projects ON projects.id = c.project_id
                WHERE c.hash = $1 AND c.kind = $2 AND (c.expires_at IS NULL OR c.expires_at > $3)
                """)
        query.binds.append(hash.hex)
        query.binds.append(kind.rawValue)
        query.binds.append(Millis.from(now))
        return try await projects(query).first
    }

    public func replaceCredential(
        _ kind: CredentialKind, of project: ProjectID, with hash: SecretHash, oldAcceptedUntil: Date?, at now: Date
    ) async throws -> Bool {
        let logger = database.logger
        let (id, nowMillis) = (project.rawValue, Millis.from(now))
        return try await database.write { connection in
            // FOR UPDATE: two rotations of one project run one after the other.
            let found = try await PostgresRows.count(
                connection.query("SELECT id FROM projects WHERE id = \(id) FOR UPDATE", logger: logger))
            guard found > 0 else { return false }
            try await connection.query(
                """
                DELETE FROM credentials WHERE project_id = \(id) AND kind = \(kind.rawValue) AND expires_at <= \(nowMillis)
                """, logger: logger)
            if let oldAcceptedUntil, oldAcceptedUntil > now {
                let end = Millis.from(oldAcceptedUntil)
                try await connection.query(
                    """
                    UPDATE credentials SET expires_at = least(coalesce(expires_at, \(end)), \(end))
                    WHERE project_id = \(id) AND kind = \(kind.rawValue)
                    """, logger: logger)
            } else {
                try await connection.query(
                    "DELETE FROM credentials WHERE project_id = \(id) AND kind = \(kind.rawValue)", logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO credentials (hash, kind, project_id, created_at)
                VALUES (\(hash.hex), \(kind.rawValue), \(id), \(nowMillis))
                """, logger: logger)
            return true
        }
    }

    public func setAdminTokenHash(_ hash: SecretHash, at date: Date) async throws {
        let logger = database.logger
        try await database.write { connection in
            try await connection.query("DELETE FROM credentials WHERE kind = 'admin'", logger: logger)
            // A new admin token ends every dashboard session made with the old one (people's sessions stay).
            try await connection.query("DELETE FROM admin_sessions WHERE person_id IS NULL", logger: logger)
            try await connection.query(
                "INSERT INTO credentials (hash, kind, project_id, created_at) VALUES (\(hash.hex), 'admin', NULL, \(Millis.from(date)))",
                logger: logger)
        }
    }

    public func isAdminTokenHash(_ hash: SecretHash) async throws -> Bool {
        let logger = database.logger
        return try await database.read { connection in
            let rows = try await connection.query(
                "SELECT 1 FROM credentials WHERE hash = \(hash.hex) AND kind = 'admin'", logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    public func setPrivacy(_ settings: PrivacySettings, for project: ProjectID) async throws -> Bool {
        let safe = StoredList.encode(settings.safeFields)
        let sensitive = StoredList.encode(settings.sensitiveFields)
        return try await updated(
            """
            UPDATE projects SET scrubbing = \(settings.scrubbing), keep_ip_addresses = \(settings.keepIPAddresses),
                safe_fields = \(safe), sensitive_fields = \(sensitive),
                mask_emails_and_phones = \(settings.maskEmailsAndPhones)
            WHERE id = \(project.rawValue) RETURNING id
            """)
    }

    public func setInAppRules(_ rules: InAppRules, for project: ProjectID) async throws -> Bool {
        let include = StoredList.encode(rules.include)
        let exclude = StoredList.encode(rules.exclude)
        return try await updated(
            "UPDATE projects SET in_app_include = \(include), in_app_exclude = \(exclude) WHERE id = \(project.rawValue) RETURNING id"
        )
    }

    public func setMinidumpRetention(_ retention: MinidumpRetention, for project: ProjectID) async throws -> Bool {
        try await updated(
            "UPDATE projects SET minidump_retention = \(retention.rawValue) WHERE id = \(project.rawValue) RETURNING id"
        )
    }

    public func setCrashFreeTargets(_ targets: CrashFreeTargets, for project: ProjectID) async throws -> Bool {
        try await updated(
            """
            UPDATE projects SET crash_free_users_target = \(targets.users),
                crash_free_sessions_target = \(targets.sessions)
            WHERE id = \(project.rawValue) RETURNING id
            """)
    }

    public func setEventQuotas(_ quotas: EventQuotas, for project: ProjectID) async throws -> Bool {
        try await updated(
            """
            UPDATE projects SET quota_per_minute = \(quotas.perMinute.map(Int64.init)),
                quota_per_hour = \(quotas.perHour.map(Int64.init)), quota_per_month = \(quotas.perMonth.map(Int64.init))
            WHERE id = \(project.rawValue) RETURNING id
            """)
    }

    public func setTracker(_ tracker: IssueTracker?, for project: ProjectID) async throws -> Bool {
        try await updated(
            """
            UPDATE projects SET tracker_kind = \(tracker?.kind.rawValue), tracker_url = \(tracker?.url)
            WHERE id = \(project.rawValue) RETURNING id
            """)
    }

    /// Runs one `UPDATE projects … RETURNING id` of a setting; whether the project exists.
    private func updated(_ query: PostgresQuery) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresRows.count(connection.query(query, logger: logger)) > 0
        }
    }

    private func projects(_ query: PostgresQuery) async throws -> [Project] {
        let logger = database.logger
        return try await database.read { connection in
            var projects: [Project] = []
            let rows = try await connection.query(query, logger: logger)
            for try await row in rows.decode(ProjectColumns.self) {
                if let project = Self.project(row) { projects.append(project) }
            }
            return projects
        }
    }

    typealias ProjectColumns = (
        Int64, String, Int64, Double, Bool, Bool, String, String, String, String, Bool, Data, String, Double, Double,
        Int64?, Int64?, Int64?, String?, String?
    )

    /// The columns `project(_:)` reads, in order.
    static let columns =
        "projects.id, projects.slug, projects.created_at, projects.rate_limit_per_second, projects.scrubbing, "
        + "projects.keep_ip_addresses, projects.safe_fields, projects.sensitive_fields, projects.in_app_include, "
        + "projects.in_app_exclude, projects.mask_emails_and_phones, projects.identity_key, projects.minidump_retention, "
        + "projects.crash_free_users_target, projects.crash_free_sessions_target, "
        + "projects.quota_per_minute, projects.quota_per_hour, projects.quota_per_month, "
        + "projects.tracker_kind, projects.tracker_url"

    static func project(_ row: ProjectColumns) -> Project? {
        guard let slug = ProjectSlug(row.1) else { return nil }
        let privacy = PrivacySettings(
            scrubbing: row.4, safeFields: StoredList.decode(row.6), sensitiveFields: StoredList.decode(row.7),
            keepIPAddresses: row.5,
            maskEmailsAndPhones: row.10)
        var project = Project(
            id: ProjectID(row.0), slug: slug, createdAt: Millis.date(row.2), rateLimitPerSecond: row.3,
            privacy: privacy,
            inApp: InAppRules(include: StoredList.decode(row.8), exclude: StoredList.decode(row.9)),
            identityKey: Array(row.11), minidumps: MinidumpRetention(rawValue: row.12) ?? .untilProcessed,
            targets: CrashFreeTargets(users: row.13, sessions: row.14),
            quotas: EventQuotas(
                perMinute: row.15.flatMap { Int(exactly: $0) }, perHour: row.16.flatMap { Int(exactly: $0) },
                perMonth: row.17.flatMap { Int(exactly: $0) }))
        if let kind = row.18.flatMap(TrackerKind.init(rawValue:)), let url = row.19 {
            project.tracker = IssueTracker(kind: kind, url: url)
        }
        return project
    }
}
