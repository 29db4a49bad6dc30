#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The id of an issue (a group of reports with the same fingerprint).
public struct IssueID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ value: Int64) { self.rawValue = value }
    public var description: String { String(rawValue) }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// A versioned grouping hash: `v<version>:<16 hex digits of FNV-1a 64>`.
///
/// The version is part of the value so that a future grouping algorithm makes new issues instead of
/// silently merging into groups made by the old one.
public struct Fingerprint: Hashable, Sendable, CustomStringConvertible, Codable {
    public let version: Int
    public let hash: String
    public init(version: Int, hash: String) {
        self.version = version
        self.hash = hash
    }
    /// Parses `v1:0123456789abcdef`.
    public init?(_ text: String) {
        guard text.hasPrefix("v"), let colon = text.firstIndex(of: ":"),
            let version = Int(text[text.index(after: text.startIndex)..<colon])
        else { return nil }
        let hash = String(text[text.index(after: colon)...])
        guard hash.count == 16, hash.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        self.version = version
        self.hash = hash
    }
    public var rawValue: String { "v\(version):\(hash)" }
    public var description: String { rawValue }
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let parsed = Fingerprint(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "bad fingerprint"))
        }
        self = parsed
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// Where an issue stands in the team's workflow.
public enum IssueStatus: String, Sendable, Codable, CaseIterable {
    /// Needs attention (new, or regressed).
    case open
    /// Fixed; an event from a release the issue was not seen in reopens it as regressed.
    case closed
    /// Ignored: events still count, but the issue never alerts.
    case muted
}

/// The signals shown next to an issue (definitions in DESIGN.md).
public struct IssueSignals: Sendable, Equatable, Codable {
    /// First seen less than 7 days ago.
    public var fresh: Bool
    /// Reopened because a closed issue came back in a new release.
    public var regressed: Bool
    /// At least one user hit it more than once.
    public var repetitive: Bool
    /// Most of its timed events happened within the first seconds of a session.
    public var early: Bool
    public init(fresh: Bool = false, regressed: Bool = false, repetitive: Bool = false, early: Bool = false) {
        self.fresh = fresh
        self.regressed = regressed
        self.repetitive = repetitive
        self.early = early
    }

    /// How long after first seen an issue stays fresh.
    public static let freshFor: TimeInterval = 7 * 86_400
    /// A crash this many seconds or fewer after its session started is early.
    public static let earlyWithin: TimeInterval = 10

    /// Computes the signals from an issue's counters at `now`.
    ///
    /// - Parameters:
    ///   - earlyEvents: events that happened within `earlyWithin` of their session's start.
    ///   - timedEvents: events whose session start is known (the denominator of "most").
    public static func compute(
        firstSeen: Date, regressed: Bool, repeatUsers: Int, earlyEvents: Int, timedEvents: Int,
        now: Date
    ) -> IssueSignals {
        IssueSignals(
            fresh: now.timeIntervalSince(firstSeen) < freshFor,
            regressed: regressed,
            repetitive: repeatUsers > 0,
            early: timedEvents > 0 && earlyEvents * 2 > timedEvents)
    }

    /// Whether a report `offset` seconds after its session started counts as early.
    public static func isEarly(secondsIntoSession offset: TimeInterval) -> Bool { offset >= 0 && offset <= earlyWithin }

    /// Whether an event at `occurredAt` came early in a session that started at `sessionStartedAt` (milliseconds).
    public static func isEarly(occurredAt: Int64, sessionStartedAt: Int64) -> Bool {
        isEarly(secondsIntoSession: Double(occurredAt &- sessionStartedAt) / 1000)
    }

    /// The names of the signals that are set, in display order.
    public var names: [String] {
        [(fresh, "fresh"), (regressed, "regressed"), (repetitive, "repetitive"), (early, "early")].filter(\.0).map(\.1)
    }
}

/// An issue as lists and pages show it.
public struct IssueSummary: Sendable, Equatable {
    public var id: IssueID
    public var project: ProjectID
    public var kind: ReportKind
    public var fingerprint: Fingerprint
    public var title: String
    /// Where it happens: the top in-app frame, with its source location when known.
    public var culprit: String?
    public var status: IssueStatus
    public var signals: IssueSignals
    public var firstSeen: Date
    public var lastSeen: Date
    public var firstRelease: String?
    public var lastRelease: String?
    public var events: Int
    public var users: Int
    /// The error code all its events share, when it was grouped by error type and code (``GroupingResult/errorCode``):
    /// shown beside the title, since a domain's codes are different problems (`-1001` timed out, `-1009` offline).
    public var errorCode: String?
    /// Whether the issue is a hang or an ANR, as filing decided from its first report (``IssueCategory``).
    public var hang = false
    /// Crash, hang or non-fatal: the kind the lists and top issues keep apart.
    public var category: IssueCategory { IssueCategory.of(kind: kind, hang: hang) }
    public init(
        id: IssueID, project: ProjectID, kind: ReportKind, fingerprint: Fingerprint, title: String, culprit: String?,
        status: IssueStatus, signals: IssueSignals, firstSeen: Date, lastSeen: Date, firstRelease: String?,
        lastRelease: String?, events: Int, users: Int
    ) {
        self.id = id
        self.project = project
        self.kind = kind
        self.fingerprint = fingerprint
        self.title = title
        self.culprit = culprit
        self.status = status
        self.signals = signals
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.firstRelease = firstRelease
        self.lastRelease = lastRelease
        self.events = events
        self.users = users
    }
}

/// Days since 1970-01-01 UTC: the key of every per-day rollup.
public struct DayNumber: RawRepresentable, Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public init(_ date: Date) {
        rawValue = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }
    public var start: Date { Date(timeIntervalSince1970: Double(rawValue) * 86_400) }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public func adding(_ days: Int) -> DayNumber { DayNumber(rawValue: rawValue + days) }
    /// `YYYY-MM-DD` (UTC).
    public var description: String {
        // Civil-from-days (Howard Hinnant's algorithm): no calendar or time-zone database needed.
        let z = rawValue + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
    }
}
