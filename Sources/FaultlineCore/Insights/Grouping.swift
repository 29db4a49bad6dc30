/// How a report was grouped: the fingerprint and the components it was computed from, kept with the issue so
/// that its page can say why these events belong together.
public struct GroupingResult: Sendable, Equatable, Codable {
    /// What the components came from.
    public enum Source: String, Sendable, Codable {
        /// The client sent a fingerprint (it wins over ours).
        case client
        /// The blamed frame of the crashing thread (crashes) or its top frames.
        case stack
        /// A non-fatal's type/domain and code, with its top frames when it has any.
        case error
        /// No usable frames and no error type: the message, as a last resort.
        case message
        /// A project's fingerprint rule (`FingerprintRules`).
        case rule
        /// Not grouped: the project's overflow issue, holding reports whose new issue was past the new-issue cap
        /// (`IssueFiling.overflowGrouping`).
        case overflow
    }
    public var fingerprint: Fingerprint
    public var source: Source
    /// The strings the hash was computed from, in order.
    public var components: [String]
    /// A human title: the most specific cause known (see `Grouping.TitleRank`).
    public var title: String
    /// The blamed frame: its simplified name, with its source location when known.
    public var culprit: String?
    /// How specific the title is; an issue keeps the most specific title its events gave.
    public var titleRank: Int
    enum CodingKeys: String, CodingKey {
        case fingerprint, source, components, title, culprit, titleRank = "title_rank"
    }

    public init(
        fingerprint: Fingerprint, source: Source, components: [String], title: String, culprit: String?,
        titleRank: Int = Grouping.TitleRank.signal
    ) {
        self.fingerprint = fingerprint
        self.source = source
        self.components = components
        self.title = title
        self.culprit = culprit
        self.titleRank = titleRank
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fingerprint = try c.decode(Fingerprint.self, forKey: .fingerprint)
        source = try c.decode(Source.self, forKey: .source)
        components = try c.decode([String].self, forKey: .components)
        title = try c.decode(String.self, forKey: .title)
        culprit = try c.decodeIfPresent(String.self, forKey: .culprit)
        // Results stored before titles were ranked count as the least specific.
        titleRank = try c.decodeIfPresent(Int.self, forKey: .titleRank) ?? Grouping.TitleRank.none
    }
}

/// Which modules are the app's own, beyond the default (every module that is not a system or language-runtime
/// library): per-project glob patterns (`*`, `?`) on a module's file name.
public struct InAppRules: Sendable, Equatable, Codable {
    /// Modules that are in-app even where the default says they are not (a company library in /usr/lib).
    public var include: [String]
    /// Modules that are never in-app (a vendored third-party library shipped beside the app).
    public var exclude: [String]
    public init(include: [String] = [], exclude: [String] = []) {
        self.include = include
        self.exclude = exclude
    }

    public static let none = InAppRules()

    /// Longest pattern accepted, and most patterns per list.
    public static let maxPatternLength = 128
    public static let maxPatterns = 32

    /// true: the module is in-app by a rule; false: not in-app by a rule; nil: no rule says (the default applies).
    /// Exclusion wins over inclusion.
    public func decision(forModule name: String) -> Bool? {
        let base = Grouping.baseName(ofPath: name)
        if exclude.contains(where: { Self.glob($0, matches: base) }) { return false }
        if include.contains(where: { Self.glob($0, matches: base) }) { return true }
        return nil
    }

    /// Whether `pattern` (`*` any run, `?` one character) matches all of `text`. Iterative, linear in practice.
    public static func glob(_ pattern: String, matches text: String) -> Bool {
        let p = Array(pattern.unicodeScalars.prefix(maxPatternLength))
        let t = Array(text.unicodeScalars.prefix(4096))
        var pi = 0, ti = 0
        var star = -1, mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] == "?" || p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi
                mark = ti
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

/// Grouping of reports into issues (DESIGN.md, "Grouping"; docs/grouping.md). Pure: the same report and symbols
/// always give the same fingerprint, on every machine and in every process (FNV-1a over a canonical string,
/// never `hashValue`).
///
/// The rules, in order:
/// 1. A client fingerprint wins (`{{ default }}` in it stands for the components computed here).
/// 2. Crashes: the **blamed frame** — the innermost frame of the crashing thread that is the app's own code:
///    inline chains expanded; runtime and trap frames (`abort`, `_assertionFailure`, "Swift runtime failure: …"),
///    standard-library and system-library frames (inlined into the app or not), compiler-made wrappers
///    (thunks, protocol witnesses, partial-apply forwarders, outlined copies) and `<compiler-generated>` code
///    skipped; named by its simplified name (`Inventory.item(at:)`: no module, types, specialization or clone
///    suffixes). One frame, because release builds unwind only a frame or two (the stack walk stops at the first
///    function without a frame pointer): more frames would split one crash site across build settings. A frame
///    nobody could symbolicate counts as `module+0xoffset` (stable across ASLR slides, not across builds: when
///    symbols arrive the report is grouped again and moves). No in-app frame: the first `maxFrames` frames left.
/// 3. Non-fatals: type/domain + code + the top `maxErrorFrames` frames (in-app first).
/// 4. Nothing usable: the error type or message.
public enum Grouping {
    /// Bump when the rules change: stored reports are grouped again and their issues migrated (docs/grouping.md).
    /// v1: the first five in-app frames, full demangled names. v2: the blamed frame, simplified names, stdlib,
    /// wrappers and compiler-generated frames skipped, titles from runtime failures and crash messages. v3: a raw
    /// frame's `module+0xoffset` is taken where the symbolicator looks it up: pointer-authentication bits stripped,
    /// and an arm64 return address moved to its call instruction (`(a & ~3) - 4`, not `a - 1`).
    public static let version = 3
    /// How many frames make a crash's fingerprint when no frame is in-app.
    public static let maxFrames = 5
    /// How many frames join a non-fatal's type and code.
    public static let maxErrorFrames = 3

