import FaultlineCore
import Foundation
import Testing

/// The issue listing (`issues(matching:)`, `issueIDs(matching:)`, `issueCount(matching:)`) on each engine: every
/// filter, every order, paged at every size, against the same rules applied in memory (`IssueListFilter.includes`,
/// `IssueOrder.precedes`), on data full of ties; one project never lists another's issues.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct IssueListConformanceTests {
    static let t0: Int64 = 1_700_000_000_000

    /// An issue as stored: its totals, and its counts in release "2.0" when it was seen there.
    struct Seed {
        var id: Int64
        var project: Int64
        var kind: ReportKind
        /// Marked a hang when filed (`IssueCategory`): listed with the hangs, whatever its kind.
        var hang: Bool
        var status: IssueStatus
        var regressed: Bool
        var lastSeen: Int64
        var events: Int
        var users: Int
        var inRelease: (events: Int, users: Int, lastSeen: Int64)?
    }

    func setUp(_ stores: Stores) async throws -> (ProjectID, ProjectID, [Seed]) {
        let store = stores.projects
        var ids: [ProjectID] = []
        for (n, slug) in ["app", "other"].enumerated() {
            ids.append(
                try await store.createProject(
                    slug: ProjectSlug(slug)!, ingestKeyHash: SecretHash(hex: String(repeating: "a\(n)", count: 32)),
                    uploadTokenHash: SecretHash(hex: String(repeating: "b\(n)", count: 32)),
                    createdAt: Date(timeIntervalSince1970: 1),
                    rateLimitPerSecond: 50
                ).id)
        }
        // Few distinct values, so that every order has ties on its first keys and on all of them but the id.
        var state: UInt64 = 12345
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        var seeds: [Seed] = []
        for id in 1...60 {
            let project = id % 7 == 0 ? ids[1] : ids[0]
            let inRelease = next(2) == 0 ? (events: next(3), users: next(2), lastSeen: Self.t0 + Int64(next(3))) : nil
            seeds.append(
                Seed(
                    id: Int64(id), project: project.rawValue, kind: next(3) == 0 ? .nonfatal : .crash,
                    hang: id % 5 == 0,
                    status: [IssueStatus.open, .open, .closed, .muted][next(4)], regressed: next(4) == 0,
                    lastSeen: Self.t0 + Int64(next(3)), events: next(3), users: next(3), inRelease: inRelease))
        }
        // Portable SQL with literal values (the test's own, never outside input), so that both engines store the same.
        for s in seeds {
            try await stores.execute(
                """
                INSERT INTO issues (id, project_id, fingerprint, kind, grouping, title, status, regressed, first_seen, last_seen,
                                    events, users, updated_at, hang)
                VALUES (\(s.id), \(s.project), '\(String(format: "v2:%016llx", s.id))', '\(s.kind.rawValue)', '{}', 'issue \(s.id)',
                        '\(s.status.rawValue)', \(s.regressed ? "TRUE" : "FALSE"), \(Self.t0 - 1000), \(s.lastSeen), \(s.events), \(s.users), \(Self.t0),
                        \(s.hang ? "TRUE" : "FALSE"))
                """)
            if let r = s.inRelease {
                try await stores.execute(
                    """
                    INSERT INTO issue_releases (issue_id, release, events, users, first_seen, last_seen)
                    VALUES (\(s.id), '2.0', \(r.events), \(r.users), \(Self.t0 - 1000), \(r.lastSeen))
                    """)
            }
            // Every issue has a row of another release, which a "2.0" list must not pick up.
            try await stores.execute(
                """
                INSERT INTO issue_releases (issue_id, release, events, users, first_seen, last_seen)
                VALUES (\(s.id), '1.0', 1, 1, \(Self.t0 - 1000), \(Self.t0))
                """)
        }
        return (ids[0], ids[1], seeds)
    }

    /// What a list holds, computed in memory with the Core rules.
    func expected(_ seeds: [Seed], project: ProjectID, filter: IssueListFilter, now: Date) -> [Int64] {
        let summaries = seeds.compactMap { s -> IssueSummary? in
            guard s.project == project.rawValue else { return nil }
            var events = s.events, users = s.users, lastSeen = s.lastSeen
            if let release = filter.release {
                guard release == "2.0", let r = s.inRelease else { return nil }
                (events, users, lastSeen) = (r.events, r.users, r.lastSeen)
            }
            var summary = IssueSummary(
                id: IssueID(s.id), project: project, kind: s.kind,
                fingerprint: Fingerprint(version: 2, hash: "0123456789abcdef"),
                title: "", culprit: nil, status: s.status, signals: IssueSignals(regressed: s.regressed),
                firstSeen: now, lastSeen: Date(timeIntervalSince1970: Double(lastSeen) / 1000), firstRelease: nil,
                lastRelease: nil,
                events: events, users: users)
            summary.hang = s.hang
            return summary
        }
        return summaries.filter(filter.includes).sorted(by: filter.sort.precedes).map(\.id.rawValue)
    }

    @Test(arguments: Engine.allCases) func everyListPagedAtEverySizeHoldsExactlyItsIssuesInOrder(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (app, _, seeds) = try await setUp(stores)
            let reader = stores.insights
            let now = Date(timeIntervalSince1970: Double(Self.t0) / 1000)
            var lists = 0
            for status in IssueListFilter.Status.allCases {
                for kind in IssueListFilter.Kind.allCases {
                    for sort in IssueOrder.allCases {
                        for release in [nil, "2.0", "9.9"] as [String?] {
                            let filter = IssueListFilter(status: status, kind: kind, sort: sort, release: release)
                            let want = expected(seeds, project: app, filter: filter, now: now)
                            let count = try await reader.issueCount(
                                matching: filter.query(project: app, offset: 0, limit: 1))
                            #expect(count == want.count, "\(filter)")
                            for perPage in [1, 4, 7, 100] {
                                var got: [Int64] = []
                                var offset = 0
                                // Pages until the first empty one: never more pages than issues + 1.
                                for _ in 0...(want.count + 1) {
                                    let page = try await reader.issues(
                                        matching: filter.query(project: app, offset: offset, limit: perPage), now: now)
                                    #expect(page.count <= perPage)
                                    if page.isEmpty { break }
                                    got += page.map(\.id.rawValue)
                                    offset += perPage
                                }
                                #expect(got == want, "\(filter) by \(perPage)")
                            }
                            lists += 1
                        }
                    }
                }
            }
            #expect(lists == 5 * 4 * 3 * 3)
            // The data exercised what it should: a non-empty release list, regressed issues, ties on the first keys.
            #expect(!expected(seeds, project: app, filter: IssueListFilter(release: "2.0"), now: now).isEmpty)
            #expect(!expected(seeds, project: app, filter: IssueListFilter(status: .regressed), now: now).isEmpty)
            #expect(!expected(seeds, project: app, filter: IssueListFilter(kind: .hang), now: now).isEmpty)
        }
    }

    @Test(arguments: Engine.allCases) func aReleaseListShowsTheReleasesOwnCounts(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (app, _, seeds) = try await setUp(stores)
            let reader = stores.insights
            let now = Date(timeIntervalSince1970: Double(Self.t0) / 1000)
            let issues = try await reader.issues(
                matching: IssueListFilter(release: "2.0").query(project: app, offset: 0, limit: 100), now: now)
            #expect(!issues.isEmpty)
            for issue in issues {
                let seed = try #require(seeds.first { $0.id == issue.id.rawValue })
                let r = try #require(seed.inRelease)
                #expect(issue.events == r.events && issue.users == r.users)
                #expect(issue.lastSeen == Date(timeIntervalSince1970: Double(r.lastSeen) / 1000))
            }
        }
    }

    @Test(arguments: Engine.allCases) func oneProjectNeverListsAnothersIssues(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (app, other, seeds) = try await setUp(stores)
            let reader = stores.insights
            let now = Date()
            let theirs = Set(seeds.filter { $0.project == other.rawValue }.map(\.id))
            #expect(!theirs.isEmpty)
            for release in [nil, "1.0", "2.0"] as [String?] {
                let mine = try await reader.issues(
                    matching: IssueQuery(project: app, release: release, limit: 1000), now: now)
                #expect(!mine.isEmpty && mine.allSatisfy { $0.project == app && !theirs.contains($0.id.rawValue) })
                let count = try await reader.issueCount(matching: IssueQuery(project: other, release: release))
                #expect(
                    count
                        == seeds.filter { $0.project == other.rawValue && (release != "2.0" || $0.inRelease != nil) }
                        .count)
            }
        }
    }

    /// `issueIDs(matching:)` names the issues `issues(matching:)` lists, in its order, for every filter and order.
    @Test(arguments: Engine.allCases) func issueIDsAreTheListedIssuesInOrder(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (app, _, _) = try await setUp(stores)
            let reader = stores.insights
            let now = Date()
            for release in [nil, "1.0"] as [String?] {
                for status in [nil, IssueStatus.open] {
                    for order in IssueOrder.allCases {
                        let query = IssueQuery(
                            project: app, status: status, release: release, order: order, offset: 1, limit: 7)
                        let ids = try await reader.issueIDs(matching: query)
                        #expect(!ids.isEmpty)
                        #expect(ids == (try await reader.issues(matching: query, now: now)).map(\.id), "\(query)")
                    }
                }
            }
        }
    }
}
