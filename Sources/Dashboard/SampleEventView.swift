import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A label and a value of an info table (device, app, user, error, custom keys).
struct InfoRow {
    var infoLabel: String
    var infoValue: String
}

/// The latest sample event of an issue in full: every thread with its frames (inline chains expanded), the
/// breadcrumbs, custom keys and the device, app and user it came from.
struct SampleEventView {
    /// One function of a frame's inline chain.
    struct FrameEntry {
        /// The readable name (`Inventory.item(at:)`, `shop::payments::charge`).
        var functionName: String
        /// The full demangled name, shown under the readable one when it says more; nil when they are equal.
        var fullFunctionName: String?
        var frameLocation: String?
        var inlined: Bool
        /// The lines around the entry's line, from the module's source bundle (in-app frames only).
        var source: SourceView?

        init(function: String?, frameLocation: String?, inlined: Bool, source: SourceView? = nil) {
            self.source = source
            if let function = SampleEventView.nonEmpty(function) {
                let short = FunctionNames.simplified(function)
                functionName = short
                fullFunctionName = short == function ? nil : function
            } else {
                functionName = "unknown function"
                fullFunctionName = nil
            }
            self.frameLocation = frameLocation
            self.inlined = inlined
        }
    }

    /// One line of a source excerpt.
    struct SourceLineView {
        var lineText: String
        /// The frame's own line (marked, and named for screen readers).
        var isFocus: Bool
    }

    /// Source lines around a frame's line, as an `<ol start>` of lines.
    struct SourceView {
        var sourceCaption: String
        var sourceStart: Int
        var sourceLines: [SourceLineView]

        init(file: String, excerpt: SourceExcerpt) {
            let last = excerpt.firstLine + excerpt.lines.count - 1
            sourceCaption =
                "\(SampleEventView.baseName(file)), lines \(excerpt.firstLine)–\(last) (line \(excerpt.focus) marked)"
            sourceStart = excerpt.firstLine
            sourceLines = excerpt.lines.enumerated().map { offset, text in
                SourceLineView(lineText: text, isFocus: excerpt.firstLine + offset == excerpt.focus)
            }
        }
    }

    /// One frame (one address) of a thread.
    struct FrameView {
        var frameNumber: Int
        var entries: [FrameEntry]
        /// The file name of the module the frame's address lies in (`libc.so.6`, `App`), or the module name the
        /// client sent; nil when neither is known.
        var frameModule: String?
        var frameAddress: String?
        var frameStatus: String?
        /// The app's own code (the project's in-app rules, as grouping decides).
        var inApp = false
        /// How the server's stack walker found the frame; nil for a frame the client sent.
        var trust: FrameTrustLabel?
    }

    /// Consecutive frames of a thread: shown, or (a run of system frames) folded into a `<details>`.
    struct FrameSegment {
        var folded: Bool
        var foldLabel: String
        var segmentStart: Int
        var frames: [FrameView]
    }

    /// One thread; the crashed one comes first.
    struct ThreadView {
        var threadHeading: String
        var crashed: Bool
        var frames: [FrameView]
        var hasFrames: Bool
        var segments: [FrameSegment] = []
        /// Where and why the server's walk of the thread stopped short of its outermost frame (`walkEndText`).
        var walkEnd: String?
    }

    /// One breadcrumb of the timeline.
    struct BreadcrumbView {
        /// The breadcrumb's time to the second.
        var crumbTime: TimeView
        /// How long before (or after) the crash or error it was left: `−3.2 s`, `−4 min 12 s`, `+0.5 s`.
        var crumbRelative: String = ""
        var crumbLevel: String?
        var crumbCategory: String?
        var crumbMessage: String?
        var crumbData: [InfoRow]
        var hasCrumbData: Bool
    }

    /// One context block the client sent (`Report.contexts`): its title and its values.
    struct ContextView {
        var contextTitle: String
        var contextRows: [InfoRow]
    }