    /// How specific a title is: an issue keeps its most specific title.
    public enum TitleRank {
        /// Stored before titles were ranked.
        public static let none = 0
        /// A signal or the runtime's description of it (`SIGSEGV: Bad pointer dereference`), or "Crash in f()".
        public static let signal = 1
        /// A kind without its message (`Fatal error`, `Uncaught C++ exception`) or an error type alone.
        public static let kind = 2
        /// The cause itself: a runtime failure, a fatal-error or exception message.
        public static let cause = 3
    }

    /// Groups `report`, using `symbols` (the symbolicator's result, thread and frame indexes aligned with the
    /// report's) where present, and the project's in-app rules.
    public static func group(_ report: Report, symbols: SymbolicatedReport?, inApp rules: InAppRules = .none)
        -> GroupingResult
    {
        groupWithFacts(report, symbols: symbols, inApp: rules).result
    }

    /// Groups `report` as `group` does, then applies the project's fingerprint rules (`fingerprints`) to the facts
    /// of the report (`GroupingFacts`): the first matching rule's fingerprint replaces the computed one, unless the
    /// client sent its own. Returns the facts too, to be stored for dry runs of other rules.
    public static func groupWithFacts(
        _ report: Report, symbols: SymbolicatedReport?, inApp rules: InAppRules = .none,
        fingerprints: FingerprintRules = .none
    ) -> (result: GroupingResult, facts: GroupingFacts) {
        let thread = primaryThreadIndex(report)
        let frames = thread.map { normalizedFrames(report, thread: $0, symbols: symbols, rules: rules) } ?? []
        var kept = frames.filter { $0.role == .code }
        var inApp = kept.filter(\.inApp)
        if inApp.isEmpty, report.kind == .crash, let site = symbols?.messageSite {
            // The stack never reached the app's code; the crash message's file:line did (see `messageSite`).
            let module = report.modules.first { $0.buildID?.rawValue == site.buildID }
            let siteInApp =
                module.map { rules.decision(forModule: $0.name) ?? !isSystemModule(name: $0.name, path: $0.path) }
                ?? true
            let siteFrames = site.frames.compactMap { normalized($0, moduleInApp: siteInApp, ruled: nil) }.filter {
                $0.role == .code
            }
            kept = siteFrames + kept
            inApp = siteFrames.filter(\.inApp)
        }
        let chosen = inApp.isEmpty ? kept : inApp
        let blamed = chosen.first
        let culprit = blamed.map { top in top.location.map { "\(top.label) (\($0))" } ?? top.label }
        let (title, rank) = makeTitle(report, frames: frames, blamed: blamed)

        var source: GroupingResult.Source
        var components: [String]
        let type = report.error?.type.flatMap(nonEmpty)
        let code = report.error?.code.flatMap(nonEmpty)
        switch report.kind {
        case .crash where !chosen.isEmpty:
            source = .stack
            components = inApp.isEmpty ? chosen.prefix(maxFrames).map(\.label) : [inApp[0].label]
        case .nonfatal where type != nil || code != nil || !chosen.isEmpty:
            source = .error
            components = ["type:\(type ?? "")", "code:\(code ?? "")"] + chosen.prefix(maxErrorFrames).map(\.label)
        default:
            if report.kind == .crash, let message = report.crashMessage.flatMap(CrashMessage.parse) {
                source = .message
                components = ["message:\(normalizeMessage(message.title))"]
            } else if type != nil || code != nil {
                source = .error
                components = ["type:\(type ?? "")", "code:\(code ?? "")"]
            } else {
                source = .message
                components = ["message:\(normalizeMessage(report.error?.message ?? ""))"]
            }
        }
        if let client = report.fingerprint, !client.isEmpty {
            let defaults = components
            components = client.flatMap { isDefault($0) ? defaults : [$0] }
            source = .client
        }
        let facts = makeFacts(report, source: source, components: components, inApp: inApp, frames: frames)
        let grouped = facts.grouped(by: fingerprints)
        let result = GroupingResult(
            fingerprint: grouped.fingerprint, source: grouped.source, components: grouped.components, title: title,
            culprit: culprit, titleRank: rank)
        return (result, facts)
    }

