/// The issue trackers a project can name: each issue page then links to a prefilled new issue there.
public enum TrackerKind: String, Sendable, CaseIterable {
    case github, gitlab, gitea, jira
}

/// A project's issue tracker: its kind and where it is.
///
/// For GitHub, GitLab and Gitea, `url` is the repository (`https://github.com/acme/app`, `https://gitlab.com/acme/app`,
/// `https://git.acme.dev/acme/app`); for Jira, the server's base URL with the project and issue type the new issue
/// opens in (`https://acme.atlassian.net?pid=10000&issuetype=10004`), which Jira's create screen needs.
public struct IssueTracker: Sendable, Equatable {
    public var kind: TrackerKind
    public var url: String

    /// A tracker whose URL was checked by ``TrackerURL/validated(_:field:)`` and, for Jira, carries `pid` and
    /// `issuetype`; throws naming what is wrong otherwise.
    public static func validated(kind: TrackerKind, url text: String) throws(TrackerURLError) -> IssueTracker {
        guard var url = try TrackerURL.validated(text, field: "tracker_url") else {
            throw TrackerURLError(field: "tracker_url", problem: "is empty")
        }
        let query = url.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init)
        if kind == .jira {
            let names = Set((query ?? "").split(separator: "&").compactMap { $0.split(separator: "=").first })
            guard names.contains("pid"), names.contains("issuetype") else {
                throw TrackerURLError(
                    field: "tracker_url",
                    problem:
                        "of a Jira tracker names the project and issue type: https://jira.example.com?pid=10000&issuetype=10004"
                )
            }
        } else {
            guard query == nil, !url.contains("#") else {
                throw TrackerURLError(field: "tracker_url", problem: "is the repository's address, without ? or #")
            }
            while url.hasSuffix("/") { url.removeLast() }
        }
        return IssueTracker(kind: kind, url: url)
    }

    public init(kind: TrackerKind, url: String) {
        self.kind = kind
        self.url = url
    }
}

/// What a new tracker issue is prefilled with: the Faultline issue's title, culprit, counts, first release, and the
/// address of its page.
public struct TrackerIssueDraft: Sendable, Equatable {
    public var title: String
    public var culprit: String?
    public var events: Int
    public var users: Int
    public var firstRelease: String?
    /// The Faultline issue page's absolute URL (nil when the server does not know its public address).
    public var link: String?
    public init(title: String, culprit: String?, events: Int, users: Int, firstRelease: String?, link: String?) {
        self.title = title
        self.culprit = culprit
        self.events = events
        self.users = users
        self.firstRelease = firstRelease
        self.link = link
    }
}

/// The prefilled new-issue URL of each tracker: pure, so each tracker's parameter names are tested without a network.
///
/// - GitHub: `<repo>/issues/new?title=…&body=…`
/// - GitLab: `<repo>/-/issues/new?issue[title]=…&issue[description]=…`
/// - Gitea: `<repo>/issues/new?title=…&body=…`
/// - Jira: `<base>/secure/CreateIssueDetails!init.jspa?pid=…&issuetype=…&summary=…&description=…`
///
/// Values are percent-encoded (everything but RFC 3986's unreserved characters); the title and culprit are cut so
/// that a URL stays well within what browsers and servers take (about 8 KB).
public enum TrackerLink {
    /// Most characters of the title and of the culprit that go into the URL.
    public static let maxTitle = 200
    public static let maxCulprit = 400

    public static func newIssueURL(_ tracker: IssueTracker, _ draft: TrackerIssueDraft) -> String {
        let title = String(draft.title.prefix(maxTitle))
        let body = description(draft)
        switch tracker.kind {
        case .github, .gitea:
            return tracker.url + "/issues/new?title=" + encode(title) + "&body=" + encode(body)
        case .gitlab:
            return tracker.url + "/-/issues/new?issue[title]=" + encode(title) + "&issue[description]=" + encode(body)
        case .jira:
            let parts = tracker.url.split(separator: "?", maxSplits: 1)
            var base = parts.first.map(String.init) ?? tracker.url
            while base.hasSuffix("/") { base.removeLast() }
            let query = parts.count > 1 ? String(parts[1]) + "&" : ""
            return base + "/secure/CreateIssueDetails!init.jspa?" + query + "summary=" + encode(title)
                + "&description=" + encode(body)
        }
    }

    /// The new issue's text: one fact a line, plain text every tracker shows as written.
    static func description(_ draft: TrackerIssueDraft) -> String {
        var lines: [String] = []
        if let culprit = draft.culprit, !culprit.isEmpty { lines.append("Culprit: " + culprit.prefix(maxCulprit)) }
        lines.append("Events: \(draft.events), users affected: \(draft.users)")
        if let release = draft.firstRelease, !release.isEmpty { lines.append("First release: " + release) }
        if let link = draft.link { lines.append("Faultline issue: " + link) }
        return lines.joined(separator: "\n")
    }

    /// `text` percent-encoded as a query value: UTF-8 bytes outside A–Z a–z 0–9 `-._~` as `%XX`.
    public static func encode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Why a tracker URL was refused: the field it came in and what is wrong, for a 400 that names both.
public struct TrackerURLError: Error, Equatable, CustomStringConvertible {
    public var field: String
    public var problem: String
    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }
    public var description: String { "\(field) \(problem)" }
}

/// The checks every tracker URL passes (a project's tracker, an issue's tracker issue): http or https with a host, at
/// most `maxBytes`, no spaces or control characters. They are shown as links on pages, so nothing else (no
/// `javascript:`) may get in.
public enum TrackerURL {
    public static let maxBytes = 2048

    /// The URL to store for `text`, trimmed; nil when it is empty (clearing it); throws naming `field` otherwise.
    public static func validated(_ text: String, field: String) throws(TrackerURLError) -> String? {
        let url = String(text.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
        if url.isEmpty { return nil }
        guard url.utf8.count <= maxBytes else {
            throw TrackerURLError(field: field, problem: "has at most \(maxBytes) bytes")
        }
        guard
            !url.unicodeScalars.contains(where: {
                $0.value <= 0x20 || $0.value == 0x7F || $0 == "\"" || $0 == "<" || $0 == ">"
            })
        else {
            throw TrackerURLError(field: field, problem: "holds spaces, quotes or control characters")
        }
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = url.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            rest = url.dropFirst(7)
        } else {
            throw TrackerURLError(field: field, problem: "must start with http:// or https://")
        }
        let host = rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
        guard !host.isEmpty, !host.hasPrefix(":"), !host.contains("@") else {
            throw TrackerURLError(field: field, problem: "must name a host (and no user or password)")
        }
        return url
    }
}