    var eventID: String
    var occurred: TimeView
    var kindText: String
    var symbolicationText: String
    var errorRows: [InfoRow]
    var hasErrorRows: Bool
    var threads: [ThreadView]
    var hasThreads: Bool
    /// The thread that crashed (else the first): shown first and open, as the event's stack.
    var primaryThread: ThreadView?
    /// Every other thread, folded under one `<details>` below the event's context.
    var otherThreads: [ThreadView]
    var hasOtherThreads: Bool
    var otherThreadsLabel: String
    /// What each frame trust the event's walked frames carry means (empty when no frame was walked).
    var trustLegend: [FrameTrustLabel]
    var hasTrustLegend: Bool
    var breadcrumbs: [BreadcrumbView]
    var hasBreadcrumbs: Bool
    var customKeys: [InfoRow]
    var hasCustomKeys: Bool
    /// The report's tags (a Sentry event's), apart from the custom keys.
    var tags: [InfoRow]
    var hasTags: Bool
    /// The SDK that sent the report: name, version, integrations, packages.
    var sdkRows: [InfoRow]
    var hasSDK: Bool
    /// Context blocks beyond the device, OS and app, each under its own title.
    var contexts: [ContextView]
    var hasContexts: Bool
    var contextRows: [InfoRow]
    var trimNotes: [String]
    var hasTrimNotes: Bool