    /// The facts fingerprint rules match on: the error, the in-app functions and the modules of the crashing thread,
    /// the release, the platform (the OS) and the tags (the report's tags, then custom keys, then breakdown values and
    /// the SDK as `name/version`; the first of a repeated name wins).
    static func makeFacts(
        _ report: Report, source: GroupingResult.Source, components: [String], inApp: [NormalizedFrame],
        frames: [NormalizedFrame]
    ) -> GroupingFacts {
        var modules: [String] = []
        for frame in frames where modules.count < GroupingFacts.maxFrames {
            if let module = frame.module, !modules.contains(module) { modules.append(module) }
        }
        var tags: [(key: String, value: String)] = []
        var keys: Set<String> = []
        for (key, value) in report.tags where keys.insert(key).inserted { tags.append((key, value)) }
        for (key, value) in report.customKeys where keys.insert(key).inserted {
            switch value {
            case .string(let text): tags.append((key, text))
            case .number(let number): tags.append((key, String(number)))
            case .bool(let flag): tags.append((key, flag ? "true" : "false"))
            }
        }
        let breakdowns: [(String, String?)] = [
            ("device", report.device.model), ("os", report.device.os), ("environment", report.environment),
            ("build", report.build), ("sdk", report.sdk?.label),
        ]
        for case (let key, let value?) in breakdowns where !value.isEmpty && keys.insert(key).inserted {
            tags.append((key, value))
        }
        return GroupingFacts(
            kind: report.kind, source: source, components: components, client: source == .client,
            errorType: report.error?.type.flatMap(nonEmpty), errorValue: report.error?.message.flatMap(nonEmpty),
            errorCode: report.error?.code.flatMap(nonEmpty),
            functions: inApp.prefix(GroupingFacts.maxFrames).map(\.label),
            modules: modules, release: report.release, platform: report.device.os.flatMap(nonEmpty), tags: tags)
    }

    /// The hash of a canonical string: version, kind, source and components, one per line.
    public static func fingerprint(kind: ReportKind, source: GroupingResult.Source, components: [String]) -> Fingerprint
    {
        let origin =
            switch source {
            case .client: "client"
            case .rule: "rule"
            default: "computed"
            }
        var canonical = "faultline-grouping-v\(version)\n\(kind.rawValue)\n\(origin)\n"
        for component in components {
            canonical += component.replacingNewlines + "\n"
        }
        return Fingerprint(version: version, hash: FNV1a.hex64(canonical))
    }

    /// Whether `part` of a client fingerprint is `{{ default }}` or `{{default}}` (spaces around it trimmed): it stands
    /// for the components computed here, so a fingerprint holding it is known only once the report is symbolicated.
    static func isDefault(_ part: String) -> Bool {
        let trimmed = part.trimmingSpaces
        return trimmed == "{{ default }}" || trimmed == "{{default}}"
    }

    // MARK: - Frames

    /// One frame after normalization.
    struct NormalizedFrame: Equatable {
        enum Role: Equatable {
            /// Code someone wrote (the app's or a library's).
            case code
            /// How the crash was raised, not where: traps, the runtime's error reporting, signal delivery.
            case runtime
            /// Compiler-made forwarding code or `<compiler-generated>` lines.
            case wrapper
        }
        /// The simplified name, or the module's base name of a frame nobody symbolicated.
        var name: String
        /// The file name of the module the frame ran in, when known (for fingerprint rules' `module:`).
        var module: String? = nil
        /// A frame nobody symbolicated: its offset in the module.
        var offset: UInt64? = nil
        /// The name as the symbolicator gave it.
        var full: String?
        var inApp: Bool
        var role: Role
        /// The source file (not `<compiler-generated>`) and line.
        var file: String? = nil
        var line: Int? = nil

        /// The simplified name, or `module+0xoffset`. Made when asked for: grouping reads the labels of a few
        /// frames of a stack (the blamed one, the top ones), not of all.
        var label: String { offset.map { name + "+0x" + String($0, radix: 16) } ?? name }
        /// `File.swift:42` (the file's base name), when known.
        var location: String? {
            file.map { file in line.map { "\(baseName(ofPath: file)):\($0)" } ?? baseName(ofPath: file) }
        }
    }

