import FaultlineCore
import Foundation
import Logging
import Pipeline
import Synchronization
import Testing

/// An in-memory symbolication queue that behaves like the SQLite one for attempts and results, and can
/// "die": once `crash()` is called, every later write is lost (as writes after a process died would be)
/// until `restart()`.
final class FakeSymbolicationStore: SymbolicationStore {
    struct Row {
        var project: ProjectID
        var state: SymbolicationState = .pending
        var attempts = 0
        var failure: String?
        var grouping: GroupingInput?
        var result: SymbolicatedReport?
        var saved = 0
        /// The stored payload the report is part of (nil: unknown, read on its own).
        var payload: Int64?
    }
    struct State {
        var rows: [Int64: Row] = [:]
        var dead = false
        /// Saves that throw a database-like error (the process stays alive).
        var failingSaves = 0
        /// Saves that throw `StorageError(.unavailable)`, as PostgreSQL's store does for a lost connection or a
        /// database that is restarting.
        var unavailableSaves = 0
        /// Reports whose result is refused whenever it comes with a search entry (as PostgreSQL refused an entry over
        /// its limit), in a batch or alone.
        var refusedEntries: Set<Int64> = []
        /// "attempt 1,2" and "save 1,2" in the order they happened.
        var events: [String] = []
        /// The claims given back (`releaseClaims`), one entry per call.
        var released: [[Int64]] = []
    }
    let state = Mutex(State())
    struct Died: Error {}
    struct Busy: Error {}
    struct Refused: Error {}

    func add(_ id: Int64, attempts: Int = 0, project: ProjectID = ProjectID(1), payload: Int64? = nil) {
        state.withLock { $0.rows[id] = Row(project: project, attempts: attempts, payload: payload) }
    }
    func row(_ id: Int64) -> Row? { state.withLock { $0.rows[id] } }
    func crash() { state.withLock { $0.dead = true } }
    func restart() { state.withLock { $0.dead = false } }
    var events: [String] { state.withLock { $0.events } }

    func pendingCount(atMost: Int) async throws -> Int {
        state.withLock { s in min(atMost, s.rows.values.filter { $0.state == .pending }.count) }
    }

    func pending(limit: Int, excluding: Set<Int64>) async throws -> [PendingSymbolication] {
        state.withLock { s in
            s.rows.filter { $0.value.state == .pending && !excluding.contains($0.key) }.sorted { $0.key < $1.key }
                .prefix(limit).map { id, row in
                    PendingSymbolication(
                        reportID: id, project: row.project, raw: Self.raw(id, payload: row.payload),
                        attempts: row.attempts,
                        payload: row.payload)
                }
        }
    }

    func recordAttempt(reportIDs: [Int64]) async throws {
        try state.withLock { s in
            guard !s.dead else { throw Died() }
            for id in reportIDs { s.rows[id]?.attempts += 1 }
            s.events.append("attempt " + reportIDs.map(String.init).joined(separator: ","))
        }
    }

    func releaseClaims(reportIDs: [Int64]) async throws {
        state.withLock { $0.released.append(reportIDs) }
    }

    func save(_ result: SymbolicatedReport, grouping: GroupingInput?, reportID: Int64, at date: Date) async throws
        -> IssueID?
    {
        try await saveAll([SymbolicationOutcome(reportID: reportID, result: result, grouping: grouping)], at: date)
        return nil
    }

    /// Awaited by `saveAll` before it saves (with the batch's report ids).
    let beforeSave = Mutex<(@Sendable ([Int64]) async -> Void)?>(nil)

    func saveAll(_ results: [SymbolicationOutcome], at date: Date) async throws {
        if let hook = beforeSave.withLock({ $0 }) { await hook(results.map(\.reportID)) }
        try state.withLock { s in
            guard !s.dead else { throw Died() }
            if s.failingSaves > 0 {
                s.failingSaves -= 1
                throw Busy()
            }
            if s.unavailableSaves > 0 {
                s.unavailableSaves -= 1
                throw StorageError(.unavailable, "the database cannot be reached: connection closed")
            }
            if results.contains(where: { s.refusedEntries.contains($0.reportID) && $0.search != nil }) {
                throw Refused()
            }
            for outcome in results {
                s.rows[outcome.reportID]?.state = outcome.result.state
                s.rows[outcome.reportID]?.failure = outcome.result.failure
                s.rows[outcome.reportID]?.grouping = outcome.grouping
                s.rows[outcome.reportID]?.result = outcome.result
                s.rows[outcome.reportID]?.saved += 1
                if outcome.result.failure == nil { s.rows[outcome.reportID]?.attempts = 0 }
            }
            s.events.append("save " + results.map { String($0.reportID) }.joined(separator: ","))
        }
    }

