import FaultlineCore
import Foundation
import Testing

/// Late files for walked minidumps, on each engine: the dump's modules recorded with an outcome
/// (`SymbolicationOutcome.alsoTouched`) queue the report when a file of one arrives, and a project's first executable
/// after its debug file queues the reports made with the debug file alone (`DebugDataRank.requeuesSameRank`).
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct WalkRequeueConformanceTests {
    let late = LateSymbolsConformanceTests()

    @Test(arguments: Engine.allCases) func aWalksOtherModulesAndAFirstExecutableQueueTheReport(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, a) = try await late.fixture.setUp(stores)
            try await late.fixture.store(db, a, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil)])
            let (r1, r2) = (try await late.fixture.rowID(db, 1), try await late.fixture.rowID(db, 2))
            let (x, y) = (late.x, late.y)
            let store = db.symbolication

            // Given r1's walk stopped in X (no file) and never reached Y; Y is recorded with the outcome. r2 is plain.
            try await store.saveAll(
                [
                    SymbolicationOutcome(
                        reportID: r1, result: late.result(x, "missing_debug_file"),
                        grouping: late.fixture.grouping("walk"), modules: [x.rawValue: "libc.so.6", y.rawValue: "app"],
                        alsoTouched: [x.rawValue, y.rawValue])
                ], at: Date())
            try await late.save(store, r2, late.result(x, "missing_debug_file"))
            #expect(try await late.rank(db, r1, y) == 0)
            #expect(try await late.rank(db, r2, y) == nil)

            // When Y's debug file arrives: r1 is queued (its walk may reach Y now), r2 is not
            try await late.upload(db.debugFiles, "y debug", late.debugFacts, y, a.id)
            #expect(try await late.pending(db) == [r1])

            // Redone with Y's debug file alone (rank 2)
            try await late.save(store, r1, late.result(y, "dwarf"))
            #expect(try await late.rank(db, r1, y) == 2)
            #expect(try await late.pending(db).isEmpty)

            // When Y's first executable arrives after its debug file: r1 is queued again (a walk takes its call-frame
            // information from the executable), though the debug file outranks it
            try await late.upload(db.debugFiles, "y executable", late.executableFacts, y, a.id)
            #expect(try await late.pending(db) == [r1])
            try await late.save(store, r1, late.result(y, "dwarf"))

            // A rebuilt executable under the same debug file queues nothing
            try await late.upload(db.debugFiles, "y executable v2", late.executableFacts, y, a.id)
            #expect(try await late.pending(db).isEmpty)
        }
    }
}