    /// The crashed thread, else the first thread with frames.
    static func primaryThreadIndex(_ report: Report) -> Int? {
        report.threads.firstIndex(where: \.crashed) ?? report.threads.firstIndex(where: { !$0.frames.isEmpty })
    }

    static func normalizedFrames(_ report: Report, thread: Int, symbols: SymbolicatedReport?, rules: InAppRules)
        -> [NormalizedFrame]
    {
        let modules = report.modules.sorted { $0.baseAddress < $1.baseAddress }
        let architecture = SymbolicationRules.architecture(of: report)
        let slots = symbols.flatMap { thread < $0.threads.count ? $0.threads[thread] : nil }
        var out: [NormalizedFrame] = []
        // The module decision (rules, system libraries) and base name depend only on the module: decided once per
        // module of the report, not per frame (most frames share a few modules).
        var decided: [Int: (ruled: Bool?, inAppModule: Bool?, baseName: String)] = [:]
        for (index, frame) in report.threads[thread].frames.enumerated() {
            let address = SymbolicationRules.lookupAddress(
                frame, index: index, architecture: architecture, inSorted: modules)
            let moduleIndex = address.flatMap { SymbolicationRules.moduleIndex(for: $0, inSorted: modules) }
            let module = moduleIndex.map { modules[$0] }
            var ruled: Bool?
            var inAppModule: Bool?
            var moduleBaseName: String?
            if let moduleIndex, let module {
                if let known = decided[moduleIndex] {
                    ruled = known.ruled
                    inAppModule = known.inAppModule
                    moduleBaseName = known.baseName
                } else {
                    let decision = moduleDecision(frame, address: address, modules: modules, rules: rules)
                    let name = baseName(ofPath: module.name)
                    ruled = decision.ruled
                    inAppModule = decision.inAppModule
                    moduleBaseName = name
                    decided[moduleIndex] = (decision.ruled, decision.inAppModule, name)
                }
            } else {
                let decision = moduleDecision(frame, address: address, modules: modules, rules: rules)
                ruled = decision.ruled
                inAppModule = decision.inAppModule
            }
            let resolved = resolvedEntries(frame, slot: slots.flatMap { index < $0.count ? $0[index] : nil })
            if resolved.isEmpty {
                guard let address else { continue }
                if let module, let moduleBaseName {
                    out.append(
                        NormalizedFrame(
                            name: moduleBaseName, module: moduleBaseName, offset: address - module.baseAddress,
                            full: nil, inApp: inAppModule ?? false, role: .code))
                } else {
                    out.append(
                        NormalizedFrame(name: "<unknown module>", full: nil, inApp: inAppModule ?? false, role: .code))
                }
                continue
            }
            let frameModule = moduleBaseName ?? frame.module.map { baseName(ofPath: $0) }
            for entry in resolved {
                guard var normalized = normalized(entry, moduleInApp: inAppModule, ruled: ruled) else { continue }
                normalized.module = frameModule
                out.append(normalized)
            }
        }
        return out
    }

    /// The module a frame ran in, and whether it is in-app by a rule (`ruled`) or by the default (`inAppModule`).
    static func moduleDecision(_ frame: Frame, address: UInt64?, modules: [LoadedModule], rules: InAppRules)
        -> (module: LoadedModule?, ruled: Bool?, inAppModule: Bool?)
    {
        let module = address.flatMap { SymbolicationRules.module(for: $0, inSorted: modules) }
        let moduleName = module?.name ?? frame.module
        let ruled = moduleName.flatMap { rules.decision(forModule: $0) }
        let inAppModule =
            ruled ?? module.map { !isSystemModule(name: $0.name, path: $0.path) }
            ?? frame.module.map { !isSystemModule(name: $0, path: $0.contains("/") ? $0 : nil) }  // a `package` path
        return (module, ruled, inAppModule)
    }

    /// The functions of a frame: the symbolicator's (an inline chain) when it resolved one, else the client's.
    static func resolvedEntries(_ frame: Frame, slot: SymbolicatedFrameSlot?) -> [ResolvedFrame] {
        if let slot, !slot.frames.isEmpty, slot.frames.contains(where: { $0.function != nil }) { return slot.frames }
        if frame.function != nil {
            return [ResolvedFrame(function: frame.function, file: frame.file, line: frame.line)]
        }
        return []
    }

