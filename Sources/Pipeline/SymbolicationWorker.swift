import FaultlineCore
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Symbolicates and groups reports after they were acknowledged, never on the request path.
///
/// `step()` reads, processes and saves one batch; tests call it directly. `run()` loops over the same parts, saving a
/// batch while it processes the next.
/// The queue is in the database, so a restart loses nothing: pending reports are picked up again.
public struct SymbolicationWorker: Service {
    let store: any SymbolicationStore
    let symbolicator: any AddressSymbolicating
    /// Walks the stacks of reports made from minidumps (`Report.walksMinidump`) before they are symbolicated; nil:
    /// such reports keep their context frames.
    let stackWalker: (any StackWalking)?
    /// Re-reads stored reports from their payloads, each payload inflated once per batch (Formats, wired by the
    /// composition root).
    let reading: StoredReportReading
    let clock: any WallClock
    let logger: Logger
    /// Reports per batch when the queue is short.
    let batchSize: Int
    /// Reports per batch while there is a backlog (the last batch came full): fewer, larger transactions and more
    /// work to spread over the cores. Still one transaction per batch.
    let backlogBatchSize: Int
    /// Reports per batch under storage pressure (a few hundred KiB of results, issues and rollups at most).
    static let pressureBatchSize = 16
    /// Reports per batch, on one core, while ingest is busy (`ingestActivity`): each batch transaction holds the
    /// database writer for a few milliseconds, so ingest's group commits do not wait behind it.
    static let sharedBatchSize = 16
    /// While it says ingest is busy, batches are `sharedBatchSize` on one core (nil: never).
    public var ingestActivity: IngestActivity?
    /// Reports read, symbolicated and grouped at the same time (each payload inflated by one of them).
    let concurrency: Int
    /// Whether the last batch came full (see `backlogBatchSize`).
    let backlog = Flag()
    let idleDelay: Duration
    let telemetry: Telemetry?
    /// Called after a batch changed issues (tells the dashboard renderer).
    let onChange: @Sendable () -> Void
    /// Called with a batch's debug-file change sequence (`PendingSymbolication.filesSeen`) before any of it is
    /// looked up: the symbolicator's cache forgets where files were when it moved, so every file stored up to
    /// it is used. (A file stored later is caught when the result is saved.)
    let onFilesSeen: @Sendable (Int64) -> Void
    /// Attempts before a report that keeps stopping the process is failed (`SymbolicationRetry`).
    let maxAttempts: Int
    /// Attempts this process counted itself and that have not ended in a saved result: a step that threw
    /// (a database error) did not stop the process, so those attempts do not make a report a suspect.
    let ownAttempts = OwnAttempts()
    /// Set once no report of an older grouping version is left (see `step`).
    let regroupingDone = Flag()
    #if DEBUG
    /// Test-only fault injection (never compiled in release builds).
    public struct FaultInjection: Sendable {
        /// `abort()` the process when a report referencing this build-id is symbolicated, as a crash in libdw
        /// on a hostile file would (`FAULTLINE_TEST_ABORT_ON_BUILD_ID`).
        public var abortOnBuildID: String?
        public init(abortOnBuildID: String? = nil) { self.abortOnBuildID = abortOnBuildID }
    }
    var faultInjection = FaultInjection()

    /// This worker with test-only fault injection.
    public func injectingFaults(_ faults: FaultInjection) -> SymbolicationWorker {
        var copy = self
        copy.faultInjection = faults
        return copy
    }
    #endif

    /// The storage-pressure state: while the disk is full, steps pause; a disk-full error enters it (logged once
    /// there, not per step). Nil: never paused.
    public let storage: DiskGuard?

