import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an Apple crash report says, in the terms both of its spellings share: the `.ips` JSON
/// (`IPSCrashParser`) and the classic `.crash` text (`CrashTextParser`) each fill one, and
/// `report(eventID:)` makes the one `Report` every other route makes.
///
/// Addresses: an `.ips` frame is an `imageOffset` into `usedImages[imageIndex]`, a `.crash` frame an absolute
/// address; both become absolute addresses (image base + offset, overflow refused), so that the symbolicator
/// receives `address − image base` as it does for every other format. Image UUIDs become `BuildID`s as written
/// (hyphens dropped, lower case, never byte-swapped: the Mach-O `LC_UUID` order).
struct AppleCrash {
    /// Registers kept per thread (arm64 has 34 with `far` and `esr`; more is not a thread state).
    static let maxRegisters = 64

    struct Image {
        var name: String?
        var path: String?
        var base: UInt64
        var size: UInt64?
        var uuid: BuildID?
        var arch: String?
    }

    struct Frame {
        /// The absolute address (`.crash`), or nil when the frame is `imageOffset` into `imageIndex` (`.ips`).
        var address: UInt64?
        var imageIndex: Int?
        var imageOffset: UInt64?
        var module: String?
        /// What the report already names (kept only until a dSYM resolves the frame).
        var symbol: String?
        var file: String?
        var line: Int?
        /// Where the frame is in the file, for errors: `threads[1].frames[3]` or `line 42`.
        var origin: String
        /// A frame a symbolicated report lists for a function inlined at the next frame's address (`"inline": true`,
        /// `… [inlined]`): not a frame of the stack, so it is left out (a dSYM gives the whole inline chain again).
        var inlined = false
    }

    struct Thread {
        var name: String?
        var queue: String?
        var triggered = false
        var frames: [Frame] = []
        var registers: [Register] = []
    }

    var incident: String?
    var timestamp: Date?
    var process: String?
    var processPath: String?
    var bundleID: String?
    var appVersion: String?
    var appBuild: String?
    /// `iPhone OS 17.2 (21C62)`, `macOS 14.2 (23C64)` as written; see `operatingSystem`.
    var osTrain: String?
    var osBuild: String?
    var model: String?
    var codeType: String?
    var crashReporterKey: String?
    var exceptionType: String?
    var exceptionSignal: String?
    var exceptionSubtype: String?
    var exceptionCodes: String?
    var exceptionMessage: String?
    /// An `.ips`'s `exceptionReason` (iOS 16+): the uncaught exception's name (`NSInvalidArgumentException`) and its
    /// composed message (`-[NSNull length]: unrecognized selector sent to instance 0x206db76c0`).
    var exceptionReasonName: String?
    var exceptionReasonMessage: String?
    var termination: String?
    /// "Application Specific Information": `abort() called`, an uncaught exception's reason, a Swift fatal error.
    var applicationSpecific: [String] = []
    var faultingThread: Int?
    var threads: [Thread] = []
    var lastExceptionBacktrace: [Frame] = []
    var images: [Image] = []

    /// The report: threads (a last exception backtrace first, as the crashed stack), modules, exception,
    /// device and app. The event id is the caller's (the incident id, or a hash of the file).
    func report(eventID: EventID) throws -> Report {
        guard let timestamp else {
            throw FormatError(.invalidField, "the report has no date (captureTime / Date/Time)", field: "timestamp")
        }
        var threads: [ThreadInfo] = []
        if !lastExceptionBacktrace.isEmpty {
            // The frames that threw: every one a return address (the exception's `callStackReturnAddresses`).
            threads.append(
                ThreadInfo(
                    name: "Last Exception Backtrace", crashed: true,
                    frames: try lastExceptionBacktrace.filter { !$0.inlined }.map {
                        try frame($0, kind: .returnAddress)
                    }))
        }
        for (index, thread) in self.threads.enumerated() {
            var frames: [FaultlineCore.Frame] = []
            frames.reserveCapacity(thread.frames.count)
            for (position, f) in thread.frames.filter({ !$0.inlined }).enumerated() {
                frames.append(try frame(f, kind: position == 0 ? .programCounter : .returnAddress))
            }
            let crashed = thread.triggered || faultingThread == index
            threads.append(
                ThreadInfo(
                    name: thread.name ?? thread.queue, crashed: crashed, frames: frames, registers: thread.registers))
        }
        guard threads.contains(where: { !$0.frames.isEmpty }) else {
            throw FormatError(.invalidField, "the report has no thread with frames", field: "threads")
        }
        // The `.ips`'s absolute image (`"source": "A"`, base 0, no UUID, name or path) only lets frames outside every
        // image say their address; it is not a module.
        let modules = images.filter { $0.uuid != nil || $0.name != nil || $0.path != nil }.map { image in
            LoadedModule(
                name: image.name ?? image.path.map(Self.lastComponent) ?? "?", path: image.path, buildID: image.uuid,
                baseAddress: image.base, size: image.size.flatMap { $0 == 0 ? nil : $0 }, format: .macho,
                arch: image.arch)
        }
        let os = Self.operatingSystem(osTrain)
        let device = DeviceInfo(
            model: model, os: os.name, osVersion: os.version, arch: architecture, osBuild: osBuild ?? os.build,
            simulator: simulator)
        var customKeys: [(key: String, value: CustomValue)] = []
        if let exceptionCodes { customKeys.append(("exception_codes", .string(exceptionCodes))) }
        if let exceptionSubtype { customKeys.append(("exception_subtype", .string(exceptionSubtype))) }
        if let termination { customKeys.append(("termination_reason", .string(termination))) }
        let asi = applicationSpecific.joined(separator: "\n")
        return Report(
            eventID: eventID, kind: .crash, timestamp: timestamp, installID: crashReporterKey,
            app: AppInfo(
                id: bundleID, version: appVersion, build: appBuild, displayVersion: appVersion, displayBuild: appBuild),
            device: device, error: error,
            threads: threads, modules: modules, customKeys: customKeys, faultAddress: faultAddress,
            crashMessage: asi.isEmpty ? nil : asi)
    }

