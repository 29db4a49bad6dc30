import FaultlineCore

/// Sentry's debug id of an ELF file, derived from its GNU build-id (client-protocols.md §1.5).
///
/// Sentry names debug files by a GUID: the first 16 bytes of the build-id read as a little-endian GUID
/// (the first 4 bytes, the next 2 and the next 2 byte-swapped; the last 8 as they are), age 0. sentry-cli
/// sends it with every upload and native events carry it in `debug_meta.images[].debug_id`; the build-id
/// stays the key Faultline stores debug files by, this is only the other spelling.
public enum SentryDebugID {
    /// The debug id of the file with `buildID`, as a lowercase hyphenated GUID.
    ///
    /// A build-id shorter than 16 bytes is padded with zero bytes (what symbolic does), so every build-id
    /// has a debug id. Example: build-id `aba11aeff7e7e9e2e1bc84464f53a7e183a8930a` →
    /// `ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1`.
    public static func from(buildID: BuildID) -> String {
        let digits = Array(buildID.rawValue.utf8)
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<min(16, digits.count / 2) {
            bytes[i] = nibble(digits[2 * i]) << 4 | nibble(digits[2 * i + 1])
        }
        bytes[0..<4].reverse()
        bytes[4..<6].reverse()
        bytes[6..<8].reverse()
        return AppleUUID.hyphenated(Hex.encode(bytes))
    }

    /// The value of one lowercase hex digit (a `BuildID` holds nothing else).
    private static func nibble(_ digit: UInt8) -> UInt8 {
        digit <= UInt8(ascii: "9") ? digit - UInt8(ascii: "0") : digit - UInt8(ascii: "a") + 10
    }
}
