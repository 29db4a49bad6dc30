import FaultlineCore
import FaultlineHTTP
import Foundation
import GRDB
import Testing

@testable import SQLiteStorage

/// Symbolication results are stored through the database's `StoredBlobCodec`: compressed when a codec is given,
/// read back whichever form a row has, and a clear error (not a crash, not garbage) when a compressed row meets a
/// store without its codec. The zlib codec itself is tested in FormatsTests; here a transparent one (a marker byte,
/// then the bytes reversed) shows what the store does with it.
@Suite struct StoredResultCompressionTests {
    static let reversing = StoredBlobCodec(
        compress: { [0x01] + $0.reversed() },
        decompress: { blob, limit in
            guard blob.first == 0x01, blob.count - 1 <= limit else { throw StoredBlobError("not a reversed blob") }
            return blob.dropFirst().reversed()
        })

    static let result = SymbolicatedReport(
        state: .complete,
        threads: [
            [
                SymbolicatedFrameSlot(
                    frames: [
                        ResolvedFrame(function: "inner()", file: "Sources/App/Inner.swift", line: 7, inlined: true),
                        ResolvedFrame(function: "Cart.parse(_:)", file: "Sources/App/Cart.swift", line: 42, column: 9),
                    ],
                    buildID: String(repeating: "ab", count: 20), status: "symbolicated", offset: 0x1234),
                SymbolicatedFrameSlot(
                    frames: [], buildID: String(repeating: "cd", count: 20), status: "missing_debug_file", offset: 0x99),
            ]
        ],
        missing: [MissingModule(buildID: String(repeating: "cd", count: 20), module: "libc.so.6")])

    func storedBlob(_ db: TempDatabase, _ reportID: Int64) async throws -> [UInt8] {
        try await db.database.pool.read { db in
            try [UInt8](
                Data.fetchOne(db, sql: "SELECT result FROM report_symbols WHERE report_id = ?", arguments: [reportID])!)
        }
    }

    let rollups = SQLiteFixture()

    /// A database with two stored reports (their row ids), and a store on it opened with the reversing codec.
    func twoReports() async throws -> (TempDatabase, Int64, Int64, SQLiteSymbolicationStore) {
        let (db, p) = try await rollups.setUp()
        try await rollups.store(db, p, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil)])
        let compressing = SQLiteSymbolicationStore(
            database: try SQLiteEngine(
                path: db.folder + "/faultline.sqlite", codec: Self.reversing, identities: .hmacSHA256))
        return (db, try await rollups.rowID(db, 1), try await rollups.rowID(db, 2), compressing)
    }

    @Test func aResultIsStoredThroughTheCodecAndReadBackEqual() async throws {
        let (db, one, two, compressing) = try await twoReports()

        // When one result is saved alone and one in a batch, through a database opened with the codec…
        _ = try await compressing.save(Self.result, grouping: rollups.grouping("Cart.parse"), reportID: one, at: Date())
        try await compressing.saveAll(
            [SymbolicationOutcome(reportID: two, result: Self.result, grouping: rollups.grouping("Cart.parse"))],
            at: Date())

        // …then both rows hold the codec's bytes, not JSON, and read back as what was saved.
        let json = Array(StoredJSON.encode(Self.result))
        for id in [one, two] {
            #expect(try await storedBlob(db, id) == [0x01] + json.reversed())
            #expect(try await compressing.result(reportID: id).report == Self.result)
        }

        // A store opened without the codec says so instead of decoding garbage.
        let plain = SQLiteSymbolicationStore(database: db.database)
        await #expect(throws: StoredBlobError.self) { try await plain.result(reportID: one) }
    }

    @Test func rowsWrittenAsJSONAreStillReadByAStoreWithACodec() async throws {
        let (db, one, _, compressing) = try await twoReports()

        // Given a result stored before compression (a store without a codec writes JSON)…
        _ = try await SQLiteSymbolicationStore(database: db.database).save(
            Self.result, grouping: rollups.grouping("Cart.parse"), reportID: one, at: Date())
        #expect(try await storedBlob(db, one) == Array(StoredJSON.encode(Self.result)))

        // …a server that now compresses reads it as it is.
        #expect(try await compressing.result(reportID: one).report == Self.result)
    }

    @Test func aDamagedCompressedRowIsAnErrorForThatReportOnly() async throws {
        let (db, one, two, compressing) = try await twoReports()
        try await compressing.saveAll(
            [
                SymbolicationOutcome(reportID: one, result: Self.result, grouping: rollups.grouping("a")),
                SymbolicationOutcome(reportID: two, result: Self.result, grouping: rollups.grouping("b")),
            ], at: Date())

        // When one row's bytes are damaged on disk…
        try await db.database.pool.write { db in
            try db.execute(sql: "UPDATE report_symbols SET result = x'02ff' WHERE report_id = ?", arguments: [one])
        }
        // …reading it throws, and the other report is unaffected.
        await #expect(throws: StoredBlobError.self) { try await compressing.result(reportID: one) }
        #expect(try await compressing.result(reportID: two).report == Self.result)
    }
}