    func requeueOutdatedGrouping(limit: Int) async throws -> Int { 0 }
    func requeue(project: ProjectID, buildID: BuildID) async throws -> Int { 0 }
    func missingDebugFiles(project: ProjectID, release: String?) async throws -> [MissingDebugFileSummary] { [] }
    func result(reportID: Int64) async throws -> (state: SymbolicationState, report: SymbolicatedReport?) {
        (row(reportID)?.state ?? .pending, nil)
    }

    /// A raw report whose summary cursor is the report id (the fake `reread` maps it back); its payload's bytes
    /// name the payload (8 bytes, big-endian), so a test's `inflate` can tell which payload it was given.
    static func raw(_ id: Int64, payload: Int64? = nil) -> RawReport {
        let summary = ReportSummary(
            cursor: id, project: ProjectID(1), eventID: EventID(String(format: "%032x", id))!, kind: .crash,
            timestamp: Date(timeIntervalSince1970: 0), receivedAt: Date(timeIntervalSince1970: 0), release: "1.0",
            environment: nil, userKey: nil, errorType: nil, errorMessage: nil, trimmed: TrimCounts())
        let bytes = payload.map { p in (0..<8).map { UInt8(truncatingIfNeeded: p >> (56 - 8 * $0)) } } ?? []
        return RawReport(
            summary: summary, payload: StoredPayload(bytes: bytes, encoding: .gzip, inflatedSize: 0), range: 0..<0)
    }
}

/// A symbolicator that resolves every address to `function_<offset>`, except in the poison module, where
/// it makes the store "die" (the process crashing inside libdw) and never answers usefully.
final class PoisonSymbolicator: AddressSymbolicating {
    let store: FakeSymbolicationStore
    let poison: BuildID
    init(store: FakeSymbolicationStore, poison: BuildID) {
        self.store = store
        self.poison = poison
    }
    let lookups = Mutex<[UInt64]>([])
    func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
        lookups.withLock { $0.append(moduleOffset) }
        if buildID == poison {
            store.crash()
            return .notFound
        }
        return .resolved([ResolvedFrame(function: "function_\(moduleOffset)", file: "main.c", line: 7)])
    }
}

/// The report ids `reread` was called with.
final class Rereads: Sendable {
    let ids = Mutex<[Int64]>([])
}

struct FixedClock: WallClock {
    func now() -> Date { Date(timeIntervalSince1970: 1_800_000_000) }
}

@Suite struct SymbolicationWorkerTests {
    static let good = BuildID("aaaaaaaa")!
    static let poison = BuildID("bbbbbbbb")!

    /// Report `id` has one frame in `libgood.so`, or in `libpoison.so` when `poisoned`.
    static func report(_ id: Int64, poisoned: Bool) -> Report {
        let module = LoadedModule(
            name: poisoned ? "libpoison.so" : "libgood.so", buildID: poisoned ? poison : good, baseAddress: 0x1000,
            size: 0x1000)
        return Report(
            eventID: EventID(String(format: "%032x", id))!, kind: .crash, timestamp: Date(timeIntervalSince1970: 0),
            threads: [ThreadInfo(crashed: true, frames: [Frame(address: 0x1000 + 0x10 * UInt64(id))])],
            modules: [module])
    }

    func worker(
        _ store: FakeSymbolicationStore, _ symbolicator: some AddressSymbolicating, poisoned: Set<Int64>,
        rereads: Rereads? = nil, batchSize: Int = 64
    ) -> SymbolicationWorker {
        SymbolicationWorker(
            store: store, symbolicator: symbolicator,
            reread: { raw in
                rereads?.ids.withLock { $0.append(raw.summary.cursor) }
                return Self.report(raw.summary.cursor, poisoned: poisoned.contains(raw.summary.cursor))
            },
            clock: FixedClock(), logger: Logger(label: "test"), batchSize: batchSize, idleDelay: .milliseconds(5))
    }

