import FaultlineCore
import Foundation
import Logging
import Pipeline
import Synchronization
import Testing

/// What the worker's batches share: each stored payload inflated once, a module without debug files looked up
/// once per project, batches that grow while a backlog lasts — and still every report done exactly once.
@Suite struct SymbolicationBatchTests {
    static let app = BuildID("aaaaaaaa")!
    static let missing = BuildID("cccccccc")!

    /// Counts what the worker reads: payloads inflated (by the payload id their bytes carry) and reports read (by
    /// id, with the payload id of the bytes they were read from).
    final class Reads: Sendable {
        let inflated = Mutex<[Int64]>([])
        let read = Mutex<[(report: Int64, payload: Int64?)]>([])

        var reading: StoredReportReading {
            StoredReportReading(
                inflate: { payload in
                    let id = payload.bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
                    self.inflated.withLock { $0.append(id) }
                    // "Inflated" bytes: the payload id, so `read` can check it got its own payload's bytes.
                    return payload.bytes
                },
                read: { bytes, raw in
                    let payload = bytes.isEmpty ? nil : bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
                    self.read.withLock { $0.append((raw.summary.cursor, payload)) }
                    return SymbolicationBatchTests.report(raw.summary.cursor)
                })
        }
    }

    /// Report `id`: three frames in the app module, two in a module nobody uploaded files for.
    static func report(_ id: Int64) -> Report {
        let modules = [
            LoadedModule(name: "libapp.so", buildID: app, baseAddress: 0x1000, size: 0x1000),
            LoadedModule(name: "libmissing.so", buildID: missing, baseAddress: 0x10000, size: 0x1000),
        ]
        let frames = [0x1000 + 0x10 * UInt64(id), 0x10010, 0x1004, 0x10020, 0x1008].map { Frame(address: $0) }
        return Report(
            eventID: EventID(String(format: "%032x", id))!, kind: .crash, timestamp: Date(timeIntervalSince1970: 0),
            threads: [ThreadInfo(crashed: true, frames: frames)], modules: modules)
    }

