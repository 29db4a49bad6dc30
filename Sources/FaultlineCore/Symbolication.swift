#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A frame as the symbolicator resolved it (one address can give several: the inline chain).
public struct ResolvedFrame: Sendable, Equatable, Codable {
    public var function: String?
    public var file: String?
    public var line: Int?
    public var column: Int?
    /// Inlined into the next frame of the same address.
    public var inlined: Bool
    public init(function: String?, file: String? = nil, line: Int? = nil, column: Int? = nil, inlined: Bool = false) {
        self.function = function
        self.file = file
        self.line = line
        self.column = column
        self.inlined = inlined
    }
}

/// The symbolicator's answer for one module-relative address.
public enum AddressLookup: Sendable, Equatable {
    /// Resolved from DWARF (function, file, line, inline chain; innermost first).
    case resolved([ResolvedFrame])
    /// Only the symbol table had it: function name and offset.
    case symbolOnly(ResolvedFrame, offset: UInt64)
    /// No debug file for the build-id.
    case missingDebugFile
    /// The debug file has nothing at this address.
    case notFound
}

/// Resolves addresses inside modules identified by build-id.
public protocol AddressSymbolicating: Sendable {
    /// `moduleOffset` is the address minus the module's load address, already adjusted for return addresses.
    func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup
    /// The code at the start of a source line (its inline chain, innermost first), from the module's DWARF:
    /// where a crash message's `file:line` is. `.resolved` with the frames, `.missingDebugFile` when the project
    /// has no debug information for the module, `.notFound` when it has no such line.
    func lookupSourceLine(buildID: BuildID, file: String, line: Int, project: ProjectID) async -> AddressLookup
}

extension AddressSymbolicating {
    public func lookupSourceLine(buildID: BuildID, file: String, line: Int, project: ProjectID) async -> AddressLookup {
        .notFound
    }
}

/// How far symbolication got for a report.
public enum SymbolicationState: String, Sendable, Codable, CaseIterable {
    /// Not tried yet (or queued again because a debug file arrived).
    case pending
    /// Every raw address resolved with DWARF.
    case complete
    /// Some addresses resolved, some did not (missing debug files, symbol table only, unknown modules).
    case partial
    /// No raw address resolved.
    case missing
    /// Nothing to do: no raw addresses (the client symbolicated, or sent none).
    case notNeeded = "not_needed"
}

/// One frame of a symbolicated report: the client's frame and what its address resolved to.
public struct SymbolicatedFrameSlot: Sendable, Equatable, Codable {
    /// The resolved frames (several for an inline chain); empty when unresolved.
    public var frames: [ResolvedFrame]
    /// The build-id of the module the address fell in, if any.
    public var buildID: String?
    /// `dwarf`, `symbol_table`, `missing_debug_file`, `not_found`, `no_module`, `client`.
    public var status: String
    public var offset: UInt64?
    enum CodingKeys: String, CodingKey { case frames, buildID = "build_id", status, offset }
    public init(frames: [ResolvedFrame], buildID: String?, status: String, offset: UInt64? = nil) {
        self.frames = frames
        self.buildID = buildID
        self.status = status
        self.offset = offset
    }
}

