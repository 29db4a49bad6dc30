import FaultlineCore
import Foundation
import Testing

/// The issue lists' pure parts: reading a query string, writing it back, paging, the total orders, and which
/// `back` targets a status form may return to.
@Suite struct IssueListTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func issue(
        _ id: Int64, users: Int, events: Int, seen: TimeInterval, status: IssueStatus = .open,
        kind: ReportKind = .crash, regressed: Bool = false
    ) -> IssueSummary {
        IssueSummary(
            id: IssueID(id), project: ProjectID(1), kind: kind,
            fingerprint: Fingerprint(version: 2, hash: "0123456789abcdef"),
            title: "issue \(id)", culprit: nil, status: status, signals: IssueSignals(regressed: regressed),
            firstSeen: t0,
            lastSeen: t0.addingTimeInterval(seen), firstRelease: nil, lastRelease: nil, events: events, users: users)
    }

    @Test func aQueryStringBecomesTheListItNames() throws {
        let request = try IssueListRequest(parameters: [
            "status": "regressed", "kind": "non-fatal", "sort": "users", "release": "2.0 (7)", "page": "3", "utm": "x",
        ])
        #expect(request.page == 3)
        #expect(
            request.filter == IssueListFilter(status: .regressed, kind: .nonFatal, sort: .users, release: "2.0"))
        // Missing and empty values are the defaults: the list of issues.html.
        let plain = try IssueListRequest(parameters: ["status": "", "release": ""])
        #expect(plain.filter.isDefault && plain.page == 1)
        #expect(try IssueListRequest(parameters: [:]) == IssueListRequest())
    }

    @Test func badValuesNameTheirParameter() {
        func field(_ parameters: [String: String]) -> String? {
            do {
                _ = try IssueListRequest(parameters: parameters)
                return nil
            } catch {
                return error.field
            }
        }
        #expect(field(["status": "fixed"]) == "status")
        #expect(field(["status": "OPEN"]) == "status")
        #expect(field(["kind": "crashes"]) == "kind")
        #expect(field(["sort": "newest"]) == "sort")
        #expect(field(["release": String(repeating: "r", count: IssueListFilter.maxReleaseBytes + 1)]) == "release")
        #expect(field(["release": "1.0\u{0}"]) == "release")
        #expect(field(["release": String(repeating: "r", count: IssueListFilter.maxReleaseBytes)]) == nil)
        for page in ["0", "-1", "+2", " 2", "2.0", "1e3", "abc", "99999999999999999999999", "1000001"] {
            #expect(field(["page": page]) == "page", "page=\(page)")
        }
        #expect(field(["page": "1000000"]) == nil)
    }

    @Test func aListWritesTheQueryStringThatReadsBackAsTheSameList() throws {
        #expect(IssueListFilter().queryString() == "")
        #expect(IssueListFilter().queryString(page: 2) == "page=2")
        let filter = IssueListFilter(status: .open, kind: .crash, sort: .events, release: "1.0 (3) & <b>/ü")
        let query = filter.queryString(page: 4)
        #expect(query == "status=open&kind=crash&sort=events&release=1.0%20%283%29%20%26%20%3Cb%3E%2F%C3%BC&page=4")
        // Read back the way a server decodes a query.
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            parameters[kv[0]] = kv[1].removingPercentEncoding
        }
        let request = try IssueListRequest(parameters: parameters)
        #expect(request.filter == filter && request.page == 4)
    }

    @Test func aListBecomesTheStorageQuery() {
        let project = ProjectID(9)
        let open = IssueListFilter(status: .open, kind: .nonFatal, sort: .users, release: "2.0").query(
            project: project, offset: 200, limit: 100)
        #expect(
            open
                == IssueQuery(
                    project: project, status: .open, release: "2.0", category: .nonFatal, order: .users, offset: 200,
                    limit: 100))
        // A hang is listed by its category alone, whatever kind it was sent as.
        #expect(IssueListFilter(kind: .hang).query(project: project, offset: 0, limit: 5).category == .hang)
        #expect(IssueListFilter(kind: .hang).query(project: project, offset: 0, limit: 5).kind == nil)
        let regressed = IssueListFilter(status: .regressed).query(project: project, offset: 0, limit: 5)
        #expect(
            regressed.status == nil && regressed.regressed == true && regressed.category == nil
                && regressed.order == .lastSeen)
        #expect(
            IssueListFilter(status: .regressed, kind: .crash).caption == "Regressed crashes, most recently seen first")
        #expect(
            IssueListFilter(status: .open, sort: .users, release: "2.0").caption
                == "Open issues in release 2.0, most users affected first")
    }

    @Test func pagingCountsPagesAndKnowsWhenAPageIsPastTheEnd() {
        #expect(IssueListPaging(total: 0, perPage: 100, page: 1).pageCount == 1)
        #expect(IssueListPaging(total: 0, perPage: 100, page: 1).offset == 0)
        #expect(IssueListPaging(total: 100, perPage: 100, page: 1).pageCount == 1)
        #expect(IssueListPaging(total: 101, perPage: 100, page: 1).pageCount == 2)
        #expect(IssueListPaging(total: 101, perPage: 100, page: 2).offset == 100)
        #expect(IssueListPaging(total: 101, perPage: 100, page: 3).isPastEnd)
        #expect(IssueListPaging(total: 101, perPage: 100, page: 3).offset == nil)
        #expect(!IssueListPaging(total: 0, perPage: 100, page: 1).isPastEnd)
        #expect(IssueListPaging(total: 0, perPage: 100, page: 2).isPastEnd)
        // Nonsense inputs are clamped, never trapped on.
        #expect(IssueListPaging(total: -5, perPage: 0, page: -3) == IssueListPaging(total: 0, perPage: 1, page: 1))
        #expect(IssueListPaging(total: Int.max, perPage: Int.max, page: Int.max).offset == nil)
    }

    @Test func everyOrderIsTotalAndBreaksTiesTheDocumentedWay() {
        // Ties on every key but the id, and ties on the first keys only.
        let a = Self.issue(1, users: 5, events: 10, seen: 100)
        let b = Self.issue(2, users: 5, events: 10, seen: 100)
        let c = Self.issue(3, users: 5, events: 20, seen: 50)
        let d = Self.issue(4, users: 9, events: 1, seen: 10)
        let e = Self.issue(5, users: 1, events: 20, seen: 50)
        let all = [a, b, c, d, e]
        func ids(_ order: IssueOrder) -> [Int64] { all.shuffled().sorted(by: order.precedes).map(\.id.rawValue) }
        #expect(ids(.lastSeen) == [2, 1, 5, 3, 4])
        #expect(ids(.users) == [4, 3, 2, 1, 5])
        #expect(ids(.events) == [3, 5, 2, 1, 4])
        for order in IssueOrder.allCases {
            for x in all {
                #expect(!order.precedes(x, x), "irreflexive")
                for y in all where x.id != y.id { #expect(order.precedes(x, y) != order.precedes(y, x), "total") }
            }
        }
    }

    @Test func theListFilterMatchesStatusKindAndRegressed() {
        let regressedMuted = Self.issue(1, users: 1, events: 1, seen: 0, status: .muted, regressed: true)
        let nonFatal = Self.issue(2, users: 1, events: 1, seen: 0, kind: .nonfatal)
        #expect(IssueListFilter(status: .regressed).includes(regressedMuted))
        #expect(IssueListFilter(status: .muted).includes(regressedMuted))
        #expect(!IssueListFilter(status: .open).includes(regressedMuted))
        #expect(
            IssueListFilter(kind: .nonFatal).includes(nonFatal) && !IssueListFilter(kind: .crash).includes(nonFatal))
    }

    @Test func aFormReturnsOnlyToItsOwnProjectsLists() throws {
        let shop = try #require(ProjectSlug("shop"))
        for good in [
            "/shop/issues.html", "/shop/list", "/shop/list?status=open&sort=users&page=2",
            "/shop/list?release=1.0%20%283%29",
            "/shop/list?release=1.0+(3)".replacingOccurrences(of: "(", with: "%28")
                .replacingOccurrences(of: ")", with: "%29"),
        ] {
            #expect(DashboardForms.returnPath(good, project: shop) == good, "\(good)")
        }
        for bad in [
            nil, "", "/", "/other/list", "/shop", "/shop/", "/shop/../other/list", "/shop/list/../../x",
            "//evil.example/shop/list", "https://evil.example/shop/list", "/shop/list?x=<script>",
            "/shop/list?x=%zz", "/shop/list?x=%4", "/shop/list#frag", "/shop/list?a=b/c", "/shop/list?a=b\\c",
            "/shop/issues/1.html", "/shop/index.html", "/shop/list?a=\u{0}", "/shop/list?a=\r\nSet-Cookie:x",
            "/shop/list?" + String(repeating: "a", count: DashboardForms.maxBackBytes),
        ] {
            #expect(DashboardForms.returnPath(bad, project: shop) == nil, "\(String(describing: bad))")
        }
        // A project whose slug is a prefix of another's never returns into the other.
        let sho = try #require(ProjectSlug("sho"))
        #expect(DashboardForms.returnPath("/shop/list", project: sho) == nil)
    }
}
