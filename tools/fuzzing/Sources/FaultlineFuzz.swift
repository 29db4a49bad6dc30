// libFuzzer entry point for Faultline's parsers and symbolicator (see docs/fuzzing.md).
//
// One executable for every target, so that CI builds once: `FAULTLINE_FUZZ_TARGET` names the target.
// Built only when `FAULTLINE_FUZZ` is set (Package.swift), with `-sanitize=fuzzer,address`, by `tools/fuzz`.
// A target passes when it returns or throws; a trap (overflow, out-of-range index, force unwrap), an
// AddressSanitizer report, a timeout or running out of memory is a crash that libFuzzer saves.
import FaultlineCore
import Formats
import MachO
import NIOCore
import Symbolication

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The fuzz targets, by the name `tools/fuzz` and `FAULTLINE_FUZZ_TARGET` use.
enum FuzzTarget: String, CaseIterable {
    /// Native v1 report bodies (single or batch: `JSONBatchSplitter`, `NativeReportParser`) and native
    /// session bodies. Every report a report target accepts is also grouped and encoded (`afterIngest`).
    case native
    /// Request body inflation (`BodyDecoding`): the first byte picks gzip, deflate, br or the stored form.
    case body
    /// A project's fingerprint rules (`FingerprintRules.parse`), and every parsed rule set matched against facts made
    /// of the same bytes (`GroupingFacts`, its stored form read back): nothing traps, errors point inside the text,
    /// the limits hold, and the glob never takes long.
    case groupingRules = "grouping-rules"
    /// Sentry envelopes (`SentryEnvelopeReader`: framing, event, sessions, client reports, attachments).
    case sentryEnvelope = "sentry-envelope"
    /// Sentry event JSON on its own (`SentryStoreReader`, the legacy store endpoint).
    case sentryEvent = "sentry-event"
    /// Stored Swift runtime crash envelopes (`SwiftCrashReports`).
    case swiftCrash = "swift-crash"
    /// Apple's crash reports as `crashes/apple` takes them (`AppleCrashReports`: `.ips` header + JSON body, `.crash`
    /// text), scrubbed, wrapped and read back: what is stored must read back as what was accepted.
    case appleCrash = "apple-crash"
    /// `multipart/form-data`: the first line is the Content-Type header, the rest the body, fed in chunks.
    case multipart
    /// ELF header reader (`ELFReader.inspect`).
    case elf
    /// Mach-O reader (`MachOContainer.slices`, `MachOImage.read`, symbols, section bytes) and the debug-file
    /// inspector's Mach-O facts, thin and fat.
    case macho
    /// `DebugFileSplitter`: a fat Mach-O split into slices, a ZIP of dSYMs expanded, with small limits.
    case debugArchive = "debug-archive"
    /// The chunk-assembly planner (`ChunkAssemblyPlan.decide`) over hostile lists, sizes, quotas and first bytes.
    case chunkAssembly = "chunk-assembly"
    /// `DebugModule` over the input as a debug file, resolving hostile addresses.
    case symbolicate
    /// Sentry source bundles (`SourceBundle`: `SYSB` header, ZIP central directory, manifest, every file
    /// inflated and checked, as an upload is), with small limits so that each input stays fast.
    case sourceBundle = "source-bundle"
    /// Minidumps (`Minidump`: directory, streams, contexts, CodeView records, Crashpad annotations) and their
    /// conversion to the `ProcessSnapshot` a stack walker reads.
    case minidump
    /// The ways a minidump arrives (`MinidumpSubmission`): the first line is the Content-Type, the rest a form
    /// (`multipart`, with MessagePack `__sentry-event`/breadcrumb parts); the whole input is also read as an
    /// envelope and as a raw body.
    case minidumpForm = "minidump-form"
    /// A minidump as the edge converts it and the envelope route reads it: the input as a raw body
    /// (`MinidumpSubmission.raw`), converted to a Sentry envelope (`sentryEnvelope`), read back
    /// (`SentryIngestDecoding.envelope`) into the report the worker walks, with its stored dump.
    case minidumpEnvelope = "minidump-envelope"
    /// The stack walker (`StackWalker`) over the snapshot of a minidump read from the input, with no module files
    /// (frame pointers and libdw's checks only) and small limits.
    case walk
    /// Tracker URLs as a project's setting and an issue's tracker issue take them (`TrackerURL`, `IssueTracker`),
    /// and the prefilled new-issue link built with hostile titles (`TrackerLink`): what is accepted and what is built
    /// never carries a space, a quote, `<`, `>` or a control character onto a page.
    case tracker
    /// Single sign-on's parsers of what an OpenID provider sends (`JSONWebToken`, `JSONWebKeySet`,
    /// `OIDCProviderMetadata`, base64url) and of the operator's role rules (`RoleRule`), with the claim checks and the
    /// account decision run on every token that parses: nothing traps, and base64url accepts only canonical text.
    case jwt
    /// An SMTP server's replies (`SMTPReplyParser`) fed in pieces whose sizes the input's first byte picks: every
    /// reply has a code from 200 to 599, at most `maxLines` lines of at most `maxLineBytes` bytes, and a printable
    /// summary; the same bytes as a mail address (`MailAddress`) and a header value (`MailMessage.encodedWord`)
    /// never carry a CR, LF or `<`/`>` into a command or header.
    case smtpReply = "smtp-reply"
}