/// The result of symbolicating a report: per thread, per frame.
public struct SymbolicatedReport: Sendable, Equatable, Codable {
    public var state: SymbolicationState
    public var threads: [[SymbolicatedFrameSlot]]
    /// Build-ids with no debug file (sorted), with the module names the report gave them.
    public var missing: [MissingModule]
    /// Why symbolication gave up on the report (it stopped the symbolicator too often, or could not be read
    /// again); nil when it ran. A failed report has state `missing` and is grouped by module and offset.
    public var failure: String?
    /// Where the crash message's `file:line` is in the app's code (status `source_line`), when the crashed
    /// thread's frames never reached the app's code with DWARF (a release build's `fatalError` stops inside the
    /// runtime before the stack walk gets out); nil otherwise.
    public var messageSite: SymbolicatedFrameSlot?
    /// The stacks walked from the report's minidump (`Report.walksMinidump`), which `threads` are the slots of;
    /// nil for a report whose client sent its stacks. Readers apply it to the report read again
    /// (`Report.applying(_:)`).
    public var walk: WalkedStacks?
    enum CodingKeys: String, CodingKey {
        case state, threads, missing, failure = "failure_reason", messageSite = "message_site", walk
    }
    public init(
        state: SymbolicationState, threads: [[SymbolicatedFrameSlot]], missing: [MissingModule], failure: String? = nil,
        messageSite: SymbolicatedFrameSlot? = nil, walk: WalkedStacks? = nil
    ) {
        self.walk = walk
        self.messageSite = messageSite
        self.state = state
        self.threads = threads
        self.missing = missing
        self.failure = failure
    }

    /// The result of a report symbolication gave up on: nothing resolved, with the reason.
    public static func failed(_ reason: String) -> SymbolicatedReport {
        SymbolicatedReport(state: .missing, threads: [], missing: [], failure: reason)
    }
}

/// Poison-pill rules: a report whose symbolication stopped the process (a crash in libdw on a hostile debug
/// file, an abort, a kill while it hung), or whose result the database would not save, is tried a bounded number
/// of times, then failed with a reason.
///
/// The worker durably counts an attempt for each report before symbolicating it, and a clean result resets
/// the count, so a report found pending with attempts already counted was being processed when the process
/// died. Such suspects are tried alone (one innocent report never shares the fate of a poison one in its
/// batch); at `maxAttempts` the report is failed and grouped by module and offset without the symbolicator;
/// if even that stopped the process once, it is failed without grouping (the stored report itself is the poison).
public enum SymbolicationRetry {
    /// Attempts before a report is failed.
    public static let maxAttempts = 3

    /// What the worker does with a batch of pending reports.
    public struct Plan: Sendable, Equatable {
        /// Symbolicate these together (none of them was being processed when the process died).
        public var fresh: [Int64] = []
        /// Suspects: each is symbolicated alone, one per step.
        public var suspects: [Int64] = []
        /// Fail without symbolicating, grouped from the report's own frames.
        public var failGrouped: [Int64] = []
        /// Fail without reading the report again.
        public var failUngrouped: [Int64] = []
    }

    /// Sorts `batch` (report id and attempts already counted) by what to do with each report.
    public static func plan(_ batch: [(reportID: Int64, attempts: Int)], maxAttempts: Int = maxAttempts) -> Plan {
        var plan = Plan()
        for item in batch {
            if item.attempts > maxAttempts {
                plan.failUngrouped.append(item.reportID)
            } else if item.attempts == maxAttempts {
                plan.failGrouped.append(item.reportID)
            } else if item.attempts > 0 {
                plan.suspects.append(item.reportID)
            } else {
                plan.fresh.append(item.reportID)
            }
        }
        return plan
    }

    /// The failure reason shown for a report that stopped the symbolicator (or whose result could not be saved)
    /// `attempts` times.
    public static func reason(attempts: Int) -> String {
        "the symbolicator stopped while processing this report \(attempts) times (a crash or hang, likely on a malformed "
            + "debug file), or its result could not be saved; it is grouped by module and offset without symbols"
    }

    /// The reason for a report whose fallback (grouping without symbols) stopped the process, or could not be saved,
    /// too.
    public static func ungroupedReason(attempts: Int) -> String {
        "the server stopped while processing this report \(attempts) times, also when grouping it without symbols, or "
            + "its result could not be saved; it is kept but not grouped"
    }
}

public struct MissingModule: Sendable, Equatable, Codable {
    public var buildID: String
    public var module: String
    enum CodingKeys: String, CodingKey { case buildID = "build_id", module }
    public init(buildID: String, module: String) {
        self.buildID = buildID
        self.module = module
    }
}

