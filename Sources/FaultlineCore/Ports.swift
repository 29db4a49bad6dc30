#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The stored form of an accepted request body: compressed bytes plus how to inflate them.
///
/// Kept so that reports can be reprocessed from exactly what the client sent when the pipeline improves.
public struct StoredPayload: Sendable, Equatable {
    public enum Encoding: String, Sendable, Codable {
        case gzip
        case deflate
    }
    /// The wire format of the inflated bytes, which decides how they are read again.
    public enum Format: String, Sendable, Codable {
        /// Native v1 reports (one or a batch).
        case nativeV1 = "native-v1"
        /// A crash file in its metadata envelope: the Swift runtime's JSON (`swift_crash`), or Apple's own `.ips` or
        /// `.crash` report as a string (`apple_crash`).
        case swiftCrash = "swift-crash"
        /// A Sentry envelope (or a legacy store body); a report's range is its `event` item's JSON.
        case sentryEvent = "sentry-event"
    }
    public var bytes: [UInt8]
    public var encoding: Encoding
    /// Size after inflating.
    public var inflatedSize: Int
    public var format: Format
    public init(bytes: [UInt8], encoding: Encoding, inflatedSize: Int, format: Format = .nativeV1) {
        self.bytes = bytes
        self.encoding = encoding
        self.inflatedSize = inflatedSize
        self.format = format
    }
}

/// A validated report and where its JSON sits in the inflated payload.
public struct PreparedReport: Sendable, Equatable {
    public var report: Report
    public var range: Range<Int>
    public init(report: Report, range: Range<Int>) {
        self.report = report
        self.range = range
    }
}

/// One request's worth of reports, to be committed in one transaction with other requests' work.
public struct ReportBatch: Sendable, Equatable {
    public var project: ProjectID
    public var receivedAt: Date
    public var payload: StoredPayload
    public var reports: [PreparedReport]
    public init(project: ProjectID, receivedAt: Date, payload: StoredPayload, reports: [PreparedReport]) {
        self.project = project
        self.receivedAt = receivedAt
        self.payload = payload
        self.reports = reports
    }
}

/// One request's worth of session updates.
public struct SessionBatch: Sendable, Equatable {
    public var project: ProjectID
    public var receivedAt: Date
    public var updates: [SessionUpdate]
    public init(project: ProjectID, receivedAt: Date, updates: [SessionUpdate]) {
        self.project = project
        self.receivedAt = receivedAt
        self.updates = updates
    }
}

/// Events a client dropped before sending, by reason and category (Sentry's client reports).
public struct DiscardedEvents: Sendable, Equatable {
    public var reason: String
    public var category: String
    public var quantity: Int
    public init(reason: String, category: String, quantity: Int) {
        self.reason = reason
        self.category = category
        self.quantity = quantity
    }
}

/// A file sent with an event (a log, a minidump, a screenshot).
public struct Attachment: Sendable, Equatable {
    public var filename: String
    public var contentType: String?
    /// Sentry's `attachment_type` (`event.attachment`, `event.minidump`, …).
    public var attachmentType: String?
    public var bytes: [UInt8]
    public init(filename: String, contentType: String?, attachmentType: String?, bytes: [UInt8]) {
        self.filename = filename
        self.contentType = contentType
        self.attachmentType = attachmentType
        self.bytes = bytes
    }
}

/// Everything of one Sentry envelope that is stored, committed together: its event (as a one-report batch
/// whose payload is the whole envelope), session updates, client reports and attachments.
public struct EnvelopeWrite: Sendable, Equatable {
    public var project: ProjectID
    public var receivedAt: Date
    public var event: ReportBatch?
    public var sessions: [SessionUpdate]
    public var discarded: [DiscardedEvents]
    /// Attachments of the envelope's event (stored only with an event id).
    public var attachments: [Attachment]
    public var eventID: EventID?
    public init(
        project: ProjectID, receivedAt: Date, event: ReportBatch?, sessions: [SessionUpdate],
        discarded: [DiscardedEvents],
        attachments: [Attachment], eventID: EventID?
    ) {
        self.project = project
        self.receivedAt = receivedAt
        self.event = event
        self.sessions = sessions
        self.discarded = discarded
        self.attachments = attachments
        self.eventID = eventID
    }
}

