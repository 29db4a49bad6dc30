import FaultlineCore
import Foundation
import PostgresNIO
import TestSupport
import Testing

@testable import PostgresStorage
@testable import StoreMigration

/// A report whose text folds past PostgreSQL's limit for one search entry (1 MiB of lexemes in a `tsvector`) is stored
/// and found on both engines, and a report whose result the database refuses is failed alone: the rest of its batch,
/// another project's report among it, is saved with it (issue #39, finding 3).
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct SearchEntryLimitConformanceTests {
    let fixture = InsightsConformanceTests()
    let search = SearchConformanceTests()
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// A crash within the ingest limits (108 function names of 38 words, at most 8 KiB each; 64 custom keys of 4 words,
    /// at most 1 KiB each; an 8 KiB message: ~950 KB in all) whose text folds to more than 1 MiB of distinct words.
    func hostileReport(_ n: Int) -> Report {
        var next = 0
        func words(_ count: Int) -> String {
            defer { next += count }
            return HangulWords.words(next, count)
        }
        var report = Report(eventID: eventID(n), kind: .crash, timestamp: now)
        report.threads = [ThreadInfo(crashed: true, frames: (0..<108).map { _ in Frame(function: words(38)) })]
        report.customKeys = (0..<64).map { (key: "k\($0)", value: .string(words(4))) }
        report.error = ErrorInfo(type: "SIGSEGV", message: words(38))
        return report
    }

    /// The bytes of the distinct terms PostgreSQL would hold for `document` (the lexemes of its `tsvector`).
    func lexemeBytes(_ document: SearchDocument) -> Int {
        var terms = Set<String>()
        for field in [
            document.event, document.user, document.release, document.error, document.functions, document.keys,
        ] {
            for term in PostgresSearchStore.terms(field) where term.utf8.count <= PostgresSearchStore.maxLexemeBytes {
                terms.insert(term)
            }
        }
        return terms.reduce(0) { $0 + $1.utf8.count }
    }

    /// `report`'s entry with its function names and custom keys cut at 32 Ki characters a field, as entries were made
    /// before fields were bounded in bytes.
    func uncut(_ report: Report, _ document: SearchDocument) -> SearchDocument {
        var uncut = document
        uncut.functions = String(
            report.threads[0].frames.compactMap(\.function).joined(separator: "\n").prefix(32 * 1024))
        let keys = report.customKeys.map { key, value in
            if case .string(let text) = value { "\(key) \(text)" } else { key }
        }
        uncut.keys = String(keys.joined(separator: "\n").prefix(32 * 1024))
        return uncut
    }

    /// Throws what PostgreSQL answers when `vector` is cast to a `tsvector`.
    func cast(_ vector: String, _ postgres: PostgresEngine) async throws {
        try await postgres.read { connection in
            _ = try await connection.query("SELECT length(\(vector)::tsvector)", logger: postgres.logger)
        }
    }

    func outcome(_ db: Stores, _ n: Int, _ document: SearchDocument) async throws -> SymbolicationOutcome {
        SymbolicationOutcome(
            reportID: try await db.reportID(eventID(n)),
            result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
            grouping: fixture.grouping("site \(n)"), search: document)
    }

    func state(_ db: Stores, _ n: Int) async throws -> [String] {
        try await db.texts("SELECT symbolication FROM reports WHERE id = \(try await db.reportID(eventID(n)))")
    }

    @Test(arguments: Engine.allCases) func aReportWhoseTextFoldsPastTheEntryLimitIsStoredAndFound(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            let b = try await search.other(db)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil)])
            try await fixture.store(db, b, [(2, "1.0", "u2", 20, nil)])
            let report = hostileReport(1)
            let document = SearchDocument.make(report, symbols: nil, grouping: fixture.grouping("site 1").grouping)

            // Given: cut at 32 Ki characters a field, as it was, the entry holds more than PostgreSQL's 1 MiB of lexemes,
            // and PostgreSQL refuses it (SQLSTATE 54000).
            let uncut = uncut(report, document)
            #expect(lexemeBytes(uncut) > 1_048_575)
            if let postgres = db.postgres {
                let refusal = await #expect(throws: (any Error).self) {
                    try await cast(PostgresSearchStore.vector(uncut), postgres)
                }
                #expect(refusal.flatMap(PostgresErrors.sqlState) == "54000")
            }
            // The entry as made now: each field bounded in folded bytes.
            #expect(lexemeBytes(document) <= 6 * SearchDocument.maxFieldBytes * 3 / 2)

            // When: saved in one batch with another project's report.
            try await db.symbolication.saveAll(
                [
                    try await outcome(db, 1, document),
                    try await outcome(
                        db, 2, search.document(2, user: "bob", key: "silver", function: "Cart.total()", message: "boom")
                    ),
                ],
                at: now)

            // Then: both are processed and found, each in its own project only.
            #expect(try await state(db, 1) == ["not_needed"])
            #expect(try await state(db, 2) == ["not_needed"])
            let first = HangulWords.word(0)
            #expect(search.events(try await search.find(db, first, a)) == [eventID(1).rawValue])
            #expect(search.events(try await search.find(db, first, b)).isEmpty)
            #expect(search.events(try await search.find(db, "Cart.total()", b)) == [eventID(2).rawValue])
            try await search.expectIndexIntact(db)
        }
    }

    /// `faultline migrate` copies an entry SQLite indexed under the older limit (32 Ki characters a field) bounded as the
    /// worker bounds entries now, so PostgreSQL takes it.
    @Test func anEntryIndexedUnderTheOlderLimitIsBoundedWhenMigrated() async throws {
        try await withStores(.postgres) { db in
            let report = hostileReport(1)
            let old = uncut(report, SearchDocument.make(report, symbols: nil, grouping: nil))
            let row: [TableValue] =
                [.integer(1), .integer(0), .integer(1)]
                + [old.event, old.user, old.release, old.error, old.functions, old.keys].map { .text($0) }
            let entry = try CopyPlan.searchEntry(row)
            guard case .text(let vector) = entry[3] else {
                Issue.record("no tsvector text: \(entry[3])")
                return
            }
            try await cast(vector, db.postgres!)
            #expect(vector.contains(" '\(PostgresSearchStore.terms(HangulWords.word(0))[0])':"))
        }
    }

    /// Makes the database refuse the search entry of report row `id` as PostgreSQL refuses an entry over its limit
    /// (SQLSTATE 54000 there; an abort on SQLite).
    func refuseEntry(of id: Int64, _ db: Stores) async throws {
        switch db.engine {
        case .postgres:
            try await db.execute(
                """
                CREATE FUNCTION refuse_entry() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'test: entry refused' USING ERRCODE = 'program_limit_exceeded'; END $$
                """)
            try await db.execute(
                "CREATE TRIGGER refuse_entry BEFORE INSERT ON search_documents FOR EACH ROW WHEN (NEW.report_id = \(id)) EXECUTE FUNCTION refuse_entry()"
            )
        case .sqlite:
            try await db.execute(
                "CREATE TRIGGER refuse_entry BEFORE INSERT ON search_documents WHEN NEW.report_id = \(id) BEGIN SELECT RAISE(ABORT, 'test: entry refused'); END"
            )
        }
    }

    @Test(arguments: Engine.allCases) func aResultTheDatabaseRefusesFailsItsReportAloneAndTheBatchIsSaved(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            let b = try await search.other(db)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil), (3, "1.0", "u3", 30, nil)])
            try await fixture.store(db, b, [(2, "1.0", "u2", 20, nil)])
            try await refuseEntry(of: try await db.reportID(eventID(1)), db)

            // When: one batch of three reports of two projects, the first refused.
            var batch: [SymbolicationOutcome] = []
            for n in 1...3 {
                batch.append(
                    try await outcome(
                        db, n,
                        search.document(n, user: "user\(n)", key: "gold", function: "frame\(n)end", message: "boom")))
            }
            try await db.symbolication.saveAll(batch, at: now)

            // Then: the refused report leaves the queue failed, with a reason, and the others are saved and filed with it.
            #expect(try await state(db, 1) == ["missing"])
            #expect(
                try await db.texts(
                    "SELECT symbolication_failure FROM reports WHERE id = \(try await db.reportID(eventID(1)))")
                    == ["the database refused the symbolication result"])
            #expect(try await state(db, 2) == ["not_needed"])
            #expect(try await state(db, 3) == ["not_needed"])
            #expect(search.events(try await search.find(db, "frame2end", b)) == [eventID(2).rawValue])
            #expect(search.events(try await search.find(db, "frame3end", a)) == [eventID(3).rawValue])
            #expect(search.events(try await search.find(db, "frame1end", a)).isEmpty)
            #expect(try await db.texts("SELECT count(*) FROM reports WHERE issue_id IS NOT NULL") == ["2"])
        }
    }
}
