import FaultlineCore
import Foundation
import Testing

/// Late symbols (the symbolication store and the debug-file store together), on each engine: storing a debug file
/// queues exactly the reports of that project whose result for the build-id was made with less, in the transaction
/// that stores it; a result made while a file was being stored stays queued and ungrouped.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct LateSymbolsConformanceTests {
    let fixture = InsightsConformanceTests()
    let x = BuildID("aa11")!
    let y = BuildID("bb22")!
    let executableFacts = DebugFileFacts(
        buildID: nil, kinds: [.executable], architecture: "x86_64", fileType: "executable", features: [],
        compressedDebugSections: false)
    let debugFacts = DebugFileFacts(
        buildID: nil, kinds: [.debuginfo], architecture: "x86_64", fileType: "executable", features: ["debug"],
        compressedDebugSections: false)

    /// A result whose one frame fell in `buildID`, with `status`.
    func result(_ buildID: BuildID, _ status: String) -> SymbolicatedReport {
        let missing = status == "missing_debug_file" ? [MissingModule(buildID: buildID.rawValue, module: "app")] : []
        let frames = status == "dwarf" ? [ResolvedFrame(function: "f", file: "f.c", line: 1)] : []
        return SymbolicatedReport(
            state: status == "dwarf" ? .complete : .missing,
            threads: [[SymbolicatedFrameSlot(frames: frames, buildID: buildID.rawValue, status: status, offset: 4)]],
            missing: missing)
    }

    func save(_ store: any SymbolicationStore, _ reportID: Int64, _ result: SymbolicatedReport, seen: Int64? = nil)
        async throws
    {
        try await store.saveAll(
            [
                SymbolicationOutcome(
                    reportID: reportID, result: result, grouping: fixture.grouping("site \(reportID)"), filesSeen: seen,
                    modules: [x.rawValue: "app", y.rawValue: "lib"])
            ],
            at: Date())
    }

    func upload(
        _ files: any DebugFileStore, _ text: String, _ facts: DebugFileFacts, _ id: BuildID, _ project: ProjectID
    ) async throws {
        let file = try StoreConformanceTests.upload(files, text)
        let outcome = try await files.store(
            file, facts: facts, buildID: id, project: project, name: nil, quotaBytes: 1 << 20, at: Date())
        guard case .stored = outcome else { throw StorageError(.openFailed, "not stored") }
    }

    func pending(_ db: Stores) async throws -> Set<Int64> {
        Set(try await db.texts("SELECT id FROM reports WHERE symbolication = 'pending'").compactMap { Int64($0) })
    }

    func rank(_ db: Stores, _ reportID: Int64, _ id: BuildID) async throws -> Int? {
        try await db.texts(
            "SELECT rank FROM report_modules WHERE report_id = \(reportID) AND build_id = '\(id.rawValue)'"
        ).first.flatMap { Int($0) }
    }

    func sequence(_ db: Stores) async throws -> [String] {
        try await db.texts("SELECT value FROM counters WHERE name = 'debug_files'")
    }

    @Test(arguments: Engine.allCases) func aBetterFileQueuesExactlyTheOutrankedReportsOfItsProject(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            let b = try await db.projects.createProject(
                slug: ProjectSlug("other")!, ingestKeyHash: SecretHash(hex: String(repeating: "c", count: 64)),
                uploadTokenHash: SecretHash(hex: String(repeating: "d", count: 64)),
                createdAt: Date(timeIntervalSince1970: 1),
                rateLimitPerSecond: 50)
            try await fixture.store(
                db, a, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil), (3, "1.0", "u3", 30, nil)])
            try await fixture.store(db, b, [(4, "1.0", "u4", 40, nil), (5, "1.0", "u5", 50, nil)])
            let (r1, r2, r3) = (
                try await fixture.rowID(db, 1), try await fixture.rowID(db, 2), try await fixture.rowID(db, 3)
            )
            let (r4, r5) = (try await fixture.rowID(db, 4), try await fixture.rowID(db, 5))
            let store = db.symbolication
            let files = db.debugFiles

            // Given: every report was symbolicated without any file: r1, r2 (A) and r4, r5 (B) lacked X, r3 (A) lacked Y.
            for id in [r1, r2, r4, r5] { try await save(store, id, result(x, "missing_debug_file")) }
            try await save(store, r3, result(y, "missing_debug_file"))
            #expect(try await pending(db).isEmpty)
            #expect(try await rank(db, r1, x) == 0)

            // When A's stripped executable of X arrives: A's reports that lacked X are queued; r3 (Y) and B's are not.
            try await upload(files, "a executable", executableFacts, x, a.id)
            #expect(try await pending(db) == [r1, r2])
            let listed = try await store.missingDebugFiles(project: a.id, release: nil)
            #expect(listed.first { $0.buildID == x }?.has == [.executable])
            #expect(listed.first { $0.buildID == y }?.has == [])
            #expect(try await store.missingDebugFiles(project: b.id, release: nil).first { $0.buildID == x }?.has == [])

            // They are redone with the executable only (rank 1): still listed as lacking debug information.
            try await save(store, r1, result(x, "not_found"))
            try await save(store, r2, result(x, "not_found"))
            #expect(try await rank(db, r1, x) == 1)
            #expect(try await pending(db).isEmpty)
            #expect(
                try await store.missingDebugFiles(project: a.id, release: nil).first { $0.buildID == x }?.reports == 2)

            // The same bytes again change nothing: nothing is queued.
            try await upload(files, "a executable", executableFacts, x, a.id)
            #expect(try await pending(db).isEmpty)

            // The debug file outranks the executable: r1 and r2 again, nothing else (not B's r4/r5, which lack X too).
            try await upload(files, "a debug", debugFacts, x, a.id)
            #expect(try await pending(db) == [r1, r2])
            try await save(store, r1, result(x, "dwarf"))
            try await save(store, r2, result(x, "dwarf"))
            #expect(try await rank(db, r2, x) == 2)
            #expect(try await store.missingDebugFiles(project: a.id, release: nil).map(\.buildID) == [y])

            // A rebuilt executable does not outrank the debug file the reports were made with: nothing is queued.
            try await upload(files, "a executable v2", executableFacts, x, a.id)
            #expect(try await pending(db) == [])
            // B's reports of X still wait for B's own file, and are queued by it alone.
            try await upload(files, "b debug", debugFacts, x, b.id)
            #expect(try await pending(db) == [r4, r5])
            try await save(store, r4, result(x, "dwarf"))
            try await save(store, r5, result(x, "dwarf"))

            // A replaces its debug file with different bytes: the reports made with the old one are redone, only A's.
            try await upload(files, "a debug, rebuilt", debugFacts, x, a.id)
            #expect(try await pending(db) == [r1, r2])
        }
    }

    /// A source bundle (kind `sources`, migration v16-source-bundles) is stored beside the symbols of its build-id
    /// but resolves no address: it queues no report, takes no change sequence value, and does not count as
    /// debug information on the missing-debug-files list.
    @Test(arguments: Engine.allCases) func aSourceBundleQueuesNothingAndIsNotDebugInformation(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil)])
            let r1 = try await fixture.rowID(db, 1)
            let store = db.symbolication
            let files = db.debugFiles
            try await save(store, r1, result(x, "missing_debug_file"))
            let before = try await sequence(db)
            let sourceFacts = DebugFileFacts(
                buildID: x, kinds: [.sources], architecture: "x86_64", fileType: "source_bundle", features: ["sources"],
                compressedDebugSections: false)

            try await upload(files, "SYSB bundle", sourceFacts, x, a.id)
            #expect(try await pending(db).isEmpty)
            #expect(try await sequence(db) == before)
            #expect(try await files.kinds(of: x, project: a.id) == [.sources])
            #expect(try await files.path(of: x, kind: .sources, project: a.id) != nil)
            #expect(try await files.path(of: x, kind: .debuginfo, project: a.id) == nil)
            let listed = try await store.missingDebugFiles(project: a.id, release: nil)
            #expect(listed.first { $0.buildID == x }?.has == [.sources])
            // The debug file that arrives next still queues the report, and leaves the bundle in place.
            try await upload(files, "a debug", debugFacts, x, a.id)
            #expect(try await pending(db) == [r1])
            #expect(try await files.kinds(of: x, project: a.id) == [.debuginfo, .sources])
        }
    }

    @Test(arguments: Engine.allCases) func aResultMadeBeforeAFileWasStoredStaysQueuedAndUngrouped(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            try await fixture.store(db, a, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil)])
            let (r1, r2) = (try await fixture.rowID(db, 1), try await fixture.rowID(db, 2))
            let store = db.symbolication
            let files = db.debugFiles
            let seen = try #require(try await store.pending(limit: 10).first?.filesSeen)

            // A file of X is stored after the batch was read; r1's result touched X, r2's only Y.
            try await upload(files, "debug", debugFacts, x, a.id)
            try await save(store, r1, result(x, "missing_debug_file"), seen: seen)
            try await save(store, r2, result(y, "missing_debug_file"), seen: seen)
            #expect(try await pending(db) == [r1])
            #expect(try await db.texts("SELECT issue_id FROM reports WHERE id = \(r1)") == ["∅"])
            #expect(
                try await db.texts("SELECT issue_id IS NOT NULL FROM reports WHERE id = \(r2)").first.map {
                    ["1", "true"].contains($0)
                } == true)
            // The next batch reads the new sequence: its result is final.
            let next = try #require(try await store.pending(limit: 10).first)
            #expect(next.filesSeen > seen)
            try await save(store, r1, result(x, "dwarf"), seen: next.filesSeen)
            #expect(try await pending(db).isEmpty)
        }
    }

    @Test(arguments: Engine.allCases) func theNextBatchLeavesOutTheReportsOfTheBatchBeingSaved(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, a) = try await fixture.setUp(stores)
            try await fixture.store(db, a, (1...5).map { ($0, "1.0", "u\($0)", Double(10 * $0), nil) })
            var r: [Int64] = [0]
            for n in 1...5 { r.append(try await fixture.rowID(db, n)) }
            let store = db.symbolication
            // Left out, and not counted against the limit.
            #expect(try await store.pending(limit: 2, excluding: [r[2]]).map(\.reportID) == [r[1], r[3]])
            #expect(try await store.pending(limit: 2, excluding: [r[1], r[3]]).map(\.reportID) == [r[2], r[4]])
            #expect(try await store.pending(limit: 10, excluding: Set(r[1...4])).map(\.reportID) == [r[5]])
        }
    }
}
