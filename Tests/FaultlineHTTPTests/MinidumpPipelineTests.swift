import FaultlineCore
import Formats
import Foundation
import Logging
import Pipeline
import TestSupport
import Testing

@testable import FaultlineApp

/// A minidump through the whole pipeline below HTTP, on the real composition and a real SQLite data folder: the
/// dump of a real Crashpad crash converted at the edge (`MinidumpSubmission.sentryEnvelope`), stored by the ingest
/// service as the envelope route stores it, the programs stored by the debug-file service, the real worker walking
/// and symbolicating it, and the event read back as the dashboard reads it (`Composition.loadEvent`).
struct MinidumpPipeline {
    let app: TestApp
    let project: Project
    let ingest: IngestService
    let files: DebugFileService
    let worker: SymbolicationWorker

    init() async throws {
        app = try await TestApp()
        project = try #require(try await app.root.projects.project(slug: ProjectSlug("app")!))
        ingest = app.root.ingestService(storage: app.root.storagePressure(minFreeBytes: 0))
        files = try app.root.debugFileService(quotaBytes: 1 << 30)
        worker = try app.root.symbolicationWorker(logger: Logger(label: "test"))
    }

    /// Stores `envelope` as the envelope route does; returns the event's id.
    @discardableResult
    func store(envelope: [UInt8]) async throws -> EventID {
        let now = app.root.clock.now()
        let contents = try SentryIngestDecoding.envelope(
            envelope, limits: IngestLimits(), maxAttachmentBytes: MinidumpSubmission.Limits().maxDumpBytes,
            receivedAt: now, seed: "test-\(now.timeIntervalSince1970)", scrubber: project.scrubber)
        if let error = contents.contents.eventError { throw error }
        _ = try await ingest.accept(try contents.write(project: project.id, receivedAt: now), for: project)
        return try #require(contents.eventID)
    }

    /// Converts a bare dump under the project's rules and stores it.
    @discardableResult
    func store(dump: [UInt8]) async throws -> EventID {
        let scrubber = project.scrubber
        return try await store(
            envelope: try MinidumpSubmission.raw(dump).sentryEnvelope(scrubbingCommandLine: { scrubber.scrub($0) ?? $0 }
            ))
    }

    /// Stores the file at `path` as the project's debug file(s) of its build-id, as an upload does.
    func upload(_ path: String) async throws {
        let upload = try files.temporaryUpload()
        try Data(contentsOf: URL(fileURLWithPath: path)).write(to: URL(fileURLWithPath: upload.path))
        let accepted = try await files.acceptAll(
            try files.received(upload), claimed: nil, project: project, name: (path as NSString).lastPathComponent)
        #expect(!accepted.isEmpty)
    }

    /// Runs the worker until it has nothing left (at most `limit` steps: a worker that never runs out fails).
    func settle(limit: Int = 50) async throws {
        for _ in 0..<limit where try await worker.step() == 0 { return }
        Issue.record("the worker did not run out of work in \(limit) steps")
    }

    /// The event as the dashboard reads it, and its issue.
    func load(_ id: EventID) async throws -> (report: Report, symbols: SymbolicatedReport?, issue: IssueSummary?) {
        let loaded = try #require(try await app.root.loadEvent(id, project.id))
        let issue = try await loaded.issue.asyncMap {
            try await app.root.insights.issue($0, project: project.id, now: app.root.clock.now())?.summary
        }
        return (loaded.report, loaded.symbols, issue ?? nil)
    }

