#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A project: one app whose reports are collected together.
public struct Project: Sendable, Equatable {
    public var id: ProjectID
    public var slug: ProjectSlug
    public var createdAt: Date
    /// Reports per second the project may post (a token bucket refilled at this rate).
    public var rateLimitPerSecond: Double
    /// What is scrubbed from the project's reports before they are stored (on by default).
    public var privacy: PrivacySettings
    /// Which modules count as the app's own when reports are grouped (beyond the default).
    public var inApp: InAppRules
    /// How long the project's minidumps are kept: until their reports are processed (the default), or for the
    /// retention period, for the team to download.
    public var minidumps: MinidumpRetention
    /// The crash-free users and sessions targets every page shows the project's rates against.
    public var targets: CrashFreeTargets
    /// The project's event quotas per minute, hour and month (none by default); sessions are never under them.
    public var quotas: EventQuotas
    /// The project's issue tracker (nil: none): each issue page links to a prefilled new issue there (`TrackerLink`).
    public var tracker: IssueTracker? = nil
    /// The project's own random key for pseudonymous user ids (`Scrubber.identity`), made by the database when the
    /// project is created; empty when unknown (then an e-mail used as a user id is masked instead).
    public var identityKey: [UInt8]
    public init(
        id: ProjectID, slug: ProjectSlug, createdAt: Date, rateLimitPerSecond: Double,
        privacy: PrivacySettings = PrivacySettings(),
        inApp: InAppRules = .none, identityKey: [UInt8] = [], minidumps: MinidumpRetention = .untilProcessed,
        targets: CrashFreeTargets = CrashFreeTargets(), quotas: EventQuotas = EventQuotas()
    ) {
        self.targets = targets
        self.quotas = quotas
        self.inApp = inApp
        self.minidumps = minidumps
        self.identityKey = identityKey
        self.id = id
        self.slug = slug
        self.createdAt = createdAt
        self.rateLimitPerSecond = rateLimitPerSecond
        self.privacy = privacy
    }
}

/// How long a project keeps the minidumps sent with its crashes (`event.minidump` attachments).
///
/// A dump is raw process memory: stack bytes can hold anything the program had there (keys, tokens, environment
/// strings), even after the edge dropped its Environ stream and scrubbed its command line. So by default a dump is kept
/// only as long as the server needs it: until its report's walked stack is final (no module of the result lacks every
/// debug file, so no late upload can change the walk), then deleted with the result's save. A team that wants to
/// download dumps (to open them in a debugger) keeps them for the retention period instead, as other attachments are.
public enum MinidumpRetention: String, Sendable, CaseIterable {
    /// Deleted once the report's result is saved and final (the default).
    case untilProcessed = "until_processed"
    /// Kept like any attachment, until retention prunes it.
    case retentionPeriod = "retention_period"
}

/// The kinds of secret Faultline hands out. Each is shown once and stored only as a SHA-256 hash.
public enum CredentialKind: String, Sendable, CaseIterable {
    /// Posts reports and sessions (the SDK's key; also the public key of a Sentry DSN).
    case ingest
    /// Uploads debug files and reads the project's reports (CI's token).
    case upload
    /// Reads everything and administers the server.
    case admin
}

/// A secret's stored form: the hex SHA-256 of the secret. Never the secret itself.
public struct SecretHash: Hashable, Sendable, CustomStringConvertible {
    public let hex: String
    public init(hex: String) { self.hex = hex }
    public var description: String { hex }
}

/// The secrets of a newly created project, returned once to the person who created it.
public struct ProjectCredentials: Sendable, Equatable {
    public var project: Project
    public var ingestKey: String
    public var uploadToken: String
    public init(project: Project, ingestKey: String, uploadToken: String) {
        self.project = project
        self.ingestKey = ingestKey
        self.uploadToken = uploadToken
    }
}
