/// How a report was grouped: the fingerprint and the components it was computed from, kept with the issue so
/// that its page can say why these events belong together.
public struct GroupingResult: Sendable, Equatable, Codable {
    /// What the components came from.
    public enum Source: String, Sendable, Codable {
        /// The client sent a fingerprint (it wins over ours).
        case client
        /// The normalized frames of the crashing (or reporting) thread.
        case stack
        /// A non-fatal's type/domain and code, with its top frames when it has any.
        case error
        /// No usable frames and no error type: the message, as a last resort.
        case message
    }
    public var fingerprint: Fingerprint
    public var source: Source
    /// The strings the hash was computed from, in order.
    public var components: [String]
    /// A human title: the error type and message, or what crashed.
    public var title: String
    /// The top in-app frame, with its source location when known.
    public var culprit: String?
    public init(fingerprint: Fingerprint, source: Source, components: [String], title: String, culprit: String?) {
        self.fingerprint = fingerprint
        self.source = source
        self.components = components
        self.title = title
        self.culprit = culprit
    }
}

/// Grouping of reports into issues (DESIGN.md, "Grouping"). Pure: the same report and symbols always give the
/// same fingerprint, on every machine and in every process (FNV-1a over a canonical string, never `hashValue`).
///
/// The rules, in order:
/// 1. A client fingerprint wins (`{{ default }}` in it stands for the components computed here).
/// 2. Crashes: the crashing thread's frames (the inline chain of each address expanded), normalized to function
///    names without addresses, offsets, lines, clone suffixes or generic-specialization noise; runtime and trap
///    frames (`abort`, `raise`, `_assertionFailure`, "Swift runtime failure: …") skipped; the first
///    `maxFrames` in-app frames, or the first frames of any module when none is in-app. A frame nobody could
///    symbolicate counts as `module+0xoffset` (stable across ASLR slides, not across builds: when symbols arrive
///    the report is grouped again and moves).
/// 3. Non-fatals: type/domain + code + the top `maxErrorFrames` frames.
/// 4. Nothing usable: the error type or message.
public enum Grouping {
    /// Bump when the rules change: new fingerprints then make new issues instead of merging into old ones.
    public static let version = 1
    /// How many frames make a crash's fingerprint.
    public static let maxFrames = 5
    /// How many frames join a non-fatal's type and code.
    public static let maxErrorFrames = 3

    /// Groups `report`, using `symbols` (the symbolicator's result, thread and frame indexes aligned with the
    /// report's) where present.
    public static func group(_ report: Report, symbols: SymbolicatedReport?) -> GroupingResult {
        let thread = primaryThreadIndex(report)
        let frames = thread.map { normalizedFrames(report, thread: $0, symbols: symbols) } ?? []
        let kept = frames.filter { !$0.isRuntime }
        let inApp = kept.filter(\.inApp)
        let chosen = inApp.isEmpty ? kept : inApp
        let culprit = chosen.first.map { top in top.location.map { "\(top.label) (\($0))" } ?? top.label }
        let title = makeTitle(report, frames: frames, top: chosen.first)

        var source: GroupingResult.Source
        var components: [String]
        let type = report.error?.type.flatMap(nonEmpty)
        let code = report.error?.code.flatMap(nonEmpty)
        switch report.kind {
        case .crash where !chosen.isEmpty:
            source = .stack
            components = chosen.prefix(maxFrames).map(\.label)
        case .nonfatal where type != nil || code != nil || !chosen.isEmpty:
            source = .error
            components = ["type:\(type ?? "")", "code:\(code ?? "")"] + chosen.prefix(maxErrorFrames).map(\.label)
        default:
            if type != nil || code != nil {
                source = .error
                components = ["type:\(type ?? "")", "code:\(code ?? "")"]
            } else {
                source = .message
                components = ["message:\(normalizeMessage(report.error?.message ?? ""))"]
            }
        }
        if let client = report.fingerprint, !client.isEmpty {
            let defaults = components
            components = client.flatMap { part -> [String] in
                let trimmed = part.trimmingSpaces
                return trimmed == "{{ default }}" || trimmed == "{{default}}" ? defaults : [part]
            }
            source = .client
        }
        return GroupingResult(
            fingerprint: fingerprint(kind: report.kind, source: source, components: components), source: source,
            components: components, title: title, culprit: culprit)
    }

    /// The hash of a canonical string: version, kind, source and components, one per line.
    public static func fingerprint(kind: ReportKind, source: GroupingResult.Source, components: [String]) -> Fingerprint {
        var canonical = "faultline-grouping-v\(version)\n\(kind.rawValue)\n\(source == .client ? "client" : "computed")\n"
        for component in components {
            canonical += component.replacingNewlines + "\n"
        }
        return Fingerprint(version: version, hash: FNV1a.hex64(canonical))
    }

    // MARK: - Frames

