import FaultlineCore
import Foundation
import TestSupport
import Testing

/// The symbolication store's results and grouping (SymbolicationStore), on each engine: the issue rollups equal a
/// recount from the reports after grouping and moves, a batch counts what one report at a time counts, a report the
/// database refuses fails alone, attempts are counted.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct GroupingConformanceTests {
    static let day0: Double = 86_400 * 20_400  // a UTC midnight
    static let app = "aaaaaaaaaaaaaaaa"
    static let lib = "bbbbbbbbbbbbbbbb"

    /// Stores reports: (n, release, user, seconds after day0); returns their row ids in order.
    @discardableResult
    static func store(_ stores: Stores, _ p: Project, _ rows: [(Int, String?, String?, Double)]) async throws -> [Int64]
    {
        let prepared = rows.map { n, release, user, offset -> PreparedReport in
            var r = Report(eventID: eventID(n), kind: .crash, timestamp: Date(timeIntervalSince1970: day0 + offset))
            r.app = AppInfo(version: release)
            r.userID = user
            return PreparedReport(report: r, range: 0..<1)
        }
        _ = try await stores.ingest.commit([
            .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: prepared))
        ])
        var ids: [Int64] = []
        for (n, _, _, _) in rows { ids.append(try await stores.reportID(eventID(n))) }
        return ids
    }

    static func grouping(_ site: String, device: String = "Pixel 7") -> GroupingInput {
        StoreRows.grouping(site, device: device)
    }

    /// A partial result: the app's frame resolved, the library's missing.
    static func outcome(_ reportID: Int64, site: String, filesSeen: Int64 = 0) -> SymbolicationOutcome {
        let result = SymbolicatedReport(
            state: .partial,
            threads: [
                [
                    SymbolicatedFrameSlot(
                        frames: [ResolvedFrame(function: site, file: "/src/a.c", line: 3)], buildID: app,
                        status: "dwarf", offset: 16),
                    SymbolicatedFrameSlot(frames: [], buildID: lib, status: "missing_debug_file", offset: 32),
                ]
            ],
            missing: [MissingModule(buildID: lib, module: "liblib.so")])
        return SymbolicationOutcome(
            reportID: reportID, result: result, grouping: grouping(site, device: "Pixel \(reportID % 3)"),
            filesSeen: filesSeen,
            modules: [app: "app", lib: "liblib.so"])
    }

    /// Compares every issue counter with a recount from `reports`, in SQL both engines run.
    static func expectIssueRollupsMatchRecount(_ stores: Stores, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let issues = try await stores.texts(
            """
            SELECT i.id || ' ' || i.events || ' ' || i.users || ' ' || i.repeat_users FROM issues i
            """)
        let recount = try await stores.texts(
            """
            SELECT r.issue_id || ' ' || count(*) || ' ' || count(DISTINCT r.user_key) || ' '
                   || (SELECT count(*) FROM (SELECT user_key FROM reports x WHERE x.issue_id = r.issue_id AND x.user_key IS NOT NULL
                                             GROUP BY user_key HAVING count(*) > 1) AS rep)
            FROM reports r WHERE r.issue_id IS NOT NULL GROUP BY r.issue_id
            """)
        #expect(issues == recount, "issues differ from a recount", sourceLocation: sourceLocation)
        let releases = try await stores.texts(
            "SELECT issue_id || '/' || release || ' ' || events || ' ' || users FROM issue_releases")
        let releaseRecount = try await stores.texts(
            """
            SELECT issue_id || '/' || coalesce(release, '') || ' ' || count(*) || ' ' || count(DISTINCT user_key)
            FROM reports WHERE issue_id IS NOT NULL GROUP BY issue_id, coalesce(release, '')
            """)
        #expect(releases == releaseRecount, "issue_releases differ", sourceLocation: sourceLocation)
        let days = try await stores.texts(
            "SELECT issue_id || '/' || day || ' ' || events || ' ' || users FROM issue_days")
        let dayRecount = try await stores.texts(
            """
            SELECT issue_id || '/' || (occurred_at / 86400000) || ' ' || count(*) || ' ' || count(DISTINCT user_key)
            FROM reports WHERE issue_id IS NOT NULL GROUP BY issue_id, occurred_at / 86400000
            """)
        #expect(days == dayRecount, "issue_days differ", sourceLocation: sourceLocation)
        try await TagUsersConformanceTests.expectTagUsersMatchTheirRows(stores, sourceLocation: sourceLocation)
    }

    @Test(arguments: Engine.allCases) func aBatchCountsWhatOneReportAtATimeCounts(_ engine: Engine) async throws {
        try await withStores(engine) { batched in
            try await withStores(engine) { single in
                var outcomes: [[SymbolicationOutcome]] = []
                for stores in [batched, single] {
                    let p = try await createProject(stores, "one")
                    let rows = (1...40).map { n -> (Int, String?, String?, Double) in
                        (n, "1.0", "user-\(n % 4)", Double(n))
                    }
                    let ids = try await Self.store(stores, p, rows)
                    outcomes.append(ids.enumerated().map { Self.outcome($1, site: $0 % 8 == 0 ? "rare" : "common") })
                }
                try await batched.symbolication.saveAll(outcomes[0], at: Date(timeIntervalSince1970: Self.day0))
                for o in outcomes[1] {
                    try await single.symbolication.saveAll([o], at: Date(timeIntervalSince1970: Self.day0))
                }
                let snapshot = [
                    """
                    SELECT i.fingerprint || i.events || '/' || i.users || '/' || i.repeat_users || '/' || i.first_seen || '/' || i.last_seen
                        || '/' || i.first_release || i.last_release || i.early_events || i.timed_events || i.status || i.title FROM issues i
                    """,
                    "SELECT i.fingerprint || r.release || r.events || '/' || r.users FROM issue_releases r JOIN issues i ON i.id = r.issue_id",
                    "SELECT i.fingerprint || d.day || '/' || d.events || '/' || d.users FROM issue_days d JOIN issues i ON i.id = d.issue_id",
                    "SELECT i.fingerprint || u.user_key || '/' || u.events FROM issue_users u JOIN issues i ON i.id = u.issue_id",
                    "SELECT i.fingerprint || t.key || t.value || '/' || t.events FROM issue_tags t JOIN issues i ON i.id = t.issue_id",
                    "SELECT a.kind || a.title FROM alerts a",
                    "SELECT m.build_id || '/' || coalesce(m.module, '-') || '/' || m.rank FROM report_modules m",
                ]
                for query in snapshot {
                    #expect(try await batched.unkeyedTexts(query) == single.unkeyedTexts(query), "\(query)")
                }
                #expect(try await batched.texts("SELECT count(*) FROM issues") == ["2"])
                #expect(try await batched.texts("SELECT sum(events) FROM issues") == ["40"])
                #expect(try await batched.texts("SELECT count(*) FROM report_modules") == ["80"])
                #expect(
                    try await batched.texts("SELECT count(*) FROM reports WHERE symbolication = 'partial'") == ["40"])
                #expect(try await batched.symbolication.pending(limit: 100).isEmpty)
                let missing = try await batched.symbolication.missingDebugFiles(project: ProjectID(1), release: nil)
                // Neither module has a stored file: the library was missing, the app resolved without one being stored.
                #expect(missing.map(\.buildID.rawValue) == [Self.app, Self.lib])
                #expect(missing.map(\.reports) == [40, 40])
                #expect(missing.map(\.module) == ["app", "liblib.so"])
                #expect(missing.first?.releases == ["1.0"])
            }
        }
    }

    @Test(arguments: Engine.allCases) func attemptsAreCountedResetByACleanResultAndKeptWithAFailure(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let ids = try await Self.store(stores, p, [(1, "1.0", "u1", 10), (2, "1.0", "u2", 20)])
            let (one, two) = (ids[0], ids[1])
            let first = try await stores.symbolication.pending(limit: 10)
            #expect(first.map(\.attempts) == [0, 0])
            #expect(first.map(\.reportID) == [one, two])  // oldest first
            #expect(first.first?.raw.payload == payload)
            try await stores.symbolication.recordAttempt(reportIDs: [one, two])
            try await stores.symbolication.recordAttempt(reportIDs: [two])
            #expect(try await stores.texts("SELECT symbolication_attempts FROM reports") == ["1", "2"])

            try await stores.symbolication.saveAll(
                [
                    SymbolicationOutcome(
                        reportID: one, result: SymbolicatedReport(state: .missing, threads: [], missing: []),
                        grouping: nil),
                    SymbolicationOutcome(
                        reportID: two, result: .failed("stopped 3 times"), grouping: Self.grouping("lib+0x10")),
                ], at: Date())
            #expect(try await stores.symbolication.pending(limit: 10).isEmpty)
            #expect(
                try await stores.texts("SELECT event_id || ':' || symbolication_attempts FROM reports")
                    == ["\(eventID(1).rawValue):0", "\(eventID(2).rawValue):2"])
            let (state, result) = try await stores.symbolication.result(reportID: two)
            #expect(state == .missing)
            #expect(result?.failure == "stopped 3 times")
            #expect(try await stores.symbolication.result(reportID: one).report?.failure == nil)
            // The failed report is still grouped; the other, without a grouping, is not.
            #expect(
                try await stores.texts("SELECT coalesce(issue_id, 0) > 0 FROM reports WHERE id = \(two)") == [
                    engine == .sqlite ? "1" : "true"
                ])
            #expect(try await stores.texts("SELECT issue_id FROM reports WHERE id = \(one)") == ["∅"])
        }
    }

    @Test(arguments: Engine.allCases) func aReportTheDatabaseRefusesFailsAloneAndTheRestOfItsBatchIsSaved(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores, "one")
            let ids = try await Self.store(stores, p, (1...5).map { ($0, "1.0", "user-\($0)", Double($0)) })
            let refused = ids[2]
            // Given the schema refuses one report's result (a constraint added for the test)…
            switch engine {
            case .sqlite:
                try await stores.execute(
                    """
                    CREATE TRIGGER refuse_one BEFORE INSERT ON report_symbols WHEN NEW.report_id = \(refused)
                    BEGIN SELECT RAISE(ABORT, 'refused'); END
                    """)
            case .postgres:
                try await stores.execute(
                    "ALTER TABLE report_symbols ADD CONSTRAINT refuse_one CHECK (report_id <> \(refused))")
            }
            // When the batch is saved…
            try await stores.symbolication.saveAll(ids.map { Self.outcome($0, site: "same") }, at: Date())
            // Then that report is failed, ungrouped, and no row of it was half written; the four others are grouped once.
            #expect(
                try await stores.texts(
                    "SELECT symbolication || ' ' || coalesce(symbolication_failure, '-') FROM reports WHERE id = \(refused)"
                )
                    == ["missing the database refused the symbolication result"])
            #expect(try await stores.texts("SELECT issue_id FROM reports WHERE id = \(refused)") == ["∅"])
            #expect(
                try await stores.texts(
                    "SELECT count(*) FROM reports WHERE symbolication = 'partial' AND issue_id IS NOT NULL") == ["4"])
            #expect(try await stores.texts("SELECT count(*) FROM report_modules WHERE report_id = \(refused)") == ["0"])
            #expect(try await stores.texts("SELECT events FROM issues") == ["4"])
            #expect(try await stores.texts("SELECT count(*) FROM report_symbols") == ["4"])
        }
    }
}
