import FaultlineCore

/// Sentry's debug ids of ELF and Mach-O files.
///
/// An ELF file's debug id is its build-id's first 16 bytes as a GUID whose first three fields are byte-swapped; a
/// Mach-O image's is its LC_UUID as it is (sentry-cli sends it lower-case, hyphenated), so the BuildID of a Mach-O
/// debug id is its 32 hex digits unswapped. Kept internal here on purpose: the wire-format helper for Sentry events
/// lives in Formats; this one only serves the chunk-upload answers and the recognition of stored files.
enum DifIdentifiers {
    /// The debug id of a stored file of `format` whose build-id is `buildID`.
    static func debugID(of buildID: BuildID, format: DebugFileFormat) -> String {
        let hex = paddedDigits(of: buildID)
        return format == .macho ? groups(hex) : guid(swapping: hex)
    }

    /// The build-ids a debug id can name, as 32-digit prefixes: the ELF reading (first three fields swapped) and the
    /// Mach-O one (the UUID as it is). Empty when `debugID` is not a GUID.
    static func candidatePrefixes(ofDebugID debugID: String) -> [(prefix: String, format: DebugFileFormat)] {
        guard let elf = buildIDPrefix(ofDebugID: debugID), let normalized = normalized(debugID: debugID) else {
            return []
        }
        let uuid = String(normalized.filter { $0 != "-" })
        return uuid == elf ? [(elf, .elf)] : [(elf, .elf), (uuid, .macho)]
    }

    /// The build-id's first 16 bytes (zero-padded when shorter) as a GUID whose first three fields are
    /// little-endian: `aba11aef f7e7 e9e2 e1bc…` → `ef1aa1ab-e7f7-e2e9-e1bc-…`.
    static func debugID(of buildID: BuildID) -> String {
        guid(swapping: paddedDigits(of: buildID))
    }

    /// The build-id's first 32 hex digits, zero-padded when shorter.
    static func paddedDigits(of buildID: BuildID) -> [UInt8] {
        let hex = Array(buildID.rawValue.utf8.prefix(32))
        return hex + Array(repeating: UInt8(ascii: "0"), count: 32 - hex.count)
    }

    /// The inverse: the leading hex digits of the build-ids a debug id can belong to (32 digits; a shorter
    /// build-id appears zero-padded). nil when `debugID` is not a GUID (an appended age is ignored).
    static func buildIDPrefix(ofDebugID debugID: String) -> String? {
        guard let normalized = normalized(debugID: debugID) else { return nil }
        let hex = Array(normalized.utf8.filter { $0 != UInt8(ascii: "-") })
        return String(decoding: guid(swapping: hex).utf8.filter { $0 != UInt8(ascii: "-") }, as: UTF8.self)
    }

    /// `ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1` in lowercase, from a GUID with or without hyphens, with or
    /// without a trailing age.
    static func normalized(debugID: String) -> String? {
        var hex: [UInt8] = []
        for b in debugID.utf8 {
            if b == UInt8(ascii: "-") { continue }
            guard hex.count < 32 else { break }
            guard let digit = Hex.normalizedDigit(b) else { return nil }
            hex.append(digit)
        }
        guard hex.count == 32 else { return nil }
        return groups(hex)
    }

    /// Swaps the byte order of the first three GUID fields of 32 hex digits and adds the hyphens.
    static func guid(swapping hex: [UInt8]) -> String {
        func bytes(_ range: Range<Int>) -> [[UInt8]] {
            stride(from: range.lowerBound, to: range.upperBound, by: 2).map { Array(hex[$0..<($0 + 2)]) }
        }
        let swapped =
            bytes(0..<8).reversed().flatMap { $0 } + bytes(8..<12).reversed().flatMap { $0 }
            + bytes(12..<16).reversed().flatMap { $0 } + Array(hex[16..<32])
        return groups(swapped)
    }

    /// 32 hex digits in a GUID's 8-4-4-4-12 groups.
    static func groups(_ hex: [UInt8]) -> String {
        AppleUUID.hyphenated(String(decoding: hex, as: UTF8.self))
    }
}

extension Hex {
    /// A hex digit in lowercase; nil for anything else.
    static func normalizedDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): b
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b + 32
        default: nil
        }
    }
}