    /// - Parameters:
    ///   - inApp: the project's in-app rules (which frames are marked in-app; runs of other frames are folded).
    ///   - sources: source excerpts for frames' lines (`sourceLocations` says which to read).
    ///   - title: the heading the page shows above the event (an issue's title): the error's message is left out
    ///     when the heading says it already.
    init(
        report: Report, symbols: SymbolicatedReport?, inApp: InAppRules = .none,
        sources: [CodeLocation: SourceExcerpt] = [:], title: String? = nil
    ) {
        eventID = report.eventID.rawValue
        occurred = TimeView(report.timestamp)
        kindText = report.kind == .crash ? "crash" : "non-fatal error"
        symbolicationText = Self.symbolicationText(symbols)
        let message = report.error?.message.flatMap { IssueTitle.adds($0, to: title, type: report.error?.type) }
        errorRows = Self.rows([
            ("Type", report.error?.type), ("Code", report.error?.code), ("Message", message),
            ("Fault address", report.faultAddress.map(Format.hex)), ("Crash message", report.crashMessage),
        ])
        hasErrorRows = !errorRows.isEmpty

        let modules = report.modules.sorted { $0.baseAddress < $1.baseAddress }
        let order =
            report.threads.indices.filter { report.threads[$0].crashed }
            + report.threads.indices.filter { !report.threads[$0].crashed }
        threads = order.map { index in
            let thread = report.threads[index]
            let slots = symbols.flatMap { index < $0.threads.count ? $0.threads[index] : nil }
            var heading = "Thread \(index)"
            if let name = thread.name, !name.isEmpty { heading += " “\(name)”" }
            if thread.crashed { heading += " (crashed)" }
            let inAppFrames = Grouping.inAppFrames(report, thread: index, symbols: symbols, rules: inApp)
            let frames = thread.frames.enumerated().map { frameIndex, frame in
                let inApp = frameIndex < inAppFrames.count && inAppFrames[frameIndex]
                var view = Self.frameView(
                    frame, number: frameIndex, slot: slots.flatMap { frameIndex < $0.count ? $0[frameIndex] : nil },
                    modules: modules, sources: inApp ? sources : [:])
                view.inApp = inApp
                // The event's line says the app symbolicated it all: the same words on every frame say nothing more.
                if symbols?.state == .notNeeded, view.frameStatus == Self.statusText("client") {
                    view.frameStatus = nil
                }
                return view
            }
            let walked = symbols?.walk.flatMap { index < $0.threads.count ? $0.threads[index] : nil }
            return ThreadView(
                threadHeading: heading, crashed: thread.crashed, frames: frames, hasFrames: !frames.isEmpty,
                segments: Self.segments(frames),
                walkEnd: Self.walkEndText(walked, thread: thread, slots: slots, modules: modules))
        }
        hasThreads = !threads.isEmpty
        primaryThread = threads.first
        otherThreads = Array(threads.dropFirst())
        hasOtherThreads = !otherThreads.isEmpty
        otherThreadsLabel = Format.count(otherThreads.count, "other thread")
        trustLegend = FrameTrustLabel.legend(report)
        hasTrustLegend = !trustLegend.isEmpty

        breadcrumbs = report.breadcrumbs.map { crumb in
            let data = crumb.data.sorted { $0.key < $1.key }.map { InfoRow(infoLabel: $0.key, infoValue: $0.value) }
            return BreadcrumbView(
                crumbTime: TimeView.toTheSecond(crumb.timestamp),
                crumbRelative: Self.relativeTime(crumb.timestamp, to: report.timestamp),
                crumbLevel: Self.nonEmpty(crumb.level),
                crumbCategory: Self.nonEmpty(crumb.category), crumbMessage: Self.nonEmpty(crumb.message),
                crumbData: data,
                hasCrumbData: !data.isEmpty)
        }
        hasBreadcrumbs = !breadcrumbs.isEmpty
        customKeys = report.customKeys.map { key, value in
            let text: String
            switch value {
            case .string(let string): text = string
            case .number(let number): text = Format.trimmed(number, places: 6)
            case .bool(let bool): text = bool ? "true" : "false"
            }
            return InfoRow(infoLabel: key, infoValue: text)
        }
        hasCustomKeys = !customKeys.isEmpty
        tags = report.tags.map { InfoRow(infoLabel: $0.key, infoValue: $0.value) }
        hasTags = !tags.isEmpty
        sdkRows = Self.sdkRows(report.sdk)
        hasSDK = !sdkRows.isEmpty
        contexts = report.contexts.map { context in
            ContextView(
                contextTitle: context.type.map { "\(context.name) (\($0))" } ?? context.name,
                contextRows: context.values.map { InfoRow(infoLabel: $0.key, infoValue: $0.value) })
        }
        hasContexts = !contexts.isEmpty
        let device = report.device
        var os = [device.os, device.osVersion].compactMap { Self.nonEmpty($0) }.joined(separator: " ")
        if let build = Self.nonEmpty(device.osBuild) { os += os.isEmpty ? build : " (\(build))" }
        let appVersion =
            Self.nonEmpty(report.app.displayVersion).map { version in
                Self.nonEmpty(report.app.displayBuild).map { "\(version) (\($0))" } ?? version
            } ?? Self.nonEmpty(report.app.displayBuild)
        contextRows = Self.rows([
            ("Device", Self.nonEmpty(device.model).map { AppleDeviceNames.display(model: $0) }),
            ("Simulator", device.simulator.map { $0 ? "yes (not a real device)" : "no (a real device)" }),
            ("Operating system", os), ("Architecture", device.arch),
            ("Memory", device.memoryBytes.map(Format.bytes)), ("Free disk", device.freeDiskBytes.map(Format.bytes)),
            ("Locale", device.locale), ("App", report.app.id), ("App version (build)", appVersion),
            ("Version", report.app.version), ("Build", report.app.build),
            ("Release", report.release), ("Environment", report.environment), ("User id", report.userID),
            ("Install id", report.installID), ("Session id", report.sessionID?.rawValue),
        ])
        trimNotes = Self.trimNotes(report.trimmed)
        hasTrimNotes = !trimNotes.isEmpty
    }

    // MARK: - Frames

    /// Shortest run of system frames that is folded.
    static let minimumFold = 2

    /// The frames cut into shown runs and folded runs of system frames. A thread without any in-app frame is
    /// shown whole (folding everything would hide the only frames there are).
    static func segments(_ frames: [FrameView]) -> [FrameSegment] {
        guard frames.contains(where: \.inApp) else {
            return frames.isEmpty
                ? [] : [FrameSegment(folded: false, foldLabel: "", segmentStart: frames[0].frameNumber, frames: frames)]
        }
        var out: [FrameSegment] = []
        var i = 0
        while i < frames.count {
            var j = i
            while j < frames.count, frames[j].inApp == frames[i].inApp { j += 1 }
            let run = Array(frames[i..<j])
            if !frames[i].inApp, run.count >= minimumFold {
                out.append(
                    FrameSegment(
                        folded: true, foldLabel: Format.count(run.count, "system frame"),
                        segmentStart: run[0].frameNumber, frames: run))
            } else if let last = out.last, !last.folded {
                out[out.count - 1].frames += run
            } else {
                out.append(FrameSegment(folded: false, foldLabel: "", segmentStart: run[0].frameNumber, frames: run))
            }
            i = j
        }
        return out
    }