    /// One frame after normalization.
    struct NormalizedFrame: Equatable {
        var label: String
        var inApp: Bool
        var isRuntime: Bool
        var location: String?
    }

    /// The crashed thread, else the first thread with frames.
    static func primaryThreadIndex(_ report: Report) -> Int? {
        report.threads.firstIndex(where: \.crashed) ?? report.threads.firstIndex(where: { !$0.frames.isEmpty })
    }

    static func normalizedFrames(_ report: Report, thread: Int, symbols: SymbolicatedReport?) -> [NormalizedFrame] {
        let modules = report.modules.sorted { $0.baseAddress < $1.baseAddress }
        let slots = symbols.flatMap { thread < $0.threads.count ? $0.threads[thread] : nil }
        var out: [NormalizedFrame] = []
        for (index, frame) in report.threads[thread].frames.enumerated() {
            let address = SymbolicationRules.lookupAddress(frame, index: index)
            let module = address.flatMap { SymbolicationRules.module(for: $0, inSorted: modules) }
            let inAppModule = module.map { !isSystemModule(name: $0.name, path: $0.path) }
                ?? frame.module.map { !isSystemModule(name: $0, path: nil) }
            let resolved: [ResolvedFrame]
            if let slots, index < slots.count, !slots[index].frames.isEmpty, slots[index].frames.contains(where: { $0.function != nil }) {
                resolved = slots[index].frames
            } else if frame.function != nil {
                resolved = [ResolvedFrame(function: frame.function, file: frame.file, line: frame.line)]
            } else {
                resolved = []
            }
            if resolved.isEmpty {
                guard let address else { continue }
                let label: String
                if let module {
                    label = "\(baseName(ofPath: module.name))+0x\(String(address - module.baseAddress, radix: 16))"
                } else {
                    label = "<unknown module>"
                }
                out.append(NormalizedFrame(label: label, inApp: inAppModule ?? false, isRuntime: false, location: nil))
                continue
            }
            for entry in resolved {
                guard let function = entry.function.flatMap(nonEmpty) else { continue }
                let label = normalizeFunction(function)
                let runtime = isRuntimeFrame(function)
                let inApp = inAppModule ?? !isSystemFunction(label)
                let location = entry.file.map { file in entry.line.map { "\(baseName(ofPath: file)):\($0)" } ?? baseName(ofPath: file) }
                out.append(NormalizedFrame(label: label, inApp: inApp && !isSystemFunction(label), isRuntime: runtime, location: location))
            }
        }
        return out
    }

    // MARK: - Normalization

    /// A function name without what differs between builds of the same code: clone suffixes
    /// (`.cold`, `.constprop.0`, `[clone .isra.0]`), Swift specialization and thunk prefixes, extra spaces.
    public static func normalizeFunction(_ raw: String) -> String {
        var name = raw.collapsingSpaces
        // Swift: "generic specialization <Swift.Int> of foo(...)", "specialized foo(...)", "partial apply for …".
        var changed = true
        while changed {
            changed = false
            for prefix in ["specialized ", "merged ", "partial apply for ", "reabstraction thunk helper from ", "outlined "] where name.hasPrefix(prefix) {
                name.removeFirst(prefix.count)
                changed = true
            }
            for prefix in ["generic specialization <", "function signature specialization <", "generic partial specialization <"]
            where name.hasPrefix(prefix) {
                if let rest = dropBracketed(name, prefixLength: prefix.count - 1), rest.hasPrefix(" of ") {
                    name = String(rest.dropFirst(4))
                    changed = true
                }
            }
        }
        // C++ (demangled): "foo(int) [clone .cold]"; C (symbol names): "foo.cold", "foo.constprop.0.isra.0".
        while name.hasSuffix("]"), let cut = lastOccurrence(of: " [clone .", in: name) {
            name = String(name[..<cut])
        }
        if name.hasSuffix(" (.cold)") { name.removeLast(8) }
        name = stripCloneSuffixes(name)
        return name
    }