    /// The function names of a symbolicated thread, innermost first, inline chains included ("?" for a frame that did
    /// not resolve).
    static func functions(_ slots: [SymbolicatedFrameSlot]) -> [String] {
        slots.flatMap { slot in
            let names = slot.frames.compactMap(\.function)
            return names.isEmpty ? ["?"] : names
        }
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}

/// Real Crashpad crashes through the pipeline (see `MinidumpPipeline`): the walked and symbolicated crashing thread is
/// the program's call chain, each frame says how it was found, the issue is named after the signal, and a debug file
/// uploaded after the dump gives the same stack and issue as one uploaded before. End-to-end: it builds and crashes
/// programs and runs crashpad_handler from PyPI.
@Suite(.serialized, .tags(.endToEnd)) struct MinidumpPipelineTests {
    /// The files a scenario's team uploads: the program, and the library it loads.
    static func uploads(_ crash: Crashpad.Crash) -> [String] { [crash.program] + [crash.library].compactMap { $0 } }

    static func signalName(_ crash: Crashpad.Crash) -> String { crash.signal == 6 ? "SIGABRT" : "SIGSEGV" }

    /// A fresh data folder given `crash`'s files (unless `withFiles` is false), then its dump, and the worker run.
    static func processed(_ crash: Crashpad.Crash, withFiles: Bool) async throws -> (MinidumpPipeline, EventID) {
        let pipeline = try await MinidumpPipeline()
        if withFiles {
            for file in Self.uploads(crash) { try await pipeline.upload(file) }
        }
        let id = try await pipeline.store(dump: crash.bytes)
        try await pipeline.settle()
        return (pipeline, id)
    }

    @Test(arguments: Crashpad.Scenario.allCases)
    func theWalkedStackIsTheProgramsCallChain(scenario: Crashpad.Scenario) async throws {
        // Given the program's files, then the dump, and the worker done
        let crash = try Crashpad.crash(scenario)
        let (pipeline, id) = try await Self.processed(crash, withFiles: true)

        // Then the crashing thread, read as the dashboard reads it, is the call chain (after abort's libc frames)
        let (report, symbols, issue) = try await pipeline.load(id)
        let result = try #require(symbols)
        #expect(result.state != .pending)
        #expect(result.walk != nil)
        let crashed = try #require(report.threads.first)
        #expect(crashed.crashed)
        if scenario == .secondThread { #expect(crashed.name == "worker") }
        let names = MinidumpPipeline.functions(try #require(result.threads.first))
        let start = try #require(names.firstIndex(of: crash.callChain[0]), "\(names)")
        #expect(Array(names[start...].prefix(crash.callChain.count)) == crash.callChain, "\(names)")
        // Every frame says how it was found: the crash context, then call-frame information
        #expect(crashed.frames.first?.trust == .context)
        #expect(crashed.frames.allSatisfy { $0.trust != nil }, "\(crashed.frames)")
        #expect(result.threads.first?.count == crashed.frames.count)
        // Every thread of the dump is there, walked
        #expect(report.threads.count == result.walk?.threads.count)
        #expect(report.threads.allSatisfy { !$0.frames.isEmpty && $0.frames.allSatisfy { $0.trust != nil } })
        // The issue is named after the signal
        let title = try #require(issue?.title)
        #expect(title.contains(Self.signalName(crash)), "\(title)")
    }

    @Test(arguments: Crashpad.Scenario.allCases)
    func debugFilesUploadedAfterTheDumpGiveTheSameStackAndIssue(scenario: Crashpad.Scenario) async throws {
        let crash = try Crashpad.crash(scenario)
        // The files first, in one data folder
        let (early, earlyID) = try await Self.processed(crash, withFiles: true)
        let expected = try await early.load(earlyID)

        // The dump first, in another
        let (late, id) = try await Self.processed(crash, withFiles: false)
        let before = try await late.load(id)
        // Without the program's call-frame information the crashing thread's frames resolve to nothing
        let unresolved = try #require(before.symbols?.threads.first)
        #expect(!unresolved.contains { $0.frames.contains { $0.function == crash.callChain[0] } }, "\(unresolved)")
        #expect(before.symbols?.missing.isEmpty == false)

        // When the files arrive, the report is queued again and walked again
        for file in Self.uploads(crash) { try await late.upload(file) }
        #expect(try await late.app.root.symbolicationStore.pending(limit: 10, excluding: []).count == 1)
        try await late.settle()
        let after = try await late.load(id)

        // Then the stack, its walk and its issue are those of the files uploaded first
        #expect(after.symbols?.walk == expected.symbols?.walk)
        #expect(after.symbols?.threads == expected.symbols?.threads)
        #expect(after.report.threads == expected.report.threads)
        let names = MinidumpPipeline.functions(try #require(after.symbols?.threads.first))
        #expect(names.contains(crash.callChain[0]), "\(names)")
        #expect(after.issue?.fingerprint == expected.issue?.fingerprint)
        #expect(after.issue?.title == expected.issue?.title)
        #expect(after.issue != nil)
        // and the issue the stack-less report was filed under first is gone
        let issues = try await late.app.root.insights.issues(
            matching: IssueQuery(project: late.project.id), now: late.app.root.clock.now())
        #expect(issues.count == 1, "\(issues.map(\.title))")
    }
}

/// Hostile dumps stored with real minidump events, through the real worker (see `MinidumpPipeline`): a dump the edge
/// would refuse can still be in the database (stored by an older reader, or by a client that sent the envelope item
/// as it is), so the worker reads every stored dump as hostile. Truncated dumps, flipped bytes and hostile words
/// (counts, offsets, memory ranges, register values) in the real Crashpad dumps and the crafted arm64 dump of the
/// fuzz seeds: the worker never traps or hangs, every report is settled and grouped, and no walk passes the limits.
@Suite struct MinidumpHostilePipelineTests {
    static let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../tools/fuzzing/seeds/minidump").standardized

    /// The envelope of `dump`'s event (as the edge converts it) under `eventID`, its attachment replaced by `stored`.
    static func envelope(event dump: [UInt8], eventID: EventID, storing stored: [UInt8]) throws -> [UInt8] {
        var submission = try MinidumpSubmission.raw(dump)
        submission.eventID = eventID
        let converted = try submission.sentryEnvelope(scrubbingCommandLine: { $0 })
        // The converted envelope ends with the dump's attachment item: everything before it is kept.
        let marker = Array(#"{"type":"attachment","#.utf8)
        let at = try #require(
            converted.indices.first { converted[$0...].starts(with: marker) }, "no attachment item in the envelope")
        let header =
            #"{"type":"attachment","length":\#(stored.count),"filename":"minidump.dmp","#
            + #""attachment_type":"event.minidump"}"#
        return Array(converted[..<at]) + Array(header.utf8) + [0x0A] + stored + [0x0A]
    }

    /// The hostile variants of `dump`: prefixes, flipped bytes, and 8-byte words overwritten with extreme values.
    static func variants(of dump: [UInt8], seed: UInt64, count: Int) -> [[UInt8]] {
        var generator = SplitMix64(seed: seed)
        var out: [[UInt8]] = []
        let extremes: [UInt64] = [0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x8000_0000_0000_0000, .max, .max - 7]
        for index in 0..<count {
            var bytes = dump
            switch index % 3 {
            case 0:
                bytes = Array(dump.prefix(Int(generator.next() % UInt64(dump.count))))
            case 1:
                for _ in 0..<8 {
                    bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
                }
            default:
                for _ in 0..<4 {
                    let at = Int(generator.next() % UInt64(bytes.count - 8)) & ~3
                    let value = extremes[Int(generator.next() % UInt64(extremes.count))]
                    for byte in 0..<8 { bytes[at + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte))) }
                }
            }
            out.append(bytes)
        }
        return out
    }

    @Test func hostileStoredDumpsNeverStopTheWorkerAndEveryReportIsGrouped() async throws {
        let pipeline = try await MinidumpPipeline()
        var ids: [EventID] = []
        var n = 0
        for (name, seed) in [
            ("crashpad-segfault.dmp", UInt64(34)), ("crashpad-second-thread.dmp", 35), ("breakpad-arm64.dmp", 36),
        ] {
            let dump = [UInt8](try Data(contentsOf: Self.seeds.appendingPathComponent(name)))
            for hostile in Self.variants(of: dump, seed: seed, count: 45) {
                n += 1
                let id = try #require(EventID(String(format: "%032x", 0xD0_0000 + n)))
                ids.append(
                    try await pipeline.store(envelope: try Self.envelope(event: dump, eventID: id, storing: hostile)))
            }
        }
        #expect(ids.count == 135)

        // When the worker runs (bounded: a walk that hung would hold `settle` up, one that trapped would end the test
        // process)
        try await pipeline.settle(limit: 100)

        // Then every report is settled and filed under an issue, its walk within the limits
        let limits = IngestLimits()
        var walked = 0
        for id in ids {
            let (report, symbols, issue) = try await pipeline.load(id)
            #expect(symbols?.state != .pending, "\(id)")
            #expect(issue != nil, "\(id)")
            #expect(report.threads.count <= limits.maxThreads)
            #expect(report.threads.allSatisfy { $0.frames.count <= limits.maxFramesPerThread })
            #expect(report.threads.first?.frames.isEmpty == false, "\(id)")
            if symbols?.walk != nil { walked += 1 }
        }
        // Some variants still read (flipped bytes in memory, registers), and were walked
        #expect(walked > 0)
        #expect(try await pipeline.app.root.symbolicationStore.pending(limit: 10, excluding: []).isEmpty)
    }

    @Test func aClientEventSayingMinidumpWithoutADumpKeepsItsFrames() async throws {
        // Given an ordinary event whose exception names the minidump mechanism, with its own stack and no dump
        let pipeline = try await MinidumpPipeline()
        let event =
            #"{"event_id":"9077e450fa6f4594850bfed9428d1d98","level":"fatal","platform":"native","#
            + #""exception":{"values":[{"type":"SIGSEGV","mechanism":{"type":"minidump","handled":false},"#
            + #""stacktrace":{"frames":[{"instruction_addr":"0x7f0000001000"},{"instruction_addr":"0x7f0000001234"}]}}]},"#
            + #""debug_meta":{"images":[{"type":"elf","code_file":"/app","#
            + #""code_id":"aabbccddeeff00112233445566778899aabbccdd","image_addr":"0x7f0000000000","image_size":65536}]}}"#
        let id = try await pipeline.store(
            envelope: Array(
                (#"{"event_id":"9077e450fa6f4594850bfed9428d1d98"}"# + "\n{\"type\":\"event\"}\n" + event + "\n").utf8))

        // When the worker runs: there is no dump to walk, and no earlier walk
        try await pipeline.settle()

        // Then the report keeps the frames it was sent (innermost first), and is grouped
        let (report, symbols, issue) = try await pipeline.load(id)
        #expect(symbols?.walk == nil)
        #expect(symbols?.state != .pending)
        #expect(report.threads.first?.frames.compactMap(\.address) == [0x7f00_0000_1234, 0x7f00_0000_1000])
        #expect(report.threads.first?.frames.allSatisfy { $0.trust == nil } == true)
        #expect(issue?.title.contains("SIGSEGV") == true, "\(issue?.title ?? "-")")
    }
}

/// A split debug file uploaded before the dump, the stripped executable after it (see `MinidumpPipeline`). The debug
/// file has no `.eh_frame` bytes (`objcopy --only-keep-debug` keeps the section's header only), so the walk made with it
/// has no call-frame information for the program; the executable has it, so storing it queues the report again
/// although debug information outranks an executable (`DebugDataRank.requeuesSameRank`). End-to-end: it builds and
/// crashes programs and runs crashpad_handler from PyPI.
@Suite(.serialized, .tags(.endToEnd)) struct MinidumpSplitFilesTests {
    @Test(arguments: [Crashpad.Scenario.abort, .segfault])
    func theExecutableAfterItsDebugFileChangesTheWalk(scenario: Crashpad.Scenario) async throws {
        let crash = try Crashpad.crash(scenario)
        let scratch = try TempFolder("minidump-split")
        let debug = scratch.file("program.debug")
        let stripped = scratch.file("program.stripped")
        try Command.check("objcopy", ["--only-keep-debug", crash.program, debug])
        try Command.check("objcopy", ["--strip-all", crash.program, stripped])
        let (whole, wholeID) = try await MinidumpPipelineTests.processed(crash, withFiles: true)
        let expected = try await whole.load(wholeID)

        // Given the debug file, then the dump: the walk has no CFI for the program
        let split = try await MinidumpPipeline()
        try await split.upload(debug)
        let id = try await split.store(dump: crash.bytes)
        try await split.settle()
        let before = try await split.load(id)
        let walked = try #require(before.symbols?.walk?.threads.first)
        #expect(!walked.frames.dropFirst().contains { $0.trust == .cfi }, "\(walked.frames)")
        #expect(before.symbols?.walk != expected.symbols?.walk)

        // When the stripped executable arrives
        try await split.upload(stripped)
        let queued = try await split.app.root.symbolicationStore.pending(limit: 10, excluding: []).count
        try await split.settle()
        let after = try await split.load(id)

        // Then the report is walked again with the executable's CFI: the stack of the whole program first
        #expect(queued == 1)
        #expect(after.symbols?.walk == expected.symbols?.walk)
        #expect(after.symbols?.threads == expected.symbols?.threads)
        #expect(after.issue?.fingerprint == expected.issue?.fingerprint)
    }
}
