/// The two spellings of a Mach-O image's `LC_UUID`: the build-id Faultline keys debug files by (32 lower-case hex
/// digits in file order, never byte-swapped) and the UUID Apple's tools print (`4C4C4473-5555-3144-A157-542D2ECDA82A`,
/// what Xcode, Crashlytics and `dwarfdump --uuid` show and people search for).
public enum AppleUUID {
    /// The build-id of a UUID as SDKs send it: any case, with or without hyphens or braces, maybe followed by an age
    /// (`…-0`, Sentry's debug-id form). nil unless it holds at least 32 hex digits before the age.
    public static func buildID(_ raw: String) -> BuildID? {
        var digits: [UInt8] = []
        digits.reserveCapacity(32)
        for byte in raw.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"):
                digits.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "F"):
                digits.append(byte + 32)
            case UInt8(ascii: "-"), UInt8(ascii: "{"), UInt8(ascii: "}"):
                continue
            default:
                return nil
            }
            // The 32 digits of the UUID; what follows is an age, which a Mach-O id does not have (it is 0).
            if digits.count == 32 { break }
        }
        guard digits.count == 32 else { return nil }
        return BuildID(String(decoding: digits, as: UTF8.self))
    }

    /// A 32-digit build-id as Apple spells the UUID (upper-case, hyphenated 8-4-4-4-12); other build-ids as they are.
    public static func spelling(_ buildID: BuildID) -> String {
        buildID.rawValue.utf8.count == 32 ? hyphenated(buildID.rawValue.uppercased()) : buildID.rawValue
    }

    /// 32 hex digits in a UUID's 8-4-4-4-12 groups, case kept; other text as it is.
    public static func hyphenated(_ hex: String) -> String {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return hex }
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, digit) in digits.enumerated() {
            if i == 8 || i == 12 || i == 16 || i == 20 { out.append(UInt8(ascii: "-")) }
            out.append(digit)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether a build-id is probably a Mach-O UUID where nothing else says: 16 bytes with the RFC 4122 version-3
    /// and variant bits that Apple's ld64 and LLVM's lld set in every `LC_UUID` they write. A GNU build-id is 20
    /// bytes; a 16-byte ELF id (`--build-id=md5`) has these bits by chance once in 64.
    public static func looksLikeMachOUUID(_ buildID: BuildID) -> Bool {
        let hex = Array(buildID.rawValue.utf8)
        guard hex.count == 32 else { return false }
        let variant = hex[16]
        return hex[12] == UInt8(ascii: "3")
            && (variant == UInt8(ascii: "8") || variant == UInt8(ascii: "9") || variant == UInt8(ascii: "a")
                || variant == UInt8(ascii: "b"))
    }

    /// The architecture name of a Mach-O `cpu_type`/`cpu_subtype` pair (the legacy `apple` image's fields).
    public static func architecture(cpuType: Int, cpuSubtype: Int?) -> String? {
        let subtype = (cpuSubtype ?? 0) & 0x00ff_ffff  // the high byte holds capability bits (arm64e's ABI version)
        switch cpuType {
        case 0x0100_000c: return subtype == 2 ? "arm64e" : "arm64"
        case 0x0200_000c: return "arm64_32"
        case 0x0100_0007: return subtype == 8 ? "x86_64h" : "x86_64"
        case 12: return subtype == 11 ? "armv7s" : subtype == 12 ? "armv7k" : "armv7"
        case 7: return "i386"
        default: return nil
        }
    }
}
