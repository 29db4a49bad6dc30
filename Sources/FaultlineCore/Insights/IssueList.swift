/// The order of an issue listing. Every order is total: ties fall back to the next key and last to the issue id
/// (highest first), so pages cut from it with an offset never repeat or skip an issue.
public enum IssueOrder: String, Sendable, CaseIterable {
    /// Most recently seen first, then the highest id.
    case lastSeen = "last-seen"
    /// Most users affected first, then events, last seen, id.
    case users
    /// Most events first, then users, last seen, id.
    case events

    /// Whether `a` comes before `b` in this order (the rule the database's `ORDER BY` follows; fakes and tests use it).
    public func precedes(_ a: IssueSummary, _ b: IssueSummary) -> Bool {
        func byLastSeen() -> Bool { a.lastSeen != b.lastSeen ? a.lastSeen > b.lastSeen : a.id > b.id }
        switch self {
        case .lastSeen:
            return byLastSeen()
        case .users:
            if a.users != b.users { return a.users > b.users }
            if a.events != b.events { return a.events > b.events }
            return byLastSeen()
        case .events:
            if a.events != b.events { return a.events > b.events }
            if a.users != b.users { return a.users > b.users }
            return byLastSeen()
        }
    }
}

/// Which issues a dashboard issue list shows (status, kind, release) and in what order.
///
/// The default (every issue, most recently seen first) is the site's static `issues.html`; every list is also
/// answered live at `/{slug}/list?status=&kind=&sort=&release=&page=` (see ``IssueListRequest``).
public struct IssueListFilter: Hashable, Sendable {
    /// The status filter; `regressed` means issues marked regressed (reopened by an event of a new release),
    /// whatever their status now.
    public enum Status: String, CaseIterable, Sendable {
        case all, open, closed, muted, regressed
    }

    /// The kind filter: every issue, or one ``IssueCategory`` (a hang is never listed with the crashes or non-fatals
    /// it was sent as).
    public enum Kind: String, CaseIterable, Sendable {
        case all, crash, hang
        case nonFatal = "non-fatal"

        /// The category listed (nil: every one).
        public var category: IssueCategory? {
            switch self {
            case .all: nil
            case .crash: .crash
            case .hang: .hang
            case .nonFatal: .nonFatal
            }
        }

        /// The filter that lists `category` alone.
        public init(_ category: IssueCategory) {
            switch category {
            case .crash: self = .crash
            case .hang: self = .hang
            case .nonFatal: self = .nonFatal
            }
        }
    }

    public var status: Status
    public var kind: Kind
    public var sort: IssueOrder
    /// Only the issues seen in this release (counts and order then use the release's own events and users).
    public var release: String?

    /// Longest release accepted in a filter, in UTF-8 bytes (a stored release is at most a 1 KB version and a 1 KB
    /// build; a longer value cannot name one).
    public static let maxReleaseBytes = 4096

    /// - Parameters: see the properties; the defaults are the site's `issues.html`.
    public init(status: Status = .all, kind: Kind = .all, sort: IssueOrder = .lastSeen, release: String? = nil) {
        self.status = status
        self.kind = kind
        self.sort = sort
        self.release = release
    }

    /// True for the list of `issues.html`: every issue, most recently seen first.
    public var isDefault: Bool { self == IssueListFilter() }

    /// The storage query for `limit` issues of this list from `offset` on.
    public func query(project: ProjectID, offset: Int, limit: Int) -> IssueQuery {
        var query = IssueQuery(
            project: project, release: release, category: kind.category, order: sort, offset: offset, limit: limit)
        switch status {
        case .all: break
        case .open: query.status = .open
        case .closed: query.status = .closed
        case .muted: query.status = .muted
        case .regressed: query.regressed = true
        }
        return query
    }

    /// Whether the list shows `issue` (the rule the storage query follows; release membership is not known here).
    public func includes(_ issue: IssueSummary) -> Bool {
        if let category = kind.category, issue.category != category { return false }
        switch status {
        case .all: return true
        case .open: return issue.status == .open
        case .closed: return issue.status == .closed
        case .muted: return issue.status == .muted
        case .regressed: return issue.signals.regressed
        }
    }

    /// What the list is called, e.g. "Open crashes in release 2.0, most users affected first".
    public var caption: String {
        let noun: String
        switch kind {
        case .all: noun = "issues"
        case .crash: noun = "crashes"
        case .hang: noun = "hangs and ANRs"
        case .nonFatal: noun = "non-fatal issues"
        }
        var what: String
        switch status {
        case .all: what = noun.prefix(1).uppercased() + noun.dropFirst()
        case .open: what = "Open \(noun)"
        case .closed: what = "Closed \(noun)"
        case .muted: what = "Muted \(noun)"
        case .regressed: what = "Regressed \(noun)"
        }
        if let release { what += " in release \(release)" }
        switch sort {
        case .lastSeen: return what + ", most recently seen first"
        case .users: return what + ", most users affected first"
        case .events: return what + ", most events first"
        }
    }