/// Pure rules of symbolication: which module an address is in, how it is adjusted, and what state results.
public enum SymbolicationRules {
    /// The module holding `address`: `base <= address < base + size` (a module without size holds addresses
    /// up to the next module's base). Bases, sizes and addresses come from reports, so nothing here can trap:
    /// a module whose `base + size` passes 2^64 ends at the top of the address space.
    public static func module(for address: UInt64, in modules: [LoadedModule]) -> LoadedModule? {
        module(for: address, inSorted: modules.sorted { $0.baseAddress < $1.baseAddress })
    }

    /// `module(for:in:)` over modules already sorted by base address (sort once per report, not per frame).
    public static func module(for address: UInt64, inSorted sorted: [LoadedModule]) -> LoadedModule? {
        moduleIndex(for: address, inSorted: sorted).map { sorted[$0] }
    }

    /// The index in `sorted` of `module(for:inSorted:)`'s answer (callers that remember something per module).
    public static func moduleIndex(for address: UInt64, inSorted sorted: [LoadedModule]) -> Int? {
        for (i, module) in sorted.enumerated() where address >= module.baseAddress {
            let end =
                module.size.map { size in
                    let (sum, overflow) = module.baseAddress.addingReportingOverflow(size)
                    return overflow ? UInt64.max : sum
                } ?? (i + 1 < sorted.count ? sorted[i + 1].baseAddress : UInt64.max)
            if address < end { return i }
        }
        return nil
    }

    /// The address to look up: return addresses point after the call, so the lookup is moved back into the call
    /// instruction (the first frame of a thread is the program counter unless the client said otherwise).
    /// - Parameter architecture: the report's CPU (`DeviceInfo.arch`, else an image's): on arm64 and arm64e the
    ///   call is the 4-byte instruction before (`(a & ~3) - 4`, as Apple's tools and llvm-symbolizer do); elsewhere,
    ///   and when unknown, one byte back (x86-64's calls have any length, and any byte of the call resolves alike).
    public static func lookupAddress(_ frame: Frame, index: Int, architecture: String? = nil) -> UInt64? {
        frame.address.map { lookupAddress($0, of: frame, index: index, architecture: architecture) }
    }

    /// `lookupAddress` of a frame whose address may be signed: its pointer-authentication bits stripped first
    /// (`strippingPointerAuthentication`, against `sorted`, the report's modules sorted by base address). Grouping
    /// and symbolication both look a frame up here, so a signed and an unsigned return address to the same call
    /// group and resolve alike.
    public static func lookupAddress(
        _ frame: Frame, index: Int, architecture: String?, inSorted sorted: [LoadedModule]
    ) -> UInt64? {
        guard let raw = frame.address else { return nil }
        let address = strippingPointerAuthentication(raw, architecture: architecture, inSorted: sorted) ?? raw
        return lookupAddress(address, of: frame, index: index, architecture: architecture)
    }

    /// `address` (`frame`'s, stripped or not) moved into the call instruction when the frame is a return address.
    static func lookupAddress(_ address: UInt64, of frame: Frame, index: Int, architecture: String?) -> UInt64 {
        let isReturn = frame.instructionKind.map { $0 == .returnAddress } ?? (index > 0)
        return isReturn ? callerAddress(address, architecture: architecture) : address
    }

    /// The address inside the call instruction before return address `address` (see `lookupAddress`).
    public static func callerAddress(_ address: UInt64, architecture: String?) -> UInt64 {
        if isARM64(architecture) {
            let aligned = address & ~3
            return aligned >= 4 ? aligned - 4 : address
        }
        return address > 0 ? address - 1 : address
    }

    /// `arm64`, `arm64e`, `arm64_32` (any case). Asked for every frame: compares bytes, allocates nothing.
    static func isARM64(_ architecture: String?) -> Bool {
        guard let architecture else { return false }
        var bytes = architecture.utf8.makeIterator()
        for expected in "arm64".utf8 {
            guard let byte = bytes.next() else { return false }
            let lower = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            if lower != expected { return false }
        }
        return true
    }