    /// A worker that reads stored reports with `reading` (each payload inflated once per batch).
    ///
    /// - Parameters:
    ///   - batchSize: reports per batch when the queue is short; `backlogBatchSize` while a backlog lasts.
    ///   - concurrency: reports processed at the same time (default: one per core, at least 2, so that lookups
    ///     waiting on a module owner overlap with parsing).
    ///   - storage: the storage-pressure state steps pause under (nil: never paused).
    ///   - ingestActivity: while it says ingest is busy, batches are small and on one core (nil: never).
    public init(
        store: any SymbolicationStore, symbolicator: any AddressSymbolicating, reading: StoredReportReading,
        clock: any WallClock, logger: Logger, batchSize: Int = 64, backlogBatchSize: Int = 256,
        concurrency: Int = max(2, ProcessInfo.processInfo.activeProcessorCount),
        idleDelay: Duration = .milliseconds(200), telemetry: Telemetry? = nil,
        maxAttempts: Int = SymbolicationRetry.maxAttempts, onChange: @escaping @Sendable () -> Void = {},
        onFilesSeen: @escaping @Sendable (Int64) -> Void = { _ in }, storage: DiskGuard? = nil,
        ingestActivity: IngestActivity? = nil, stackWalker: (any StackWalking)? = nil
    ) {
        self.stackWalker = stackWalker
        self.storage = storage
        self.ingestActivity = ingestActivity
        self.onFilesSeen = onFilesSeen
        self.maxAttempts = max(1, maxAttempts)
        self.telemetry = telemetry
        self.onChange = onChange
        self.store = store
        self.symbolicator = symbolicator
        self.reading = reading
        self.clock = clock
        self.logger = logger
        self.batchSize = max(1, batchSize)
        self.backlogBatchSize = max(self.batchSize, backlogBatchSize)
        self.concurrency = max(1, concurrency)
        self.idleDelay = idleDelay
    }

    /// A worker that reads each stored report on its own with `reread` (tests and tools whose reports have no
    /// stored payload to share).
    public init(
        store: any SymbolicationStore, symbolicator: any AddressSymbolicating,
        reread: @escaping @Sendable (RawReport) throws -> Report, clock: any WallClock, logger: Logger,
        batchSize: Int = 64, idleDelay: Duration = .milliseconds(200), telemetry: Telemetry? = nil,
        maxAttempts: Int = SymbolicationRetry.maxAttempts, onChange: @escaping @Sendable () -> Void = {},
        onFilesSeen: @escaping @Sendable (Int64) -> Void = { _ in }, stackWalker: (any StackWalking)? = nil
    ) {
        self.init(
            store: store, symbolicator: symbolicator, reading: .perReport(reread), clock: clock, logger: logger,
            batchSize: batchSize, backlogBatchSize: batchSize, idleDelay: idleDelay, telemetry: telemetry,
            maxAttempts: maxAttempts, onChange: onChange, onFilesSeen: onFilesSeen, stackWalker: stackWalker)
    }

    /// Symbolicates and groups one batch of pending reports; returns how many were processed.
    ///
    /// Each payload of the batch is inflated once; then every report is read, symbolicated, grouped and indexed,
    /// `concurrency` at a time (on every core, the symbolicator's module owners in parallel), and all results are
    /// saved in one transaction. While a backlog lasts (the last batch came full) batches are `backlogBatchSize`.
    /// (`run()` does the same steps, and overlaps a batch's save with the next batch's processing.)
    ///
    /// Poison pills (`SymbolicationRetry`): an attempt is counted durably for every report before its
    /// symbolication starts. Reports found with attempts already counted were being processed when the
    /// process died: they are symbolicated one per step, alone; at `maxAttempts` they are failed with a
    /// reason and grouped from their own frames, without the symbolicator.
    ///
    /// - Parameter concurrency: overrides the worker's `concurrency` for this step.
    @discardableResult
    public func step(concurrency: Int? = nil) async throws -> Int {
        guard let claimed = try await claim(excluding: []) else { return 0 }
        return try await commit(await process(claimed, concurrency: concurrency))
    }

    /// A batch whose attempts are counted, to be processed.
    struct Claimed {
        /// Reports to symbolicate.
        var work: [PendingSymbolication]
        /// Poison reports to group without the symbolicator.
        var failing: [PendingSymbolication]
        /// Outcomes made already (poison reports that cannot be grouped).
        var outcomes: [SymbolicationOutcome]
        /// Whether ingest was busy when the batch was read (the batch is then processed on one core).
        var sharing: Bool
        /// Whether no report of the batch was being processed when the process stopped before (see `saveOverlapping`).
        var fresh: Bool
    }

    /// A processed batch, to be saved.
    struct Processed {
        var outcomes: [SymbolicationOutcome]
        /// Poison reports in `outcomes`.
        var failed: Int
        /// `Claimed.fresh` of the batch.
        var fresh: Bool
        /// The reports of `outcomes`: left out of the next batch while these are saved.
        var reportIDs: Set<Int64> { Set(outcomes.map(\.reportID)) }
    }