let limits = IngestLimits()
let receivedAt = Date(timeIntervalSince1970: 1_795_000_000)

/// Read once, in `LLVMFuzzerInitialize`, before any input runs.
nonisolated(unsafe) var selected: FuzzTarget?
nonisolated(unsafe) var scratchPath = ""

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>>>
) -> CInt {
    let name = getenv("FAULTLINE_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " ")
        let message = Array("FAULTLINE_FUZZ_TARGET must be one of: \(names) (got \"\(name)\")\n".utf8)
        _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(2)
    }
    selected = target
    // The symbolicator opens files by path: one scratch file per process, in memory when /dev/shm exists.
    let dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    scratchPath = "\(dir)/faultline-fuzz-\(getpid()).elf"
    return 0
}

/// libFuzzer's driver, for an entry point of our own (see `fuzzMain`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The program's entry point. SwiftPM links an executable target's `main` to `<Module>_main`, so libFuzzer's
/// own `main` is not used: this one hands the arguments to libFuzzer's driver.
@_cdecl("FaultlineFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in testOneInput(data, size) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    switch selected {
    case .native: fuzzNative(bytes)
    case .body: fuzzBody(bytes)
    case .groupingRules: fuzzGroupingRules(bytes)
    case .sentryEnvelope: fuzzSentryEnvelope(bytes)
    case .sentryEvent: fuzzSentryEvent(bytes)
    case .swiftCrash: fuzzSwiftCrash(bytes)
    case .appleCrash: fuzzAppleCrash(bytes)
    case .multipart: fuzzMultipart(bytes)
    case .elf: fuzzELF(bytes)
    case .macho: fuzzMachO(bytes)
    case .debugArchive: fuzzDebugArchive(bytes)
    case .chunkAssembly: fuzzChunkAssembly(bytes)
    case .symbolicate: fuzzSymbolicate(bytes)
    case .sourceBundle: fuzzSourceBundle(bytes)
    case .minidump: fuzzMinidump(bytes)
    case .minidumpForm: fuzzMinidumpForm(bytes)
    case .minidumpEnvelope: fuzzMinidumpEnvelope(bytes)
    case .walk: fuzzWalk(bytes)
    case .tracker: fuzzTracker(bytes)
    case .jwt: fuzzJWT(bytes)
    case .smtpReply: fuzzSMTPReply(bytes)
    case nil: break
    }
    return 0
}

func fuzzGroupingRules(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    let facts = GroupingFacts(
        kind: bytes.count % 2 == 0 ? .crash : .nonfatal, source: .stack, components: Array(words.prefix(3)),
        errorType: words.first, errorValue: text, errorCode: words.last, functions: words, modules: words.reversed(),
        release: words.first, platform: words.last, tags: words.map { ($0, text) })
    guard GroupingFacts.decode(facts.encoded) == facts else { fatalError("grouping facts did not read back equal") }
    switch Result(catching: { () throws(FingerprintRulesError) in try FingerprintRules.parse(text) }) {
    case .success(let rules):
        guard rules.rules.count <= FingerprintRules.maxRules else { fatalError("more rules than the limit") }
        for rule in rules.rules {
            guard !rule.matchers.isEmpty, rule.matchers.count <= FingerprintRules.maxMatchers, !rule.parts.isEmpty,
                rule.parts.count <= FingerprintRules.maxParts,
                rule.matchers.allSatisfy({
                    !$0.pattern.isEmpty && $0.pattern.utf8.count <= FingerprintRules.maxPatternBytes
                })
            else { fatalError("a parsed rule is past the limits") }
        }
        _ = facts.grouped(by: rules)
    case .failure(let error):
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        guard error.line >= 1, error.line <= max(1, lines.count), error.column >= 1,
            error.column <= (error.line <= lines.count ? lines[error.line - 1].count : 0) + 2
        else { fatalError("an error points outside the text: \(error)") }
    }
}

/// What the server does next with a report it accepted: groups it into an issue, and writes it back as
/// JSON for the read API (hostile timestamps, addresses and strings all pass through both).
func afterIngest(_ report: Report) {
    checkTagsAndContexts(report)
    _ = Grouping.group(report, symbols: nil)
    _ = try? NativeReports.encode(StoredReport(project: ProjectID(1), report: report, receivedAt: receivedAt))
}