    /// The masks tried, widest first, on arm64e addresses that fall in no module: the pointer-authentication code
    /// sits above the virtual-address bits, 47 of them on macOS, 39 on current iOS devices, 36 on older ones
    /// (PLCrashReporter's and Sentry's fixed mask). No one width fits every device, so the widest that lands the
    /// address in one of the report's modules is taken: it clears the fewest bits.
    public static let pointerAuthenticationMasks: [UInt64] = [0x7FFF_FFFF_FFFF, 0x7F_FFFF_FFFF, 0xF_FFFF_FFFF]

    /// `address` without its pointer-authentication bits: the first of `pointerAuthenticationMasks` that lands it
    /// in one of `sorted` (modules sorted by base address); nil when it is in a module already, or no mask lands it
    /// in one. Only for arm64 families and unknown architectures (an x86-64 address is never signed).
    public static func strippingPointerAuthentication(
        _ address: UInt64, architecture: String?, inSorted sorted: [LoadedModule]
    )
        -> UInt64?
    {
        guard architecture == nil || isARM64(architecture), moduleIndex(for: address, inSorted: sorted) == nil else {
            return nil
        }
        for mask in pointerAuthenticationMasks where address & mask != address {
            if moduleIndex(for: address & mask, inSorted: sorted) != nil { return address & mask }
        }
        return nil
    }

    /// The CPU of a report's frames: the device's, else the first image's that says (a process runs one
    /// architecture).
    public static func architecture(of report: Report) -> String? {
        report.device.arch ?? report.modules.lazy.compactMap(\.arch).first
    }

    /// Symbolicates every raw address of `report` with `symbolicator`.
    public static func symbolicate(_ report: Report, project: ProjectID, with symbolicator: some AddressSymbolicating)
        async
        -> SymbolicatedReport
    {
        let modules = report.modules.sorted { $0.baseAddress < $1.baseAddress }
        let architecture = architecture(of: report)
        var threads: [[SymbolicatedFrameSlot]] = []
        var missing: [String: String] = [:]
        // Build-ids the symbolicator had no file for: not asked again for this report's other frames.
        var absent: Set<BuildID> = []
        var raw = 0
        var resolved = 0
        var fully = 0
        for thread in report.threads {
            var slots: [SymbolicatedFrameSlot] = []
            for (index, frame) in thread.frames.enumerated() {
                let clientSlot = SymbolicatedFrameSlot(
                    frames: [
                        ResolvedFrame(
                            function: frame.function, file: frame.file, line: frame.line, column: frame.column)
                    ],
                    buildID: nil, status: "client")
                let client = frame.function == nil ? nil : clientSlot
                guard
                    let address = lookupAddress(frame, index: index, architecture: architecture, inSorted: modules)
                else {
                    slots.append(clientSlot)
                    continue
                }
                guard let module = self.module(for: address, inSorted: modules), let buildID = module.buildID else {
                    if let client {
                        slots.append(client)
                    } else {
                        raw += 1
                        slots.append(SymbolicatedFrameSlot(frames: [], buildID: nil, status: "no_module"))
                    }
                    continue
                }
                let offset = address - module.baseAddress
                let answer =
                    absent.contains(buildID)
                    ? .missingDebugFile
                    : await symbolicator.lookup(buildID: buildID, moduleOffset: offset, project: project)
                if case .missingDebugFile = answer { absent.insert(buildID) }
                // The client's names (an Apple crash report's, a Sentry Cocoa event's on-device symbols) stand until a
                // debug file resolves the frame with DWARF; the frame keeps its build-id, so that the report is
                // symbolicated again when one arrives. Grouping sees the same names as before the lookup.
                if var kept = client {
                    guard case .resolved(let frames) = answer else {
                        kept.buildID = buildID.rawValue
                        kept.offset = offset
                        slots.append(kept)
                        continue
                    }
                    raw += 1
                    resolved += 1
                    fully += 1
                    slots.append(
                        SymbolicatedFrameSlot(
                            frames: frames, buildID: buildID.rawValue, status: "dwarf", offset: offset))
                    continue
                }
                raw += 1
                switch answer {
                case .resolved(let frames):
                    resolved += 1
                    fully += 1
                    slots.append(
                        SymbolicatedFrameSlot(
                            frames: frames, buildID: buildID.rawValue, status: "dwarf", offset: offset))
                case .symbolOnly(let frame, let symbolOffset):
                    resolved += 1
                    slots.append(
                        SymbolicatedFrameSlot(
                            frames: [frame], buildID: buildID.rawValue, status: "symbol_table", offset: symbolOffset))
                case .missingDebugFile:
                    missing[buildID.rawValue] = module.name
                    slots.append(
                        SymbolicatedFrameSlot(
                            frames: [], buildID: buildID.rawValue, status: "missing_debug_file", offset: offset))
                case .notFound:
                    slots.append(
                        SymbolicatedFrameSlot(
                            frames: [], buildID: buildID.rawValue, status: "not_found", offset: offset))
                }
            }
            threads.append(slots)
        }
        let state: SymbolicationState =
            raw == 0 ? .notNeeded : fully == raw ? .complete : resolved == 0 ? .missing : .partial
        let site = await messageSite(report, threads: threads, modules: modules, project: project, with: symbolicator)
        // A message site that needs a debug file not uploaded yet: the report lacks it (and is redone when it comes).
        for module in site.lacking where missing[module.buildID] == nil { missing[module.buildID] = module.module }
        return SymbolicatedReport(
            state: state, threads: threads,
            missing: missing.sorted { $0.key < $1.key }.map { MissingModule(buildID: $0.key, module: $0.value) },
            messageSite: site.slot)
    }