    /// Runs `worker.run()` until `done` holds (at most 10 s), then cancels it as a shutdown or a dead process would.
    func run(_ worker: SymbolicationWorker, until done: () -> Bool) async {
        let task = Task { try await worker.run() }
        for _ in 0..<1_000 where !done() { try? await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        _ = try? await task.value
    }

    @Test func anAttemptIsCommittedBeforeSymbolicationAndACleanResultResetsIt() async throws {
        let store = FakeSymbolicationStore()
        store.add(1)
        store.add(2)
        /// Checks, at lookup time, that the store already counts the attempt.
        final class Checking: AddressSymbolicating {
            let store: FakeSymbolicationStore
            let seen = Mutex<[Int]>([])
            init(store: FakeSymbolicationStore) { self.store = store }
            func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
                let id = Int64(moduleOffset / 0x10)
                seen.withLock { $0.append(store.row(id)?.attempts ?? -1) }
                return .resolved([ResolvedFrame(function: "f")])
            }
        }
        let symbolicator = Checking(store: store)
        let done = try await worker(store, symbolicator, poisoned: []).step()
        #expect(done == 2)
        #expect(symbolicator.seen.withLock { $0 } == [1, 1])
        #expect(store.events == ["attempt 1,2", "save 1,2"])
        #expect(store.row(1)?.state == .complete)
        #expect(store.row(1)?.attempts == 0)
        #expect(store.row(2)?.failure == nil)
    }