/// Tags, context blocks and the SDK of an accepted report are within the limits (`IngestLimits.apply`), whatever came.
func checkTagsAndContexts(_ report: Report) {
    let most = limits.maxKeyValueBytes
    func fits(_ text: String?) -> Bool { (text?.utf8.count ?? 0) <= most }
    guard report.tags.count <= limits.maxCustomKeys, report.tags.allSatisfy({ fits($0.key) && fits($0.value) }),
        report.contexts.count <= limits.maxContexts,
        report.contexts.allSatisfy({ context in
            fits(context.name) && fits(context.type) && context.values.count <= limits.maxCustomKeys
                && context.values.allSatisfy { fits($0.key) && fits($0.value) }
        }),
        report.sdk.map({ sdk in
            fits(sdk.name) && fits(sdk.version) && sdk.integrations.count <= limits.maxCustomKeys
                && sdk.packages.count <= limits.maxCustomKeys && sdk.integrations.allSatisfy(fits)
                && sdk.packages.allSatisfy { fits($0.name) && fits($0.version) }
        }) ?? true
    else { fatalError("an accepted report's tags, contexts or SDK exceed the limits") }
}

func fuzzNative(_ bytes: [UInt8]) {
    if let decoded = try? NativeReports.decode(bytes, limits: limits) {
        for case .success(let prepared) in decoded.items {
            afterIngest(prepared.report)
            // What the worker reads back (breadcrumbs skipped) is the accepted report without its breadcrumbs.
            guard
                var processing = try? NativeReports.reread(
                    inflated: bytes, format: .nativeV1, range: prepared.range, limits: limits, purpose: .processing)
            else { fatalError("an accepted report cannot be read again for processing") }
            var expected = prepared.report
            expected.breadcrumbs = []
            processing.trimmed = expected.trimmed  // what trimming counted of the breadcrumbs differs; nothing reads it there
            if processing != expected { fatalError("the report read for processing differs from the accepted one") }
        }
        // A single report parsed without the splitter is what the splitter's path makes of it.
        if !decoded.isBatch, decoded != (try? NativeReports.decodeSplitting(bytes, limits: limits)) {
            fatalError("NativeReports.decode differs from decodeSplitting")
        }
    }
    // Scrubbed while parsed (one walk) is what scrubbing first and parsing the rewritten bytes makes of it.
    for scrubber in fuzzScrubbers {
        guard let once = NativeReports.singleScrubbing(bytes, limits: limits, scrubber: scrubber) else { continue }
        guard let twice = try? NativeReports.decodeScrubbingFirst(bytes, limits: limits, scrubber: scrubber),
            !twice.decoded.isBatch, twice.decoded.items == [.success(once.0)], twice.scrubbed == once.1
        else { fatalError("NativeReports.singleScrubbing differs from decodeScrubbingFirst") }
    }
    _ = try? NativeSessions.decode(bytes, limits: limits)
}

/// The default rules, rules that filter fields the parser reads, and IP removal alone.
let fuzzScrubbers = [
    Scrubber(settings: PrivacySettings()),
    Scrubber(
        settings: PrivacySettings(safeFields: ["password"], sensitiveFields: ["message", "name", "function", "type"])),
    Scrubber(settings: PrivacySettings(scrubbing: false)),
]

func fuzzBody(_ bytes: [UInt8]) {
    guard let selector = bytes.first else { return }
    let rest = Array(bytes.dropFirst())
    let limit = 1 << 20
    switch selector % 5 {
    case 0: _ = try? BodyDecoding.inflate(ByteBuffer(bytes: rest), encoding: .gzip, limit: limit)
    case 1: _ = try? BodyDecoding.inflate(ByteBuffer(bytes: rest), encoding: .deflate, limit: limit)
    case 2: _ = try? BodyDecoding.inflate(ByteBuffer(bytes: rest), encoding: .br, limit: limit)
    case 3: _ = try? BodyDecoding.inflateStored(rest, limit: limit)
    default:
        // The streaming inflater (debug-file uploads), fed in uneven chunks.
        guard let inflater = try? StreamingInflater(limit: UInt64(limit)) else { return }
        var start = 0
        var step = 1
        while start < rest.count {
            let end = min(rest.count, start + step)
            do { try inflater.feed(Array(rest[start..<end])) { _ in } } catch { return }
            start = end
            step = step &* 3 &+ 1
        }
        try? inflater.finish()
    }
}

func fuzzSentryEnvelope(_ bytes: [UInt8]) {
    let contents = try? SentryEnvelopeReader.read(
        bytes, receivedAt: receivedAt, limits: limits, maxAttachmentBytes: 64 * 1024, sessionSeed: "fuzz")
    if let event = contents?.event { afterIngest(event.report) }
}

func fuzzSentryEvent(_ bytes: [UInt8]) {
    if let event = try? SentryStoreReader.read(bytes, receivedAt: receivedAt, limits: limits).event {
        afterIngest(event.report)
    }
}

func fuzzSwiftCrash(_ bytes: [UInt8]) {
    if let report = try? SwiftCrashReports.parse(envelope: bytes, limits: limits) { afterIngest(report) }
}

func fuzzAppleCrash(_ bytes: [UInt8]) {
    for scrubber in fuzzScrubbers {
        guard
            let (prepared, payload) = try? AppleCrashReports.prepare(
                file: bytes, metadata: .init(eventID: ""), scrubber: scrubber, limits: limits, hasher: FuzzHasher())
        else { continue }
        afterIngest(prepared.report)
        guard let inflated = try? NativeReports.inflate(payload),
            let reread = try? NativeReports.reread(
                inflated: inflated, format: payload.format, range: prepared.range, limits: limits)
        else { fatalError("an accepted Apple crash report cannot be read again") }
        if reread != prepared.report {
            fatalError("an Apple crash report reads back differently from what was accepted")
        }
    }
}

