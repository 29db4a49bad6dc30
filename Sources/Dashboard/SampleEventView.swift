import FaultlineCore

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

        init(function: String?, frameLocation: String?, inlined: Bool) {
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

    /// One frame (one address) of a thread.
    struct FrameView {
        var frameNumber: Int
        var entries: [FrameEntry]
        var frameAddress: String?
        var frameStatus: String?
    }

    /// One thread; the crashed one comes first.
    struct ThreadView {
        var threadHeading: String
        var crashed: Bool
        var frames: [FrameView]
        var hasFrames: Bool
    }

    /// One breadcrumb of the timeline.
    struct BreadcrumbView {
        var crumbTime: TimeView
        var crumbLevel: String?
        var crumbCategory: String?
        var crumbMessage: String?
        var crumbData: [InfoRow]
        var hasCrumbData: Bool
    }

    var eventID: String
    var occurred: TimeView
    var kindText: String
    var symbolicationText: String
    var errorRows: [InfoRow]
    var hasErrorRows: Bool
    var threads: [ThreadView]
    var hasThreads: Bool
    var breadcrumbs: [BreadcrumbView]
    var hasBreadcrumbs: Bool
    var customKeys: [InfoRow]
    var hasCustomKeys: Bool
    var contextRows: [InfoRow]
    var trimNotes: [String]
    var hasTrimNotes: Bool

    init(report: Report, symbols: SymbolicatedReport?) {
        eventID = report.eventID.rawValue
        occurred = TimeView(report.timestamp)
        kindText = report.kind == .crash ? "crash" : "non-fatal error"
        symbolicationText = Self.symbolicationText(symbols)
        errorRows = Self.rows([
            ("Type", report.error?.type), ("Code", report.error?.code), ("Message", report.error?.message),
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
            let frames = thread.frames.enumerated().map { frameIndex, frame in
                Self.frameView(
                    frame, number: frameIndex, slot: slots.flatMap { frameIndex < $0.count ? $0[frameIndex] : nil },
                    modules: modules)
            }
            return ThreadView(
                threadHeading: heading, crashed: thread.crashed, frames: frames, hasFrames: !frames.isEmpty)
        }
        hasThreads = !threads.isEmpty

        breadcrumbs = report.breadcrumbs.map { crumb in
            let data = crumb.data.sorted { $0.key < $1.key }.map { InfoRow(infoLabel: $0.key, infoValue: $0.value) }
            return BreadcrumbView(
                crumbTime: TimeView(crumb.timestamp), crumbLevel: Self.nonEmpty(crumb.level),
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
        let device = report.device
        let os = [device.os, device.osVersion].compactMap { Self.nonEmpty($0) }.joined(separator: " ")
        contextRows = Self.rows([
            ("Device", device.model), ("Operating system", os), ("Architecture", device.arch),
            ("Memory", device.memoryBytes.map(Format.bytes)), ("Free disk", device.freeDiskBytes.map(Format.bytes)),
            ("Locale", device.locale), ("App", report.app.id), ("Version", report.app.version),
            ("Build", report.app.build),
            ("Release", report.release), ("Environment", report.environment), ("User id", report.userID),
            ("Install id", report.installID), ("Session id", report.sessionID?.rawValue),
        ])
        trimNotes = Self.trimNotes(report.trimmed)
        hasTrimNotes = !trimNotes.isEmpty
    }

    // MARK: - Frames

    /// - Parameter slot: the symbolicator's answer for the frame; nil when it has none (yet).
    static func frameView(
        _ frame: Frame, number: Int, slot: SymbolicatedFrameSlot?, modules: [LoadedModule]
    ) -> FrameView {
        var entries: [FrameEntry] = []
        if let slot, !slot.frames.isEmpty {
            entries = slot.frames.map {
                FrameEntry(function: $0.function, frameLocation: location($0.file, $0.line), inlined: $0.inlined)
            }
        } else if let function = nonEmpty(frame.function) {
            entries = [
                FrameEntry(function: function, frameLocation: location(frame.file, frame.line), inlined: false)
            ]
        }
        let status = slot?.status ?? (entries.isEmpty && frame.address != nil ? "pending" : "client")
        var address: String?
        if status != "dwarf", status != "client" || entries.isEmpty, let raw = frame.address {
            let lookup = SymbolicationRules.lookupAddress(frame, index: number) ?? raw
            if let module = SymbolicationRules.module(for: lookup, inSorted: modules) {
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
        return FrameView(frameNumber: number, entries: entries, frameAddress: address, frameStatus: statusText(status))
    }

    /// What a frame's symbolication status means, or nil for DWARF (the normal case, not worth a word).
    static func statusText(_ status: String) -> String? {
        switch status {
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

    static func trimNotes(_ trimmed: TrimCounts) -> [String] {
        [
            (trimmed.customKeysDropped, "custom key", "dropped (over the limit of 64)"),
            (trimmed.valuesTruncated, "value", "shortened to 1 KB"),
            (trimmed.breadcrumbsDropped, "breadcrumb", "dropped (oldest first, over 64 KB)"),
            (trimmed.threadsDropped, "thread", "dropped"),
            (trimmed.framesDropped, "frame", "dropped"),
            (trimmed.modulesDropped, "module", "dropped"),
        ].filter { $0.0 > 0 }.map { "\(Format.count($0.0, $0.1)) \($0.2)" }
    }
}
