import FaultlineCore
import Foundation
import Testing

/// The queries both engines share, without a database: the page bounds, how a statement binds its values for each
/// engine, and the row mappings. (What the statements return is checked on both engines by
/// `InsightsConformanceTests`, `IssueListConformanceTests` and `SearchConformanceTests`.)
@Suite struct SharedSQLTests {
    /// A row as an array of cells, standing in for an engine's row.
    struct CellRow: SQLRow {
        var cells: [SQLValue?]

        func cell(_ index: Int) throws -> SQLValue? {
            guard cells.indices.contains(index) else { throw SQLRowError(column: index, message: "no such column") }
            return cells[index]
        }
        func integerOrNull(_ index: Int) throws -> Int64? {
            if case .integer(let value)? = try cell(index) { return value }
            return nil
        }
        func textOrNull(_ index: Int) throws -> String? {
            if case .text(let value)? = try cell(index) { return value }
            return nil
        }
        func boolOrNull(_ index: Int) throws -> Bool? {
            if case .bool(let value)? = try cell(index) { return value }
            return nil
        }
        func bytesOrNull(_ index: Int) throws -> [UInt8]? {
            if case .text(let value)? = try cell(index) { return Array(value.utf8) }
            return nil
        }
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// The cells of an issue in `IssueSQL.columnNames` order.
    static func issueCells(
        kind: String = "crash", status: String = "open", culprit: String? = "main.swift:3", hang: Bool = false
    ) -> [SQLValue?] {
        let seen = Millis.from(now.addingTimeInterval(-3_600))
        return [
            .integer(9), .integer(2), .text(kind), .text(Fingerprint(version: 2, hash: "0123456789abcdef").rawValue),
            .text("Index out of range"),
            culprit.map(SQLValue.text), .text(status), .bool(true), .integer(seen), .integer(seen), .text("1.0"), nil,
            .integer(5), .integer(3), .integer(2), .integer(0), .integer(4),
            // The stored grouping (`IssueSummary.errorCode` is read from it): a stack's, with no code.
            .text("{}"),
            // The hang mark (`IssueSummary.category`).
            .bool(hang),
        ]
    }

    // MARK: Pages

    @Test func everyPageHoldsAtLeastOneRowAndAtMostItsBound() {
        #expect(PageRequest(limit: 0, offset: -5, bound: 10) == PageRequest(limit: 1, offset: 0, bound: 10))
        #expect(PageRequest(limit: 11, bound: 10).limit == 10)
        #expect(PageRequest(limit: Int.min).limit == 1)
        #expect(
            IssueQuery(project: ProjectID(1), offset: 20, limit: 50_000).page == PageRequest(limit: 10_000, offset: 20))
        #expect(ReportQuery(project: nil, limit: 9_999).page.limit == PageRequest.maxReports)
    }

    @Test func aPageNumberBecomesAnOffsetThatCannotOverflow() {
        let third = PageRequest(page: 3, size: 25, bound: PageRequest.maxSearchHits)
        #expect(third == PageRequest(limit: 25, offset: 50))
        // Below 1 is the first page; a size past the bound is the bound.
        #expect(PageRequest(page: -4, size: 1_000, bound: 200) == PageRequest(limit: 200, offset: 0))
        // Past the largest offset: Int.max, which reads nothing, never a trap.
        #expect(PageRequest(page: Int.max, size: 200, bound: 200).offset == Int.max)
    }

    // MARK: Statements

