import FaultlineCore
import Foundation
import Testing

/// Search (SearchReader, and the entries the symbolication store writes), on each engine: entries are written with
/// the result, replaced when a report is processed again, removed with their reports (retention, project deletion),
/// what the user types is text and never syntax, and one project's search never sees another's entries.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct SearchConformanceTests {
    let fixture = InsightsConformanceTests()
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// A processed report's document: user, custom key, function and error given.
    func document(_ n: Int, user: String, key: String, function: String, message: String) -> SearchDocument {
        var report = Report(eventID: eventID(n), kind: .crash, timestamp: now)
        report.userID = user
        report.app = AppInfo(version: "1.0", build: "7")
        report.customKeys = [(key: "plan", value: .string(key))]
        report.error = ErrorInfo(type: "SIGSEGV", message: message)
        report.threads = [ThreadInfo(crashed: true, frames: [Frame(address: 0x1000)])]
        let symbols = SymbolicatedReport(
            state: .complete,
            threads: [
                [
                    SymbolicatedFrameSlot(
                        frames: [ResolvedFrame(function: function, file: "a.swift", line: 3)], buildID: "aa",
                        status: "dwarf", offset: 4)
                ]
            ],
            missing: [])
        return SearchDocument.make(
            report, symbols: symbols, grouping: InsightsConformanceTests().grouping("site").grouping)
    }

    func save(_ db: Stores, _ n: Int, _ document: SearchDocument) async throws {
        try await db.symbolication.saveAll(
            [
                SymbolicationOutcome(
                    reportID: try await db.reportID(eventID(n)),
                    result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                    grouping: InsightsConformanceTests().grouping("site \(n)"), search: document)
            ],
            at: now)
    }

    func find(_ db: Stores, _ text: String, _ project: Project, page: Int = 1, pageSize: Int = 25) async throws
        -> SearchResults
    {
        try await db.search.search(
            try SearchText.parse(text), project: project.id, page: page, pageSize: pageSize, now: now)
    }

    func events(_ results: SearchResults) -> [String] { results.reports.map(\.eventID.rawValue) }

    /// SQLite's FTS5 index agrees with its content table (it raises SQLITE_CORRUPT otherwise); PostgreSQL's entry is
    /// its own index row.
    func expectIndexIntact(_ db: Stores) async throws {
        if db.engine == .sqlite {
            try await db.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
        }
    }

    func entries(_ db: Stores) async throws -> Int {
        Int(try await db.texts("SELECT count(*) FROM search_documents").first ?? "") ?? -1
    }

    func other(_ db: Stores) async throws -> Project {
        try await db.projects.createProject(
            slug: ProjectSlug("other")!, ingestKeyHash: SecretHash(hex: String(repeating: "c", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "d", count: 64)),
            createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
    }

    @Test(arguments: Engine.allCases) func findsAReportByEveryIndexedField(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil)])
            try await save(
                db, 1,
                document(
                    1, user: "alice@example.com", key: "gold", function: "Inventory.item(at:)",
                    message: "Index out of range"))
            try await save(
                db, 2, document(2, user: "bob", key: "silver", function: "Cart.total()", message: "Division by zero"))

            let one = eventID(1).rawValue
            #expect(events(try await find(db, "alice@example.com", a)) == [one])
            #expect(events(try await find(db, "gold", a)) == [one])
            #expect(events(try await find(db, "plan=gold", a)) == [one])
            #expect(events(try await find(db, one, a)) == [one])
            // A hyphenated event id is the same id.
            let hyphenated = "00000000-0000-0000-0000-000000000001"
            #expect(events(try await find(db, hyphenated, a)) == [one])
            #expect(events(try await find(db, "Inventory.item(at:)", a)) == [one])
            #expect(events(try await find(db, "out of range", a)) == [one])
            // The last term matches as a prefix.
            #expect(events(try await find(db, "Invent", a)) == [one])
            #expect(events(try await find(db, "division", a)) == [eventID(2).rawValue])
            // Both match a shared term, newest first; every word must match.
            #expect(events(try await find(db, "SIGSEGV", a)) == [eventID(2).rawValue, one])
            #expect(events(try await find(db, "SIGSEGV bob", a)) == [eventID(2).rawValue])
            #expect(events(try await find(db, "alice bob", a)).isEmpty)
            // The issue comes with its reports.
            let results = try await find(db, "gold", a)
            #expect(results.issues.map(\.title) == ["crash in site 1"])
            #expect(results.reportCount == 1 && !results.reportCountIsLowerBound)
        }
    }

    /// Case and diacritics do not matter (SQLite's unicode61 tokenizer folds both; PostgreSQL's entries are folded
    /// the same way), and a phrase never spans two fields.
    @Test(arguments: Engine.allCases) func caseAndDiacriticsAreIgnoredAndPhrasesStayInTheirField(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil)])
            try await save(db, 1, document(1, user: "Zoë", key: "Café", function: "Crème.brûlée()", message: "Ärger"))
            let one = [eventID(1).rawValue]
            for text in ["cafe", "CAFÉ", "zoe", "creme brulee", "Crème.Brûlée", "ärger", "arger"] {
                #expect(events(try await find(db, text, a)) == one, "\(text)")
            }
            // The user field ends with "zoe", the release field starts with "1": no phrase "zoe 1" across them.
            #expect(events(try await find(db, "zoe.1", a)).isEmpty)
        }
    }

    @Test(arguments: Engine.allCases) func hostileQueriesAreTextNotSyntax(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil)])
            try await save(db, 1, document(1, user: "alice", key: "gold", function: "main", message: "boom"))
            // FTS5 syntax typed by a user neither errors nor widens the search.
            for text in [
                "\"", "alice\"", "NEAR(alice gold)", "user:alice", "{user}: alice", "*", "a*", "alice OR bob",
                "NOT alice",
                "(alice", "alice)", "^alice", "project : p1", "p1", "\u{0}alice",
            ] {
                let results = try await find(db, text, a)
                // Operators and column names are words to match like any other (no report holds "near", "user" or "or").
                let expected = ["alice\"", "(alice", "alice)", "^alice", "\u{0}alice"].contains(text)
                #expect(events(results) == (expected ? [eventID(1).rawValue] : []), "\(text)")
            }
            #expect(throws: SearchTextError.self) { try SearchText.parse(String(repeating: "a", count: 257)) }
            #expect(throws: SearchTextError.self) {
                try SearchText.parse((0..<17).map { "w\($0)" }.joined(separator: " "))
            }
        }
    }

    @Test(arguments: Engine.allCases) func reprocessingReplacesTheEntry(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil)])
            try await save(db, 1, document(1, user: "alice", key: "gold", function: "frameBefore", message: "boom"))
            #expect(events(try await find(db, "frameBefore", a)).count == 1)
            // Late symbols: processed again with other function names.
            try await save(db, 1, document(1, user: "alice", key: "gold", function: "frameAfter", message: "boom"))
            #expect(events(try await find(db, "frameBefore", a)).isEmpty)
            #expect(events(try await find(db, "frameAfter", a)) == [eventID(1).rawValue])
            #expect(try await entries(db) == 1)
            try await expectIndexIntact(db)
        }
    }

    @Test(arguments: Engine.allCases) func aBatchOfManyEntriesIsWrittenAndReplacedWhole(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            let b = try await other(db)
            // More entries than one statement writes, from two projects (the names end in "end": the last word typed
            // is a prefix, and "before1" would find "before10" too).
            try await fixture.store(db, a, (1...150).map { ($0, "1.0", "u\($0)", Double($0), nil) })
            try await fixture.store(db, b, [(151, "1.0", "u151", 151, nil)])
            func batch(_ prefix: String) async throws -> [SymbolicationOutcome] {
                var outcomes: [SymbolicationOutcome] = []
                for n in 1...151 {
                    outcomes.append(
                        SymbolicationOutcome(
                            reportID: try await db.reportID(eventID(n)),
                            result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                            grouping: fixture.grouping("site \(n)"),
                            search: document(
                                n, user: "user\(n)", key: "gold", function: "\(prefix)\(n)end", message: "boom")))
                }
                return outcomes
            }
            try await db.symbolication.saveAll(try await batch("before"), at: now)
            for n in [1, 64, 65, 128, 129, 150] {
                #expect(events(try await find(db, "before\(n)end", a)) == [eventID(n).rawValue])
            }
            #expect(events(try await find(db, "before151end", a)).isEmpty)
            #expect(events(try await find(db, "before151end", b)) == [eventID(151).rawValue])
            // Processed again, the whole batch at once: every entry replaced.
            try await db.symbolication.saveAll(try await batch("after"), at: now)
            for n in [1, 64, 65, 128, 129, 150] {
                #expect(events(try await find(db, "before\(n)end", a)).isEmpty)
                #expect(events(try await find(db, "after\(n)end", a)) == [eventID(n).rawValue])
            }
            #expect(events(try await find(db, "after151end", b)) == [eventID(151).rawValue])
            #expect(try await entries(db) == 151)
            // A report given twice in one batch keeps the entry it was given last.
            let twice = try await batch("twice").suffix(2)
            try await db.symbolication.saveAll(Array(twice) + [try await batch("last")[149]], at: now)
            #expect(events(try await find(db, "twice150end", a)).isEmpty)
            #expect(events(try await find(db, "last150end", a)) == [eventID(150).rawValue])
            #expect(events(try await find(db, "twice151end", b)) == [eventID(151).rawValue])
            #expect(try await entries(db) == 151)
            try await expectIndexIntact(db)
        }
    }

    @Test(arguments: Engine.allCases) func oneProjectNeverFindsAnothersReports(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            let b = try await other(db)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil)])
            try await fixture.store(db, b, [(2, "1.0", "u2", 20, nil)])
            try await save(db, 1, document(1, user: "shared-user", key: "gold", function: "main", message: "boom in a"))
            try await save(db, 2, document(2, user: "shared-user", key: "gold", function: "main", message: "boom in b"))

            for text in ["shared-user", "gold", "main", "boom", eventID(2).rawValue, "SIGSEGV"] {
                let fromA = try await find(db, text, a)
                #expect(!events(fromA).contains(eventID(2).rawValue), "\(text)")
                #expect(fromA.issues.allSatisfy { $0.project == a.id })
                let fromB = try await find(db, text, b)
                #expect(!events(fromB).contains(eventID(1).rawValue), "\(text)")
            }
            #expect(events(try await find(db, eventID(2).rawValue, b)) == [eventID(2).rawValue])
            // The other project's token, typed as text, finds nothing either.
            #expect(events(try await find(db, "p\(b.id.rawValue)", a)).isEmpty)
        }
    }

    @Test(arguments: Engine.allCases) func retentionAndProjectDeletionRemoveEntries(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            let b = try await other(db)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil)], receivedAt: Date(timeIntervalSince1970: 1_000))
            try await fixture.store(db, a, [(2, "1.0", "u2", 20, nil)], receivedAt: now)
            try await fixture.store(db, b, [(3, "1.0", "u3", 30, nil)], receivedAt: now)
            for n in 1...3 {
                try await save(db, n, document(n, user: "user\(n)", key: "gold", function: "main", message: "boom"))
            }
            #expect(try await entries(db) == 3)

            // Retention drops the old payload, its report and the report's entry.
            let pruned = try await db.retention.prune(
                before: Date(timeIntervalSince1970: 2_000), limit: 100, now: Date(timeIntervalSince1970: 1_800_000_000))
            #expect(pruned.reports == 1)
            #expect(events(try await find(db, "gold", a)) == [eventID(2).rawValue])
            #expect(try await entries(db) == 2)
            try await db.retention.mergeSearchIndex()
            if db.sqlite != nil {
                // Issue #39: FTS5 keeps a deleted entry's tokens in its segments until they merge; the retention pass
                // merged them, so the pruned user id is gone from the index's own pages (the first term of a page is
                // stored whole, so "user2" is found there as a check that the bytes are searched at all).
                func pagesHolding(_ token: String) async throws -> String? {
                    try await db.texts(
                        "SELECT count(*) FROM search_index_data WHERE instr(block, CAST('\(token)' AS BLOB)) > 0"
                    ).first
                }
                #expect(try await pagesHolding("user1") == "0")
                #expect(try await pagesHolding("user2") != "0")
            }

            // Deleting a project drops its entries; the other project's stay.
            try await db.execute("DELETE FROM projects WHERE id = \(a.id.rawValue)")
            #expect(try await entries(db) == 1)
            #expect(events(try await find(db, "gold", b)) == [eventID(3).rawValue])
            try await expectIndexIntact(db)
        }
    }

    @Test(arguments: Engine.allCases) func countsStopAtTheLimitAndPagesGoNewestFirst(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            let n = SearchResults.countLimit + 5
            try await fixture.store(db, a, (1...n).map { ($0, "1.0", "u\($0)", Double($0), nil) })
            let ids = try await db.texts("SELECT id FROM reports").compactMap { Int64($0) }.sorted()
            let blank = document(0, user: "x", key: "gold", function: "main", message: "many")
            try await db.symbolication.saveAll(
                ids.enumerated().map { index, id in
                    var doc = blank
                    doc.event = eventID(index + 1).rawValue
                    return SymbolicationOutcome(
                        reportID: id, result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                        grouping: fixture.grouping("one site"), search: doc)
                },
                at: now)
            let first = try await find(db, "many", a, page: 1, pageSize: 10)
            #expect(first.reportCount == SearchResults.countLimit && first.reportCountIsLowerBound)
            #expect(events(first) == (0..<10).map { eventID(n - $0).rawValue })
            let third = try await find(db, "many", a, page: 3, pageSize: 10)
            #expect(events(third) == (20..<30).map { eventID(n - $0).rawValue })
            #expect(first.issues.count == 1 && first.issuesFromNewestOnly)
            // A precise search counts exactly.
            let exact = try await find(db, eventID(7).rawValue, a)
            #expect(exact.reportCount == 1 && !exact.reportCountIsLowerBound)
        }
    }
}