/// A stand-in for SHA-256 (the fuzzer links no crypto library): FNV-1a spread over 32 bytes.
struct FuzzHasher: ContentHashing {
    func sha256() -> any ContentDigesting { Digest() }
    func sha256(ofFileAt path: String) throws -> ContentHash { Digest().finalize() }

    final class Digest: ContentDigesting {
        var state: UInt64 = 0xcbf2_9ce4_8422_2325
        func update(_ bytes: [UInt8]) {
            for b in bytes { state = (state ^ UInt64(b)) &* 0x100_0000_01b3 }
        }
        func finalize() -> ContentHash {
            let hex = String(state, radix: 16)
            return ContentHash(String(repeating: String(repeating: "0", count: 16 - hex.count) + hex, count: 4))!
        }
    }
}

func fuzzMultipart(_ bytes: [UInt8]) {
    let newline = bytes.firstIndex(of: 10) ?? bytes.count
    let header = String(decoding: bytes[..<newline], as: UTF8.self)
    let body = newline < bytes.count ? Array(bytes[(newline + 1)...]) : []
    let boundary = (try? MultipartParser.boundary(fromContentType: header)) ?? "fuzz-boundary"
    guard var parser = try? MultipartParser(boundary: boundary, maxHeaderBytes: 1024, maxParts: 64) else { return }
    // Uneven chunks, as TCP delivers them: a delimiter or a header block may straddle two feeds.
    var start = 0
    var step = 1 + (body.count % 7)
    while start < body.count {
        let end = min(body.count, start + step)
        do { _ = try parser.feed(body[start..<end]) } catch { return }
        start = end
        step = step &* 2 &+ 1
    }
    try? parser.finish()
}

/// Limits small enough that no input takes long: 1 MiB a file, 4 MiB a bundle.
let bundleLimits = SourceBundle.Limits(
    maxEntries: 4096, maxDirectoryBytes: 1 << 20, maxManifestBytes: 1 << 20,
    maxFileBytes: 1 << 20, maxTotalBytes: 4 << 20)

func fuzzSourceBundle(_ bytes: [UInt8]) {
    guard let bundle = try? SourceBundle(MemoryByteSource(bytes), limits: bundleLimits) else { return }
    // An upload's check: every entry inflated once, within the total; entries share no bytes, so the total
    // inflated cannot exceed what deflate can make of the input (about 1032:1) plus stored bytes.
    if let total = try? bundle.verifyFiles() {
        if total > bundleLimits.maxTotalBytes { fatalError("verifyFiles inflated past maxTotalBytes") }
        if total > bytes.count &* 1032 &+ 1024 { fatalError("verifyFiles inflated more than the input can hold") }
    }
    // Reading by path (debuginfod's route) from a bundle reopened on its index gives the same bytes.
    let again = SourceBundle(MemoryByteSource(bytes), index: bundle.index, limits: bundleLimits)
    for path in bundle.paths.prefix(64) {
        let first = try? bundle.file(atPath: path)
        if first != (try? again.file(atPath: path)) { fatalError("a bundle reopened on its index reads differently") }
    }
}

/// A dump read, then converted. Traps when the snapshot breaks what the walker relies on: memory sorted, disjoint and
/// no larger than the input, modules sorted by base, at most one crashed thread and that one first.
func fuzzMinidump(_ bytes: [UInt8]) {
    guard let dump = try? Minidump(bytes: bytes), let snapshot = try? dump.snapshot() else { return }
    var total = 0
    for (i, region) in snapshot.memory.enumerated() {
        total += region.bytes.count
        guard i > 0 else { continue }
        let previous = snapshot.memory[i - 1]
        let (end, overflow) = previous.start.addingReportingOverflow(UInt64(previous.bytes.count))
        if overflow || end > region.start { fatalError("snapshot memory overlaps or is out of order") }
    }
    if total > bytes.count { fatalError("snapshot memory holds more bytes than the dump") }
    if snapshot.modules.map(\.base) != snapshot.modules.map(\.base).sorted() { fatalError("modules out of order") }
    if snapshot.threads.dropFirst().contains(where: \.crashed) { fatalError("a crashed thread is not first") }
}

/// Traps when a walked thread has no frame or more than the limit, does not start with its context frame, or has a
/// caller whose stack pointer is below its callee's.
func fuzzWalk(_ bytes: [UInt8]) {
    guard let snapshot = try? Minidump(bytes: bytes).snapshot() else { return }
    let walker = StackWalker(limits: .init(maxFrames: 64, maxThreads: 16, maxModules: 256, scanWords: 16)) { _ in nil }
    for thread in walker.walk(snapshot) {
        guard let first = thread.frames.first, first.trust == .context, thread.frames.count <= 64 else {
            fatalError("a walked thread without its context frame, or past the frame limit")
        }
        let pointers = thread.frames.dropFirst().compactMap(\.stackPointer)
        if zip(pointers, pointers.dropFirst()).contains(where: { $0 >= $1 }) { fatalError("a caller below its callee") }
    }
}