    /// Reads the next batch, leaving out `excluding` (a batch being saved), and durably counts an attempt for each
    /// report it will process; nil when nothing is pending.
    func claim(excluding: Set<Int64>) async throws -> Claimed? {
        let sharing = ingestActivity?.isBusy == true
        let limit = batchLimit(sharing: sharing)
        var batch = try await store.pending(limit: limit, excluding: excluding)
        backlog.value.withLock { $0 = batch.count >= limit }
        if batch.isEmpty, try await store.regroupStep(limit: batchSize * 4, at: clock.now()) > 0 {
            // Idle, and a project's fingerprint rules changed: its stored reports are queued a few batches at a time
            // (`GroupingRulesStore.regroupStep`, resumable from its cursor) and grouped again with the new rules.
            batch = try await store.pending(limit: batchSize, excluding: excluding)
        }
        if batch.isEmpty {
            // Idle: group reports filed by an older grouping version again, a few batches at a time, so that a
            // version bump migrates stored issues in the background without holding back new reports. Only this
            // binary's start makes reports outdated, so once none is left the question is not asked again.
            guard !regroupingDone.value.withLock({ $0 }) else { return nil }
            guard try await store.requeueOutdatedGrouping(limit: batchSize * 4) > 0 else {
                regroupingDone.value.withLock { $0 = true }
                return nil
            }
            batch = try await store.pending(limit: batchSize, excluding: excluding)
            guard !batch.isEmpty else { return nil }
        }
        if let seen = batch.map(\.filesSeen).max() { onFilesSeen(seen) }
        // The attempts that count: this process's own are left out (they did not stop it), what it blamed is not.
        let own = ownAttempts.counts.withLock { $0 }
        for index in batch.indices {
            batch[index].attempts = max(0, batch[index].attempts - (own[batch[index].reportID] ?? 0))
        }
        let plan = SymbolicationRetry.plan(batch.map { ($0.reportID, $0.attempts) }, maxAttempts: maxAttempts)
        let byID = Dictionary(batch.map { ($0.reportID, $0) }, uniquingKeysWith: { first, _ in first })
        // One suspect alone, else every fresh report: the fails are cheap and join either.
        let work = (plan.suspects.isEmpty ? plan.fresh : [plan.suspects[0]]).compactMap { byID[$0] }
        let failing = plan.failGrouped.compactMap { byID[$0] }
        let dropped = plan.failUngrouped.compactMap { byID[$0] }

        var outcomes: [SymbolicationOutcome] = []
        outcomes.reserveCapacity(work.count + failing.count + dropped.count)
        for item in dropped {
            logger.error(
                "symbolication gave up on a report without grouping it",
                metadata: [
                    Telemetry.LogKey.reportID: "\(item.reportID)", Telemetry.LogKey.attempts: "\(item.attempts)",
                ])
            outcomes.append(
                SymbolicationOutcome(
                    reportID: item.reportID,
                    result: .failed(SymbolicationRetry.ungroupedReason(attempts: item.attempts)), grouping: nil))
        }
        // Committed before any symbolication or re-reading starts: if the process dies below, the counts stay.
        let attempted = (failing + work).map(\.reportID)
        try await store.recordAttempt(reportIDs: attempted)
        // The rest of a suspect's batch waits for a later step: its claims go now, not when their lease ends (minutes,
        // on PostgreSQL: a dead node's batch of suspects would take one lease per report to work off).
        let taken = Set(attempted).union(dropped.map(\.reportID))
        let waiting = batch.map(\.reportID).filter { !taken.contains($0) }
        // A release that fails leaves them to the lease, as before.
        if !waiting.isEmpty {
            do {
                try await store.releaseClaims(reportIDs: waiting)
            } catch {
                logger.warning("reports left to their claim's lease", metadata: [Telemetry.LogKey.error: "\(error)"])
            }
        }
        ownAttempts.counts.withLock { counts in for id in attempted { counts[id, default: 0] += 1 } }
        return Claimed(
            work: work, failing: failing, outcomes: outcomes, sharing: sharing,
            fresh: plan.suspects.isEmpty && failing.isEmpty && dropped.isEmpty)
    }

