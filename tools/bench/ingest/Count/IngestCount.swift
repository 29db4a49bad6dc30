import FaultlineCore
import FaultlineHTTP
import Formats
import Foundation
import Logging
import NIOCore
import Pipeline
import SQLiteStorage

/// The server's per-report CPU work outside HTTP and the database, in one small process, so that
/// `valgrind --tool=callgrind` can count its instructions (tools/bench/ingest/count): what the native route
/// (`POST /api/v1/reports`) and the Sentry envelope route do with a body between reading it and handing it to
/// the ingest service — inflate, scrub, split and parse, and prepare the payload to store.
///
/// Usage: `ingest-count native|sentry BODIES [N]` — BODIES as written by `ingest-bench --emit-bodies` or
/// `sentry_bodies.py` (4-byte big-endian length, gzip'd body, repeated); the first N bodies (all by default) are
/// each decoded once. N = 0 decodes nothing: the baseline to subtract.
///
/// `ingest-count process BODIES [N]`: the symbolication worker's CPU work per report outside the database and
/// libdw, on the first N bodies — inflate the stored payload and read the report again, symbolicate (every module
/// without a debug file, as in `tools/bench/ingest/drain`), group, make the search entry, encode and compress the
/// stored result.
///
/// `ingest-count worker BODIES [N]` and `ingest-count stored BODIES [N]`: the first N bodies decoded as the native
/// route does and committed to a new SQLite database in a temporary folder (16 bodies a commit, as group commit
/// gathers them under load); `worker` then runs the real `SymbolicationWorker.step()` on them until none is pending
/// (the batch read, the attempts, processing as `process` does, and the save's transaction, SQLite included). The
/// difference of the two is the worker's whole CPU work per report outside libdw, and without the part `process`
/// counts, that of its database work (reads, attempts, the save).
@main
struct IngestCount {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, ["native", "sentry", "process", "worker", "stored"].contains(arguments[1]) else {
            FileHandle.standardError.write(
                Data("usage: ingest-count native|sentry|process|worker|stored BODIES [N]\n".utf8))
            exit(2)
        }
        let bodies = try readBodies(arguments[2])
        let count = arguments.count > 3 ? min(Int(arguments[3]) ?? bodies.count, bodies.count) : bodies.count
        let limits = IngestLimits()
        switch arguments[1] {
        case "process":
            try Inline.run { try await process(bodies, count: count, limits: limits) }
            return
        case "worker", "stored":
            let work = arguments[1] == "worker"
            try Inline.run { try await worker(bodies, count: count, limits: limits, work: work) }
            return
        default: break
        }
        // A project's default privacy settings: scrubbing on, as a new project has it.
        let scrubber = Scrubber(settings: PrivacySettings())
        var reports = 0
        var stored = 0
        for body in bodies.prefix(count) {
            let inflated = try BodyDecoding.inflate(body, encoding: .gzip, limit: limits.maxBatchBytes)
            if arguments[1] == "native" {
                let (decoded, scrubbed) = try NativeReports.decode(inflated, limits: limits, scrubber: scrubber)
                reports += decoded.items.filter { if case .success = $0 { true } else { false } }.count
                stored += try storedPayload(body, inflated: inflated, scrubbed: scrubbed).bytes.count
            } else {
                let contents = try SentryIngestDecoding.envelope(
                    inflated, gzip: Array(body.readableBytesView), limits: limits, maxAttachmentBytes: 1 << 20,
                    receivedAt: Date(timeIntervalSince1970: 1_763_800_000),
                    seed: "bench", scrubber: scrubber)
                let write = try contents.write(
                    project: ProjectID(1), receivedAt: Date(timeIntervalSince1970: 1_763_800_000))
                if let event = write.event {
                    reports += event.reports.count
                    stored += event.payload.bytes.count
                }
            }
        }
        print("decoded \(reports) reports from \(count) bodies; \(stored) bytes to store")
    }

    /// Runs async work on this thread: valgrind 3.19 dies when the global executor starts its threads. Jobs come
    /// from this thread, or from GRDB's database threads when a database call it awaited returns (the lock and the
    /// condition are for those); the loop waits for them until the work has ended.
    final class Inline: TaskExecutor, @unchecked Sendable {
        /// Guards `jobs` and `finished`, and wakes the loop.
        let condition = NSCondition()
        var jobs: [UnownedJob] = []
        var finished = false

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            condition.lock()
            jobs.append(job)
            condition.signal()
            condition.unlock()
        }

        /// The next job, waiting for one while the work runs; nil once it has ended and no job is left.
        func next() -> UnownedJob? {
            condition.lock()
            defer { condition.unlock() }
            while jobs.isEmpty && !finished { condition.wait() }
            return jobs.isEmpty ? nil : jobs.removeFirst()
        }

        func finish() {
            condition.lock()
            finished = true
            condition.signal()
            condition.unlock()
        }

        static func run(_ work: @escaping @Sendable () async throws -> Void) throws {
            let executor = Inline()
            nonisolated(unsafe) var failure: (any Error)?
            Task(executorPreference: executor) {
                do { try await work() } catch { failure = error }
                executor.finish()
            }
            while let job = executor.next() { job.runSynchronously(on: executor.asUnownedTaskExecutor()) }
            if let failure { throw failure }
        }
    }

    /// What the native route stores of a gzip'd body (`IngestBody.storedPayload(scrubbed:)`): the client's gzip when
    /// scrubbing changed nothing, else the scrubbed bytes deflated.
    static func storedPayload(_ body: ByteBuffer, inflated: [UInt8], scrubbed: [UInt8]?) throws -> StoredPayload {
        guard let scrubbed else {
            return StoredPayload(bytes: Array(body.readableBytesView), encoding: .gzip, inflatedSize: inflated.count)
        }
        return StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(scrubbed), encoding: .deflate, inflatedSize: scrubbed.count)
    }

    /// A clock that stands still: the counted runs do the same work whenever they run.
    struct FixedClock: WallClock {
        func now() -> Date { Date(timeIntervalSince1970: 1_763_800_000) }
    }

    /// Stores the first `count` bodies as the native route does, then (`work`) runs the worker until none is pending.
    static func worker(_ bodies: [ByteBuffer], count: Int, limits: IngestLimits, work: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-count-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = try SQLiteEngine(path: folder + "/faultline.sqlite", codec: .zlib, identities: .hmacSHA256)
        let clock = FixedClock()
        let project = try await SQLiteProjectStore(database: database).createProject(
            slug: ProjectSlug("count")!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 64)), createdAt: clock.now(),
            rateLimitPerSecond: 1000)
        // The new-issue cap out of the way (as tools/bench/lib/server.sh does): the bodies make many issues at once, and a
        // report held in the overflow issue is not the filing the worker does for a new crash.
        var settings = AlertSettings()
        settings.newIssueCap = AlertSettings.maxNewIssueCap
        try await SQLiteAlertStore(database: database).saveSettings(settings, project: project.id, at: clock.now())
        let scrubber = Scrubber(settings: project.privacy)
        let ingest = SQLiteIngestStore(database: database)
        var writes: [IngestWrite] = []
        var stored = 0
        for (index, body) in bodies.prefix(count).enumerated() {
            let inflated = try BodyDecoding.inflate(body, encoding: .gzip, limit: limits.maxBatchBytes)
            let (decoded, scrubbed) = try NativeReports.decode(inflated, limits: limits, scrubber: scrubber)
            let reports = decoded.items.compactMap { item -> PreparedReport? in
                if case .success(let r) = item { r } else { nil }
            }
            let payload = try storedPayload(body, inflated: inflated, scrubbed: scrubbed)
            writes.append(
                .reports(ReportBatch(project: project.id, receivedAt: clock.now(), payload: payload, reports: reports)))
            if writes.count == 16 || index == count - 1 {
                _ = try await ingest.commit(writes)
                stored += writes.count
                writes.removeAll()
            }
        }
        var processed = 0
        if work {
            let worker = SymbolicationWorker(
                store: SQLiteSymbolicationStore(database: database), symbolicator: NoDebugFiles(),
                reading: StoredReportReading(
                    inflate: { try NativeReports.inflate($0) },
                    read: { bytes, raw in
                        try NativeReports.reread(
                            inflated: bytes, format: raw.payload.format, range: raw.range, limits: limits,
                            purpose: .processing)
                    }),
                clock: clock, logger: Logger(label: "ingest-count"), concurrency: 2)
            while case let done = try await worker.step(), done > 0 { processed += done }
        }
        print("stored \(stored) bodies, processed \(processed) reports")
    }

    /// No module has a debug file: what the drain bench's reports meet.
    struct NoDebugFiles: AddressSymbolicating {
        func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
            .missingDebugFile
        }
    }

    static func process(_ bodies: [ByteBuffer], count: Int, limits: IngestLimits) async throws {
        var stored = 0
        var reports = 0
        for body in bodies.prefix(count) {
            // What the worker gets from the store: the payload as the route stored it (the client's gzip, as these
            // bodies have nothing to scrub) and each report's range in the inflated bytes.
            let payload = StoredPayload(
                bytes: Array(body.readableBytesView), encoding: .gzip, inflatedSize: limits.maxBatchBytes,
                format: .nativeV1)
            let inflated = try NativeReports.inflate(payload)
            let report = try NativeReports.reread(
                inflated: inflated, format: .nativeV1, range: 0..<inflated.count, limits: limits, purpose: .processing)
            let result = await SymbolicationRules.symbolicate(report, project: ProjectID(1), with: NoDebugFiles())
            let grouping = GroupingInput.make(report, symbols: result, inApp: .none)
            let search = SearchDocument.make(report, symbols: result, grouping: grouping.grouping)
            let outcome = StoredOutcome.encode(
                SymbolicationOutcome(reportID: 1, result: result, grouping: grouping, search: search), codec: .zlib)
            stored += outcome.result.count + (outcome.grouping?.utf8.count ?? 0) + search.functions.utf8.count
            reports += 1
        }
        print("processed \(reports) reports from \(count) bodies; \(stored) bytes to store")
    }

    static func readBodies(_ path: String) throws -> [ByteBuffer] {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var bodies: [ByteBuffer] = []
        var at = 0
        while at + 4 <= data.count {
            let length = Int(data[at]) << 24 | Int(data[at + 1]) << 16 | Int(data[at + 2]) << 8 | Int(data[at + 3])
            guard at + 4 + length <= data.count else { break }
            bodies.append(ByteBuffer(bytes: data[(at + 4)..<(at + 4 + length)]))
            at += 4 + length
        }
        return bodies
    }
}