    /// The exception as an error: the Mach exception (`EXC_BAD_ACCESS`, its codes, `SIGSEGV`), from which titles
    /// are written as Apple and Crashlytics write them (`MachException.title`: `EXC_BAD_ACCESS (KERN_INVALID_ADDRESS)
    /// at 0x0000000000000010`). An uncaught Objective-C exception named in the Application Specific Information
    /// (`*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '…'`) is the error's
    /// type and message instead, as it is what the app did wrong. Otherwise the message is an exception message
    /// (`EXC_GUARD`) or a termination reason outside the SIGNAL namespace (`FRONTBOARD 0x8badf00d`, a watchdog).
    var error: ErrorInfo? {
        guard exceptionType != nil || exceptionSignal != nil else { return nil }
        let codes = (exceptionCodes ?? "").split(separator: ",").map {
            AppleText.hex($0.trimmingCharacters(in: .whitespaces))
        }
        let mach = MachException(
            name: exceptionType, code: codes.first.flatMap { $0 }.map { Int64(bitPattern: $0) },
            subcode: codes.count > 1 ? codes[1] : nil, signal: exceptionSignal)
        if let (name, reason) = uncaughtException {
            return ErrorInfo(type: name, code: exceptionSignal, message: reason, mach: mach)
        }
        var message = exceptionMessage
        if message == nil, let termination, !termination.hasPrefix("SIGNAL"), !termination.hasPrefix("Namespace SIGNAL")
        {
            message = termination
        }
        return ErrorInfo(
            type: exceptionType ?? exceptionSignal, code: exceptionType == nil ? nil : exceptionSignal,
            message: message, mach: mach)
    }

    /// `*** Terminating app due to uncaught exception 'NSRangeException', reason: '*** -[__NSArrayI
    /// objectAtIndex:]: …'`
    /// → (`NSRangeException`, its reason).
    var uncaughtException: (String, String?)? {
        if let name = exceptionReasonName, !name.isEmpty { return (name, exceptionReasonMessage) }
        let marker = "Terminating app due to uncaught exception '"
        for line in applicationSpecific {
            guard let start = line.range(of: marker) else { continue }
            let rest = line[start.upperBound...]
            guard let close = rest.firstIndex(of: "'") else { continue }
            let name = String(rest[..<close])
            guard !name.isEmpty else { continue }
            var reason: String?
            if let r = rest.range(of: "reason: '") {
                let text = rest[r.upperBound...]
                reason = String(text.hasSuffix("'") ? text.dropLast() : text)
            }
            return (name, reason)
        }
        return nil
    }

    /// Whether the app ran in the iOS simulator (its path is under CoreSimulator) or on a device (its bundle is in
    /// the device's containers); nil when the path does not say.
    var simulator: Bool? {
        guard let path = processPath ?? images.first?.path else { return nil }
        if path.contains("/CoreSimulator/Devices/") { return true }
        if path.hasPrefix("/private/var/containers/Bundle/") || path.hasPrefix("/var/containers/Bundle/") {
            return false
        }
        return nil
    }

    /// The address in `KERN_INVALID_ADDRESS at 0x0000000000000010` (also `KERN_PROTECTION_FAILURE at …`).
    var faultAddress: UInt64? {
        guard let subtype = exceptionSubtype, let at = subtype.range(of: " at 0x") else { return nil }
        let digits = subtype[at.upperBound...].prefix { $0.isHexDigit }
        return AppleText.hex(digits)
    }