    /// The app code at the crash message's `file:line`, looked up only when the crashed thread has no frame
    /// resolved with DWARF in an app (non-system) module: the modules are asked in load order, app modules only.
    /// Also returns the app modules whose debug file the lookup lacked (when no module resolved the line).
    static func messageSite(
        _ report: Report, threads: [[SymbolicatedFrameSlot]], modules: [LoadedModule], project: ProjectID,
        with symbolicator: some AddressSymbolicating
    ) async -> (slot: SymbolicatedFrameSlot?, lacking: [MissingModule]) {
        guard report.kind == .crash, let message = report.crashMessage.flatMap(CrashMessage.parse),
            let file = message.file,
            let line = message.line, let thread = Grouping.primaryThreadIndex(report), thread < threads.count
        else { return (nil, []) }
        let appModules = modules.filter { !Grouping.isSystemModule(name: $0.name, path: $0.path) && $0.buildID != nil }
        let appIDs = Set(appModules.compactMap { $0.buildID?.rawValue })
        if threads[thread].contains(where: { $0.status == "dwarf" && $0.buildID.map(appIDs.contains) == true }) {
            return (nil, [])
        }
        var lacking: [MissingModule] = []
        for module in appModules {
            guard let buildID = module.buildID else { continue }
            switch await symbolicator.lookupSourceLine(buildID: buildID, file: file, line: line, project: project) {
            case .resolved(let frames) where !frames.isEmpty:
                return (SymbolicatedFrameSlot(frames: frames, buildID: buildID.rawValue, status: "source_line"), [])
            case .missingDebugFile:
                lacking.append(MissingModule(buildID: buildID.rawValue, module: module.name))
            default:
                continue
            }
        }
        return (nil, lacking)
    }
}

/// What grouping decided for a report: its fingerprint and the values it adds to its issue's breakdowns.
public struct GroupingInput: Sendable, Equatable {
    public var grouping: GroupingResult
    /// Breakdown values by key (`device`, `os`, `environment`, `build`).
    public var tags: [String: String]
    /// What fingerprint rules match on, stored with the report (`reports.grouping_facts`) for dry runs of rules.
    public var facts: GroupingFacts?
    /// Whether the report is a hang or an ANR (``IssueCategory/isHang(_:)``): the mark an issue it creates is stored
    /// with.
    public var hang: Bool
    public init(grouping: GroupingResult, tags: [String: String], facts: GroupingFacts? = nil, hang: Bool = false) {
        self.grouping = grouping
        self.tags = tags
        self.facts = facts
        self.hang = hang
    }