    /// Most source locations read for one event (in-app frames of every thread, crashed thread first).
    static let maxSourceLocations = 64
    /// Lines shown either side of a frame's line.
    static let sourceRadius = 5

    /// The source lines worth reading for an event: each in-app frame entry with a file and a line in a module
    /// with a build-id, crashed thread first, at most `maxSourceLocations`.
    static func sourceLocations(report: Report, symbols: SymbolicatedReport?, inApp: InAppRules) -> [CodeLocation] {
        let modules = report.modules.sorted { $0.baseAddress < $1.baseAddress }
        let order =
            report.threads.indices.filter { report.threads[$0].crashed }
            + report.threads.indices.filter { !report.threads[$0].crashed }
        var out: [CodeLocation] = []
        var seen = Set<CodeLocation>()
        for index in order {
            let inAppFrames = Grouping.inAppFrames(report, thread: index, symbols: symbols, rules: inApp)
            let slots = symbols.flatMap { index < $0.threads.count ? $0.threads[index] : nil }
            for (frameIndex, frame) in report.threads[index].frames.enumerated()
            where frameIndex < inAppFrames.count && inAppFrames[frameIndex] {
                let slot = slots.flatMap { frameIndex < $0.count ? $0[frameIndex] : nil }
                for location in locations(frame, number: frameIndex, slot: slot, modules: modules)
                where seen.insert(location).inserted {
                    out.append(location)
                    if out.count >= maxSourceLocations { return out }
                }
            }
        }
        return out
    }

    /// The source locations of one frame's entries (its inline chain, or the client's own file and line).
    static func locations(_ frame: Frame, number: Int, slot: SymbolicatedFrameSlot?, modules: [LoadedModule])
        -> [CodeLocation]
    {
        let buildID =
            slot?.buildID.flatMap { BuildID($0) }
            ?? SymbolicationRules.lookupAddress(frame, index: number).flatMap {
                SymbolicationRules.module(for: $0, inSorted: modules)?.buildID
            }
        guard let buildID else { return [] }
        let entries: [(String?, Int?)] =
            if let slot, !slot.frames.isEmpty { slot.frames.map { ($0.file, $0.line) } } else {
                [(frame.file, frame.line)]
            }
        return entries.compactMap { file, line in
            guard let file = nonEmpty(file), let line, line > 0 else { return nil }
            return CodeLocation(buildID: buildID, file: file, line: line)
        }
    }

    /// Source excerpts for an event's in-app frames, read through `reader` (nil: none).
    static func sourceExcerpts(
        report: Report, symbols: SymbolicatedReport?, inApp: InAppRules, project: ProjectID,
        reader: (any SourceContextReading)?
    ) async -> [CodeLocation: SourceExcerpt] {
        guard let reader else { return [:] }
        let locations = sourceLocations(report: report, symbols: symbols, inApp: inApp)
        guard !locations.isEmpty else { return [:] }
        return await reader.excerpts(for: locations, project: project, radius: sourceRadius)
    }