    /// Resolves the app module's addresses; has no file for the other; counts what it is asked, per project.
    final class CountingSymbolicator: AddressSymbolicating {
        let asked = Mutex<[String: Int]>([:])
        func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
            asked.withLock { $0["\(project.rawValue)/\(buildID.rawValue)", default: 0] += 1 }
            if buildID == SymbolicationBatchTests.missing { return .missingDebugFile }
            return .resolved([ResolvedFrame(function: "function_\(moduleOffset)", file: "app.c", line: 1)])
        }
        func lookupSourceLine(buildID: BuildID, file: String, line: Int, project: ProjectID) async -> AddressLookup {
            .missingDebugFile
        }
    }

    func worker(
        _ store: FakeSymbolicationStore, _ symbolicator: some AddressSymbolicating, reads: Reads, batchSize: Int = 64,
        backlogBatchSize: Int = 64, concurrency: Int = 2
    ) -> SymbolicationWorker {
        SymbolicationWorker(
            store: store, symbolicator: symbolicator, reading: reads.reading, clock: FixedClock(),
            logger: Logger(label: "test"),
            batchSize: batchSize, backlogBatchSize: backlogBatchSize, concurrency: concurrency)
    }

    @Test(arguments: [1, 2, 5])
    func eachPayloadIsInflatedOncePerBatchAndEveryReportIsReadFromItsOwn(concurrency: Int) async throws {
        // Given: a 20-report payload, a 5-report payload, and three payloads of one report each.
        let store = FakeSymbolicationStore()
        var payloadOf: [Int64: Int64] = [:]
        for id: Int64 in 1...20 { payloadOf[id] = 100 }
        for id: Int64 in 21...25 { payloadOf[id] = 200 }
        for id: Int64 in 26...28 { payloadOf[id] = 300 + id }
        for (id, payload) in payloadOf { store.add(id, payload: payload) }
        let reads = Reads()

        // When: one batch takes them all.
        let done = try await worker(store, CountingSymbolicator(), reads: reads, concurrency: concurrency).step()

        // Then: each payload was inflated exactly once, each report read once from its own payload's bytes…
        #expect(done == 28)
        #expect(reads.inflated.withLock { $0 }.sorted() == [100, 200, 326, 327, 328])
        let read = reads.read.withLock { $0 }
        #expect(read.map(\.report).sorted() == Array(1...28))
        #expect(read.allSatisfy { $0.payload == payloadOf[$0.report] })
        // …and saved once, in one save for the batch, symbolicated and grouped.
        let all: String = (1...28).map { String($0) }.joined(separator: ",")
        let expected: [String] = ["attempt " + all, "save " + all]
        #expect(store.events == expected)
        for id: Int64 in 1...28 {
            let row = try #require(store.row(id))
            #expect(row.saved == 1)
            #expect(row.state == .partial)
            #expect(row.grouping != nil)
        }
    }

    @Test func aPayloadIsInflatedAgainByTheNextBatchOnly() async throws {
        // Given: one 20-report payload and batches of 8.
        let store = FakeSymbolicationStore()
        for id: Int64 in 1...20 { store.add(id, payload: 7) }
        let reads = Reads()
        let worker = worker(store, CountingSymbolicator(), reads: reads, batchSize: 8, backlogBatchSize: 8)
        // When: three batches do it.
        var steps: [Int] = []
        while true {
            let done = try await worker.step()
            if done == 0 { break }
            steps.append(done)
        }
        // Then: inflated once per batch that had reports of it, every report done once.
        #expect(steps == [8, 8, 4])
        #expect(reads.inflated.withLock { $0 } == [7, 7, 7])
        #expect((1...20).allSatisfy { store.row(Int64($0))?.saved == 1 })
    }

    @Test func aModuleWithoutDebugFilesIsAskedAboutOncePerBatchAndProject() async throws {
        // Given: reports of two projects in one batch, each with two frames in a module without files.
        let store = FakeSymbolicationStore()
        for id: Int64 in 1...12 { store.add(id, project: ProjectID(id % 2 == 0 ? 1 : 2), payload: id) }
        let symbolicator = CountingSymbolicator()

        // When
        #expect(try await worker(store, symbolicator, reads: Reads()).step() == 12)

        // Then: the missing module was asked about once per project; the app's frames each time (3 per report).
        let asked = symbolicator.asked.withLock { $0 }
        #expect(asked["1/\(Self.missing.rawValue)"] == 1)
        #expect(asked["2/\(Self.missing.rawValue)"] == 1)
        #expect(asked["1/\(Self.app.rawValue)"] == 18)
        #expect(asked["2/\(Self.app.rawValue)"] == 18)
        // Every report's result still names the missing module and resolves the app frames.
        for id: Int64 in 1...12 {
            let result = try #require(store.row(id)?.result)
            #expect(result.missing.map(\.buildID) == [Self.missing.rawValue])
            #expect(
                result.threads[0].map(\.status) == [
                    "dwarf", "missing_debug_file", "dwarf", "missing_debug_file", "dwarf",
                ])
        }

        // And the next batch asks again (a file may have been stored since).
        store.add(13, project: ProjectID(1), payload: 13)
        #expect(try await worker(store, symbolicator, reads: Reads()).step() == 1)
        #expect(symbolicator.asked.withLock { $0 }["1/\(Self.missing.rawValue)"] == 2)
    }

    @Test func batchesGrowWhileABacklogLastsAndShrinkWhenItIsGone() async throws {
        let store = FakeSymbolicationStore()
        for id: Int64 in 1...40 { store.add(id, payload: id) }
        let worker = worker(store, CountingSymbolicator(), reads: Reads(), batchSize: 4, backlogBatchSize: 16)
        var steps: [Int] = []
        for _ in 0..<10 {
            let done = try await worker.step()
            if done == 0 { break }
            steps.append(done)
        }
        // A full batch of 4 says there is a backlog: 16 at a time until one comes short.
        #expect(steps == [4, 16, 16, 4])
        store.add(41, payload: 41)
        #expect(try await worker.step() == 1)
        #expect((1...41).allSatisfy { store.row(Int64($0))?.saved == 1 })
    }

    /// Ingest first: while reports arrive, a batch is small (its transaction holds the database writer only
    /// briefly, so ingest's group commits do not queue behind it); once ingest is quiet, batches grow again.
    @Test func whileIngestIsBusyBatchesAreSmallAndTheyGrowOnceItIsQuiet() async throws {
        let store = FakeSymbolicationStore()
        for id: Int64 in 1...300 { store.add(id, payload: id) }
        var worker = worker(store, CountingSymbolicator(), reads: Reads(), batchSize: 64, backlogBatchSize: 128)
        // Busy for an hour once written (no timing in the test: a busy CI machine cannot make it quiet early).
        let activity = IngestActivity(quiet: .seconds(3600))
        worker.ingestActivity = activity
        #expect(!activity.isBusy)
        #expect(try await worker.step() == 64)  // nothing ingested yet
        activity.noteWrite()
        #expect(activity.isBusy)
        #expect(try await worker.step() == 16)
        #expect(try await worker.step() == 16)
        // Quiet again (an activity nothing was written to): the last batch came full, so the backlog size.
        worker.ingestActivity = IngestActivity()
        #expect(try await worker.step() == 128)
        var rest = 0
        while true {
            let done = try await worker.step()
            if done == 0 { break }
            rest += done
        }
        #expect(64 + 16 + 16 + 128 + rest == 300)
        #expect((1...300).allSatisfy { store.row(Int64($0))?.saved == 1 })
    }

    @Test func ingestCountsAsBusyOnlyWithinItsQuietWindowAfterAWrite() async throws {
        let activity = IngestActivity(quiet: .milliseconds(5))
        #expect(!activity.isBusy)
        activity.noteWrite()
        try await Task.sleep(for: .milliseconds(50))  // at least the window: time only moves forward
        #expect(!activity.isBusy)
        let long = IngestActivity(quiet: .seconds(3600))
        long.noteWrite()
        #expect(long.isBusy)
    }

    @Test func aPoisonReportInASharedPayloadIsRetriedAloneAndItsNeighboursAreDoneOnce() async throws {
        // Given: reports 1–6 in one payload; report 3 stops the process whenever it is symbolicated.
        let store = FakeSymbolicationStore()
        for id: Int64 in 1...6 { store.add(id, payload: 50) }
        let symbolicator = PoisonSymbolicator(store: store, poison: SymbolicationWorkerTests.poison)
        let reads = Reads()
        let reading = StoredReportReading(
            inflate: reads.reading.inflate,
            read: { bytes, raw in
                _ = try reads.reading.read(bytes, raw)
                return SymbolicationWorkerTests.report(raw.summary.cursor, poisoned: raw.summary.cursor == 3)
            })
        func newWorker() -> SymbolicationWorker {
            SymbolicationWorker(
                store: store, symbolicator: symbolicator, reading: reading, clock: FixedClock(),
                logger: Logger(label: "test"))
        }
        var current = newWorker()
        var crashes = 0
        for _ in 0..<20 {
            do {
                if try await current.step() == 0 { break }
            } catch is FakeSymbolicationStore.Died {
                crashes += 1
                store.restart()
                current = newWorker()
            }
        }
        // Then: as with reports read one by one — the batch crash, the poison report alone twice more.
        #expect(crashes == SymbolicationRetry.maxAttempts)
        for id: Int64 in [1, 2, 4, 5, 6] {
            #expect(store.row(id)?.state == .complete)
            #expect(store.row(id)?.saved == 1)
        }
        #expect(store.row(3)?.state == .missing)
        #expect(store.row(3)?.failure == SymbolicationRetry.reason(attempts: 3))
        #expect(store.row(3)?.grouping?.grouping.components == ["libpoison.so+0x30"])
    }
}
