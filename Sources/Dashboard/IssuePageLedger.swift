import FaultlineCore
import Synchronization

/// Which version of its issue (``IssueVersion``) each issue page in the site folder was rendered from, so that a
/// page is rendered again only when its issue changed: by the render cycle (which skips pages still current) and
/// when the page is asked for (``SiteRenderer/refreshIssuePage(_:of:sources:now:ledger:pageExists:write:)``).
///
/// Kept in memory for the site folder of one server: after a restart nothing is known, so the first render (a
/// full one) and the first request of each page render it once more. A render records the version it read in the
/// same database read as the page's data, after the page is written; a version read earlier than newer content
/// only makes the page look older than it is (rendered once more), never newer.
public final class IssuePageLedger: Sendable {
    /// What a page was rendered from.
    enum Entry: Equatable {
        case page(IssueVersion)
        /// The "no longer exists" page.
        case gone
    }

    private let pages = Mutex<[String: Entry]>([:])
    /// The release names each project's last summary render linked to (issue pages link those only).
    private let releases = Mutex<[ProjectID: Set<String>]>([:])
    private let renders = Atomic<Int>(0)

    public init() {}

    /// How many issue pages were rendered through this ledger (cycle, requests and dashboard actions together).
    public var issuePagesRendered: Int { renders.load(ordering: .relaxed) }

    /// Records that the site's pages of these issues of project `slug` were rendered from these versions, without
    /// rendering them: for a tool that knows its site folder is current (the aggregation benchmark, whose every
    /// step is a new process over a site the previous step rendered). A wrong claim shows stale pages.
    public func adopt(_ versions: [IssueID: IssueVersion], of slug: ProjectSlug) {
        pages.withLock { pages in
            for (id, version) in versions { pages[SitePaths.issue(slug, id)] = .page(version) }
        }
    }

    func isCurrent(_ path: String, _ entry: Entry) -> Bool {
        pages.withLock { $0[path] == entry }
    }

    func knows(_ path: String) -> Bool {
        pages.withLock { $0[path] != nil }
    }

    func record(_ path: String, _ entry: Entry) {
        renders.add(1, ordering: .relaxed)
        pages.withLock { $0[path] = entry }
    }

    func forget(_ path: String) {
        renders.add(1, ordering: .relaxed)
        pages.withLock { $0[path] = nil }
    }

    func releaseNames(_ project: ProjectID) -> Set<String>? {
        releases.withLock { $0[project] }
    }

    func setReleaseNames(_ names: Set<String>, of project: ProjectID) {
        releases.withLock { $0[project] = names }
    }
}