/// Small limits, so that each input stays fast. Traps when an accepted submission's dump is not `MDMP`, is past its
/// limit, or its event is not a JSON object.
func fuzzMinidumpForm(_ bytes: [UInt8]) {
    var limits = MinidumpSubmission.Limits()
    limits.maxDumpBytes = 256 * 1024
    limits.maxBodyBytes = 512 * 1024
    limits.maxFieldBytes = 64 * 1024
    limits.maxParts = 32
    let newline = bytes.firstIndex(of: 10) ?? bytes.count
    let contentType = String(decoding: bytes[..<newline], as: UTF8.self)
    let body = newline < bytes.count ? Array(bytes[(newline + 1)...]) : []
    let submissions = [
        try? MinidumpSubmission.multipart(
            body, contentType: contentType, query: "product=p&version=1&guid=g", limits: limits),
        (try? MinidumpSubmission.envelope(bytes, limits: limits)) ?? nil,
        try? MinidumpSubmission.raw(bytes, limits: limits),
    ]
    for case let submission? in submissions {
        if !submission.dump.starts(with: Array("MDMP".utf8)) || submission.dump.count > limits.maxDumpBytes {
            fatalError("an accepted minidump is not MDMP or is past its limit")
        }
        if submission.event.first != UInt8(ascii: "{") { fatalError("the assembled event is not a JSON object") }
    }
}

/// Traps when a dump the edge converted does not read back as the envelope route reads it: no event, an event not
/// marked to be walked, a thread past the limit or with more than its context frame, a module or fault address the
/// dump does not have; or when the stored dump keeps its environment, does not read again, or reads as another
/// process than the dump sent.
func fuzzMinidumpEnvelope(_ bytes: [UInt8]) {
    var dumpLimits = MinidumpSubmission.Limits()
    dumpLimits.maxDumpBytes = 256 * 1024
    dumpLimits.maxBodyBytes = 512 * 1024
    var eventLimits = limits
    eventLimits.maxThreads = 16
    guard let submission = try? MinidumpSubmission.raw(bytes, query: "product=p&version=1&guid=g", limits: dumpLimits),
        let envelope = try? submission.sentryEnvelope(
            scrubbingCommandLine: { $0.count > 3 ? "[arg]" : $0 }, maxThreads: eventLimits.maxThreads)
    else { return }
    // The edge converted it: it read the dump and made its snapshot.
    guard let original = try? Minidump(bytes: submission.dump).snapshot() else {
        fatalError("a converted dump does not read")
    }
    let contents: SentryIngestDecoding.Contents
    do {
        contents = try SentryIngestDecoding.envelope(
            envelope, limits: eventLimits, maxAttachmentBytes: dumpLimits.maxDumpBytes, receivedAt: receivedAt,
            seed: "fuzz", scrubber: Scrubber(settings: PrivacySettings()))
    } catch {
        fatalError("the converted envelope does not read: \(error)")
    }
    if let error = contents.contents.eventError { fatalError("the converted event does not read: \(error)") }
    guard let report = contents.contents.event?.report else { fatalError("the converted envelope has no event") }
    if !report.walksMinidump || report.kind != .crash { fatalError("the event is not a minidump crash to walk") }
    if report.threads.count > eventLimits.maxThreads || report.threads.contains(where: { $0.frames.count > 1 }) {
        fatalError("a thread past the limit, or with more than its context frame")
    }
    if report.threads.count != min(original.threads.count, eventLimits.maxThreads) {
        fatalError("the event's threads are not the dump's")
    }
    if let fault = report.faultAddress, fault != original.exception?.faultAddress {
        fatalError("a fault address the dump does not have")
    }
    let bases = Set(original.modules.map(\.base))
    if report.modules.contains(where: { !bases.contains($0.baseAddress) }) {
        fatalError("a module the dump does not have")
    }
    guard
        let stored = contents.contents.attachments.first(where: {
            $0.attachmentType == MinidumpSubmission.attachmentType
        })
    else { fatalError("the dump is not among the stored attachments") }
    checkRedaction(original: submission.dump, stored: stored.bytes)
    afterIngest(report)
}

/// Traps when the stored dump is not the sent one with only its environment and command line rewritten: another
/// length, a changed byte outside those streams and their directory entries' type and size fields, or an environment
/// left.
/// (A hostile dump may point other data, a memory range or a module name, into those streams' bytes: that data is
/// rewritten with them, so the stored dump may read as another process, or not at all, and the worker then keeps the
/// event's context frames.)
func checkRedaction(original bytes: [UInt8], stored: [UInt8]) {
    guard let dump = try? Minidump(bytes: bytes) else { fatalError("a converted dump does not read") }
    if stored.count != bytes.count { fatalError("the stored dump is not the sent dump's length") }
    var rewritable = [Bool](repeating: false, count: bytes.count)
    let rewritten: Set<UInt32> = [Minidump.StreamType.linuxEnviron, Minidump.StreamType.linuxCmdLine]
    let directory = Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
    for (index, entry) in dump.streams.enumerated() where rewritten.contains(entry.type) {
        let start = Int(entry.location.rva)
        for at in start..<min(bytes.count, start + Int(entry.location.size)) { rewritable[at] = true }
        for at in (directory + 12 * index)..<min(bytes.count, directory + 12 * index + 8) { rewritable[at] = true }
    }
    if bytes.indices.contains(where: { bytes[$0] != stored[$0] && !rewritable[$0] }) {
        fatalError("the stored dump changed outside its environment and command line")
    }
    if let again = try? Minidump(bytes: stored), again.linux.environ != nil {
        fatalError("the stored dump keeps its environment")
    }
}

