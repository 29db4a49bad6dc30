import FaultlineCore

/// Where each page of the site lives, relative to the site folder, and how pages link to each other.
///
/// Every link is relative, so the site works under any base path and opened from a `file://` export. Names come
/// only from validated values (slugs, numeric issue ids) or from a hash (release strings are arbitrary, so a
/// release page is named by the FNV-1a of the release, never by the release itself).
public enum SitePaths {
    /// The stylesheet, at the site root.
    public static let stylesheet = "style.css"
    /// The list of projects.
    public static let index = "index.html"

    /// A project's overview: `<slug>/index.html`.
    public static func overview(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/index.html" }
    /// `<slug>/issues.html`.
    public static func issues(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/issues.html" }
    /// `<slug>/list`: the issue lists the server answers live (`list?status=&kind=&sort=&release=&page=`), in the
    /// project's folder so that they share the relative links of the site's pages.
    public static func issueList(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/list" }
    /// `<slug>/issues/<id>/status`: where a status form posts.
    public static func issueStatusAction(_ slug: ProjectSlug, _ id: IssueID) -> String {
        "\(slug.rawValue)/issues/\(id.rawValue)/status"
    }
    /// `<slug>/issues/merge`: where an issue list's merge form posts.
    public static func issueMergeAction(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/issues/merge" }
    /// `<slug>/issues/<id>.html`.
    public static func issue(_ slug: ProjectSlug, _ id: IssueID) -> String {
        "\(slug.rawValue)/issues/\(id.rawValue).html"
    }
    /// `<slug>/releases.html`.
    public static func releases(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/releases.html" }
    /// `<slug>/releases/<16 hex digits>.html`.
    public static func release(_ slug: ProjectSlug, _ release: String) -> String {
        "\(slug.rawValue)/releases/\(releaseFileName(release))"
    }
    /// `<slug>/alerts.html`.
    public static func alerts(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/alerts.html" }
    /// `<slug>/missing-debug-files.html`.
    public static func missingDebugFiles(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/missing-debug-files.html" }

    /// `account`: the signed-in person's page, served by the server (not a file).
    public static let account = "account"
    /// `logout`: where the sign-out form posts (served by the server).
    public static let logout = "logout"
    /// `<slug>/search`: the search page, served by the server (not a file; `?q=` is the query).
    public static func search(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/search" }
    /// `<slug>/settings`: the project's settings page (people, alerts, targets, privacy, the audit trail), served by
    /// the server (not a file).
    public static func settings(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/settings" }
    /// `<slug>/settings/grouping`: the fingerprint rules, their dry run and the regroup's progress, served by the
    /// server (not a file), one level below the project's settings page (`<slug>/settings`).
    public static func groupingSettings(_ slug: ProjectSlug) -> String { "\(slug.rawValue)/settings/grouping" }
    /// `<slug>/events/<32 hex digits>`: one stored report, served by the server (not a file).
    public static func event(_ slug: ProjectSlug, _ id: EventID) -> String { "\(slug.rawValue)/events/\(id.rawValue)" }

    /// The file name of a release's page: 16 hex digits of FNV-1a 64 of the release string, then `.html`.
    public static func releaseFileName(_ release: String) -> String { FNV1a.hex64(release) + ".html" }

    /// The link from the page at `from` to the page at `to`, both relative to the site root
    /// (`relative(from: "a/issues/1.html", to: "a/index.html") == "../index.html"`).
    public static func relative(from: String, to: String) -> String {
        var fromDirs = from.split(separator: "/", omittingEmptySubsequences: false).dropLast()[...]
        var toParts = to.split(separator: "/", omittingEmptySubsequences: false)[...]
        while let a = fromDirs.first, toParts.count > 1, let b = toParts.first, a == b {
            fromDirs = fromDirs.dropFirst()
            toParts = toParts.dropFirst()
        }
        return String(repeating: "../", count: fromDirs.count) + toParts.joined(separator: "/")
    }
}