    /// The crashed process's architecture: its own image's (`arm64e`), else the report's code type.
    var architecture: String? {
        if let main = images.first(where: { $0.path != nil && $0.path == processPath }) ?? images.first,
            let arch = main.arch
        {
            return arch
        }
        guard let codeType else { return nil }
        let bare = codeType.split(separator: " ").first.map(String.init) ?? codeType
        switch bare.uppercased() {
        case "ARM-64", "ARM64": return "arm64"
        case "ARM-64E", "ARM64E": return "arm64e"
        case "X86-64", "X86_64": return "x86_64"
        case "ARM": return "arm"
        case "X86", "I386": return "x86"
        default: return bare
        }
    }

    /// A frame of the report as an absolute address.
    func frame(_ f: Frame, kind: InstructionKind) throws -> FaultlineCore.Frame {
        var module = f.module
        let address: UInt64
        if let absolute = f.address {
            address = absolute
        } else {
            guard let index = f.imageIndex, let offset = f.imageOffset else {
                throw FormatError(.invalidField, "a frame needs imageIndex and imageOffset", field: f.origin)
            }
            guard images.indices.contains(index) else {
                throw FormatError(
                    .invalidField, "imageIndex \(index) is not an image of usedImages (\(images.count) of them)",
                    field: f.origin)
            }
            let image = images[index]
            let (sum, overflow) = image.base.addingReportingOverflow(offset)
            guard !overflow else {
                throw FormatError(.invalidField, "image base + imageOffset is past 2^64", field: f.origin)
            }
            address = sum
            module = module ?? image.name ?? image.path.map(Self.lastComponent)
        }
        return FaultlineCore.Frame(
            address: address, instructionKind: kind, module: module, function: f.symbol, file: f.file, line: f.line)
    }

    /// `iPhone OS 17.2 (21C62)` → (`iOS`, `17.2`, `21C62`); `macOS 14.2.1 (23C71)`, `Mac OS X 10.15.7 (19H2)` →
    /// `macOS`.
    static func operatingSystem(_ train: String?) -> (name: String?, version: String?, build: String?) {
        guard var text = train.map({ $0.trimmingCharacters(in: .whitespaces) }), !text.isEmpty else {
            return (nil, nil, nil)
        }
        var build: String?
        if text.hasSuffix(")"), let open = text.lastIndex(of: "(") {
            build = String(text[text.index(after: open)..<text.index(before: text.endIndex)]).trimmingCharacters(
                in: .whitespaces)
            text = String(text[..<open]).trimmingCharacters(in: .whitespaces)
        }
        var name = text
        var version: String?
        if let space = text.lastIndex(of: " "), text[text.index(after: space)...].first?.isNumber == true {
            name = String(text[..<space]).trimmingCharacters(in: .whitespaces)
            version = String(text[text.index(after: space)...])
        }
        switch name.lowercased() {
        case "iphone os", "ios": name = "iOS"
        case "ipados": name = "iPadOS"
        case "macos", "mac os x", "os x": name = "macOS"
        case "watch os", "watchos": name = "watchOS"
        case "apple tvos", "tvos": name = "tvOS"
        case "xros", "visionos": name = "visionOS"
        default: break
        }
        return (name.isEmpty ? nil : name, version, build.flatMap { $0.isEmpty ? nil : $0 })
    }

    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

/// Small readers both spellings need.
enum AppleText {
    /// At most 16 hex digits (an optional `0x` first) as a number; nil otherwise.
    static func hex(_ text: some StringProtocol) -> UInt64? {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard (1...16).contains(digits.utf8.count) else { return nil }
        return UInt64(digits, radix: 16)
    }

    /// A non-negative decimal that fits 64 bits; nil otherwise.
    static func decimal(_ text: some StringProtocol) -> UInt64? {
        guard (1...20).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return UInt64(text)
    }

    /// A Mach-O UUID as written in a report, its hyphens (and a text report's spaces) already dropped → its
    /// BuildID (`AppleUUID.buildID`: lower case, in the order written); nil for the all-zero UUID (no UUID).
    /// - Throws: `invalid` unless `digits` is exactly 32 hex digits.
    static func uuid(_ digits: some StringProtocol, invalid: @autoclosure () -> FormatError) throws -> BuildID? {
        guard digits.utf8.count == 32, let id = AppleUUID.buildID(String(digits)) else { throw invalid() }
        return id.rawValue.utf8.allSatisfy { $0 == UInt8(ascii: "0") } ? nil : id
    }

    /// Apple's report dates: `2023-01-12 10:33:51.3486 -0800` (also with `T`, or ISO 8601 as is).
    static func date(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = Timestamps.parseISO8601(trimmed) { return date }
        // "<date> <time> <±hhmm>": the zone goes right after the time.
        let parts = trimmed.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, let sign = parts[2].first, sign == "+" || sign == "-" else { return nil }
        return Timestamps.parseISO8601("\(parts[0])T\(parts[1])\(parts[2])")
    }
}