    /// Per frame of `thread`, whether it is the app's own code, decided exactly as grouping decides it: the
    /// project's in-app rules, then the frame's functions (runtime, wrapper and standard-library code is not the
    /// app's), then its module (system and language-runtime libraries are not). For the dashboard's frame badges.
    public static func inAppFrames(_ report: Report, thread: Int, symbols: SymbolicatedReport?, rules: InAppRules)
        -> [Bool]
    {
        guard thread >= 0, thread < report.threads.count else { return [] }
        let modules = report.modules.sorted { $0.baseAddress < $1.baseAddress }
        let architecture = SymbolicationRules.architecture(of: report)
        let slots = symbols.flatMap { thread < $0.threads.count ? $0.threads[thread] : nil }
        return report.threads[thread].frames.enumerated().map { index, frame in
            let address = SymbolicationRules.lookupAddress(
                frame, index: index, architecture: architecture, inSorted: modules)
            let (_, ruled, inAppModule) = moduleDecision(frame, address: address, modules: modules, rules: rules)
            let resolved = resolvedEntries(frame, slot: slots.flatMap { index < $0.count ? $0[index] : nil })
            if resolved.isEmpty { return address != nil && (inAppModule ?? false) }
            return resolved.contains { normalized($0, moduleInApp: inAppModule, ruled: ruled)?.inApp ?? false }
        }
    }

    /// One resolved frame, classified: runtime, wrapper or code, in-app or not.
    static func normalized(_ entry: ResolvedFrame, moduleInApp: Bool?, ruled: Bool?) -> NormalizedFrame? {
        guard let function = entry.function.flatMap(nonEmpty) else { return nil }
        let facts = FunctionNameFacts.of(function)
        let role: NormalizedFrame.Role
        if facts.isRuntime {
            role = .runtime
        } else if facts.isWrapper || entry.file == "<compiler-generated>" {
            role = .wrapper
        } else {
            role = .code
        }
        // A module rule decides; else the frame's own code decides (stdlib inlined into the app is not the
        // app's), then the module it runs in.
        let inApp = ruled ?? (facts.isSystem ? false : (moduleInApp ?? true))
        return NormalizedFrame(
            name: facts.label, full: function, inApp: inApp && role == .code, role: role,
            file: entry.file.flatMap { $0 == "<compiler-generated>" ? nil : $0 }, line: entry.line)
    }

    // MARK: - Normalization

    static let cloneSuffixes: Set<Substring> = [
        "cold", "constprop", "isra", "part", "lto_priv", "llvm", "localalias", "clone",
    ]

    /// A C symbol name without the suffixes GCC and LLVM give function clones (grouping only: the dashboard shows them) (`compute.cold`,
    /// `compute.constprop.0.isra.0` → `compute`): they differ between builds of the same code. Only trailing
    /// known suffixes go, so other dotted names are left alone.
    public static func withoutCloneSuffixes(_ name: String) -> String {
        var parts = name.split(separator: ".", omittingEmptySubsequences: false)
        var stripped = false
        while parts.count > 1 {
            if let last = parts.last, last.allSatisfy(\.isNumber), parts.count > 2,
                cloneSuffixes.contains(parts[parts.count - 2])
            {
                parts.removeLast(2)
                stripped = true
            } else if let last = parts.last, cloneSuffixes.contains(last) {
                parts.removeLast()
                stripped = true
            } else {
                break
            }
        }
        return stripped ? parts.joined(separator: ".") : name
    }

    /// The bare name used to recognise runtime frames: the simplified name without closure prefixes, parameters
    /// or a `Swift.` qualifier (`closure #1 in _assertionFailure(…)` → `_assertionFailure`).
    static func bareName(_ function: String) -> String {
        var name = Substring(withoutClosurePrefixes(FunctionNames.simplified(function)))
        if let paren = name.firstIndex(of: "(") { name = name[..<paren] }
        if name.hasPrefix("Swift.") { name = name.dropFirst(6) }
        return String(name).trimmingSpaces
    }

    static let runtimeNames: Set<String> = [
        "abort", "raise", "gsignal", "__GI_raise", "__GI_abort", "__pthread_kill_implementation",
        "__pthread_kill_internal",
        "pthread_kill", "__pthread_kill", "__assert_fail", "__assert_fail_base", "__assert_perror_fail",
        "__libc_message",
        "__fortify_fail", "__chk_fail", "__stack_chk_fail", "_assertionFailure", "assertionFailure", "fatalError",
        "_fatalErrorMessage", "preconditionFailure", "precondition", "assert", "swift_runtime_failure",
        "swift_reportError",
        "swift::fatalError", "swift::fatalErrorv", "swift::warning", "swift_deletedMethodError",
        "swift_unexpectedError",
        "swift_errorInMain", "_swift_stdlib_reportFatalError", "_swift_stdlib_reportFatalErrorInFile",
        "_swift_runtime_on_report", "__cxa_throw", "__cxa_rethrow", "std::terminate", "std::__terminate",
        "__cxxabiv1::__terminate", "__gnu_cxx::__verbose_terminate_handler", "__restore_rt", "__kernel_rt_sigreturn",
        "_sigtramp", "swift::runtime::backtrace::_swift_backtrace_isThunkFunction", "_swift_backtrace",
    ]