/// A unit of ingest work; many are committed together (group commit).
public enum IngestWrite: Sendable, Equatable {
    case reports(ReportBatch)
    case sessions(SessionBatch)
    case envelope(EnvelopeWrite)
}

/// What committing one `IngestWrite` did.
public enum IngestOutcome: Sendable, Equatable {
    /// Newly stored event ids, and ids that were already stored (retries), in request order.
    case reports(stored: [EventID], duplicates: [EventID])
    /// Updates that changed a session, and updates that changed nothing (retries, stale, after the end).
    case sessions(applied: Int, unchanged: Int)
    /// What an envelope stored: its event (new or duplicate), sessions applied, attachments kept.
    case envelope(stored: [EventID], duplicates: [EventID], sessionsApplied: Int, attachments: Int)
    /// The write alone was refused by storage (the rest of its group still committed).
    case failed(String)
}

/// Durable storage of ingested work. Implementations commit all `writes` in one transaction and
/// return only after the commit is durable; on error nothing of `writes` is stored.
public protocol IngestStore: Sendable {
    func commit(_ writes: [IngestWrite]) async throws -> [IngestOutcome]
}

/// The minidumps stored with events (their `event.minidump` attachments), which the symbolication worker walks.
public protocol MinidumpStore: Sendable {
    /// The dump stored with event `eventID` of `project` (the first when there are several); nil when none is
    /// stored (never sent, or pruned).
    func minidump(eventID: EventID, project: ProjectID) async throws -> [UInt8]?
    /// Bytes of the minidumps `project` stores now: part of its quota use (`DebugFileStore.bytesUsed` counts them with
    /// its debug files). A sum over a partial index of the project's dumps, never a scan of all attachments.
    func minidumpBytes(project: ProjectID) async throws -> UInt64
}

/// Projects and the hashes of their secrets.
public protocol ProjectStore: Sendable {
    /// Creates a project; throws if the slug is taken.
    func createProject(
        slug: ProjectSlug, ingestKeyHash: SecretHash, uploadTokenHash: SecretHash, createdAt: Date,
        rateLimitPerSecond: Double
    ) async throws -> Project
    func allProjects() async throws -> [Project]
    func project(slug: ProjectSlug) async throws -> Project?
    func project(id: ProjectID) async throws -> Project?
    /// The project whose secret of `kind` hashes to `hash`, when that secret is still accepted at `now` (an old ingest
    /// key kept after a rotation is refused from its end on).
    func project(credential hash: SecretHash, kind: CredentialKind, at now: Date) async throws -> Project?
    /// Replaces a project's secret of `kind` with the one hashing to `hash`, in one transaction; false when there is no
    /// such project. The project's secrets of that kind stay accepted until `oldAcceptedUntil` (never past an end one
    /// already had); nil, or a time not after `now`, removes them at once. Old secrets whose end has passed go.
    func replaceCredential(
        _ kind: CredentialKind, of project: ProjectID, with hash: SecretHash, oldAcceptedUntil: Date?, at now: Date
    ) async throws -> Bool
    /// Replaces the admin token hash.
    func setAdminTokenHash(_ hash: SecretHash, at date: Date) async throws
    func isAdminTokenHash(_ hash: SecretHash) async throws -> Bool
    /// Replaces a project's privacy settings; false when there is no such project.
    func setPrivacy(_ settings: PrivacySettings, for project: ProjectID) async throws -> Bool
    /// Replaces a project's in-app rules (grouping); false when there is no such project.
    func setInAppRules(_ rules: InAppRules, for project: ProjectID) async throws -> Bool
    /// Replaces how long a project keeps its minidumps; false when there is no such project. Dumps stored before are
    /// kept or deleted by the new setting from their next save on (a dump already deleted does not come back).
    func setMinidumpRetention(_ retention: MinidumpRetention, for project: ProjectID) async throws -> Bool
    /// Replaces a project's crash-free targets (each checked by `CrashFreeTargets.problem` first; the database refuses
    /// a value outside 0…100 too); false when there is no such project.
    func setCrashFreeTargets(_ targets: CrashFreeTargets, for project: ProjectID) async throws -> Bool
    /// Replaces a project's issue tracker (checked by `IssueTracker.validated` first; nil removes it); false when there
    /// is no such project.
    func setTracker(_ tracker: IssueTracker?, for project: ProjectID) async throws -> Bool
    /// Replaces a project's event quotas (each checked by `EventQuotas.problem` first; the database refuses a value
    /// below 1 too); false when there is no such project.
    func setEventQuotas(_ quotas: EventQuotas, for project: ProjectID) async throws -> Bool
}