func fuzzELF(_ bytes: [UInt8]) {
    _ = try? ELFReader.inspect(MemoryByteSource(bytes))
}

/// Every slice read, its symbols and a few sections' bytes within small limits. Traps when the reader accepts what it
/// must not: a slice outside the input, overlapping slices, a section with file data or a symbol table outside its
/// slice, or a head check that refuses the first bytes of a file whose slices were read.
func fuzzMachO(_ bytes: [UInt8]) {
    let read = MachOContainer.reader(over: bytes)
    // The upload routes' first look (the UUID from a thin image's first bytes) must agree with the whole read.
    let headID = try? MachOFileInspector().inspectHead(Array(bytes.prefix(65_536)))
    guard let slices = try? MachOContainer.slices(size: UInt64(bytes.count), read: read) else { return }
    var allRead = true
    defer {
        // The head check refuses early only what reading the whole file refuses.
        if allRead, (try? MachOContainer.checkHead(Array(bytes.prefix(4096)))) == nil {
            fatalError("checkHead refused a readable file")
        }
    }
    if let headID, let whole = slices.count == 1 ? try? MachOImage.read(slice: slices[0], read: read) : nil,
        whole.buildID != headID
    {
        fatalError("the UUID of the first bytes is not the image's")
    }
    for (i, slice) in slices.enumerated() {
        if slice.offset > UInt64(bytes.count) || slice.size > UInt64(bytes.count) - slice.offset {
            fatalError("slice outside the file")
        }
        for other in slices[..<i]
        where slice.offset < other.offset + other.size && other.offset < slice.offset + slice.size {
            fatalError("overlapping slices")
        }
        guard let image = try? MachOImage.read(slice: slice, read: read) else {
            allRead = false
            continue
        }
        for section in image.segments.flatMap(\.sections) where section.hasFileData {
            if section.fileOffset > slice.size || section.size > slice.size - section.fileOffset {
                fatalError("section outside its slice")
            }
        }
        if let table = image.symbolTable,
            table.stringsOffset > slice.size || table.stringsSize > slice.size - table.stringsOffset
        {
            fatalError("string table outside its slice")
        }
        _ = try? image.symbols(maxSymbols: 1 << 16, maxStringBytes: 1 << 20, read: read)
        for section in image.segments.flatMap(\.sections).prefix(16) where section.hasFileData {
            _ = try? image.bytes(of: section, maxBytes: 1 << 20, read: read)
        }
        _ = (image.buildID, image.features, image.hasCode, image.textVMAddr, image.uuidString)
    }
}

/// Small enough that no input takes long: 1 MiB an entry, 2 MiB an archive, 64 pieces.
let archiveLimits = DebugFileSplitter.Limits(
    maxEntries: 256, maxEntryBytes: 1 << 20, maxTotalBytes: 2 << 20, maxPieces: 64)

/// The input written to a file and split as an upload is (`DebugFileSplitter`). Traps when the pieces together hold
/// more than the archive limit allows (each entry's bytes, or a fat entry's slices, which lie inside it), when there
/// are more pieces than allowed, or when a piece is not a thin Mach-O image.
func fuzzDebugArchive(_ bytes: [UInt8]) {
    let input = scratchPath + ".upload"
    guard FileManager.default.createFile(atPath: input, contents: Data(bytes)) else {
        fatalError("cannot write \(input)")
    }
    var made: [String] = []
    defer {
        unlink(input)
        for path in made { unlink(path) }
    }
    let pieces = try? DebugFileSplitter(limits: archiveLimits).split(path: input, name: "fuzz") {
        let path = "\(scratchPath).piece-\(made.count)"
        guard FileManager.default.createFile(atPath: path, contents: nil) else { fatalError("cannot write \(path)") }
        made.append(path)
        return TemporaryUpload(path: path)
    }
    guard let pieces else { return }
    if pieces.count > archiveLimits.maxPieces { fatalError("more pieces than the limit") }
    var total: UInt64 = 0
    for piece in pieces {
        guard let source = try? FileByteSource(path: piece.upload.path) else { fatalError("a piece cannot be read") }
        total += source.size
        guard let head = try? source.bytes(at: 0, count: 4), let magic = MachOContainer.magic(of: head),
            magic == .thin32 || magic == .thin64
        else { fatalError("a piece is not a thin Mach-O image") }
    }
    if total > max(archiveLimits.maxTotalBytes, UInt64(bytes.count)) {
        fatalError("the pieces hold more than the limits allow")
    }
}