    /// Groups `report` (with the project's in-app and fingerprint rules), collects its breakdown values and decides
    /// whether it is a hang.
    public static func make(
        _ report: Report, symbols: SymbolicatedReport?, inApp: InAppRules = .none,
        fingerprints: FingerprintRules = .none
    ) -> GroupingInput {
        var tags: [String: String] = [:]
        if let model = report.device.model, !model.isEmpty { tags["device"] = model }
        if let os = report.device.os, !os.isEmpty {
            tags["os"] = report.device.osVersion.map { "\(os) \($0)" } ?? os
        }
        if let environment = report.environment, !environment.isEmpty { tags["environment"] = environment }
        // The build beneath the release (`ReleaseName`), named with its release: build 240 of 2.4.0 is `2.4.0 (240)`.
        if let build = report.build, let release = report.release { tags["build"] = "\(release) (\(build))" }
        let grouped = Grouping.groupWithFacts(report, symbols: symbols, inApp: inApp, fingerprints: fingerprints)
        return GroupingInput(
            grouping: grouped.result, tags: tags, facts: grouped.facts, hang: IssueCategory.isHang(report))
    }
}

/// One report's symbolication result and grouping, to be saved.
public struct SymbolicationOutcome: Sendable {
    public var reportID: Int64
    public var result: SymbolicatedReport
    public var grouping: GroupingInput?
    /// The debug-file change sequence the lookups were made against (`PendingSymbolication.filesSeen`). When a
    /// debug file of a build-id the result touched was stored after it, the result is saved but the report stays
    /// `pending`, so it is symbolicated again with the better file. Nil: no such check (a failed report).
    public var filesSeen: Int64?
    /// The module name the report gave each build-id (for the missing-debug-files list).
    public var modules: [String: String]
    /// The report's search-index entry, saved in the same transaction (replacing any earlier one); nil keeps the
    /// entry it has (the report could not be read again).
    public var search: SearchDocument?
    /// Build-ids beyond the result's own (`SymbolicatedReport.touchedBuildIDs`) whose debug files could change it:
    /// every module of a minidump whose walk a module's file could extend (`WalkedStacks.dependsOnEveryModule`).
    /// Saved with them as the build-ids the result touched (`touchedBuildIDs`), so that storing a file of any of them
    /// queues the report again, and it is walked again. Without them, a walk that stopped in a module the project has
    /// no file for would never be redone when the caller's file arrives: no frame of the walk is in the caller.
    public var alsoTouched: [String]
    public init(
        reportID: Int64, result: SymbolicatedReport, grouping: GroupingInput?, filesSeen: Int64? = nil,
        modules: [String: String] = [:], search: SearchDocument? = nil, alsoTouched: [String] = []
    ) {
        self.alsoTouched = alsoTouched
        self.search = search
        self.reportID = reportID
        self.result = result
        self.grouping = grouping
        self.filesSeen = filesSeen
        self.modules = modules
    }
}

extension SymbolicationOutcome {
    /// Every build-id whose debug data decided the result or could change it (the result's own and `alsoTouched`),
    /// sorted: what the stores record per report (`report_modules`) and check against files stored meanwhile.
    public var touchedBuildIDs: [String] {
        guard !alsoTouched.isEmpty else { return result.touchedBuildIDs }
        return Set(result.touchedBuildIDs).union(alsoTouched).sorted()
    }
}