    @Test func aPoisonReportIsRetriedAloneThenFailedWithAReasonAndStillGrouped() async throws {
        let store = FakeSymbolicationStore()
        for id: Int64 in 1...4 { store.add(id) }
        let symbolicator = PoisonSymbolicator(store: store, poison: Self.poison)
        var crashes = 0
        var steps = 0
        // A step that dies is a crash: the store restarts and a new worker (a new process) takes over.
        var current = worker(store, symbolicator, poisoned: [2])
        while steps < 20 {
            steps += 1
            do {
                if try await current.step() == 0 { break }
            } catch is FakeSymbolicationStore.Died {
                crashes += 1
                store.restart()
                current = worker(store, symbolicator, poisoned: [2])
            }
        }
        // The batch crash, then the poison report alone twice more; never more.
        #expect(crashes == SymbolicationRetry.maxAttempts)
        // The innocent reports of the poisoned batch were symbolicated and grouped normally.
        for id: Int64 in [1, 3, 4] {
            #expect(store.row(id)?.state == .complete)
            #expect(store.row(id)?.failure == nil)
            #expect(store.row(id)?.grouping?.grouping.components.first == "function_\(0x10 * id)")
        }
        // The poison report: failed with the reason, grouped by module and offset.
        let poisoned = try #require(store.row(2))
        #expect(poisoned.state == .missing)
        #expect(poisoned.failure == SymbolicationRetry.reason(attempts: 3))
        #expect(poisoned.failure?.contains("3 times") == true)
        #expect(poisoned.grouping?.grouping.components == ["libpoison.so+0x20"])
        // After the batch crash, suspects were each tried alone; the poison one failed with the next suspect.
        #expect(
            store.events == [
                "attempt 1,2,3,4",  // crash 1
                "attempt 1", "save 1",
                "attempt 2",  // crash 2
                "attempt 2",  // crash 3
                "attempt 2,3", "save 2,3",  // 2 failed and grouped without symbols, 3 symbolicated alone
                "attempt 4", "save 4",
            ])
    }

    @Test func databaseErrorsThatDoNotStopTheProcessDoNotCountAsPoison() async throws {
        let store = FakeSymbolicationStore()
        store.add(1)
        store.add(2)
        // Every save of 5 steps fails: the batch's, then each report's alone (a database that fails every write).
        store.state.withLock { $0.failingSaves = 3 * (SymbolicationRetry.maxAttempts + 2) }
        let symbolicator = PoisonSymbolicator(store: store, poison: Self.poison)
        let worker = worker(store, symbolicator, poisoned: [])
        var errors = 0
        for _ in 0..<10 {
            do {
                if try await worker.step() == 0 { break }
            } catch is FakeSymbolicationStore.Busy {
                errors += 1
            }
        }
        #expect(errors == SymbolicationRetry.maxAttempts + 2)
        // Both reports went on being tried together, and ended symbolicated, not failed.
        #expect(store.events.filter { $0.hasPrefix("attempt") }.allSatisfy { $0 == "attempt 1,2" })
        #expect(store.row(1)?.state == .complete)
        #expect(store.row(2)?.state == .complete)
        #expect(store.row(2)?.failure == nil)
        #expect(store.row(2)?.attempts == 0)
    }

    /// A report another node counted an attempt for (it took the report, and its save failed while the database was
    /// down) comes here as a suspect, alone. Saves that fail because the database cannot be reached are the database's
    /// fault: no attempt is blamed on the report, so it is never failed for an outage, however often it bounces
    /// between nodes, and it is symbolicated once the database answers (issue #38: reports of a PostgreSQL restart
    /// under load were failed without grouping, and left out of their issues).
    @Test func aSuspectWhoseSaveFindsTheDatabaseUnreachableIsNotBlamed() async throws {
        let store = FakeSymbolicationStore()
        store.add(1, attempts: 1)
        store.add(2)
        store.state.withLock { $0.unavailableSaves = 2 * SymbolicationRetry.maxAttempts }
        let worker = worker(store, PoisonSymbolicator(store: store, poison: Self.poison), poisoned: [])
        var unavailable = 0
        for _ in 0..<(4 * SymbolicationRetry.maxAttempts) {
            do {
                _ = try await worker.step()
            } catch let error as StorageError where error.code == .unavailable {
                unavailable += 1
            }
            if store.row(1)?.state != .pending && store.row(2)?.state != .pending { break }
        }
        #expect(unavailable == 2 * SymbolicationRetry.maxAttempts)
        #expect(store.row(1)?.state == .complete)
        #expect(store.row(1)?.failure == nil)
        #expect(store.row(1)?.grouping != nil)
        #expect(store.row(2)?.state == .complete)
        // Each attempt counted was a claim's (this process's own), never a blame.
        #expect(store.events.filter { $0 == "attempt 1" }.count == 2 * SymbolicationRetry.maxAttempts + 1)
    }

    /// A suspect is processed alone; the rest of the batch it came in is given back at once (on PostgreSQL its claims
    /// would otherwise hold every other report of the batch for a whole lease), and taken by the next steps.
    @Test func theBatchOfASuspectIsGivenBackAndTakenByTheNextSteps() async throws {
        let store = FakeSymbolicationStore()
        store.add(1, attempts: 1)
        store.add(2, attempts: 1)
        store.add(3)
        store.add(4)
        let worker = worker(store, PoisonSymbolicator(store: store, poison: Self.poison), poisoned: [])
        #expect(try await worker.step() == 1)
        #expect(store.row(1)?.state == .complete)
        #expect(store.state.withLock { $0.released } == [[2, 3, 4]])
        #expect(try await worker.step() == 1)
        #expect(store.state.withLock { $0.released } == [[2, 3, 4], [3, 4]])
        // No suspect left: the fresh reports together, nothing given back.
        #expect(try await worker.step() == 2)
        #expect(store.state.withLock { $0.released.count } == 2)
        #expect((1...4).allSatisfy { store.row(Int64($0))?.state == .complete })
    }

    /// A report whose result cannot be saved (the database refuses its search entry) does not hold back its batch:
    /// the other project's report is saved in the same step, and the refused one is tried alone and failed within the
    /// attempt limit, in one process, never retried for ever.
    @Test func aReportWhoseResultCannotBeSavedIsFailedAloneAndItsBatchIsSaved() async throws {
        let store = FakeSymbolicationStore()
        store.add(1, project: ProjectID(1))
        store.add(2, project: ProjectID(2))
        store.state.withLock { $0.refusedEntries = [1] }
        let worker = worker(store, PoisonSymbolicator(store: store, poison: Self.poison), poisoned: [])

        // The first step saves the other project's report.
        #expect(try await worker.step() == 1)
        #expect(store.row(2)?.state == .complete)
        #expect(store.row(2)?.project == ProjectID(2))
        #expect(store.row(1)?.state == .pending)
        // The refused report: alone, symbolicated twice more, then grouped without symbols (refused too), then failed
        // without its search entry or grouping.
        var steps = 0
        while store.row(1)?.state == .pending && steps < 20 {
            steps += 1
            _ = try await worker.step()
        }
        #expect(steps == SymbolicationRetry.maxAttempts + 1)
        let refused = try #require(store.row(1))
        #expect(refused.state == .missing)
        #expect(refused.failure == SymbolicationRetry.ungroupedReason(attempts: SymbolicationRetry.maxAttempts + 1))
        #expect(refused.grouping == nil)
        #expect(store.row(2)?.saved == 1)
        // (The last step claims nothing to symbolicate: its empty attempt is left out.)
        #expect(
            store.events.filter { $0 != "attempt " } == [
                "attempt 1,2", "save 2", "attempt 1",  // the batch, then each alone: 1 refused, and its attempt counted
                "attempt 1", "attempt 1", "attempt 1", "attempt 1",  // a suspect, alone, twice
                "attempt 1", "attempt 1",  // at the limit: grouped without symbols, refused
                "save 1",  // failed without reading it again
            ])
    }

    @Test func aReportWhoseFallbackGroupingStoppedTheProcessIsFailedWithoutReadingIt() async throws {
        let store = FakeSymbolicationStore()
        store.add(7, attempts: SymbolicationRetry.maxAttempts + 1)
        store.add(8)
        let rereads = Rereads()
        let symbolicator = PoisonSymbolicator(store: store, poison: Self.poison)
        let done = try await worker(store, symbolicator, poisoned: [], rereads: rereads).step()
        #expect(done == 2)
        #expect(rereads.ids.withLock { $0 } == [8])
        let row = try #require(store.row(7))
        #expect(row.state == .missing)
        #expect(row.grouping == nil)
        #expect(row.failure?.contains("not grouped") == true)
        #expect(store.row(8)?.state == .complete)
    }

    @Test func aReportThatCannotBeReadAgainIsFailedWithTheReason() async throws {
        let store = FakeSymbolicationStore()
        store.add(5)
        struct Unreadable: Error, CustomStringConvertible { var description: String { "payload damaged" } }
        let worker = SymbolicationWorker(
            store: store, symbolicator: PoisonSymbolicator(store: store, poison: Self.poison),
            reread: { _ in throw Unreadable() },
            clock: FixedClock(), logger: Logger(label: "test"))
        #expect(try await worker.step() == 1)
        #expect(store.row(5)?.state == .missing)
        #expect(store.row(5)?.failure == "the stored report could not be read again: payload damaged")
    }

    @Test func runSavesEachBatchWhileTheNextIsProcessedAndTakesEveryReportOnce() async throws {
        let store = FakeSymbolicationStore()
        for id: Int64 in 1...10 { store.add(id) }
        let symbolicator = PoisonSymbolicator(store: store, poison: Self.poison)
        // Each save but the last waits (5 s at most) for the next batch's first lookup: the two overlap.
        let overlapped = Mutex<[Bool]>([])
        store.beforeSave.withLock {
            $0 = { ids in
                let next = (ids.max() ?? 0) + 1
                guard next <= 10 else { return }
                for _ in 0..<500 {
                    if symbolicator.lookups.withLock({ $0.contains(UInt64(0x10 * next)) }) {
                        overlapped.withLock { $0.append(true) }
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(10))
                }
                overlapped.withLock { $0.append(false) }
            }
        }
        let rereads = Rereads()
        await run(worker(store, symbolicator, poisoned: [], rereads: rereads, batchSize: 4)) {
            (1...10).allSatisfy { store.row($0)?.state != .pending }
        }
        // The next batch's attempts are committed before the save of the one before starts, and a batch being
        // saved is not read again.
        #expect(
            store.events == [
                "attempt 1,2,3,4", "attempt 5,6,7,8", "save 1,2,3,4", "attempt 9,10", "save 5,6,7,8", "save 9,10",
            ])
        #expect(overlapped.withLock { $0 } == [true, true])
        #expect(rereads.ids.withLock { $0 }.sorted() == Array(1...10))
        for id: Int64 in 1...10 {
            #expect(store.row(id)?.state == .complete)
            #expect(store.row(id)?.saved == 1)
            #expect(store.row(id)?.attempts == 0)
        }
    }

    @Test func runStillFindsAPoisonReportWhileItOverlapsBatches() async throws {
        let store = FakeSymbolicationStore()
        for id: Int64 in 1...8 { store.add(id) }
        let symbolicator = PoisonSymbolicator(store: store, poison: Self.poison)
        // Saves take a while: a batch processed beside one being saved stops the process before that save commits.
        store.beforeSave.withLock { $0 = { _ in try? await Task.sleep(for: .milliseconds(20)) } }
        var crashes = 0
        // Each round is a process: it runs until the store dies (a crash) or every report is done.
        for _ in 0..<10 {
            await run(worker(store, symbolicator, poisoned: [5], batchSize: 2)) {
                store.state.withLock { s in s.dead || s.rows.values.allSatisfy { $0.state != .pending } }
            }
            guard store.state.withLock({ $0.dead }) else { break }
            crashes += 1
            store.restart()
        }
        #expect(crashes == SymbolicationRetry.maxAttempts)
        for id: Int64 in [1, 2, 3, 4, 6, 7, 8] {
            #expect(store.row(id)?.state == .complete)
            #expect(store.row(id)?.failure == nil)
            #expect(store.row(id)?.grouping?.grouping.components.first == "function_\(0x10 * id)")
        }
        let poisoned = try #require(store.row(5))
        #expect(poisoned.state == .missing)
        #expect(poisoned.failure == SymbolicationRetry.reason(attempts: 3))
        #expect(poisoned.grouping?.grouping.components == ["libpoison.so+0x50"])
    }
}
