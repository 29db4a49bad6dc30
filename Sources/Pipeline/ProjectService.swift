import FaultlineCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Hashes secrets for storage and lookup (SHA-256 in production). Passed in, per the house rules.
public protocol SecretHashing: Sendable {
    func hash(_ secret: String) -> SecretHash
}

/// Makes new random secrets.
public protocol SecretGenerating: Sendable {
    /// `bytes` random bytes as lowercase hex.
    func randomHex(bytes: Int) -> String
}

/// Why a project could not be created.
public struct ProjectError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The slug is one of the server's own top-level names.
        case reservedSlug = "reserved_slug"
        /// A crash-free target is not a percentage from 0 to 100.
        case invalidTarget = "invalid_target"
        /// An event quota is not from 1 to `EventQuotas.maxValue`.
        case invalidQuota = "invalid_quota"
        /// A rotation's grace period for the old ingest key is not from 0 to `KeyRotation.maxKeepOldDays` days.
        case invalidGracePeriod = "invalid_grace_period"
        /// A rotation names a secret that is not a project's (the admin token has its own command).
        case notRotatable = "not_rotatable"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

/// Projects and their credentials: creation, listing, and authentication of presented secrets.
///
/// Authentication is on every ingest request, so successful lookups of project keys and tokens are cached for a
/// minute; a rotated or revoked project secret stops working within that minute. The admin token is not cached
/// (``isAdmin(_:)``).
public final class ProjectService: Sendable {
    let store: any ProjectStore
    let hasher: any SecretHashing
    let generator: any SecretGenerating
    let clock: any WallClock
    let defaultRateLimit: Double
    /// Where settings changes are recorded (``AuditTrail``); nil records nothing (tests of other concerns).
    let audit: (any AuditTrail)?
    let cache = Mutex<[String: (project: Project?, at: Date)]>([:])
    static let cacheSeconds: Double = 60
    /// How long authentication waits for the store before the request is answered `503` (`Deadline`); nil: as long
    /// as it takes (SQLite, in the same process).
    let lookupDeadline: Duration?

    public init(
        store: any ProjectStore, hasher: any SecretHashing, generator: any SecretGenerating,
        clock: any WallClock, defaultRateLimit: Double = 1000, lookupDeadline: Duration? = nil,
        audit: (any AuditTrail)? = nil
    ) {
        self.audit = audit
        self.lookupDeadline = lookupDeadline
        self.store = store
        self.hasher = hasher
        self.generator = generator
        self.clock = clock
        self.defaultRateLimit = defaultRateLimit
    }

    /// Creates a project and returns its secrets (shown once; only their hashes are stored).
    /// - Throws: ``ProjectError`` (`reservedSlug`) for a slug in ``ProjectSlug/reserved``; storage errors (a taken slug).
    public func create(slug: ProjectSlug, rateLimitPerSecond: Double? = nil) async throws -> ProjectCredentials {
        if let problem = ProjectSlug.problemForNewProject(slug.rawValue) { throw ProjectError(.reservedSlug, problem) }
        let ingestKey = generator.randomHex(bytes: 16)
        let uploadToken = "flu_" + generator.randomHex(bytes: 20)
        let project = try await store.createProject(
            slug: slug, ingestKeyHash: hasher.hash(ingestKey), uploadTokenHash: hasher.hash(uploadToken),
            createdAt: clock.now(), rateLimitPerSecond: rateLimitPerSecond ?? defaultRateLimit)
        // Only `faultline projects create` makes projects: the CLI on the data folder.
        try await audit?.record(
            AuditEntry(
                project: project.id, at: clock.now(), origin: .cli, kind: .projectCreated, subject: slug.rawValue))
        return ProjectCredentials(project: project, ingestKey: ingestKey, uploadToken: uploadToken)
    }

    /// Replaces the admin token with a new one and returns it (shown once).
    public func rotateAdminToken() async throws -> String {
        let token = "fla_" + generator.randomHex(bytes: 20)
        try await store.setAdminTokenHash(hasher.hash(token), at: clock.now())
        cache.withLock { $0.removeAll() }
        // Only `faultline admin-token` replaces it: the CLI on the data folder.
        try await audit?.record(
            AuditEntry(
                project: nil, at: clock.now(), origin: .cli, kind: .adminTokenRotated, subject: "the admin token"))
        return token
    }