    static func lastOccurrence(of needle: String, in text: String) -> String.Index? {
        var found: String.Index?
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(needle) { found = index }
            index = text.index(after: index)
        }
        return found
    }

    static let cloneSuffixes: Set<Substring> = ["cold", "constprop", "isra", "part", "lto_priv", "llvm", "localalias", "clone"]

    /// Removes trailing `.cold`, `.isra.0`… from a symbol name (only when what precedes is a plain identifier
    /// end, so `operator.` and Swift names with dots in modules are left alone).
    static func stripCloneSuffixes(_ name: String) -> String {
        var parts = name.split(separator: ".", omittingEmptySubsequences: false)
        var stripped = false
        while parts.count > 1 {
            if let last = parts.last, last.allSatisfy(\.isNumber), parts.count > 2, cloneSuffixes.contains(parts[parts.count - 2]) {
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

    /// After `<…>` starting at `prefixLength` (which must be `<`), the rest of `text`; nil when unbalanced.
    static func dropBracketed(_ text: String, prefixLength: Int) -> String? {
        var depth = 0
        var index = text.index(text.startIndex, offsetBy: prefixLength)
        while index < text.endIndex {
            let c = text[index]
            if c == "<" { depth += 1 }
            if c == ">" {
                depth -= 1
                if depth == 0 { return String(text[text.index(after: index)...]) }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// The bare name used to recognise runtime frames: no parameters, return type or `Swift.` qualifier.
    static func bareName(_ function: String) -> String {
        var name = Substring(normalizeFunction(function))
        if let paren = name.firstIndex(of: "(") { name = name[..<paren] }
        if name.hasPrefix("Swift.") { name = name.dropFirst(6) }
        return String(name).trimmingSpaces
    }

    static let runtimeNames: Set<String> = [
        "abort", "raise", "gsignal", "__GI_raise", "__GI_abort", "__pthread_kill_implementation", "__pthread_kill_internal",
        "pthread_kill", "__pthread_kill", "__assert_fail", "__assert_fail_base", "__assert_perror_fail", "__libc_message",
        "__fortify_fail", "__chk_fail", "__stack_chk_fail", "_assertionFailure", "assertionFailure", "fatalError",
        "_fatalErrorMessage", "preconditionFailure", "precondition", "assert", "swift_runtime_failure", "swift_reportError",
        "swift::fatalError", "swift::fatalErrorv", "swift::warning", "swift_deletedMethodError", "swift_unexpectedError",
        "swift_errorInMain", "_swift_stdlib_reportFatalError", "_swift_stdlib_reportFatalErrorInFile",
        "_swift_runtime_on_report", "__cxa_throw", "__cxa_rethrow", "std::terminate", "std::__terminate",
        "__cxxabiv1::__terminate", "__gnu_cxx::__verbose_terminate_handler", "__restore_rt", "__kernel_rt_sigreturn",
        "_sigtramp", "swift::runtime::backtrace::_swift_backtrace_isThunkFunction", "_swift_backtrace",
    ]

    /// Frames that are how the crash was raised, not where: the trap, the runtime's reporting, signal delivery.
    public static func isRuntimeFrame(_ function: String) -> Bool {
        if function.hasPrefix("Swift runtime failure") { return true }
        let bare = bareName(function)
        if runtimeNames.contains(bare) { return true }
        return bare.hasPrefix("swift::runtime::backtrace") || bare.hasPrefix("_swift_backtrace")
    }

    static let systemModulePrefixes = [
        "libc.so", "libc-", "libm.so", "libpthread", "libdl.so", "librt.so", "ld-linux", "ld64", "linux-vdso", "linux-gate",
        "libstdc++", "libgcc_s", "libc++", "libswiftCore", "libswift_", "libswiftDispatch", "libswiftGlibc", "libFoundation",
        "libdispatch", "libBlocksRuntime", "libicu", "libz.so", "libsystem_", "libdyld", "libobjc",
    ]

    /// Libraries of the system and the language runtimes, whose frames are never the app's own.
    public static func isSystemModule(name: String, path: String?) -> Bool {
        if let path, path.hasPrefix("/lib/") || path.hasPrefix("/lib64/") || path.hasPrefix("/usr/lib")
            || path.hasPrefix("/usr/libexec") || path.hasPrefix("/System/") || path.contains("/usr/lib/swift/")
        {
            return true
        }
        let base = baseName(ofPath: name)
        return systemModulePrefixes.contains { base.hasPrefix($0) }
    }

    /// Functions of the standard libraries, recognised by name when no module says where a frame is.
    static func isSystemFunction(_ label: String) -> Bool {
        label.hasPrefix("Swift.") || label.hasPrefix("std::") || label.hasPrefix("__libc_") || label.hasPrefix("__GI_")
            || label == "_start" || label.hasPrefix("start_thread") || label.hasPrefix("clone") || label.hasPrefix("__clone")
    }

    static func baseName(ofPath path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
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

    static func makeTitle(_ report: Report, frames: [NormalizedFrame], top: NormalizedFrame?) -> String {
        let type = report.error?.type.flatMap(nonEmpty)
        let message = report.error?.message.flatMap(nonEmpty).map { String($0.prefix(200)) }
        // A Swift trap names itself in an inline frame: "Swift runtime failure: Index out of range".
        let runtimeMessage = frames.first { $0.label.hasPrefix("Swift runtime failure: ") }?.label
        switch (type, message) {
        case let (type?, message?): return "\(type): \(message)"
        case let (type?, nil): return runtimeMessage.map { "\(type): \($0)" } ?? type
        case let (nil, message?): return runtimeMessage ?? message
        case (nil, nil):
            if let runtimeMessage { return runtimeMessage }
            let what = report.kind == .crash ? "Crash" : "Error"
            return top.map { "\(what) in \($0.label)" } ?? what
        }
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