    /// - Parameter slot: the symbolicator's answer for the frame; nil when it has none (yet).
    static func frameView(
        _ frame: Frame, number: Int, slot: SymbolicatedFrameSlot?, modules: [LoadedModule],
        sources: [CodeLocation: SourceExcerpt] = [:]
    ) -> FrameView {
        var entries: [FrameEntry] = []
        let sourceFor: (String?, Int?) -> SourceView? = { file, line in
            guard !sources.isEmpty, let file = nonEmpty(file), let line else { return nil }
            for location in locations(frame, number: number, slot: slot, modules: modules)
            where location.file == file && location.line == line {
                if let excerpt = sources[location] { return SourceView(file: file, excerpt: excerpt) }
            }
            return nil
        }
        if let slot, !slot.frames.isEmpty {
            entries = slot.frames.map {
                FrameEntry(
                    function: $0.function, frameLocation: location($0.file, $0.line), inlined: $0.inlined,
                    source: sourceFor($0.file, $0.line))
            }
        } else if let function = nonEmpty(frame.function) {
            entries = [
                FrameEntry(
                    function: function, frameLocation: location(frame.file, frame.line), inlined: false,
                    source: sourceFor(frame.file, frame.line))
            ]
        }
        let status = slot?.status ?? (entries.isEmpty && frame.address != nil ? "pending" : "client")
        var address: String?
        var addressModule: LoadedModule?
        if status != "dwarf", status != "client" || entries.isEmpty, let raw = frame.address {
            let lookup = SymbolicationRules.lookupAddress(frame, index: number) ?? raw
            addressModule = SymbolicationRules.module(for: lookup, inSorted: modules)
            if let module = addressModule {
                address = "\(baseName(module.name)) + \(Format.hex(lookup - module.baseAddress))"
            } else if let name = nonEmpty(frame.module) {
                address = "\(name) at \(Format.hex(raw))"
            } else {
                address = Format.hex(raw)
            }
        }
        if entries.isEmpty, address == nil {
            entries = [FrameEntry(function: nil, frameLocation: nil, inlined: false)]
        }
        return FrameView(
            frameNumber: number, entries: entries,
            frameModule: moduleName(frame, number: number, slot: slot, modules: modules, found: addressModule),
            frameAddress: address,
            frameStatus: statusText(status, module: addressModule), trust: frame.trust.map(FrameTrustLabel.init))
    }

    /// The name of the module a frame's address lies in: the module the symbolicator named by build-id, else the
    /// loaded module around the address, else the name the client sent.
    static func moduleName(
        _ frame: Frame, number: Int, slot: SymbolicatedFrameSlot?, modules: [LoadedModule], found: LoadedModule?
    ) -> String? {
        if let found { return baseName(found.name) }
        if let raw = slot?.buildID, let id = BuildID(raw), let module = modules.first(where: { $0.buildID == id }) {
            return baseName(module.name)
        }
        if let lookup = SymbolicationRules.lookupAddress(frame, index: number),
            let module = SymbolicationRules.module(for: lookup, inSorted: modules)
        {
            return baseName(module.name)
        }
        return nonEmpty(frame.module).map(baseName)
    }

    /// `time` relative to `crash`, to a tenth of a second under a minute: `−3.2 s`, `−4 min 12 s`, `−2 h 5 min`,
    /// `+0.5 s` (after it), `0.0 s`. The minus is U+2212. Any two dates give a string (a client's clock is hostile).
    static func relativeTime(_ time: Date, to crash: Date) -> String {
        let difference = time.timeIntervalSince(crash)
        guard difference.isFinite else { return "" }
        let sign = difference < 0 ? "−" : "+"
        // Ten years bound every count below, so the conversions to Int cannot trap.
        let magnitude = min(abs(difference), 315_360_000)
        let tenths = Int((magnitude * 10).rounded())
        if tenths == 0 { return "0.0 s" }
        if tenths < 600 { return "\(sign)\(tenths / 10).\(tenths % 10) s" }
        let seconds = Int(magnitude.rounded())
        if seconds < 3600 {
            let rest = seconds % 60
            return "\(sign)\(seconds / 60) min" + (rest == 0 ? "" : " \(rest) s")
        }
        if seconds < 86_400 {
            let rest = seconds / 60 % 60
            return "\(sign)\(seconds / 3600) h" + (rest == 0 ? "" : " \(rest) min")
        }
        return "\(sign)\(seconds / 86_400) d"
    }