    /// Replaces a project's ingest key or upload token and returns the new one (shown once; only its hash is stored);
    /// nil when there is no such project.
    ///
    /// The old upload token is refused at once (CI reads its token from a secret the team changes in one place). The
    /// old ingest key stays accepted for `keepOldDays` days (0: refused at once): apps shipped with the old DSN keep
    /// reporting until the team ships the new one, as Sentry's several client keys allow. A key already on its way
    /// out keeps its earlier end. This process refuses an old secret at once when it is cut; another running server
    /// within its authentication cache's minute. The audit entry names the project and the old key's end, never a
    /// secret.
    ///
    /// - Throws: `ProjectError` `.notRotatable` for the admin kind, `.invalidGracePeriod` for days outside
    ///   0…`KeyRotation.maxKeepOldDays` (nothing changes).
    public func rotate(
        _ kind: CredentialKind, slug: ProjectSlug, keepOldDays: Int = KeyRotation.defaultKeepOldDays,
        by origin: AuditOrigin
    )
        async throws -> CredentialRotation?
    {
        guard kind != .admin else {
            throw ProjectError(.notRotatable, "the admin token is replaced with `faultline admin-token`")
        }
        guard (0...KeyRotation.maxKeepOldDays).contains(keepOldDays) else {
            throw ProjectError(
                .invalidGracePeriod, "the old key's days must be a whole number from 0 to \(KeyRotation.maxKeepOldDays)"
            )
        }
        guard let project = try await store.project(slug: slug) else { return nil }
        let now = clock.now()
        let days = kind == .ingest ? keepOldDays : 0
        let oldUntil = days > 0 ? now.addingTimeInterval(Double(days) * 86_400) : nil
        let secret = kind == .ingest ? generator.randomHex(bytes: 16) : "flu_" + generator.randomHex(bytes: 20)
        guard
            try await store.replaceCredential(
                kind, of: project.id, with: hasher.hash(secret), oldAcceptedUntil: oldUntil, at: now)
        else { return nil }
        cache.withLock { $0.removeAll() }
        try await audit?.record(
            AuditEntry(
                project: project.id, at: now, origin: origin,
                kind: kind == .ingest ? .projectIngestKeyRotated : .projectUploadTokenRotated,
                subject: project.slug.rawValue,
                after: oldUntil.map { "old key accepted until \($0.formatted(.iso8601))" } ?? "old key refused at once")
        )
        return CredentialRotation(project: project, kind: kind, secret: secret, oldAcceptedUntil: oldUntil)
    }

    public func all() async throws -> [Project] { try await store.allProjects() }

    public func project(slug: ProjectSlug) async throws -> Project? { try await store.project(slug: slug) }

    /// Replaces a project's privacy settings; nil when there is no such project. A running server sees the
    /// change within `cacheSeconds` (its authentication cache holds the project).
    public func configurePrivacy(
        slug: ProjectSlug, by origin: AuditOrigin, _ change: (inout PrivacySettings) -> Void
    ) async throws -> Project? {
        guard var project = try await store.project(slug: slug) else { return nil }
        let before = AuditText.privacy(project.privacy)
        change(&project.privacy)
        guard try await store.setPrivacy(project.privacy, for: project.id) else { return nil }
        cache.withLock { $0.removeAll() }
        try await recordChange(.projectPrivacy, project, origin, before, AuditText.privacy(project.privacy))
        return project
    }

    /// Replaces a project's in-app rules (which modules are the app's own when grouping); nil when there is no
    /// such project. Reports grouped from then on use them; issues already made are not regrouped.
    public func configureInApp(slug: ProjectSlug, by origin: AuditOrigin, _ change: (inout InAppRules) -> Void)
        async throws -> Project?
    {
        guard var project = try await store.project(slug: slug) else { return nil }
        let before = AuditText.inApp(project.inApp)
        change(&project.inApp)
        guard try await store.setInAppRules(project.inApp, for: project.id) else { return nil }
        cache.withLock { $0.removeAll() }
        try await recordChange(.projectInApp, project, origin, before, AuditText.inApp(project.inApp))
        return project
    }

    /// Sets how long a project keeps its minidumps; nil when there is no such project. Reports saved from then on
    /// follow it: with `.untilProcessed` a dump goes with its report's next final result, with `.retentionPeriod` it
    /// stays until retention prunes it (a dump deleted before does not come back).
    public func configureMinidumps(slug: ProjectSlug, by origin: AuditOrigin, _ retention: MinidumpRetention)
        async throws -> Project?
    {
        guard var project = try await store.project(slug: slug) else { return nil }
        let before = project.minidumps.rawValue
        project.minidumps = retention
        guard try await store.setMinidumpRetention(retention, for: project.id) else { return nil }
        cache.withLock { $0.removeAll() }
        try await recordChange(.projectMinidumps, project, origin, before, retention.rawValue)
        return project
    }

