/// A Mach exception, as Apple platforms raise a crash: the exception (`EXC_BAD_ACCESS`), its code (a
/// `kern_return_t` such as `KERN_INVALID_ADDRESS` for a bad access) and subcode (the address), and the BSD signal
/// it became (`SIGSEGV`). Sentry's Cocoa SDK sends it as `mechanism.meta.mach_exception` + `meta.signal`; Apple's
/// own crash reports as "Exception Type" / "Exception Subtype".
///
/// Titles are written as Apple and Crashlytics write them: `EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x…`,
/// `EXC_CRASH (SIGABRT)`, `EXC_BREAKPOINT (SIGTRAP)` (what a Swift trap raises on arm64). Pure: no input traps.
public struct MachException: Sendable, Equatable {
    /// The exception number (`exception_type_t`: 1 = `EXC_BAD_ACCESS`, 6 = `EXC_BREAKPOINT`, 10 = `EXC_CRASH`).
    public var exception: Int64?
    /// The exception's name as the client sent it.
    public var name: String?
    /// The first code: for `EXC_BAD_ACCESS` a `kern_return_t` (1 = `KERN_INVALID_ADDRESS`).
    public var code: Int64?
    /// The second code: for `EXC_BAD_ACCESS` the address that could not be accessed.
    public var subcode: UInt64?
    /// The signal the exception became (`SIGSEGV`), by name.
    public var signal: String?

    public init(
        exception: Int64? = nil, name: String? = nil, code: Int64? = nil, subcode: UInt64? = nil, signal: String? = nil
    ) {
        self.exception = exception
        self.name = name
        self.code = code
        self.subcode = subcode
        self.signal = signal
    }

    /// `exception_type_t` values (`<mach/exception_types.h>`).
    static let exceptionNames: [Int64: String] = [
        1: "EXC_BAD_ACCESS", 2: "EXC_BAD_INSTRUCTION", 3: "EXC_ARITHMETIC", 4: "EXC_EMULATION", 5: "EXC_SOFTWARE",
        6: "EXC_BREAKPOINT", 7: "EXC_SYSCALL", 8: "EXC_MACH_SYSCALL", 9: "EXC_RPC_ALERT", 10: "EXC_CRASH",
        11: "EXC_RESOURCE", 12: "EXC_GUARD", 13: "EXC_CORPSE_NOTIFY",
    ]

    /// The signal each exception usually becomes, for clients that send no signal.
    static let usualSignals: [String: String] = [
        "EXC_BAD_ACCESS": "SIGSEGV", "EXC_BAD_INSTRUCTION": "SIGILL", "EXC_ARITHMETIC": "SIGFPE",
        "EXC_BREAKPOINT": "SIGTRAP", "EXC_CRASH": "SIGABRT", "EXC_GUARD": "SIGKILL",
    ]

    /// `kern_return_t` values a bad access reports (`<mach/kern_return.h>`), and arm's alignment/debug codes.
    static let accessCodes: [Int64: String] = [
        1: "KERN_INVALID_ADDRESS", 2: "KERN_PROTECTION_FAILURE", 9: "KERN_MEMORY_FAILURE", 10: "KERN_MEMORY_ERROR",
        50: "KERN_CODESIGN_ERROR", 0x101: "EXC_ARM_DA_ALIGN", 0x102: "EXC_ARM_DA_DEBUG",
    ]

    /// `EXC_BAD_ACCESS`…: the name sent when it is one, else the number's name; nil when neither says.
    public var exceptionName: String? {
        if let name = name?.trimmingSpaces, name.hasPrefix("EXC_"), name.count <= 40 { return name }
        if let exception, let known = Self.exceptionNames[exception] { return known }
        return nil
    }

    /// `KERN_INVALID_ADDRESS`…: the code's name for a bad access (x86-64's general protection fault, code 13, is
    /// `EXC_I386_GPFLT`); nil for other exceptions or unknown codes.
    public func codeName(arch: String? = nil) -> String? {
        guard exceptionName == "EXC_BAD_ACCESS", let code else { return nil }
        if code == 13, let arch, arch.hasPrefix("x86") || arch.hasPrefix("i386") { return "EXC_I386_GPFLT" }
        return Self.accessCodes[code]
    }

    /// The signal by name: the one sent, else the one the exception usually becomes.
    public var signalName: String? {
        if let signal = signal?.trimmingSpaces, signal.hasPrefix("SIG"), signal.count <= 10 { return signal }
        return exceptionName.flatMap { Self.usualSignals[$0] }
    }

    /// The title of a crash raised by this exception: `EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000008`,
    /// `EXC_CRASH (SIGABRT)`, `EXC_BREAKPOINT (SIGTRAP)`; nil when the exception has no name.
    ///
    /// - Parameters:
    ///   - faultAddress: the address a bad access touched, when the client reported it apart (else the subcode).
    ///   - arch: the crashed process's architecture (names x86-64's protection fault).
    public func title(faultAddress: UInt64? = nil, arch: String? = nil) -> String? {
        guard let name = exceptionName else { return nil }
        guard name == "EXC_BAD_ACCESS" else { return signalName.map { "\(name) (\($0))" } ?? name }
        let reason = codeName(arch: arch) ?? signalName
        var title = reason.map { "\(name) (\($0))" } ?? name
        // The subcode is the address only when the code is a known access failure.
        if let address = faultAddress ?? (codeName(arch: arch) != nil ? subcode : nil) {
            title += " at " + Self.hex16(address)
        }
        return title
    }

    /// `0x` and 16 hex digits, as Apple's reports write addresses.
    static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// Whether `value` is the placeholder text SDKs write for a bare Mach exception or signal, which says nothing
    /// the exception does not: Sentry Cocoa's `Exception 1, Code 1, Subcode 8` and `Signal 11, Code 0`.
    public static func isPlaceholderValue(_ value: String) -> Bool {
        let words = value.trimmingSpaces.split(whereSeparator: { $0 == " " || $0 == "," })
        func isNumber(_ word: Substring) -> Bool {
            let digits = word.hasPrefix("-") ? word.dropFirst() : word
            return !digits.isEmpty && digits.count <= 20 && digits.allSatisfy(\.isNumber)
        }
        switch words.count {
        case 6:  // Exception N Code N Subcode N
            return words[0] == "Exception" && words[2] == "Code" && words[4] == "Subcode"
                && [1, 3, 5].allSatisfy { isNumber(words[$0]) }
        case 4:  // Signal N Code N
            return words[0] == "Signal" && words[2] == "Code" && isNumber(words[1]) && isNumber(words[3])
        default:
            return false
        }
    }
}