/// A report waiting for symbolication.
public struct PendingSymbolication: Sendable {
    public var reportID: Int64
    public var project: ProjectID
    public var raw: RawReport
    /// Symbolication attempts counted for this report since its last clean result (see `SymbolicationRetry`).
    public var attempts: Int
    /// The project's in-app module rules, for grouping.
    public var inApp: InAppRules
    /// The project's fingerprint rules (its latest version), for grouping.
    public var fingerprints: FingerprintRules
    /// The debug-file change sequence read in the same snapshot as this report: every debug file stored at or
    /// below it is visible to lookups made after the batch was read; one stored later may not be.
    public var filesSeen: Int64
    /// The stored payload the report is part of (a request body: a batch of up to 20 reports shares one), so that a
    /// worker's batch inflates each payload once; nil: unknown (the report is read on its own).
    public var payload: Int64?
    public init(
        reportID: Int64, project: ProjectID, raw: RawReport, attempts: Int = 0, filesSeen: Int64 = 0,
        inApp: InAppRules = .none, payload: Int64? = nil, fingerprints: FingerprintRules = .none
    ) {
        self.fingerprints = fingerprints
        self.payload = payload
        self.inApp = inApp
        self.reportID = reportID
        self.project = project
        self.raw = raw
        self.attempts = attempts
        self.filesSeen = filesSeen
    }
}

/// One line of the "missing debug files" list.
public struct MissingDebugFileSummary: Sendable, Equatable {
    public var buildID: BuildID
    public var module: String?
    public var reports: Int
    public var releases: [String]
    /// The kinds the server holds for the build-id now (empty: nothing; `[.executable]`: a stripped executable,
    /// which gives symbol names but no files and lines).
    public var has: [DebugFileKind]
    public init(buildID: BuildID, module: String?, reports: Int, releases: [String], has: [DebugFileKind] = []) {
        self.buildID = buildID
        self.module = module
        self.reports = reports
        self.releases = releases
        self.has = has
    }
}

/// How good the debug data for one build-id is, as the symbolicator uses it: its best stored file kind.
///
/// Recorded per report and build-id when a result is saved, so that a better file arriving later queues
/// exactly the reports that were resolved with less (`debuginfo` after an `executable`, anything after nothing).
public enum DebugDataRank: Int, Sendable, Comparable, CaseIterable {
    /// No file for the build-id.
    case none = 0
    /// A file with code and a symbol table but no DWARF (a stripped executable): names, no lines.
    case executable = 1
    /// DWARF debug information (a split debug file, or an unstripped binary).
    case debuginfo = 2

    /// The rank of the best of `kinds`.
    public static func best(of kinds: some Sequence<DebugFileKind>) -> DebugDataRank {
        kinds.reduce(DebugDataRank.none) { rank, kind in
            switch kind {
            case .debuginfo: max(rank, .debuginfo)
            case .executable: max(rank, .executable)
            case .sources: rank  // source files resolve no address
            }
        }
    }

    public static func < (lhs: DebugDataRank, rhs: DebugDataRank) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether storing a file queues again the reports made with the project's best file for the build-id (`best`),
    /// not only those made with less: when the file replaced that best kind with other bytes (`replaced`), or when it
    /// is the build-id's first executable while the best is debug information (`added`). A stack walk takes its
    /// call-frame information from the executable (a split debug file keeps only the header of `.eh_frame`), so a
    /// minidump walked with the debug file alone may go further with it; other reports come out the same, once.
    public static func requeuesSameRank(
        replaced: [DebugFileKind], added: [DebugFileKind], best: DebugDataRank
    ) -> Bool {
        if !replaced.isEmpty && Self.best(of: replaced) == best { return true }
        return best == .debuginfo && added.contains(.executable)
    }
}

extension SymbolicatedReport {
    /// Every build-id this result looked up (resolved or not), sorted: the modules whose debug data decided it.
    public var touchedBuildIDs: [String] {
        var ids = Set(missing.map(\.buildID))
        // Consecutive frames are mostly in one module: a build-id equal to the one before is not hashed again (equal
        // strings that share their storage compare at once).
        var last: String?
        for thread in threads {
            for slot in thread {
                guard let id = slot.buildID, id != last else { continue }
                ids.insert(id)
                last = id
            }
        }
        if let id = messageSite?.buildID { ids.insert(id) }
        return ids.sorted()
    }
}