    /// Frames that are how the crash was raised, not where: the trap, the runtime's reporting, signal delivery
    /// (also the closures inside them: `closure #1 in _assertionFailure(…)`).
    public static func isRuntimeFrame(_ function: String) -> Bool {
        if function.hasPrefix("Swift runtime failure") { return true }
        let bare = bareName(function)
        return runtimeNames.contains(bare) || bare.hasPrefix("swift::runtime::backtrace")
            || bare.hasPrefix("_swift_backtrace")
    }

    /// `closure #1 in closure #2 in f()` → `f()`.
    static func withoutClosurePrefixes(_ name: String) -> String {
        var rest = Substring(name)
        while true {
            var stripped = false
            for prefix in ["closure #", "implicit closure #"] where rest.hasPrefix(prefix) {
                guard let range = rest.firstRange(of: " in ") else { break }
                rest = rest[range.upperBound...]
                stripped = true
            }
            if !stripped { return String(rest) }
        }
    }

    static let systemModulePrefixes = [
        "libc.so", "libc-", "libm.so", "libpthread", "libdl.so", "librt.so", "ld-linux", "ld64", "linux-vdso",
        "linux-gate",
        "libstdc++", "libgcc_s", "libc++", "libswift", "libFoundation", "libdispatch", "libBlocksRuntime", "libicu",
        "libz.so", "libsystem_", "libdyld", "libobjc", "libxpc", "libcorecrypto",
    ]

    /// Apple's system frameworks and libraries by name, for frames that name their image without a path: the
    /// ones a crashing app's stack runs through (UI, run loop, dispatch, the dynamic loader).
    static let appleSystemImages: Set<String> = [
        "dyld", "UIKitCore", "UIKit", "CoreFoundation", "Foundation", "GraphicsServices", "QuartzCore", "CoreGraphics",
        "CFNetwork", "SwiftUI", "SwiftUICore", "AppKit", "HIToolbox", "Combine", "FrontBoardServices", "BaseBoard",
        "RunningBoardServices", "CoreText", "WebKit", "JavaScriptCore", "CoreData", "AVFoundation", "Metal", "MetalKit",
        "Security", "UIFoundation", "CoreAutoLayout", "AttributeGraph", "AppKitCore",
    ]

    /// Path prefixes of Apple's system images: the OS (`/System/Library/…`, `/usr/lib/…`, the cryptexes of iOS 16+),
    /// developer tools' images (`/Developer/…`) and the simulators' runtime roots.
    static let appleSystemPathPrefixes = [
        "/System/", "/private/preboot/Cryptexes/", "/Developer/", "/Library/Developer/CoreSimulator/",
        "/Applications/Xcode",
        "/Library/Apple/",
    ]

    /// Libraries of the system and the language runtimes, whose frames are never the app's own.
    ///
    /// On Apple platforms the app's own images are the bundle's executable and what it embeds (`…/X.app/X`,
    /// `X.app/Frameworks/Y.framework/Y`, `X.app/PlugIns/Z.appex/Z`, macOS's `X.app/Contents/MacOS|Frameworks/…`);
    /// Apple's libraries live outside the bundle (`/System/Library/…`, `/usr/lib/…`), or inside a simulator runtime
    /// (`…/RuntimeRoot/System/…`), which is system even though a simulated app's own path also runs through
    /// `…/CoreSimulator/Devices/…`.
    public static func isSystemModule(name: String, path: String?) -> Bool {
        if let path {
            if path.contains("/RuntimeRoot/") || path.contains(".simruntime/") { return true }
            if isAppleAppBundlePath(path) { return false }
            if path.hasPrefix("/lib/") || path.hasPrefix("/lib64/") || path.hasPrefix("/usr/lib")
                || path.hasPrefix("/usr/libexec") || path.contains("/usr/lib/swift/")
                || appleSystemPathPrefixes.contains(where: { path.hasPrefix($0) })
            {
                return true
            }
        }
        let base = baseName(ofPath: name)
        return appleSystemImages.contains(base) || systemModulePrefixes.contains { base.hasPrefix($0) }
    }

    /// Whether `path` is inside an app bundle a developer built (`…/X.app/…`), not an Apple tool's bundle (Xcode's).
    static func isAppleAppBundlePath(_ path: String) -> Bool {
        guard path.contains(".app/") else { return false }
        return !path.hasPrefix("/System/") && !path.hasPrefix("/Applications/Xcode")
            && !path.contains("/Contents/Developer/")
    }