/// A stored report as the read API returns it: the report re-read from its raw payload plus what
/// the server recorded about it.
public struct StoredReport: Sendable, Equatable {
    public var project: ProjectID
    public var report: Report
    public var receivedAt: Date
    /// The issue the report is grouped into; nil until it is grouped.
    public var issue: IssueID?
    public init(project: ProjectID, report: Report, receivedAt: Date, issue: IssueID? = nil) {
        self.project = project
        self.report = report
        self.receivedAt = receivedAt
        self.issue = issue
    }
}

/// One row of a report listing.
public struct ReportSummary: Sendable, Equatable {
    public var cursor: Int64
    public var project: ProjectID
    public var eventID: EventID
    public var kind: ReportKind
    public var timestamp: Date
    public var receivedAt: Date
    public var release: String?
    public var environment: String?
    public var userKey: String?
    public var errorType: String?
    public var errorMessage: String?
    public var trimmed: TrimCounts
    /// The issue the report is grouped into; nil until the grouping worker has seen it.
    public var issue: IssueID?
    public init(
        cursor: Int64, project: ProjectID, eventID: EventID, kind: ReportKind, timestamp: Date, receivedAt: Date,
        release: String?, environment: String?, userKey: String?, errorType: String?, errorMessage: String?,
        trimmed: TrimCounts, issue: IssueID? = nil
    ) {
        self.issue = issue
        self.cursor = cursor
        self.project = project
        self.eventID = eventID
        self.kind = kind
        self.timestamp = timestamp
        self.receivedAt = receivedAt
        self.release = release
        self.environment = environment
        self.userKey = userKey
        self.errorType = errorType
        self.errorMessage = errorMessage
        self.trimmed = trimmed
    }
}

/// Filters of a report listing. `project == nil` lists every project (admin only).
public struct ReportQuery: Sendable, Equatable {
    public var project: ProjectID?
    public var kind: ReportKind?
    public var release: String?
    public var since: Date?
    /// Only the reports grouped into this issue.
    public var issue: IssueID?
    /// Return rows older than this cursor (keyset paging, newest first).
    public var before: Int64?
    /// Return rows newer than this cursor, oldest first (keyset paging the other way: an event page's "newer" and,
    /// with 0, "oldest" links). Nil lists newest first.
    public var after: Int64?
    public var limit: Int
    public init(
        project: ProjectID?, kind: ReportKind? = nil, release: String? = nil, since: Date? = nil,
        issue: IssueID? = nil, before: Int64? = nil, after: Int64? = nil, limit: Int = 50
    ) {
        self.after = after
        self.issue = issue
        self.project = project
        self.kind = kind
        self.release = release
        self.since = since
        self.before = before
        self.limit = limit
    }
}

/// A stored report's raw bytes and the row that points into them.
public struct RawReport: Sendable, Equatable {
    public var summary: ReportSummary
    public var payload: StoredPayload
    public var range: Range<Int>
    public init(summary: ReportSummary, payload: StoredPayload, range: Range<Int>) {
        self.summary = summary
        self.payload = payload
        self.range = range
    }
}

/// Reads of stored reports.
public protocol ReportReader: Sendable {
    /// Summaries matching `query`, newest (highest cursor) first, at most `query.limit`.
    func reports(matching query: ReportQuery) async throws -> [ReportSummary]
    /// The raw report with `eventID`, limited to `project` when given.
    func rawReport(eventID: EventID, project: ProjectID?) async throws -> RawReport?
    /// The project an issue belongs to; nil when there is no such issue. Read routes use it to answer 404 for
    /// another project's issue before listing anything.
    func project(ofIssue issue: IssueID) async throws -> ProjectID?
}

/// Reads of stored sessions.
public protocol SessionReader: Sendable {
    func session(project: ProjectID, id: SessionID) async throws -> SessionState?
}

/// A source of wall-clock time, passed in so that tests control it.
public protocol WallClock: Sendable {
    func now() -> Date
}