    /// Reads, symbolicates, groups and indexes a claimed batch, `concurrency` at a time (default: the worker's, one
    /// while ingest is busy).
    func process(_ claimed: Claimed, concurrency: Int? = nil) async -> Processed {
        let (work, failing) = (claimed.work, claimed.failing)
        var outcomes = claimed.outcomes
        outcomes.reserveCapacity(outcomes.count + work.count + failing.count)
        let width = max(1, concurrency ?? (claimed.sharing ? 1 : self.concurrency))
        // Each payload once, for every report of the batch that is read again.
        let inflated = await inflate(failing + work, concurrency: width)
        for item in failing {
            logger.error(
                "symbolication gave up on a report that stopped it repeatedly",
                metadata: [
                    Telemetry.LogKey.reportID: "\(item.reportID)", Telemetry.LogKey.attempts: "\(item.attempts)",
                ])
            outcomes.append(groupWithoutSymbols(item, inflated: inflated[Self.payloadKey(item)]))
        }
        let lookups = BatchLookups(symbolicator)
        await withTaskGroup(of: SymbolicationOutcome.self) { group in
            var next = 0
            func start() {
                guard next < work.count else { return }
                let item = work[next]
                next += 1
                let bytes = inflated[Self.payloadKey(item)]
                group.addTask { await self.process(item, inflated: bytes, symbolicator: lookups) }
            }
            for _ in 0..<width { start() }
            while let outcome = await group.next() {
                outcomes.append(outcome)
                start()
            }
        }
        return Processed(outcomes: outcomes, failed: claimed.outcomes.count + failing.count, fresh: claimed.fresh)
    }

    /// Saves a processed batch in one transaction (one fsync for the whole batch: grouping keeps up with ingest);
    /// returns how many reports it saved.
    ///
    /// A batch whose save fails is saved again one report at a time (`saveEachAlone`): a report whose result cannot
    /// be saved never holds back the rest of its batch, other projects' reports among them.
    func commit(_ processed: Processed) async throws -> Int {
        let outcomes = processed.outcomes.sorted { $0.reportID < $1.reportID }
        var saved = outcomes
        do {
            try await store.saveAll(outcomes, at: clock.now())
        } catch {
            saved = try await saveEachAlone(outcomes, after: error)
        }
        ownAttempts.counts.withLock { counts in for outcome in saved { counts[outcome.reportID] = nil } }
        if processed.failed > 0 { telemetry?.count(Telemetry.Name.symbolicationPoisoned, by: processed.failed) }
        telemetry?.count(Telemetry.Name.reportsGrouped, by: saved.count)
        onChange()
        return saved.count
    }