    /// Swift modules of the toolchain: their code is never the app's, also when inlined or specialized into it.
    static let systemSwiftModules: Set<String> = [
        "Swift", "_Concurrency", "_StringProcessing", "_RegexParser", "RegexBuilder", "Foundation",
        "FoundationEssentials",
        "FoundationInternationalization", "FoundationNetworking", "FoundationXML", "_FoundationCollections",
        "CoreFoundation",
        "Dispatch", "Synchronization", "Distributed", "Observation", "SwiftOnoneSupport", "Glibc", "SwiftGlibc", "Musl",
        "Android", "Darwin", "Cxx", "CxxStdlib", "XCTest", "Testing", "_Differentiation", "Runtime", "_Backtracing",
        "_Volatile", "__C", "_Builtin_float",
    ]

    /// Functions of the standard libraries and runtimes, recognised by name (full demangled form): Swift toolchain
    /// modules, the C++ standard library, glibc's start-up and thread entry points.
    public static func isSystemFunction(_ function: String) -> Bool {
        if let module = FunctionNames.swiftModule(of: function), systemSwiftModules.contains(module) { return true }
        let name = FunctionNames.simplified(function)
        return name.hasPrefix("std::") || name.hasPrefix("__gnu_cxx::") || name.hasPrefix("__cxxabiv1::")
            || name.hasPrefix("__libc_") || name.hasPrefix("__GI_") || name == "_start"
            || name.hasPrefix("start_thread")
            || name == "clone" || name == "clone3" || name.hasPrefix("__clone")
    }

    /// The last non-empty `/`-separated part of `path` (the path itself when it has none).
    static func baseName(ofPath path: String) -> String {
        // ASCII (every module path in practice): the same answer from the bytes, without splitting the whole path.
        // Otherwise by characters, where a `/` followed by a combining mark is not a separator.
        guard path.utf8.allSatisfy({ $0 < 0x80 }) else {
            return path.split(separator: "/").last.map(String.init) ?? path
        }
        let utf8 = path.utf8
        var end = utf8.endIndex
        while end > utf8.startIndex, utf8[utf8.index(before: end)] == UInt8(ascii: "/") {
            end = utf8.index(before: end)
        }
        guard end > utf8.startIndex else { return path }
        var start = end
        while start > utf8.startIndex, utf8[utf8.index(before: start)] != UInt8(ascii: "/") {
            start = utf8.index(before: start)
        }
        if start == utf8.startIndex && end == utf8.endIndex { return path }
        return String(path[start..<end])
    }

    /// A message with its variable parts (numbers, hex, quoted values) masked, so "id 17" and "id 18" group.
    public static func normalizeMessage(_ message: String) -> String {
        var out = ""
        var lastWasMask = false
        var inQuote: Character?
        for c in message.prefix(512) {
            if let q = inQuote {
                if c == q { inQuote = nil }
                continue
            }
            if c == "\"" || c == "'" {
                inQuote = c
                out += "<*>"
                lastWasMask = true
                continue
            }
            if c.isNumber {
                if !lastWasMask { out += "<n>" }
                lastWasMask = true
                continue
            }
            if lastWasMask, c.isHexDigit || c == "x" { continue }
            lastWasMask = false
            out.append(c)
        }
        return out.collapsingSpaces
    }

    // MARK: - Title

    /// Descriptions of fatal signals as crash reporters write them (the Swift runtime's first), and their names.
    static let signalDescriptions: [String: String] = [
        "illegal instruction": "SIGILL", "bad pointer dereference": "SIGSEGV", "segmentation fault": "SIGSEGV",
        "aborted": "SIGABRT", "abort": "SIGABRT", "bus error": "SIGBUS", "floating point exception": "SIGFPE",
        "arithmetic exception": "SIGFPE", "floating point error": "SIGFPE", "trace/breakpoint trap": "SIGTRAP",
        "breakpoint": "SIGTRAP", "terminated": "SIGTERM", "killed": "SIGKILL", "bad system call": "SIGSYS",
        "quit": "SIGQUIT", "illegal operation": "SIGILL",
    ]

    /// `SIGSEGV`, `SIGILL`…, or nil when `text` is neither a signal name nor a known description of one.
    static func signalName(_ text: String) -> String? {
        let trimmed = text.trimmingSpaces
        if trimmed.hasPrefix("SIG"), trimmed.count <= 10,
            trimmed.dropFirst(3).allSatisfy({ $0.isUppercase || $0.isNumber })
        {
            return trimmed
        }
        return signalDescriptions[trimmed.lowercased()]
    }