    @Test func aStatementIsWrittenOnceAndDiffersBetweenEnginesOnlyInItsPlaceholders() {
        let query = IssueQuery(
            project: ProjectID(7), status: .open, release: "2.0", category: .crash, regressed: false, order: .users,
            offset: 40,
            limit: 20)
        let sqlite = IssueSQL.page(query, .sqlite)
        let postgres = IssueSQL.page(query, .postgres)
        #expect(
            sqlite.values == [
                .text("2.0"), .integer(7), .text("open"), .text("crash"), .bool(false), .integer(20), .integer(40),
            ])
        #expect(postgres.values == sqlite.values)
        #expect(postgres.sql == sqlite.sql.replacingOccurrences(of: "?", with: "$"))
        #expect(sqlite.sql.contains("ir.release = ?1") && sqlite.sql.contains("LIMIT ?6 OFFSET ?7"))
        // A release's totals stand in for the issue's, under the issue's names, and order the page.
        #expect(sqlite.sql.contains("ir.events AS events, ir.users AS users"))
        #expect(sqlite.sql.contains("ORDER BY ir.users DESC, ir.events DESC, ir.last_seen DESC, i.id DESC"))
    }

    /// Every shared statement of project 7 that reads a project's rows, for `dialect`.
    static func projectStatements(_ dialect: SQLDialect) -> [SQLStatement] {
        let project = ProjectID(7)
        let query = IssueQuery(project: project, status: .open, release: "1.0", category: .crash, regressed: true)
        return [
            IssueSQL.page(query, dialect), IssueSQL.page(query, idsOnly: true, dialect), IssueSQL.count(query, dialect),
            IssueSQL.top(project: project, window: .last24Hours, now: now, limit: 5, dialect),
            IssueSQL.top(project: project, window: .release("1.0"), now: now, limit: 5, dialect),
            IssueSQL.windowBefore(project: project, issues: [IssueID(1), IssueID(2)], seconds: 60, now: now, dialect),
            IssueSQL.detail(IssueID(1), project: project, dialect),
            IssueSQL.version(IssueID(1), project: project, dialect),
            IssueSQL.versions(project: project, changedSince: now, dialect),
            IssueSQL.changed(project: project, since: now, dialect), IssueSQL.statusCounts(project: project, dialect),
            HealthSQL.days(project: project, release: nil, from: DayNumber(now), through: DayNumber(now), dialect),
            HealthSQL.recentSessions(project: project, today: DayNumber(now), dialect),
            HealthSQL.newIssues(project: project, dialect), HealthSQL.releases(project: project, limit: 5, dialect),
            ReportSQL.listing(
                ReportQuery(project: project, kind: .crash, release: "1", since: now, before: 9), dialect),
            ReportSQL.droppedEvents(project: project, from: DayNumber(now), dialect),
        ] + IssueSQL.versions(of: [IssueID(1)], project: project, dialect)
    }

    @Test func everyProjectStatementIsLimitedToItsProject() {
        for statement in Self.projectStatements(.sqlite) {
            #expect(statement.values.contains(.integer(7)), "\(statement.sql)")
            #expect(statement.sql.contains("project_id = ?"), "\(statement.sql)")
        }
    }

    /// A value bound after its statement's text was taken would be missing: SQLite then refuses the statement
    /// ("missing statement argument"), and PostgreSQL binds the wrong values to the placeholders after it.
    @Test func everyStatementBindsAValueToEachOfItsPlaceholders() {
        let issue = IssueID(3)
        for dialect in [SQLDialect.sqlite, .postgres] {
            let statements =
                Self.projectStatements(dialect) + [
                    IssueSQL.detail(issue, project: nil, dialect), IssueSQL.releases(of: issue, dialect),
                    IssueSQL.days(of: issue, now: Self.now, dialect), IssueSQL.breakdown(of: issue, key: "os", dialect),
                    IssueSQL.userBreakdown(of: issue, dialect), ReportSQL.samples(of: issue, dialect),
                    ReportSQL.listing(ReportQuery(project: nil), dialect),
                ]
            for statement in statements {
                let placeholders = (1...statement.values.count + 1).filter {
                    statement.sql.contains(dialect.placeholder($0))
                }
                #expect(placeholders == Array(1..<statement.values.count + 1), "\(dialect): \(statement.sql)")
            }
        }
    }

    @Test func versionsOfManyIssuesAreReadInBoundedStatements() {
        let ids = (1...1_001).map { IssueID(Int64($0)) }
        let statements = IssueSQL.versions(of: ids, project: ProjectID(3), .postgres)
        #expect(statements.map(\.values.count) == [501, 501, 2])
        #expect(statements.flatMap { $0.values.dropFirst() } == ids.map { .integer($0.rawValue) })
        #expect(statements[2].sql.contains("i.id IN ($2)"))
        #expect(IssueSQL.versions(of: [], project: ProjectID(3), .sqlite).isEmpty)
    }

    @Test func aReportListingFilteredByIssueKeepsSQLiteOffTheProjectIndex() {
        let byIssue = ReportQuery(project: ProjectID(1), issue: IssueID(4), before: 100, limit: 0)
        #expect(ReportSQL.listing(byIssue, .sqlite).sql.contains("+r.project_id = ?1"))
        #expect(ReportSQL.listing(byIssue, .postgres).sql.contains(" r.project_id = $1"))
        #expect(ReportSQL.listing(byIssue, .sqlite).values == [.integer(1), .integer(4), .integer(100), .integer(1)])
        #expect(!ReportSQL.listing(ReportQuery(project: ProjectID(1)), .sqlite).sql.contains("+r."))
    }

    // MARK: Rows

    @Test func anIssueRowBecomesTheIssueItNames() throws {
        let issue = try #require(try IssueSQL.summary(CellRow(cells: Self.issueCells()), now: Self.now))
        #expect(issue.id == IssueID(9) && issue.project == ProjectID(2))
        #expect(
            issue.kind == .crash && issue.status == .open
                && issue.fingerprint == Fingerprint(version: 2, hash: "0123456789abcdef"))
        #expect(issue.culprit == "main.swift:3" && issue.firstRelease == "1.0" && issue.lastRelease == nil)
        #expect(issue.events == 5 && issue.users == 3)
        #expect(issue.signals.regressed && issue.signals.fresh && issue.signals.repetitive)
        #expect(issue.category == .crash)
        let hang = try #require(try IssueSQL.summary(CellRow(cells: Self.issueCells(hang: true)), now: Self.now))
        #expect(hang.kind == .crash && hang.hang && hang.category == .hang)
    }

    @Test func aRowOfAnUnknownKindOrStatusIsSkippedAndAMissingValueIsAnError() throws {
        #expect(try IssueSQL.summary(CellRow(cells: Self.issueCells(kind: "hang")), now: Self.now) == nil)
        #expect(try IssueSQL.summary(CellRow(cells: Self.issueCells(status: "fixed")), now: Self.now) == nil)
        var cells = Self.issueCells()
        cells[12] = nil
        #expect(throws: SQLRowError(column: 12, message: "NULL")) {
            try IssueSQL.summary(CellRow(cells: cells), now: Self.now)
        }
    }

    @Test func aTopIssueRowEndsWithItsWindowsCounts() throws {
        let row = CellRow(cells: Self.issueCells() + [.integer(11), .integer(17)])
        let top = try #require(try IssueSQL.topIssue(row, now: Self.now))
        #expect(top.users == 11 && top.events == 17)
        let ranked = IssueSQL.withPrevious([top], [(IssueID(9), TopIssue.Counts(users: 1, events: 2))])
        #expect(ranked.map(\.previous) == [TopIssue.Counts(users: 1, events: 2)])
        #expect(IssueSQL.withPrevious([top], []).map(\.previous) == [TopIssue.Counts(users: 0, events: 0)])
    }

    @Test func aRawReportWhoseByteRangeIsNotOneIsSkipped() throws {
        let summary: [SQLValue?] = [
            .integer(1), .integer(2), .text(String(repeating: "a", count: 32)), .text("crash"), .integer(0),
            .integer(0),
            nil, nil, nil, nil, nil, .integer(0), .integer(0), .integer(0), .integer(0), .integer(0), .integer(0), nil,
        ]
        func raw(offset: Int64, length: Int64) throws -> RawReport? {
            try ReportSQL.raw(
                CellRow(
                    cells: summary + [
                        .integer(offset), .integer(length), .text("gzip"), .integer(3), .text("abc"),
                        .text("native-v1"),
                    ]))
        }
        let report = try #require(try raw(offset: 1, length: 2))
        #expect(report.range == 1..<3 && report.payload.bytes == Array("abc".utf8) && report.summary.issue == nil)
        #expect(try raw(offset: -1, length: 2) == nil)
        #expect(try raw(offset: Int64.max, length: 1) == nil)
    }

    @Test func aReleasesAdoptionIsItsShareOfTheLastWeeksSessions() throws {
        let counts = HealthSQL.ReleaseCounts(
            recentSessions: [(HealthSQL.allReleases, 40), ("2.0", 30), ("1.0", 10)], newIssues: [("2.0", 3)])
        func release(_ name: String, _ counts: HealthSQL.ReleaseCounts) throws -> ReleaseRow {
            let cells: [SQLValue?] =
                [.text(name), .integer(1_000), .integer(2_000)] + (1...6).map { .integer(Int64($0)) }
            return try HealthSQL.release(CellRow(cells: cells), counts)
        }
        let two = try release("2.0", counts)
        #expect(two.adoption == 0.75 && two.recentSessions == 30 && two.newIssues == 3)
        #expect(two.health.sessions == 1 && two.health.crashedUsers == 6)
        #expect(try release("0.9", counts).adoption == 0)
        // No sessions in the week: no adoption to show, never 0 %.
        #expect(try release("2.0", HealthSQL.ReleaseCounts(recentSessions: [], newIssues: [])).adoption == nil)
    }

    @Test func anIssuesDetailRowCarriesItsStatusChangeNoteAndVersion() throws {
        let grouping = try JSONEncoder().encode(
            GroupingResult(
                fingerprint: Fingerprint(version: 2, hash: "0123456789abcdef"), source: .stack, components: [],
                title: "t", culprit: nil))
        let tail: [SQLValue?] = [
            .text(String(decoding: grouping, as: UTF8.self)), .integer(5_000), .text("the CLI"), .text("ship it"),
            .text("https://github.com/acme/shop/issues/7"), .integer(6_000), .integer(5), .text("open"), .integer(7),
        ]
        let detail = try #require(try IssueSQL.detail(CellRow(cells: Self.issueCells() + tail), now: Self.now))
        #expect(detail.statusChange == IssueStatusChange(at: Date(timeIntervalSince1970: 5), by: "the CLI"))
        #expect(detail.note == "ship it" && detail.repeatUsers == 2)
        #expect(detail.trackerURL == "https://github.com/acme/shop/issues/7")
        #expect(detail.version == IssueVersion(changedAt: 6_000, events: 5, status: "open", noteBytes: 7))
        // A grouping this build cannot read: no detail, rather than a wrong one.
        var unreadable = Self.issueCells() + tail
        unreadable[IssueSQL.columnNames.count] = .text("{")
        #expect(try IssueSQL.detail(CellRow(cells: unreadable), now: Self.now) == nil)
    }
}