/// Addresses no sane report has: the ends of the address space, and values next to them.
let hostileAddresses: [UInt64] = [
    0, 1, 0xfff, 0x1000, 0x40_0000, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000,
    0xffff_ffff_ffff_ff00, 0xffff_ffff_ffff_ff10, 0xffff_ffff_ffff_fffe, .max,
]

func fuzzSymbolicate(_ bytes: [UInt8]) {
    let fd = open(scratchPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("cannot write \(scratchPath) (errno \(errno))") }
    var written = 0
    while written < bytes.count {
        let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { break }
        written += n
    }
    close(fd)
    defer { unlink(scratchPath) }
    guard let module = try? DebugModule(path: scratchPath) else { return }
    // Besides the fixed hostile addresses, words of the file itself (symbol values, DWARF ranges, and what
    // the mutator wrote there), as link-time addresses and as offsets from the load address, and one past.
    var addresses = hostileAddresses
    let words = bytes.count / 8
    let stride = max(1, words / 48)
    var w = 0
    while w < words {
        var value: UInt64 = 0
        for k in 0..<8 { value |= UInt64(bytes[w * 8 + k]) << (8 * UInt64(k)) }
        addresses.append(value)
        addresses.append(value &+ 1)
        w += stride
    }
    for address in addresses {
        _ = module.resolve(fileAddress: address)
        _ = module.resolve(moduleOffset: address)
    }
}

/// Reads an input front to back; past its end, zeros.
struct FuzzReader {
    let bytes: [UInt8]
    var at = 0

    mutating func byte() -> UInt8 {
        defer { at += 1 }
        return at < bytes.count ? bytes[at] : 0
    }
    /// Eight bytes, big-endian.
    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }
    /// One byte: below 0x80, that many 4 KiB pages; else the eight bytes after it.
    mutating func size() -> UInt64 {
        let b = byte()
        return b < 0x80 ? UInt64(b) * 4096 : uint64()
    }
    mutating func rest() -> [UInt8] { at < bytes.count ? Array(bytes[at...]) : [] }
}

/// The chunk-assembly planner: limits, the quota left, the running assemblies, which of 16 chunks are stored and
/// their sizes, a list of up to 255 of them, then the file's first bytes (checked by `inspectHead`, as the service
/// does). Traps when a plan would write what it must not: a missing chunk, other than the listed sizes, past the
/// size limit or the quota left after the running assemblies, past the parallel bound, a chunk listed too often,
/// or first bytes the inspector refused.
func fuzzChunkAssembly(_ bytes: [UInt8]) {
    var input = FuzzReader(bytes: bytes)
    let limits = ChunkAssemblyPlan.Limits(
        maxFileBytes: input.size(), chunkSize: input.size(), maxRepeats: Int(input.byte() % 16),
        maxParallel: Int(input.byte() % 4))
    let quotaLeft = input.size()
    let sameFile = input.byte() & 1 == 1
    let running = ChunkAssemblyPlan.Running(count: Int(input.byte() % 8), bytes: input.size(), sameFile: sameFile)
    let pool = (0..<16).map { ChunkChecksum(digest: [UInt8](repeating: UInt8($0), count: 20))! }
    let present = UInt16(input.byte()) | UInt16(input.byte()) << 8
    var stored: [ChunkChecksum: UInt64] = [:]
    for (i, chunk) in pool.enumerated() where present & (1 << i) != 0 { stored[chunk] = input.size() }
    let listed = (0..<Int(input.byte())).map { _ in pool[Int(input.byte() % 16)] }
    let head: ChunkAssemblyPlan.Head
    do {
        head = .debugFile(try DebugFileFormatInspector().inspectHead(input.rest()))
    } catch {
        head = .notADebugFile("\(error)")
    }
    let decision = ChunkAssemblyPlan.decide(
        listed, stored: stored, head: head, quotaLeft: quotaLeft, running: running, limits: limits)
    if let refusal = ChunkAssemblyPlan.screen(listed, limits: limits) {
        if decision != .refuse(refusal) { fatalError("a list the screen refuses was planned: \(decision)") }
    }
    let busy = running.sameFile || running.count >= limits.maxParallel
    var expectedMissing: [ChunkChecksum] = []
    for chunk in listed where stored[chunk] == nil && !expectedMissing.contains(chunk) { expectedMissing.append(chunk) }
    switch decision {
    case .write(let planned):
        var total: UInt64 = 0
        var times: [ChunkChecksum: Int] = [:]
        for chunk in listed {
            guard let size = stored[chunk] else { fatalError("the plan writes a chunk that is not stored") }
            let (sum, overflow) = total.addingReportingOverflow(size)
            if overflow { fatalError("the plan writes more than 2^64 bytes") }
            total = sum
            times[chunk, default: 0] += 1
        }
        if listed.isEmpty || UInt64(listed.count) > limits.maxChunks {
            fatalError("the plan writes a list of \(listed.count) chunks")
        }
        if times.values.contains(where: { $0 > limits.maxRepeats }) {
            fatalError("the plan writes a chunk listed too often")
        }
        if total != planned || planned > limits.maxFileBytes {
            fatalError("the plan writes \(planned) bytes, not the listed \(total)")
        }
        if running.bytes > quotaLeft || planned > quotaLeft - running.bytes {
            fatalError("the plan writes past the quota")
        }
        if busy { fatalError("the plan writes while the file or too many of the project's are running") }
        if case .notADebugFile = head { fatalError("the plan writes a file whose first bytes were refused") }
    case .missing(let gone):
        if gone.isEmpty || gone != expectedMissing { fatalError("the plan asks for \(gone), not \(expectedMissing)") }
    case .wait:
        if !busy || !expectedMissing.isEmpty { fatalError("the plan waits for nothing") }
    case .refuse(let refusal):
        _ = refusal.description
    }
}