    /// What the page says under a walked thread whose walk stopped before the outermost frame: at which frame and in
    /// which module, why (`WalkedStacks.Thread.stoppedEarly`), and what to upload when that module has no file (the
    /// walk had no call-frame information to go on with: the module's own file has it, a split debug file does not).
    /// Nil for a thread the client sent and for a walk that reached the outermost frame.
    static func walkEndText(
        _ walked: WalkedStacks.Thread?, thread: ThreadInfo, slots: [SymbolicatedFrameSlot]?, modules: [LoadedModule]
    ) -> String? {
        guard let reason = walked?.stoppedEarly, let last = thread.frames.indices.last else { return nil }
        let frame = thread.frames[last]
        let module = SymbolicationRules.lookupAddress(frame, index: last).flatMap {
            SymbolicationRules.module(for: $0, inSorted: modules)
        }
        let place = module.map { "frame \(last) in \(baseName($0.name))" } ?? "frame \(last)"
        var text =
            "The walk stopped at \(place), before the outermost frame (\(reason)): frames below it may be missing."
        let slot = slots.flatMap { last < $0.count ? $0[last] : nil }
        if let module, slot?.status == "missing_debug_file" {
            let name = baseName(module.name)
            text += " No file of \(name) is uploaded: upload \(name) itself with symupload "
            text += "(its .eh_frame lets the walk go on)."
        }
        return text
    }

    /// What a frame's symbolication status means, or nil for DWARF (the normal case, not worth a word). A Mach-O
    /// module's missing debug file is its dSYM, which Apple's own libraries have none of to upload.
    static func statusText(_ status: String, module: LoadedModule? = nil) -> String? {
        if status == "missing_debug_file", let module, module.format == .macho {
            return Grouping.isSystemModule(name: module.name, path: module.path)
                ? "Apple system library: no dSYM to upload" : "dSYM missing: upload it with symupload or sentry-cli"
        }
        return switch status {
        case "dwarf": nil
        case "client": "symbolicated by the app"
        case "symbol_table": "symbol table only, no line information"
        case "missing_debug_file": "debug file missing: upload it with symupload"
        case "not_found": "address not found in the debug file"
        case "no_module": "no loaded module contains this address"
        case "pending": "not symbolicated yet"
        default: status
        }
    }

    static func symbolicationText(_ symbols: SymbolicatedReport?) -> String {
        guard let symbols else { return "not symbolicated yet" }
        switch symbols.state {
        case .pending: return "waiting for symbolication"
        case .complete: return "every address resolved with debug information"
        case .partial: return "some addresses resolved; see the frames for why others were not"
        case .missing: return "no address resolved; see the missing debug files"
        case .notNeeded: return "symbolicated by the app"
        }
    }

    static func location(_ file: String?, _ line: Int?) -> String? {
        guard let file = nonEmpty(file) else { return line.map { "line \($0)" } }
        return line.map { "\(file):\($0)" } ?? file
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    // MARK: - Helpers

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.allSatisfy(\.isWhitespace) else { return nil }
        return text
    }

    static func rows(_ pairs: [(String, String?)]) -> [InfoRow] {
        pairs.compactMap { label, value in nonEmpty(value).map { InfoRow(infoLabel: label, infoValue: $0) } }
    }

    /// The SDK's name, version, integrations and packages (`name version`), each a row; none without an SDK.
    static func sdkRows(_ sdk: SDKInfo?) -> [InfoRow] {
        guard let sdk else { return [] }
        return rows([
            ("Name", sdk.name), ("Version", sdk.version),
            ("Integrations", sdk.integrations.joined(separator: ", ")),
            (
                "Packages",
                sdk.packages.map { [$0.name, $0.version].compactMap { $0 }.joined(separator: " ") }.joined(
                    separator: ", ")
            ),
        ])
    }

    static func trimNotes(_ trimmed: TrimCounts) -> [String] {
        [
            (trimmed.customKeysDropped, "custom key", "dropped (over the limit of 64)"),
            (trimmed.valuesTruncated, "value", "shortened to 1 KB"),
            (trimmed.breadcrumbsDropped, "breadcrumb", "dropped (oldest first, over 64 KB)"),
            (trimmed.threadsDropped, "thread", "dropped"),
            (trimmed.framesDropped, "frame", "dropped"),
            (trimmed.modulesDropped, "module", "dropped"),
            (trimmed.tagsDropped, "tag", "dropped (over the limit of 64)"),
            (trimmed.contextsDropped, "context", "dropped (over the limit of 32)"),
            (trimmed.contextKeysDropped, "context value", "dropped (over 64 in one context or SDK list)"),
        ].filter { $0.0 > 0 }.map { "\(Format.count($0.0, $0.1)) \($0.2)" }
    }
}
