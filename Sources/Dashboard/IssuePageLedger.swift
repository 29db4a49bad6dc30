import FaultlineCore
import Synchronization

/// Which version of its issue (``IssueVersion``) each issue page in the site folder was rendered from, so that a
/// page is rendered again only when its issue changed: by the render cycle (which skips pages still current) and
/// when the page is asked for (``SiteRenderer/refreshIssuePage(_:of:sources:now:ledger:pageExists:write:)``).
///
/// Kept in memory for the site folder of one server, and read back from the pages themselves: every issue page ends
/// with a mark of its renderer and of the version it was made from (``IssuePageMark``), so after a restart a page
/// this ledger does not know yet is looked up once in its file (`pageTail`) instead of being rendered again. A
/// render records the version it read in the same database read as the page's data, after the page is written; a
/// version read earlier than newer content only makes the page look older than it is (rendered once more), never
/// newer.
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
    private let marksRead = Atomic<Int>(0)
    private let notice = Atomic<Bool>(false)
    private let pageTail: @Sendable (String) -> [UInt8]?

    /// - Parameter pageTail: the last ``markBytes`` bytes (fewer in a shorter file) of the site folder's file at a
    ///   relative path, nil when there is no such file: where a page this ledger does not know is looked up. The
    ///   default knows no file, so every page not rendered through this ledger is rendered again.
    public init(pageTail: @escaping @Sendable (String) -> [UInt8]? = { _ in nil }) {
        self.pageTail = pageTail
    }

    /// How many bytes at a page file's end the `pageTail` reader must give.
    public static var markBytes: Int { IssuePageMark.tailBytes }

    /// How many issue pages were rendered through this ledger (cycle, requests and dashboard actions together).
    public var issuePagesRendered: Int { renders.load(ordering: .relaxed) }

    /// How many pages this ledger learned from their files' marks (pages rendered before it existed, by a renderer
    /// with the same stamp).
    public var issuePagesReadBack: Int { marksRead.load(ordering: .relaxed) }

    /// Whether the page at `path` was rendered from `entry` by a renderer stamped `stamp`: what this ledger
    /// recorded, else what the page file's mark says (remembered from then on; another renderer's mark, or none, is
    /// not current).
    func isCurrent(_ path: String, _ entry: Entry, stamp: String) -> Bool {
        if let known = pages.withLock({ $0[path] }) { return known == entry }
        guard let tail = pageTail(path), let mark = IssuePageMark(tail: tail), mark.stamp == stamp else { return false }
        marksRead.add(1, ordering: .relaxed)
        // A render that recorded the page meanwhile wins: it wrote the file after the read above.
        let found = pages.withLock { pages in
            if let recorded = pages[path] { return recorded }
            pages[path] = mark.entry
            return mark.entry
        }
        return found == entry
    }

    func record(_ path: String, _ entry: Entry) {
        renders.add(1, ordering: .relaxed)
        pages.withLock { $0[path] = entry }
    }

    /// The page at `path` was rendered from no known version (a reader without versions): rendered again when asked.
    func forget(_ path: String) {
        renders.add(1, ordering: .relaxed)
        pages.withLock { $0[path] = nil }
    }

    /// The page at `path` was drawn with the "still being processed" notice: not current (its file has no mark
    /// either), and the render after the backlog is gone must draw every issue page again (``takeNoticeDrawn()``).
    func drewNotice(_ path: String) {
        forget(path)
        notice.store(true, ordering: .releasing)
    }

    /// Whether an issue page was drawn with the "still being processed" notice since the last call: the next render
    /// without it then renders every issue page (an incremental render would leave the notice on pages whose issue
    /// does not change again).
    public func takeNoticeDrawn() -> Bool {
        notice.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// Says again that pages drawn with the notice are still there (a full render that was cut short).
    public func keepNoticeDrawn() {
        notice.store(true, ordering: .releasing)
    }

    func releaseNames(_ project: ProjectID) -> Set<String>? {
        releases.withLock { $0[project] }
    }

    func setReleaseNames(_ names: Set<String>, of project: ProjectID) {
        releases.withLock { $0[project] = names }
    }
}