    /// Saves each of `outcomes` in a transaction of its own after their batch's save failed with `error`; returns those
    /// saved.
    ///
    /// A report whose save fails alone is blamed: one more attempt is counted for it, durably (`recordAttempt`), beside
    /// the one its claim counted, which stays left out as this process's own (`ownAttempts`). So it comes back a suspect,
    /// alone, and is failed within `maxAttempts` as a report that stops the process is (`SymbolicationRetry`): it is
    /// never retried for ever within one process. Its neighbours are saved now. When the fault is the database's (a
    /// full disk, a database that cannot be reached — a restart, a cut link, a commit past its deadline —, no report
    /// of a batch of several saves alone, or the count itself cannot be written), nothing is counted and the error is
    /// thrown (what was saved before a lost connection stays saved): a report is never failed for an outage, also not
    /// when it bounced between nodes while the database came and went (each node then sees the others' attempts).
    func saveEachAlone(_ outcomes: [SymbolicationOutcome], after error: any Error) async throws
        -> [SymbolicationOutcome]
    {
        func isDiskFull(_ error: any Error) -> Bool {
            (error as? StorageError)?.code == .diskFull || storage?.isDiskFull(error) == true
        }
        func isUnavailable(_ error: any Error) -> Bool { (error as? StorageError)?.code == .unavailable }
        if isDiskFull(error) || isUnavailable(error) { throw error }
        var saved: [SymbolicationOutcome] = []
        var refused: [(SymbolicationOutcome, any Error)] = []
        if outcomes.count == 1 {
            refused = [(outcomes[0], error)]
        } else {
            for outcome in outcomes {
                do {
                    try await store.saveAll([outcome], at: clock.now())
                    saved.append(outcome)
                } catch {
                    if isDiskFull(error) { throw error }
                    if isUnavailable(error) {
                        if saved.isEmpty { throw error }
                        logger.error("symbolication step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
                        return saved
                    }
                    refused.append((outcome, error))
                }
            }
            if saved.isEmpty { throw error }
        }
        do {
            try await store.recordAttempt(reportIDs: refused.map(\.0.reportID))
        } catch {
            // The database fails: the fault is not the reports'; what was saved stays saved.
            if saved.isEmpty { throw error }
            logger.error("symbolication step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
            return saved
        }
        for (outcome, error) in refused {
            logger.error(
                "a report's result could not be saved; one more attempt is counted",
                metadata: [
                    Telemetry.LogKey.reportID: "\(outcome.reportID)", Telemetry.LogKey.error: "\(error)",
                ])
        }
        return saved
    }

    /// Saves `done` while the next batch is processed; returns the next batch, processed and not saved yet (nil: none
    /// was pending, or it waits for the next call). One thing at a time, as `step`, while ingest is busy.
    ///
    /// The next batch is read and its attempts committed before `done`'s save starts: the attempts of a batch are
    /// durable before it is processed, and one batch is processed at a time, so a report that stops the process is
    /// still found out (`SymbolicationRetry`). Saves stay in batch order. A process that stops while it processes a
    /// batch may lose the save of the one before, whose reports then count an attempt they did not cause: so a batch
    /// with a report that was being processed when the process stopped before (a suspect, or one failed for it) is
    /// neither saved nor processed beside another — an innocent report next to a poison one is never failed for it.
    func saveOverlapping(_ done: Processed) async throws -> Processed? {
        if !done.fresh || ingestActivity?.isBusy == true {
            _ = try await commit(done)
            return nil
        }
        let claimed: Claimed?
        do {
            claimed = try await claim(excluding: done.reportIDs)
        } catch {
            _ = try await commit(done)
            throw error
        }
        guard let claimed else {
            _ = try await commit(done)
            return nil
        }
        guard claimed.fresh else {
            _ = try await commit(done)
            return await process(claimed)
        }
        async let saved = commit(done)
        let next = await process(claimed)
        _ = try await saved
        return next
    }

    /// Whether the worker is working off a backlog (its last batch came full), asked from any task: the dashboard
    /// waits for the backlog a little before it renders (`RenderScheduler.holdWhile`).
    public var isBehind: @Sendable () -> Bool {
        let flag = backlog
        return { flag.value.withLock { $0 } }
    }

    /// Reports the next batch takes at most.
    func batchLimit(sharing: Bool) -> Int {
        // Under storage pressure a step is small: the floor's background share is checked before each step, and
        // what one step writes after that check must stay well inside it.
        if storage?.isFull == true { return min(batchSize, Self.pressureBatchSize) }
        // While ingest is busy, small batches (on one core): ingest first, grouping catches up when it is quiet.
        if sharing { return min(batchSize, Self.sharedBatchSize) }
        return backlog.value.withLock { $0 } ? backlogBatchSize : batchSize
    }

    /// The key that says two items share a payload: the payload's row id (negative: the report's own, when the
    /// store did not say).
    static func payloadKey(_ item: PendingSymbolication) -> Int64 { item.payload ?? ~item.reportID }

    /// Inflates each distinct payload of `items` once, `concurrency` at a time.
    func inflate(_ items: [PendingSymbolication], concurrency: Int) async -> [Int64: Result<[UInt8], any Error>] {
        var payloads: [(Int64, StoredPayload)] = []
        var seen: Set<Int64> = []
        for item in items where seen.insert(Self.payloadKey(item)).inserted {
            payloads.append((Self.payloadKey(item), item.raw.payload))
        }
        let inflate = reading.inflate
        var inflated: [Int64: Result<[UInt8], any Error>] = [:]
        inflated.reserveCapacity(payloads.count)
        await withTaskGroup(of: (Int64, Result<[UInt8], any Error>).self) { group in
            var next = 0
            func start() {
                guard next < payloads.count else { return }
                let (key, payload) = payloads[next]
                next += 1
                group.addTask { (key, Result { try inflate(payload) }) }
            }
            for _ in 0..<concurrency { start() }
            while let (key, bytes) = await group.next() {
                inflated[key] = bytes
                start()
            }
        }
        return inflated
    }

    func process(
        _ item: PendingSymbolication, inflated: Result<[UInt8], any Error>?, symbolicator: any AddressSymbolicating
    ) async
        -> SymbolicationOutcome
    {
        #if DEBUG
        let symbolicator: any AddressSymbolicating =
            faultInjection.abortOnBuildID.map {
                AbortingSymbolicator(inner: symbolicator, buildID: $0, logger: logger)
            } ?? symbolicator
        #endif
        do {
            var report = try read(item, inflated: inflated)
            // A minidump's threads are its context frames: walked here, with the CFI of the files stored now (a file
            // that arrives later queues the report again, and it is walked again).
            var walk: WalkedStacks?
            if report.walksMinidump, let stackWalker {
                walk = await stackWalker.walk(report, reportID: item.reportID, project: item.project)
                if let walk { report = report.applying(walk) }
            }
            var result = await SymbolicationRules.symbolicate(report, project: item.project, with: symbolicator)
            result.walk = walk
            // Grouping needs the symbolicated frames, so it happens here and commits with them.
            var modules: [String: String] = [:]
            for module in report.modules {
                if let id = module.buildID { modules[id.rawValue] = modules[id.rawValue] ?? module.name }
            }
            let grouping = GroupingInput.make(
                report, symbols: result, inApp: item.inApp, fingerprints: item.fingerprints)
            // The search entry is made here, where the function names are known, and commits with the result.
            return SymbolicationOutcome(
                reportID: item.reportID, result: result, grouping: grouping, filesSeen: item.filesSeen,
                modules: modules,
                search: SearchDocument.make(report, symbols: result, grouping: grouping.grouping),
                alsoTouched: walk?.dependsOnEveryModule == true ? modules.keys.sorted() : [])
        } catch {
            logger.error("cannot re-read a stored report", metadata: [Telemetry.LogKey.error: "\(error)"])
            return SymbolicationOutcome(
                reportID: item.reportID, result: .failed("the stored report could not be read again: \(error)"),
                grouping: nil)
        }
    }

    /// Reads `item` from its payload's inflated bytes (inflating it here when the batch did not).
    func read(_ item: PendingSymbolication, inflated: Result<[UInt8], any Error>?) throws -> Report {
        let bytes = try inflated?.get() ?? reading.inflate(item.raw.payload)
        return try reading.read(bytes, item.raw)
    }

    /// A poison report: failed with the reason, grouped from its own frames (module and offset).
    func groupWithoutSymbols(_ item: PendingSymbolication, inflated: Result<[UInt8], any Error>?)
        -> SymbolicationOutcome
    {
        let reason = SymbolicationRetry.reason(attempts: item.attempts)
        guard let report = try? read(item, inflated: inflated) else {
            return SymbolicationOutcome(reportID: item.reportID, result: .failed(reason), grouping: nil)
        }
        let grouping = GroupingInput.make(
            report, symbols: nil, inApp: item.inApp, fingerprints: item.fingerprints)
        return SymbolicationOutcome(
            reportID: item.reportID, result: .failed(reason), grouping: grouping,
            search: SearchDocument.make(report, symbols: nil, grouping: grouping.grouping))
    }

    /// Steps until the service shuts down; while batches keep coming, each is saved while the next one is processed
    /// (`saveOverlapping`): the save runs on one core, processing on all of them.
    public func run() async throws {
        // A batch processed and not saved yet.
        var processed: Processed?
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await storage?.waitWhileFull()
            do {
                if let done = processed {
                    processed = nil
                    processed = try await saveOverlapping(done)
                } else if let claimed = try await claim(excluding: []) {
                    processed = await process(claimed)
                } else {
                    try? await Task.sleep(for: idleDelay)
                }
            } catch {
                if storage?.noteFailure(error) == true { continue }
                logger.error("symbolication step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
                try? await Task.sleep(for: idleDelay)
            }
        }
        // Its attempts are counted: saved now, they do not make suspects of its reports at the next start.
        if let done = processed { _ = try? await commit(done) }
    }
}

#if DEBUG
/// Test-only: stops the process with `abort()` when asked to look up `buildID`, as a crash inside libdw on
/// a hostile debug file would. Compiled in debug builds only.
struct AbortingSymbolicator: AddressSymbolicating {
    let inner: any AddressSymbolicating
    let buildID: String
    let logger: Logger

    func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
        if buildID.rawValue == self.buildID {
            logger.critical(
                "FAULTLINE_TEST_ABORT_ON_BUILD_ID: aborting on purpose",
                metadata: [Telemetry.LogKey.buildID: "\(buildID)"])
            abort()
        }
        return await inner.lookup(buildID: buildID, moduleOffset: moduleOffset, project: project)
    }

    func lookupSourceLine(buildID: BuildID, file: String, line: Int, project: ProjectID) async -> AddressLookup {
        await inner.lookupSourceLine(buildID: buildID, file: file, line: line, project: project)
    }
}
#endif

/// A flag shared by copies of a worker.
final class Flag: Sendable {
    let value = Mutex(false)
}

/// The attempts one worker counted in this process (see `SymbolicationWorker.ownAttempts`).
final class OwnAttempts: Sendable {
    let counts = Mutex<[Int64: Int]>([:])
}