/// Whether `text` holds a character a tracker URL never may (it is written into `href` attributes).
func unsafeInLink(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || $0 == "\"" || $0 == "<" || $0 == ">" }
}

func fuzzTracker(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    if let url = try? TrackerURL.validated(text, field: "tracker_url") {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), !unsafeInLink(url),
            url.utf8.count <= TrackerURL.maxBytes
        else { fatalError("TrackerURL accepted \(url.debugDescription)") }
    }
    let draft = TrackerIssueDraft(
        title: text, culprit: text, events: bytes.count, users: -bytes.count, firstRelease: text, link: text)
    for kind in TrackerKind.allCases {
        guard let tracker = try? IssueTracker.validated(kind: kind, url: text) else { continue }
        if unsafeInLink(tracker.url) { fatalError("IssueTracker accepted \(tracker.url.debugDescription)") }
        let link = TrackerLink.newIssueURL(tracker, draft)
        // Everything the draft adds is percent-encoded: the link is the tracker's address and safe query text.
        if unsafeInLink(link) { fatalError("TrackerLink built \(link.debugDescription)") }
        let base = kind == .jira ? String(tracker.url.prefix { $0 != "?" }) : tracker.url
        var trimmed = base
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        if !link.hasPrefix(trimmed) { fatalError("TrackerLink left the tracker: \(link.debugDescription)") }
    }
}

func fuzzJWT(_ bytes: [UInt8]) {
    if let decoded = Base64URL.decode(bytes), Base64URL.encode(decoded) != String(decoding: bytes, as: UTF8.self) {
        fatalError("base64url accepted a non-canonical spelling")
    }
    if case .success(let token) = JSONWebToken.parse(bytes) {
        guard bytes.starts(with: token.signingInput) else { fatalError("the signing input is not the token's prefix") }
        let check = IDTokenCheck(issuer: "https://id.example.com", clientID: "faultline")
        _ = check.problem(token.claims, nonce: "n", now: receivedAt)
        let configuration = SingleSignOnConfiguration(
            issuer: "https://id.example.com", clientID: "faultline", clientSecret: "s", allowSignup: true,
            roleRules: [
                RoleRule(project: ProjectSlug("shop")!, role: .member, match: .claim(name: "groups", value: "a"))
            ])
        _ = SingleSignOnAccount.decide(token.claims, existing: { _ in nil }, configuration: configuration)
    }
    if case .success(let set) = JSONWebKeySet.parse(bytes) {
        guard !set.keys.isEmpty, set.keys.count <= JSONWebKeySet.maxKeys else { fatalError("key set bounds") }
        for algorithm in JOSEAlgorithm.allCases { _ = set.key(for: algorithm, keyID: set.keys.first?.keyID) }
    }
    if case .success(let metadata) = OIDCProviderMetadata.parse(bytes, issuer: "https://id.example.com") {
        guard OIDCURL.acceptable(metadata.tokenEndpoint) else { fatalError("discovery accepted an unsafe endpoint") }
    }
    _ = RoleRule.parse(String(decoding: bytes, as: UTF8.self)).map { RoleRule.parse($0.description) }
}

func fuzzSMTPReply(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let piece = Int(first % 64) + 1
    var parser = SMTPReplyParser()
    var start = 1
    loop: while start < bytes.count {
        let end = min(bytes.count, start + piece)
        do throws(SMTPReplyProblem) {
            try parser.feed(bytes[start..<end])
        } catch {
            break loop
        }
        while let reply = parser.next() {
            guard (200...599).contains(reply.code), (1...SMTPReplyParser.maxLines).contains(reply.lines.count),
                reply.lines.allSatisfy({ $0.utf8.count <= SMTPReplyParser.maxLineBytes * 3 }),
                reply.summary.count <= 200,
                reply.summary.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) })
            else { fatalError("SMTPReplyParser gave \(reply)") }
        }
        start = end
    }
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    if let address = MailAddress(text), address.rawValue.contains(where: { "\r\n<> ".contains($0) }) {
        fatalError("MailAddress accepted \(text.debugDescription)")
    }
    let word = MailMessage.encodedWord(text)
    if word.replacing("\r\n ", with: "").contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) {
        fatalError("encodedWord left a line break in \(word.debugDescription)")
    }
}