/// Where symbolication results and its queue live.
public protocol SymbolicationStore: Sendable {
    /// Reports with state `pending`, oldest first, with their attempt counts, leaving out `excluding` (the reports
    /// of a batch the worker has processed and not saved yet: its next batch is read while that one is saved).
    func pending(limit: Int, excluding: Set<Int64>) async throws -> [PendingSymbolication]
    /// How many reports wait for symbolication and grouping (state `pending`), counted up to `atMost` (a larger
    /// backlog answers `atMost`): what the dashboard's "still being processed" notice says. One read of the
    /// `reports_pending_symbolication` index, bounded so that a storm's backlog costs no more than `atMost` rows.
    func pendingCount(atMost: Int) async throws -> Int
    /// Durably counts one more symbolication attempt for each report (committed before returning, so that
    /// a process that dies while symbolicating them leaves the count behind). Saving a result without a
    /// `failure` resets the count.
    func recordAttempt(reportIDs: [Int64]) async throws
    /// Gives back reports `pending` took and the worker will not process in this step (a suspect is processed alone,
    /// and the rest of its batch waits): another node, or this one's next step, may take them at once rather than
    /// when the claim's lease ends. Stores without claims (one node: SQLite) have nothing to do.
    func releaseClaims(reportIDs: [Int64]) async throws
    /// Stores a result (state, frames, the rank of the debug data per build-id it touched) for a report, replacing
    /// any earlier one. When a debug file of a touched build-id was stored after the batch was read
    /// (`SymbolicationOutcome.filesSeen`), the result is kept but the report stays `pending` and is not grouped.
    /// Otherwise, in the same transaction, files the report under the issue of `grouping` (moving it when its
    /// fingerprint changed, deleting an issue left empty, reopening a closed issue that regressed, recording
    /// new-issue and regression alerts). Returns the report's issue; nil when the report no longer exists or was
    /// not grouped.
    @discardableResult
    func save(_ result: SymbolicatedReport, grouping: GroupingInput?, reportID: Int64, at date: Date) async throws
        -> IssueID?
    /// `save` for many reports in one transaction (one commit for a worker's whole batch).
    func saveAll(_ results: [SymbolicationOutcome], at date: Date) async throws
    /// Queues again up to `limit` reports filed with an older grouping version than `Grouping.version` (they are
    /// then grouped with the current rules and their issues migrated); returns how many.
    func requeueOutdatedGrouping(limit: Int) async throws -> Int
    /// Queues again up to `limit` reports of projects whose fingerprint rules changed (`GroupingRulesStore.regroupStep`):
    /// the worker's idle step. Returns how many.
    func regroupStep(limit: Int, at date: Date) async throws -> Int
    /// Queues again every report of `project` whose result for `buildID` was made with less than the best debug
    /// data the project holds for it now (`DebugDataRank`); returns how many. (Storing a debug file does this
    /// itself, in the same transaction.)
    func requeue(project: ProjectID, buildID: BuildID) async throws -> Int
    /// Build-ids whose reports of `project` (optionally of one release) were symbolicated without debug
    /// information (no file, or only an executable), most reports first, with what is stored for each now.
    func missingDebugFiles(project: ProjectID, release: String?) async throws -> [MissingDebugFileSummary]
    /// The stored result for a report row.
    func result(reportID: Int64) async throws -> (state: SymbolicationState, report: SymbolicatedReport?)
}

extension SymbolicationStore {
    /// Reports with state `pending`, oldest first (none left out).
    public func pending(limit: Int) async throws -> [PendingSymbolication] {
        try await pending(limit: limit, excluding: [])
    }

    /// No claims to give back: a store whose queue one node reads (SQLite, a test's queue).
    public func releaseClaims(reportIDs: [Int64]) async throws {}

    /// No regroups: a store without fingerprint rules (a test's queue).
    public func regroupStep(limit: Int, at date: Date) async throws -> Int { 0 }
}