    /// Replaces a project's crash-free targets (what its pages show the rates against); nil when there is no such
    /// project. Pages rendered from then on use them.
    ///
    /// - Throws: `ProjectError` `.invalidTarget` when a target is not a percentage from 0 to 100 (nothing changes).
    public func configureTargets(
        slug: ProjectSlug, by origin: AuditOrigin, _ change: (inout CrashFreeTargets) -> Void
    ) async throws -> Project? {
        guard var project = try await store.project(slug: slug) else { return nil }
        let before = AuditText.targets(project.targets)
        change(&project.targets)
        if let problem = project.targets.problem {
            throw ProjectError(.invalidTarget, "\(problem.field) \(problem.message)")
        }
        guard try await store.setCrashFreeTargets(project.targets, for: project.id) else { return nil }
        cache.withLock { $0.removeAll() }
        try await recordChange(.projectTargets, project, origin, before, AuditText.targets(project.targets))
        return project
    }

    /// Replaces a project's event quotas per minute, hour and month (nil: none); nil when there is no such project.
    /// Ingest applies them within the project cache's lifetime (`cacheSeconds`).
    ///
    /// - Throws: `ProjectError` `.invalidQuota` when a quota is not from 1 to `EventQuotas.maxValue`.
    public func configureQuotas(slug: ProjectSlug, by origin: AuditOrigin, _ change: (inout EventQuotas) -> Void)
        async throws -> Project?
    {
        guard var project = try await store.project(slug: slug) else { return nil }
        let before = AuditText.quotas(project.quotas)
        change(&project.quotas)
        for window in QuotaWindow.allCases {
            if let value = project.quotas[window], let problem = EventQuotas.problem(value) {
                throw ProjectError(.invalidQuota, "the quota per \(window.rawValue) \(problem)")
            }
        }
        guard try await store.setEventQuotas(project.quotas, for: project.id) else { return nil }
        cache.withLock { $0.removeAll() }
        try await recordChange(.projectQuotas, project, origin, before, AuditText.quotas(project.quotas))
        return project
    }

    /// Sets a project's issue tracker (nil removes it); nil when there is no such project. Issue pages rendered from
    /// then on link to a prefilled new issue there.
    ///
    /// - Throws: `TrackerURLError` naming what is wrong with the URL (nothing changes).
    public func configureTracker(slug: ProjectSlug, kind: TrackerKind?, url: String?, by origin: AuditOrigin)
        async throws -> Project?
    {
        guard var project = try await store.project(slug: slug) else { return nil }
        let before = AuditText.tracker(project.tracker)
        if let kind, let url, !url.isEmpty {
            project.tracker = try IssueTracker.validated(kind: kind, url: url)
        } else {
            project.tracker = nil
        }
        guard try await store.setTracker(project.tracker, for: project.id) else { return nil }
        cache.withLock { $0.removeAll() }
        try await recordChange(.projectTracker, project, origin, before, AuditText.tracker(project.tracker))
        return project
    }

    /// Records a settings change of `project` made by `origin` in the audit trail, when the value changed (a form or
    /// command that sets a value to what it was changes nothing and records nothing).
    func recordChange(_ kind: AuditKind, _ project: Project, _ origin: AuditOrigin, _ before: String, _ after: String)
        async throws
    {
        guard before != after, let audit else { return }
        try await audit.record(
            AuditEntry(
                project: project.id, at: clock.now(), origin: origin, kind: kind, subject: project.slug.rawValue,
                before: before, after: after))
    }

    /// The project whose secret of `kind` is `secret` (and still accepted now), or nil.
    public func authenticate(_ secret: String, as kind: CredentialKind) async throws -> Project? {
        let key = kind.rawValue + ":" + secret
        let now = clock.now()
        if let hit = cache.withLock({ $0[key] }), now.timeIntervalSince(hit.at) < Self.cacheSeconds {
            return hit.project
        }
        let (store, hash) = (self.store, hasher.hash(secret))
        let project = try await Deadline.read(within: lookupDeadline) {
            try await store.project(credential: hash, kind: kind, at: now)
        }
        if project != nil { remember(key, project: project, at: now) }
        return project
    }

    /// Whether `secret` is the admin token: asked of the store every time, never cached, so a token that another
    /// process replaced (`faultline admin-token`) stops working at once (its requests are rare: dashboards use
    /// session cookies).
    public func isAdmin(_ secret: String) async throws -> Bool {
        try await store.isAdminTokenHash(hasher.hash(secret))
    }

    func remember(_ key: String, project: Project?, at now: Date) {
        cache.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }  // bounded: a key flood cannot grow it forever
            cache[key] = (project, now)
        }
    }
}

/// A project secret just replaced (``ProjectService/rotate(_:slug:keepOldDays:by:)``).
public struct CredentialRotation: Sendable, Equatable {
    public var project: Project
    public var kind: CredentialKind
    /// The new secret: shown once, only its hash is stored.
    public var secret: String
    /// Until when the old secret is still accepted; nil: it was refused at once.
    public var oldAcceptedUntil: Date?
}
