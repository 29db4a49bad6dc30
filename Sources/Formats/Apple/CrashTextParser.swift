import FaultlineCore

/// Reads a classic `.crash` text report (Xcode Organizer, TestFlight, devices before iOS 15, what Console shows
/// for an `.ips`), as Apple's "Examining the fields in a crash report" lays it out:
///
///     Incident Identifier: 6156848E-344E-4D9E-84E0-87AFD0D0AE7B
///     CrashReporter Key:   76f2fb60060d6a7f814973377cbdc866fffd521f
///     Hardware Model:      iPhone8,1
///     Process:             TouchCanvas [1052]
///     Identifier:          com.example.apple-samplecode.TouchCanvas
///     Version:             1 (3.0)
///     Code Type:           ARM-64 (Native)
///     Date/Time:           2020-03-27 18:06:51.4969 -0700
///     OS Version:          iPhone OS 13.3.1 (17D50)
///     Exception Type:  EXC_BAD_ACCESS (SIGSEGV)
///     Exception Subtype: KERN_INVALID_ADDRESS at 0x0000000000000000
///     Triggered by Thread:  0
///
///     Thread 0 name:  Dispatch queue: com.apple.main-thread
///     Thread 0 Crashed:
///     0   TouchCanvas     0x0000000102afb3d0 0x102af4000 + 29648
///     1   TouchCanvas     0x0000000102afb3d0 main + 40 (main.m:12)
///
///     Thread 0 crashed with ARM Thread State (64-bit):
///         x0: 0x0000000000000001   x1: 0x0000000000000000 …
///
///     Binary Images:
///     0x102af4000 - 0x102b03fff TouchCanvas arm64  <fe7a9b7d0a5e3b0e8e0b6b0f3c3e8c4d> /private/var/…/TouchCanvas
///
/// also macOS's spelling (`Crashed Thread:`, `Thread 0 Crashed:: Dispatch queue: …`, `+com.example.App (1.0 - 1)
/// <UUID> /path` images) and a `Last Exception Backtrace:` as frame lines or as `(0x1 0x2 …)`. A line in a thread,
/// register or image section that does not read as one is refused with its line number; unknown header lines are
/// skipped. `Version:` is `CFBundleVersion (CFBundleShortVersionString)` on iOS and the other way round on macOS.
enum CrashTextParser {
    enum Section { case header, applicationSpecific, thread(Int), registers(Int), images, lastException, other }

