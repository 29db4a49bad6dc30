import FaultlineCore
import Foundation
import TestSupport
import Testing

/// Merge and unmerge (`IssueMerge`, the alias lookup in `FilingPlanner`) on each engine, through the real stores: after
/// a merge, an unmerge and a grouping-version bump, every issue's counters, users and rollup rows equal a recount from
/// the raw reports; future events of a merged fingerprint land in the survivor; nothing alerts; the status rules hold;
/// one project never merges another's issue.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct IssueMergeConformanceTests {
    static let now = Date(timeIntervalSince1970: GroupingConformanceTests.day0 + 3_600)

    /// The grouping of `site`, of grouping version `version`.
    static func grouping(_ site: String, version: Int = Grouping.version) -> GroupingInput {
        var input = StoreRows.grouping(site)
        let fingerprint = input.grouping.fingerprint
        input.grouping.fingerprint = Fingerprint(version: version, hash: fingerprint.hash)
        return input
    }

    static func fingerprint(_ site: String, version: Int = Grouping.version) -> String {
        grouping(site, version: version).grouping.fingerprint.rawValue
    }

    /// Stores reports `(n, site, release, user)` of `project` and files them (each under its site's grouping).
    @discardableResult
    static func file(
        _ stores: Stores, _ project: Project, _ rows: [(Int, String, String, String)], version: Int = Grouping.version
    ) async throws -> [Int64] {
        let ids = try await GroupingConformanceTests.store(
            stores, project, rows.map { ($0.0, $0.2, $0.3, Double($0.0) * 60) })
        try await refile(stores, Dictionary(uniqueKeysWithValues: zip(ids, rows.map(\.1))), version: version)
        return ids
    }

    /// Files the reports `sites` names (report id → site) again, as the symbolication worker does.
    static func refile(_ stores: Stores, _ sites: [Int64: String], version: Int = Grouping.version) async throws {
        let outcomes = sites.keys.sorted().map { id in
            SymbolicationOutcome(
                reportID: id, result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                grouping: grouping(sites[id] ?? "", version: version), filesSeen: nil, modules: [:])
        }
        try await stores.symbolication.saveAll(outcomes, at: now)
    }

    /// The issue of `fingerprint` (nil: none has it).
    static func issue(_ stores: Stores, _ fingerprint: String) async throws -> Int64? {
        try await stores.texts("SELECT id FROM issues WHERE fingerprint = '\(fingerprint)'").first.flatMap { Int64($0) }
    }

    static func issueOf(report: Int64, _ stores: Stores) async throws -> Int64? {
        try await stores.texts("SELECT issue_id FROM reports WHERE id = \(report)").first.flatMap { Int64($0) }
    }

    /// Every rollup against a recount from the reports: the counters and release and day rows
    /// (`expectIssueRollupsMatchRecount`), and each issue's per-user rows and tag counts.
    static func expectRecount(_ stores: Stores, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await GroupingConformanceTests.expectIssueRollupsMatchRecount(stores, sourceLocation: sourceLocation)
        let users = try await stores.texts(
            "SELECT issue_id || ' ' || count(*) || ' ' || sum(events) FROM issue_users GROUP BY issue_id")
        let usersRecount = try await stores.texts(
            """
            SELECT issue_id || ' ' || count(DISTINCT user_key) || ' ' || count(user_key) FROM reports
            WHERE issue_id IS NOT NULL AND user_key IS NOT NULL GROUP BY issue_id
            """)
        #expect(users == usersRecount, "issue_users differ", sourceLocation: sourceLocation)
        let releaseUsers = try await stores.texts(
            "SELECT issue_id || '/' || release || ' ' || count(*) FROM issue_release_users GROUP BY issue_id, release")
        let releaseUsersRecount = try await stores.texts(
            """
            SELECT issue_id || '/' || release || ' ' || count(DISTINCT user_key) FROM reports
            WHERE issue_id IS NOT NULL AND user_key IS NOT NULL GROUP BY issue_id, release
            """)
        #expect(releaseUsers == releaseUsersRecount, "issue_release_users differ", sourceLocation: sourceLocation)
        // Every report carries an `os` tag: its tag row counts the issue's events.
        let tags = try await stores.texts(
            "SELECT issue_id || ' ' || sum(events) FROM issue_tags WHERE key = 'os' GROUP BY issue_id")
        let tagsRecount = try await stores.texts(
            "SELECT issue_id || ' ' || count(*) FROM reports WHERE issue_id IS NOT NULL GROUP BY issue_id")
        #expect(tags == tagsRecount, "issue_tags differ", sourceLocation: sourceLocation)
    }

    static func alertCount(_ stores: Stores) async throws -> String? {
        try await stores.texts("SELECT count(*) FROM alerts").first
    }

    @Test(arguments: Engine.allCases) func mergeThenNewEventsLandInTheSurvivor(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            // Given: a (3 events, u1 twice), b (2 events, u2 and u3), c (1 event).
            let ids = try await Self.file(
                stores, p,
                [
                    (1, "a", "1.0", "u1"), (2, "a", "1.0", "u2"), (3, "a", "1.1", "u1"), (4, "b", "1.1", "u2"),
                    (5, "b", "1.2", "u3"), (6, "c", "1.0", "u4"),
                ])
            let a = try #require(try await Self.issue(stores, Self.fingerprint("a")))
            let b = try #require(try await Self.issue(stores, Self.fingerprint("b")))
            let c = try #require(try await Self.issue(stores, Self.fingerprint("c")))
            // The survivor is closed, b muted.
            _ = try await stores.insights.setStatus(.closed, issue: IssueID(a), project: p.id, by: "t", at: Self.now)
            _ = try await stores.insights.setStatus(.muted, issue: IssueID(b), project: p.id, by: "t", at: Self.now)
            let alerts = try await Self.alertCount(stores)

            // When b merges into a.
            let result = try await stores.insights.merge(
                [IssueID(b)], into: IssueID(a), project: p.id, by: "the CLI", at: Self.now)

            // Then a keeps its id and closed status, holds all five events of three users (u1 and u2 twice), and b is gone.
            #expect(result == IssueMergeResult(survivor: IssueID(a), project: p.id, merged: [IssueID(b)]))
            #expect(try await stores.texts("SELECT id FROM issues") == [String(a), String(c)].sorted())
            #expect(
                try await stores.texts(
                    "SELECT status || ' ' || events || ' ' || users || ' ' || repeat_users FROM issues WHERE id = \(a)")
                    == ["closed 5 3 2"])
            #expect(
                try await stores.texts("SELECT first_release || ' ' || last_release FROM issues WHERE id = \(a)") == [
                    "1.0 1.2"
                ])
            try await Self.expectRecount(stores)
            #expect(try await Self.alertCount(stores) == alerts, "a merge raises no alert")
            #expect(try await stores.insights.replacement(of: IssueID(b), project: p.id) == IssueID(a))
            #expect(try await stores.insights.replacement(of: IssueID(a), project: p.id) == nil)
            let merged = try await stores.insights.mergedFingerprints(of: IssueID(a))
            #expect(merged.map(\.fingerprint) == [Self.fingerprint("b")])
            #expect(merged.map(\.formerIssue) == [IssueID(b)])

            // When new events of b, a and a new site come.
            let more = try await Self.file(
                stores, p, [(7, "b", "1.2", "u5"), (8, "a", "1.0", "u1"), (9, "d", "1.0", "u6")])
            // Then b's lands in a, as a's does; d makes an issue of its own.
            #expect(try await Self.issueOf(report: more[0], stores) == a)
            #expect(try await Self.issueOf(report: more[1], stores) == a)
            #expect(try await Self.issue(stores, Self.fingerprint("b")) == nil)
            #expect(try await stores.texts("SELECT count(*) FROM issues") == ["3"])
            #expect(try await stores.texts("SELECT events || ' ' || users FROM issues WHERE id = \(a)") == ["7 4"])
            try await Self.expectRecount(stores)
            // A report filed again (late symbols) stays where its fingerprint files: in the survivor.
            try await Self.refile(stores, [ids[3]: "b"])
            #expect(try await Self.issueOf(report: ids[3], stores) == a)
            try await Self.expectRecount(stores)

            // A merge of c into d, then of d into a: what was merged into d follows it.
            let d = try #require(try await Self.issue(stores, Self.fingerprint("d")))
            _ = try await stores.insights.merge([IssueID(c)], into: IssueID(d), project: p.id, by: nil, at: Self.now)
            _ = try await stores.insights.merge([IssueID(d)], into: IssueID(a), project: p.id, by: nil, at: Self.now)
            #expect(try await stores.insights.replacement(of: IssueID(c), project: p.id) == IssueID(a))
            #expect(try await stores.texts("SELECT id FROM issues") == [String(a)])
            #expect(
                Set(try await stores.insights.mergedFingerprints(of: IssueID(a)).map(\.fingerprint))
                    == Set(["b", "c", "d"].map { Self.fingerprint($0) }))
            try await Self.expectRecount(stores)
            let late = try await Self.file(stores, p, [(10, "c", "1.0", "u7")])
            #expect(try await Self.issueOf(report: late[0], stores) == a)
            try await Self.expectRecount(stores)
        }
    }

    @Test(arguments: Engine.allCases) func mergeRefusalsChangeNothing(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let q = try await createProject(stores, "other")
            try await Self.file(stores, p, [(1, "a", "1.0", "u1"), (2, "b", "1.0", "u2")])
            try await Self.file(stores, q, [(3, "a", "1.0", "u1")])
            let ids = try await stores.texts("SELECT id || ' ' || project_id FROM issues")
            let a = try #require(
                try await stores.texts("SELECT id FROM issues WHERE project_id = \(p.id.rawValue) ORDER BY id").first
                    .flatMap { Int64($0) })
            let qa = try #require(
                try await stores.texts("SELECT id FROM issues WHERE project_id = \(q.id.rawValue)").first.flatMap {
                    Int64($0)
                })
            func refused(_ others: [Int64], into survivor: Int64, project: ProjectID?) async -> IssueMergeError? {
                do {
                    _ = try await stores.insights.merge(
                        others.map { IssueID($0) }, into: IssueID(survivor), project: project, by: nil, at: Self.now)
                    return nil
                } catch let error as IssueMergeError {
                    return error
                } catch {
                    return nil
                }
            }
            // Another project's issue: not found for the project's token, refused by name for the admin.
            #expect(await refused([qa], into: a, project: p.id) == .noSuchIssue(IssueID(qa)))
            #expect(await refused([qa], into: a, project: nil) == .otherProject(IssueID(qa)))
            #expect(await refused([a], into: qa, project: p.id) == .noSuchIssue(IssueID(qa)))
            #expect(await refused([a], into: a, project: p.id) == .intoItself(IssueID(a)))
            #expect(await refused([], into: a, project: p.id) == .nothingToMerge)
            #expect(await refused([999_999], into: a, project: p.id) == .noSuchIssue(IssueID(999_999)))
            #expect(try await stores.texts("SELECT id || ' ' || project_id FROM issues") == ids)
            #expect(try await stores.texts("SELECT count(*) FROM issue_aliases") == ["0"])
            do {
                _ = try await stores.insights.unmerge(
                    fingerprint: Self.fingerprint("b"), from: IssueID(a), project: p.id, at: Self.now)
                Issue.record("an unmerge of a fingerprint never merged succeeded")
            } catch let error as IssueMergeError {
                #expect(error == .notMerged(fingerprint: Self.fingerprint("b"), issue: IssueID(a)))
            }
            try await Self.expectRecount(stores)
        }
    }

    @Test(arguments: Engine.allCases) func unmergeThenNewEventsSplitTheFingerprintBackOut(_ engine: Engine) async throws
    {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let rows = [
                (1, "a", "1.0", "u1"), (2, "a", "1.1", "u2"), (3, "b", "1.0", "u1"), (4, "b", "1.1", "u1"),
                (5, "b", "1.2", "u3"),
            ]
            let ids = try await Self.file(stores, p, rows)
            let sites = Dictionary(uniqueKeysWithValues: zip(ids, rows.map(\.1)))
            let a = try #require(try await Self.issue(stores, Self.fingerprint("a")))
            let b = try #require(try await Self.issue(stores, Self.fingerprint("b")))
            _ = try await stores.insights.merge([IssueID(b)], into: IssueID(a), project: p.id, by: nil, at: Self.now)
            _ = try await stores.insights.setStatus(.closed, issue: IssueID(a), project: p.id, by: "t", at: Self.now)
            let alerts = try await Self.alertCount(stores)

            // When b is split back out: every report of a is queued to be filed again.
            let result = try await stores.insights.unmerge(
                fingerprint: Self.fingerprint("b"), from: IssueID(a), project: p.id, at: Self.now)
            #expect(result.requeued == 5)
            #expect(try await stores.insights.mergedFingerprints(of: IssueID(a)).isEmpty)
            #expect(try await stores.insights.replacement(of: IssueID(b), project: p.id) == nil)
            let pending = try await stores.symbolication.pending(limit: 100)
            #expect(Set(pending.map(\.reportID)) == Set(ids))
            try await Self.refile(stores, sites)

            // Then b's three events of two users are an issue of their own again; a keeps its two, and its status.
            let split = try #require(try await Self.issue(stores, Self.fingerprint("b")))
            #expect(split != a)
            #expect(
                try await stores.texts(
                    "SELECT events || ' ' || users || ' ' || repeat_users FROM issues WHERE id = \(split)") == ["3 2 1"]
            )
            #expect(
                try await stores.texts("SELECT status || ' ' || events || ' ' || users FROM issues WHERE id = \(a)")
                    == ["closed 2 2"])
            for (id, site) in sites { #expect(try await Self.issueOf(report: id, stores) == (site == "a" ? a : split)) }
            try await Self.expectRecount(stores)
            #expect(try await Self.alertCount(stores) == alerts, "an unmerge raises no alert")

            // New events of b land in the split issue, not in a.
            let more = try await Self.file(stores, p, [(6, "b", "1.2", "u4"), (7, "a", "1.1", "u1")])
            #expect(try await Self.issueOf(report: more[0], stores) == split)
            #expect(try await Self.issueOf(report: more[1], stores) == a)
            try await Self.expectRecount(stores)
        }
    }

    @Test(arguments: Engine.allCases) func aGroupingVersionBumpCarriesTheMergeForward(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let old = Grouping.version - 1
            let rows = [
                (1, "a", "1.0", "u1"), (2, "b", "1.0", "u2"), (3, "a", "1.1", "u1"), (4, "b", "1.1", "u3"),
                (5, "c", "1.0", "u4"),
            ]
            // Given: reports filed by the older grouping version, b merged into a.
            let ids = try await Self.file(stores, p, rows, version: old)
            try await stores.execute("UPDATE reports SET grouping_version = \(old)")
            let sites = Dictionary(uniqueKeysWithValues: zip(ids, rows.map(\.1)))
            let a = try #require(try await Self.issue(stores, Self.fingerprint("a", version: old)))
            let b = try #require(try await Self.issue(stores, Self.fingerprint("b", version: old)))
            let c = try #require(try await Self.issue(stores, Self.fingerprint("c", version: old)))
            _ = try await stores.insights.merge([IssueID(b)], into: IssueID(a), project: p.id, by: nil, at: Self.now)
            let alerts = try await Self.alertCount(stores)

            // When the grouping version changes: every report is filed again with the new fingerprints.
            #expect(try await stores.symbolication.requeueOutdatedGrouping(limit: 100) == 5)
            try await Self.refile(stores, sites)

            // Then a and b stay one issue, under the new fingerprints; c is rekeyed on its own.
            #expect(try await stores.texts("SELECT id FROM issues") == [String(a), String(c)].sorted())
            for (id, site) in sites { #expect(try await Self.issueOf(report: id, stores) == (site == "c" ? c : a)) }
            let current = try await stores.texts("SELECT fingerprint FROM issues WHERE id = \(a)")
            let aliases = try await stores.texts("SELECT fingerprint FROM issue_aliases WHERE issue_id = \(a)")
            #expect(Set(current + aliases).isSuperset(of: [Self.fingerprint("a"), Self.fingerprint("b")]))
            #expect(try await stores.texts("SELECT events || ' ' || users FROM issues WHERE id = \(a)") == ["4 3"])
            try await Self.expectRecount(stores)
            #expect(try await Self.alertCount(stores) == alerts, "a migration of merged issues raises no alert")

            // New events of b (new version) land in a.
            let more = try await Self.file(stores, p, [(6, "b", "1.1", "u5")])
            #expect(try await Self.issueOf(report: more[0], stores) == a)
            try await Self.expectRecount(stores)

            // And the one of a and b that became an alias (which one depends on which report migrated first) can be
            // split back out under its new fingerprint.
            let out = aliases.contains(Self.fingerprint("b")) ? "b" : "a"
            let unmerged = try await stores.insights.unmerge(
                fingerprint: Self.fingerprint(out), from: IssueID(a), project: p.id, at: Self.now)
            #expect(unmerged.requeued == 5)
            var requeued = sites.filter { $0.value != "c" }
            requeued[more[0]] = "b"
            try await Self.refile(stores, requeued)
            let split = try #require(try await Self.issue(stores, Self.fingerprint(out)))
            #expect(try await stores.texts("SELECT events FROM issues WHERE id = \(split)") == [out == "b" ? "3" : "2"])
            #expect(try await stores.texts("SELECT events FROM issues WHERE id = \(a)") == [out == "b" ? "2" : "3"])
            try await Self.expectRecount(stores)
        }
    }
}