    /// The query string of page `page` of this list (`status=open&sort=users&page=2`): only values that differ from
    /// the defaults, in a fixed order, percent-encoded; empty for the first page of the default list.
    public func queryString(page: Int = 1) -> String {
        var items: [String] = []
        if status != .all { items.append("status=" + status.rawValue) }
        if kind != .all { items.append("kind=" + kind.rawValue) }
        if sort != .lastSeen { items.append("sort=" + sort.rawValue) }
        if let release { items.append("release=" + Self.percentEncoded(release)) }
        if page > 1 { items.append("page=\(page)") }
        return items.joined(separator: "&")
    }

    /// `text` with every byte but the unreserved characters (`A–Z a–z 0–9 - . _ ~`) as `%XX`.
    public static func percentEncoded(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                out.append("%")
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }
}

/// One page of one issue list, as asked for in a query string.
public struct IssueListRequest: Hashable, Sendable {
    public var filter: IssueListFilter
    /// The page, from 1.
    public var page: Int

    /// Highest page number accepted (a million issues at 100 a page are 10,000 pages).
    public static let maxPage = 1_000_000

    public init(filter: IssueListFilter = IssueListFilter(), page: Int = 1) {
        self.filter = filter
        self.page = page
    }

    /// Reads `status`, `kind`, `sort`, `release` and `page` from a query's parameters (already percent-decoded).
    /// Missing or empty values mean the default; other parameters are ignored.
    ///
    /// - Throws: ``IssueListRequestError`` naming the parameter and what it accepts.
    public init(parameters: [String: String]) throws(IssueListRequestError) {
        func value(_ name: String) -> String? {
            guard let raw = parameters[name], !raw.isEmpty else { return nil }
            return raw
        }
        var filter = IssueListFilter()
        if let raw = value("status") {
            guard let status = IssueListFilter.Status(rawValue: raw) else {
                throw IssueListRequestError(field: "status", message: "must be all, open, closed, muted or regressed")
            }
            filter.status = status
        }
        if let raw = value("kind") {
            guard let kind = IssueListFilter.Kind(rawValue: raw) else {
                throw IssueListRequestError(field: "kind", message: "must be all, crash, hang or non-fatal")
            }
            filter.kind = kind
        }
        if let raw = value("sort") {
            guard let sort = IssueOrder(rawValue: raw) else {
                throw IssueListRequestError(field: "sort", message: "must be last-seen, users or events")
            }
            filter.sort = sort
        }
        if let release = value("release") {
            guard release.utf8.count <= IssueListFilter.maxReleaseBytes else {
                throw IssueListRequestError(
                    field: "release", message: "a release has at most \(IssueListFilter.maxReleaseBytes) bytes")
            }
            guard !release.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
                throw IssueListRequestError(field: "release", message: "a release holds no control characters")
            }
            // One release, however it is written (`ReleaseName`): `2.0 (1)` lists release 2.0.
            filter.release = release.isEmpty ? release : ReleaseName.release(of: release)
        }
        var page = 1
        if let raw = value("page") {
            // Digits only (no sign, no spaces), at most 7 of them: no conversion can overflow.
            guard raw.utf8.count <= 7, raw.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let number = Int(raw), number >= 1, number <= Self.maxPage
            else {
                throw IssueListRequestError(field: "page", message: "must be a page number from 1 to \(Self.maxPage)")
            }
            page = number
        }
        self.init(filter: filter, page: page)
    }
}

/// Why a request's value was refused: the field (a query parameter, a setting) and what it accepts, for a 400 that
/// names both. Nothing was stored.
public struct FieldRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var message: String
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
    public var description: String { "\(field): \(message)" }
}

/// Why a list's query string was refused: the parameter and what it accepts.
public typealias IssueListRequestError = FieldRefusal

/// Where a page falls in a list of `total` issues cut into pages of `perPage`.
public struct IssueListPaging: Equatable, Sendable {
    /// Issues in the whole list.
    public var total: Int
    public var perPage: Int
    /// The page asked for, from 1 (may be past the end).
    public var page: Int

    /// - Parameters: negative totals count as 0, a page size below 1 as 1, a page below 1 as 1.
    public init(total: Int, perPage: Int, page: Int) {
        self.total = max(0, total)
        self.perPage = max(1, perPage)
        self.page = max(1, page)
    }

    /// Pages of the list; an empty list has one (empty) page.
    public var pageCount: Int { total == 0 ? 1 : (total - 1) / perPage + 1 }

    /// The page lies after the last one (a bookmark of a list that has since shrunk).
    public var isPastEnd: Bool { page > pageCount }

    /// Issues before this page; nil when the page is past the end (then no read is needed).
    public var offset: Int? {
        guard !isPastEnd else { return nil }
        let (skip, overflow) = (page - 1).multipliedReportingOverflow(by: perPage)
        return overflow ? nil : skip
    }

}