    /// - Parameter firstLine: the number of the first line (an old `.ips` has a JSON header line before the text).
    static func parse(_ bytes: [UInt8], firstLine: Int = 1) throws -> AppleCrash {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw FormatError(.malformedJSON, "the report is neither JSON (.ips) nor UTF-8 text (.crash)")
        }
        var crash = AppleCrash()
        var threads: [Int: AppleCrash.Thread] = [:]
        var triggeredBy: Int?
        var version: String?
        var section = Section.header
        var sawThreadSection = false
        var lineNumber = firstLine - 1
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            func fail(_ message: String) -> FormatError {
                FormatError(.invalidField, message, field: "line \(lineNumber)")
            }
            if trimmed.isEmpty {
                section = .header
                continue
            }
            if trimmed.hasPrefix("Thread "), let (number, rest) = threadNumber(trimmed) {
                let lower = rest.lowercased()
                if lower.hasPrefix("name:") {
                    let name = rest.dropFirst("name:".count).trimmingCharacters(in: .whitespaces)
                    threads[number, default: AppleCrash.Thread()].name = Self.queueName(name)
                    section = .other
                    continue
                }
                if lower.hasPrefix("crashed with") || lower.contains("thread state") {
                    section = .registers(number)
                    continue
                }
                if lower.hasPrefix("crashed:") || rest.hasPrefix(":") {
                    var thread = threads[number, default: AppleCrash.Thread()]
                    if lower.hasPrefix("crashed:") { thread.triggered = true }
                    // macOS: `Thread 0 Crashed:: Dispatch queue: com.apple.main-thread`, `Thread 1:: com.apple.foo`.
                    let after = rest.drop { $0 != ":" }.drop { $0 == ":" }.trimmingCharacters(in: .whitespaces)
                    if !after.isEmpty, thread.name == nil { thread.name = Self.queueName(after) }
                    if threads[number] == nil, threads.count >= 4096 { throw fail("more than 4096 threads") }
                    threads[number] = thread
                    sawThreadSection = true
                    section = .thread(number)
                    continue
                }
            }
            if trimmed == "Binary Images:" {
                section = .images
                continue
            }
            if trimmed == "Last Exception Backtrace:" {
                section = .lastException
                continue
            }
            switch section {
            case .thread(let number):
                guard let frame = try Self.frame(line, origin: "line \(lineNumber)") else {
                    throw fail(
                        "a frame must read `N  Image  0xADDRESS 0xBASE + OFFSET` or `N  Image  0xADDRESS symbol + N`")
                }
                threads[number, default: AppleCrash.Thread()].frames.append(frame)
                continue
            case .lastException:
                if trimmed.hasPrefix("(") {
                    // The old spelling: `(0x1883aa59c 0x198af40e4 …)`, absolute return addresses.
                    for token in trimmed.dropFirst().split(whereSeparator: { $0 == " " || $0 == ")" }) {
                        guard let address = AppleText.hex(token) else {
                            throw fail("`\(token.prefix(40))` is not a hex address")
                        }
                        crash.lastExceptionBacktrace.append(
                            AppleCrash.Frame(address: address, origin: "line \(lineNumber)"))
                    }
                } else {
                    guard let frame = try Self.frame(line, origin: "line \(lineNumber)") else {
                        throw fail("a Last Exception Backtrace frame must read `N  Image  0xADDRESS …`")
                    }
                    crash.lastExceptionBacktrace.append(frame)
                }
                continue
            case .registers(let number):
                let registers = Self.registers(trimmed)
                guard !registers.isEmpty else { throw fail("expected registers such as `x0: 0x0000000000000001`") }
                let kept = threads[number]?.registers.count ?? 0
                threads[number, default: AppleCrash.Thread()].registers += registers.prefix(
                    max(0, AppleCrash.maxRegisters - kept))
                continue
            case .images:
                guard trimmed.hasPrefix("0x") else {
                    section = .other  // `EOF`, `External Modification Summary:`…
                    continue
                }
                crash.images.append(try Self.image(trimmed, fail: fail))
                continue
            case .applicationSpecific:
                if !trimmed.contains(":") || !isHeaderKey(trimmed) {
                    crash.applicationSpecific.append(String(trimmed))
                    continue
                }
                section = .header
            case .header, .other:
                break
            }
            guard let colon = trimmed.firstIndex(of: ":") else { continue }
            let key = trimmed[..<colon].trimmingCharacters(in: .whitespaces)
            let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            let text: String? = value.isEmpty ? nil : value
            switch key {
            case "Incident Identifier": crash.incident = text
            case "CrashReporter Key": crash.crashReporterKey = text
            case "Hardware Model": crash.model = text
            case "Process": crash.process = text.map(Self.withoutPID)
            case "Path": crash.processPath = text
            case "Identifier": crash.bundleID = text
            case "Version": version = text
            case "Code Type": crash.codeType = text
            case "OS Version": crash.osTrain = text
            case "Date/Time":
                guard let text else { throw fail("Date/Time is empty") }
                guard let date = AppleText.date(text) else {
                    throw fail("Date/Time must read like `2020-03-27 18:06:51.4969 -0700`")
                }
                crash.timestamp = date
            case "Exception Type":
                // `EXC_BAD_ACCESS (SIGSEGV)`.
                if let text, let open = text.firstIndex(of: "("), text.hasSuffix(")") {
                    crash.exceptionType = text[..<open].trimmingCharacters(in: .whitespaces)
                    crash.exceptionSignal = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
                } else {
                    crash.exceptionType = text
                }
            case "Exception Subtype": crash.exceptionSubtype = text
            case "Exception Codes": crash.exceptionCodes = text
            case "Exception Message", "Exception Reason": crash.exceptionMessage = text
            case "Termination Reason": crash.termination = text
            case "Termination Description":
                if let text { crash.termination = [crash.termination, text].compactMap { $0 }.joined(separator: " ") }
            case "Triggered by Thread", "Crashed Thread":
                guard let first = text?.split(separator: " ").first, let n = Int(first), n >= 0 else {
                    throw fail("\(key) must be a thread number")
                }
                triggeredBy = n
            case "Application Specific Information":
                if let text { crash.applicationSpecific.append(text) }
                section = .applicationSpecific
            default:
                break
            }
        }
        guard sawThreadSection else {
            throw FormatError(
                .invalidField, "not an Apple crash report (.ips JSON or .crash text): no `Thread N Crashed:` section",
                field: "threads")
        }
        // Old reports put the subtype in the codes: `Exception Codes: KERN_INVALID_ADDRESS at 0x0000000000000010`.
        if crash.exceptionSubtype == nil, let codes = crash.exceptionCodes, codes.contains(" at 0x") {
            crash.exceptionSubtype = codes
        }
        if let version {
            let (first, second) = Self.versionParts(version)
            let macOS =
                crash.osTrain.map { $0.hasPrefix("macOS") || $0.hasPrefix("Mac OS") || $0.hasPrefix("OS X") } ?? false
            if macOS {
                crash.appVersion = first
                crash.appBuild = second
            } else if let second {
                crash.appBuild = first
                crash.appVersion = second
            } else {
                crash.appVersion = first
            }
        }
        crash.threads = threads.keys.sorted().map { number in
            var thread = threads[number]!
            if number == triggeredBy { thread.triggered = true }
            return thread
        }
        return crash
    }

    /// `Thread 12 Crashed:` → (12, `Crashed:`); nil when no number follows `Thread `.
    static func threadNumber(_ line: String) -> (Int, Substring)? {
        let rest = line.dropFirst("Thread ".count)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard (1...6).contains(digits.count), let n = Int(digits) else { return nil }
        let after = rest.dropFirst(digits.count)
        guard after.first == " " || after.first == ":" else { return nil }
        return (n, after.drop { $0 == " " })
    }

    /// `Dispatch queue: com.apple.main-thread` → `com.apple.main-thread`.
    static func queueName(_ text: String) -> String {
        text.hasPrefix("Dispatch queue:")
            ? text.dropFirst("Dispatch queue:".count).trimmingCharacters(in: .whitespaces) : text
    }

    /// `TouchCanvas [1052]` → `TouchCanvas`.
    static func withoutPID(_ text: String) -> String {
        guard text.hasSuffix("]"), let open = text.lastIndex(of: "[") else { return text }
        return text[..<open].trimmingCharacters(in: .whitespaces)
    }

    /// `1 (3.0)` → (`1`, `3.0`); `3.0` → (`3.0`, nil).
    static func versionParts(_ text: String) -> (String, String?) {
        guard text.hasSuffix(")"), let open = text.firstIndex(of: "(") else { return (text, nil) }
        let first = text[..<open].trimmingCharacters(in: .whitespaces)
        let second = text[text.index(after: open)..<text.index(before: text.endIndex)].trimmingCharacters(
            in: .whitespaces)
        return (first, second.isEmpty ? nil : second)
    }

    /// A line of the Application Specific Information that is another header field instead (the section ended).
    static func isHeaderKey(_ line: String) -> Bool {
        let key = line.prefix { $0 != ":" }
        return [
            "Triggered by Thread", "Crashed Thread", "Termination Reason", "Exception Type", "Exception Codes",
            "Kernel Triage", "Highlighted by Thread", "Backtrace not available",
        ].contains(String(key))
    }

    /// The parts of a frame line: its number, image name, address and what follows the address.
    struct FrameLine {
        var address: UInt64
        var module: String
        /// Where the text after the address starts in the line.
        var tail: Substring
    }

    /// `0   TouchCanvas   0x0000000102afb3d0 …` → its parts; nil when the line is not one.
    static func frameLine(_ line: Substring) -> FrameLine? {
        var rest = line[...]
        func token() -> Substring? {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard !rest.isEmpty else { return nil }
            let t = rest.prefix { $0 != " " && $0 != "\t" }
            rest = rest.dropFirst(t.count)
            return t
        }
        guard let number = token(), (1...6).contains(number.count), number.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        var module: [Substring] = []
        while let t = token() {
            if !module.isEmpty, t.hasPrefix("0x"), let address = AppleText.hex(t) {
                return FrameLine(
                    address: address, module: module.joined(separator: " "), tail: rest.drop { $0 == " " || $0 == "\t" }
                )
            }
            guard module.count < 64 else { return nil }
            module.append(t)
        }
        return nil
    }

    /// A frame line's frame: the address, the image, and what symbol, file and line it already names.
    static func frame(_ line: Substring, origin: String) throws -> AppleCrash.Frame? {
        guard let parts = frameLine(line) else { return nil }
        var frame = AppleCrash.Frame(address: parts.address, module: parts.module, origin: origin)
        var tail = parts.tail.trimmingCharacters(in: .whitespaces)[...]
        if tail.hasSuffix(" [inlined]") {
            frame.inlined = true
            tail = tail.dropLast(" [inlined]".count)
        }
        if tail.isEmpty || Self.isBasePlusOffset(tail) { return frame }
        // `main + 40 (main.m:12)`, `foo() (in App) (main.swift:5)`, `-[Foo bar:] + 12`.
        if tail.hasSuffix(")"), let open = tail.range(of: " (", options: .backwards) {
            let inside = tail[open.upperBound..<tail.index(before: tail.endIndex)]
            if let colon = inside.firstIndex(of: ":") {
                let lineText = inside[inside.index(after: colon)...].prefix { $0.isASCII && $0.isNumber }
                if let number = Int(lineText), !lineText.isEmpty, lineText.count <= 9 {
                    frame.file = String(inside[..<colon])
                    frame.line = number
                    tail = tail[..<open.lowerBound]
                }
            }
        }
        if tail.hasSuffix(")"), let open = tail.range(of: " (in ", options: .backwards) {
            tail = tail[..<open.lowerBound]
        }
        if let plus = tail.range(of: " + ", options: .backwards), AppleText.decimal(tail[plus.upperBound...]) != nil {
            tail = tail[..<plus.lowerBound]
        }
        let symbol = tail.trimmingCharacters(in: .whitespaces)
        frame.symbol = symbol.isEmpty ? nil : symbol
        return frame
    }

    /// `0x102af4000 + 29648`, `0x0 + 7021039829`, `0 + 0`: an address without a symbol.
    static func isBasePlusOffset(_ text: Substring) -> Bool {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[1] == "+", AppleText.decimal(parts[2]) != nil else { return false }
        return parts[0].hasPrefix("0x") ? AppleText.hex(parts[0]) != nil : AppleText.decimal(parts[0]) != nil
    }

    /// `x0: 0x0000000000000001   x1: 0x…` (and `esr: 0x92000006  Address size fault`: words after a value are
    /// skipped).
    static func registers(_ line: String) -> [Register] {
        var out: [Register] = []
        let tokens = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        var i = 0
        while i + 1 < tokens.count {
            if tokens[i].hasSuffix(":"), tokens[i].count > 1, tokens[i].count <= 16,
                let value = AppleText.hex(tokens[i + 1])
            {
                out.append(Register(name: String(tokens[i].dropLast()), value: value))
                i += 2
            } else {
                i += 1
            }
        }
        return out
    }

    /// `0x102af4000 - 0x102b03fff TouchCanvas arm64  <fe7a…> /path` or macOS's `0x10a5c4000 - 0x10a5c7fff
    /// +com.example.App (1.0 - 1) <4C4C4473-…> /path`.
    static func image(_ line: String, fail: (String) -> FormatError) throws -> AppleCrash.Image {
        let shape = "a binary image must read `0xSTART - 0xEND name arch <uuid> /path`"
        let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
        guard parts.count == 4, parts[1] == "-", let start = AppleText.hex(parts[0]), let end = AppleText.hex(parts[2])
        else {
            throw fail(shape)
        }
        guard end >= start else {
            throw fail("the image ends (0x\(String(end, radix: 16))) before it starts (0x\(String(start, radix: 16)))")
        }
        let rest = parts[3]
        guard let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") else {
            throw fail(shape)
        }
        let uuidText = rest[rest.index(after: open)..<close]
        let uuid = try AppleText.uuid(
            uuidText.filter { $0 != "-" && $0 != " " }, invalid: fail("the image's UUID must be 32 hex digits"))
        var words = rest[..<open].split(whereSeparator: { $0 == " " || $0 == "\t" })
        var arch: String?
        if let paren = words.firstIndex(where: { $0.hasPrefix("(") }) {
            words = Array(words[..<paren])  // macOS: `(1.0 - 1)` is the bundle's version
        } else if words.count > 1, let last = words.last, Self.architectures.contains(String(last)) {
            arch = String(last)
            words.removeLast()
        }
        var name = words.joined(separator: " ")
        if name.hasPrefix("+") { name.removeFirst() }  // macOS marks images outside the system with `+`
        let path = rest[rest.index(after: close)...].trimmingCharacters(in: .whitespaces)
        let (size, overflow) = (end - start).addingReportingOverflow(1)
        return AppleCrash.Image(
            name: name.isEmpty || name == "???" ? nil : name, path: path.isEmpty || path == "???" ? nil : path,
            base: start,
            size: overflow ? nil : size, uuid: uuid, arch: arch)
    }

    static let architectures: Set<String> = [
        "arm64", "arm64e", "arm64_32", "x86_64", "x86_64h", "i386", "armv7", "armv7s", "armv7k",
    ]
}
