import FaultlineCore

/// Whether an address is a return address: the instruction before it is a call. Stack scanning keeps a candidate
/// only if this holds, since most words on a stack that point into code are not return addresses (function
/// pointers, stale values); a value right after a call is one far more often than not.
enum CallSite {
    /// The most bytes before a return address that `isReturnAddress` reads.
    static let window = 7

    /// Whether `before` (the bytes just before a candidate return address, the last one adjacent to it; at most
    /// `window` are used) ends with a call instruction of `architecture`.
    static func isReturnAddress(after before: ArraySlice<UInt8>, architecture: ProcessSnapshot.Architecture) -> Bool {
        switch architecture {
        case .x86_64: return endsWithX86Call(Array(before.suffix(window)))
        case .arm64: return endsWithARM64Call(Array(before.suffix(4)))
        }
    }

    /// x86-64: `call rel32` (E8 + 4 bytes), or `call r/m64` (FF /2) whose ModRM, SIB and displacement make it end
    /// exactly where the return address starts. A REX or segment prefix before the FF does not change that length.
    static func endsWithX86Call(_ bytes: [UInt8]) -> Bool {
        let count = bytes.count
        if count >= 5, bytes[count - 5] == 0xE8 { return true }
        for length in 2...7 where count >= length {
            guard bytes[count - length] == 0xFF else { continue }
            let modrm = bytes[count - length + 1]
            guard (modrm >> 3) & 7 == 2 else { continue }
            if x86IndirectCallLength(modrm: modrm, sib: length >= 3 ? bytes[count - length + 2] : nil) == length {
                return true
            }
        }
        return false
    }

    /// The length of `FF /2` with this ModRM (and SIB byte, when there is one), or nil when it needs a SIB byte
    /// that is not there.
    static func x86IndirectCallLength(modrm: UInt8, sib: UInt8?) -> Int? {
        let mod = modrm >> 6
        let rm = modrm & 7
        if mod == 3 { return 2 }
        var length = 2
        if rm == 4 {
            guard let sib else { return nil }
            length += 1
            if mod == 0, sib & 7 == 5 { length += 4 }  // no base: a 32-bit displacement
        }
        if mod == 0, rm == 5 { length += 4 }  // RIP-relative
        if mod == 1 { length += 1 }
        if mod == 2 { length += 4 }
        return length
    }

    /// arm64: the instruction before is `bl`, `blr`, or a pointer-authenticating `blraa`/`blrab`/`blraaz`/`blrabz`.
    static func endsWithARM64Call(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 4 else { return false }
        let word = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
        if word & 0xFC00_0000 == 0x9400_0000 { return true }  // bl imm26
        if word & 0xFFFF_FC1F == 0xD63F_0000 { return true }  // blr xN
        if word & 0xFEFF_F800 == 0xD63F_0800 { return true }  // blraa(z) / blrab(z)
        return false
    }
}
