import FaultlineCore
import Formats
import NIOCore

import Foundation

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
@main
struct IngestCount {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, ["native", "sentry", "process"].contains(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: ingest-count native|sentry|process BODIES [N]\n".utf8))
            exit(2)
        }
        let bodies = try readBodies(arguments[2])
        let count = arguments.count > 3 ? min(Int(arguments[3]) ?? bodies.count, bodies.count) : bodies.count
        let limits = IngestLimits()
        if arguments[1] == "process" {
            try Inline.run { try await process(bodies, count: count, limits: limits) }
            return
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
                // What the route stores: the client's gzip when scrubbing changed nothing, else the scrubbed bytes deflated.
                if let scrubbed { stored += try BodyDecoding.deflateForStorage(scrubbed).count } else { stored += body.readableBytes }
            } else {
                let contents = try SentryIngestDecoding.envelope(
                    inflated, gzip: Array(body.readableBytesView), limits: limits, maxAttachmentBytes: 1 << 20, receivedAt: Date(timeIntervalSince1970: 1_763_800_000),
                    seed: "bench", scrubber: scrubber)
                let write = try contents.write(project: ProjectID(1), receivedAt: Date(timeIntervalSince1970: 1_763_800_000))
                if let event = write.event {
                    reports += event.reports.count
                    stored += event.payload.bytes.count
                }
            }
        }
        print("decoded \(reports) reports from \(count) bodies; \(stored) bytes to store")
    }

    /// Runs async work on this thread: valgrind 3.19 dies when the global executor starts its threads, and
    /// nothing here waits for anything (the symbolicator answers at once).
    final class Inline: TaskExecutor, @unchecked Sendable {
        var jobs: [UnownedJob] = []
        func enqueue(_ job: consuming ExecutorJob) { jobs.append(UnownedJob(job)) }

        static func run(_ work: @escaping @Sendable () async throws -> Void) throws {
            let executor = Inline()
            nonisolated(unsafe) var failure: (any Error)?
            Task(executorPreference: executor) {
                do { try await work() } catch { failure = error }
            }
            while !executor.jobs.isEmpty { executor.jobs.removeFirst().runSynchronously(on: executor.asUnownedTaskExecutor()) }
            if let failure { throw failure }
        }
    }

    /// No module has a debug file: what the drain bench's reports meet.
    struct NoDebugFiles: AddressSymbolicating {
        func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup { .missingDebugFile }
    }

    static func process(_ bodies: [ByteBuffer], count: Int, limits: IngestLimits) async throws {
        var stored = 0
        var reports = 0
        for body in bodies.prefix(count) {
            // What the worker gets from the store: the payload as the route stored it (the client's gzip, as these
            // bodies have nothing to scrub) and each report's range in the inflated bytes.
            let payload = StoredPayload(
                bytes: Array(body.readableBytesView), encoding: .gzip, inflatedSize: limits.maxBatchBytes, format: .nativeV1)
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