    /// The most specific cause known, never the same text twice: a crash message the client passed (a Swift
    /// fatal error, an uncaught C++ exception, a failed assertion), a Swift runtime failure named by an inline
    /// frame, an exception's type and value, a runtime function on the stack (`Fatal error`), and the signal
    /// only as the last resort.
    static func makeTitle(_ report: Report, frames: [NormalizedFrame], blamed: NormalizedFrame?) -> (String, Int) {
        let message = report.crashMessage.flatMap(CrashMessage.parse)
        if let message, message.kind != .other {
            return (message.title, message.text.isEmpty ? TitleRank.kind : TitleRank.cause)
        }
        // A Swift trap names itself in an inline frame: "Swift runtime failure: Index out of range".
        if let failure = frames.first(where: { $0.full?.hasPrefix("Swift runtime failure: ") == true })?.full {
            let text = String(failure.dropFirst("Swift runtime failure: ".count)).trimmingSpaces
            if !text.isEmpty { return ("Fatal error: \(capitalizedFirst(text))", TitleRank.cause) }
        }
        let type = report.error?.type.flatMap(nonEmpty)
        // An SDK's placeholder for a bare Mach exception or signal (`Exception 1, Code 1, Subcode 8`) is no message.
        let value = report.error?.message.flatMap(nonEmpty).map { String($0.prefix(200)) }
            .flatMap { MachException.isPlaceholderValue($0) ? nil : $0 }
        // A signal or its description is the last resort, not an exception.
        let typeIsSignal = type.map { signalName($0) != nil } ?? false
        let valueIsSignal = value.map { signalName($0) != nil } ?? false
        // A Mach exception names the crash when the error is the exception itself (`EXC_BAD_ACCESS`, a signal, an
        // SDK's "Mach Exception"), not an exception the app threw (`NSInvalidArgumentException` ended in EXC_CRASH).
        let machTitle = report.error?.mach.flatMap { mach -> String? in
            guard
                type == nil || typeIsSignal || type == mach.exceptionName || type?.hasPrefix("EXC_") == true
                    || type == "Mach Exception" || type == "Signal Exception"
            else { return nil }
            return mach.title(faultAddress: report.faultAddress, arch: report.device.arch)
        }
        if let machTitle, let value, !valueIsSignal {
            return ("\(machTitle): \(value)", TitleRank.kind)
        }
        if machTitle == nil, let type, !typeIsSignal {
            if let value, value != type, !valueIsSignal {
                return (value.hasPrefix(type) ? value : "\(type): \(value)", TitleRank.cause)
            }
            return (type, TitleRank.kind)
        }
        if machTitle == nil, let value, !valueIsSignal {
            // A client's own words for a crash ("SIGSEGV" + "boom"): the signal names it, the words say more.
            if let type, let signal = signalName(type) { return ("\(signal): \(value)", TitleRank.kind) }
            return (value, TitleRank.cause)
        }
        // Other printed text (a log line before an abort()) is kept with the report but does not name the issue.
        if report.kind == .crash {
            let names = Set(frames.filter { $0.role == .runtime }.compactMap { $0.full.map(bareName) })
            if !names.isDisjoint(with: [
                "_assertionFailure", "fatalError", "_fatalErrorMessage", "preconditionFailure", "assertionFailure",
                "swift_runtime_failure", "swift_reportError", "swift::fatalError", "swift_unexpectedError",
                "swift_errorInMain",
            ]) {
                return ("Fatal error", TitleRank.kind)
            }
            if !names.isDisjoint(with: [
                "__cxa_throw", "__cxa_rethrow", "std::terminate", "std::__terminate", "__cxxabiv1::__terminate",
                "__gnu_cxx::__verbose_terminate_handler",
            ]) {
                return ("Uncaught C++ exception", TitleRank.kind)
            }
            if !names.isDisjoint(with: ["__assert_fail", "__assert_fail_base", "__assert_perror_fail"]) {
                return ("Assertion failed", TitleRank.kind)
            }
        }
        if let machTitle { return (machTitle, TitleRank.signal) }
        // The signal: its name and the description once.
        let signal = [type, value].compactMap { $0 }.compactMap(signalName).first
        let description = [value, type].compactMap { $0 }.first { !$0.hasPrefix("SIG") }
        switch (signal, description) {
        case (let signal?, let description?): return ("\(signal): \(description)", TitleRank.signal)
        case (let signal?, nil): return (signal, TitleRank.signal)
        case (nil, let description?): return (description, TitleRank.signal)
        case (nil, nil):
            let what = report.kind == .crash ? "Crash" : "Error"
            return (blamed.map { "\(what) in \($0.label)" } ?? what, TitleRank.signal)
        }
    }

    static func capitalizedFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }

    static func nonEmpty(_ s: String) -> String? {
        let t = s.trimmingSpaces
        return t.isEmpty ? nil : t
    }
}

/// FNV-1a, 64 bits: a specified, stable hash for persisted fingerprints.
public enum FNV1a {
    public static func hash64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// The hash as 16 lowercase hex digits.
    public static func hex64(_ text: String) -> String {
        let hex = String(hash64(text), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }

    var collapsingSpaces: String {
        split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    var replacingNewlines: String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
