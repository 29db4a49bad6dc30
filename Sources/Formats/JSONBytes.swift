/// Word-at-a-time scanning shared by the JSON readers: most of a report's bytes are inside strings, and a
/// string's plain bytes (not `"`, `\` or a control character) can be skipped eight at a time.
enum JSONBytes {
    /// A mask with the high bit of each of the 8 bytes of `word` that is `"` (0x22), `\` (0x5c) or a control
    /// character (< 0x20) — exact for the lowest such byte (higher ones may be missed or flagged falsely), so
    /// zero means "all 8 are plain" and the lowest set bit says which byte is the first special one.
    ///
    /// SWAR: `(v - 0x01…) & ~v & 0x80…` flags the lowest zero byte of `v` exactly (a borrow only disturbs the
    /// bytes above it); `word ^ c·0x01…` has a zero byte where `word` has the byte `c`; `(word - 0x20…) & ~word
    /// & 0x80…` flags the lowest byte below 0x20 exactly.
    @inline(__always)
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5c)
        let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
        return special & 0x8080_8080_8080_8080
    }

    /// From `index`, the index of the first special byte (see `specialBytes`) within `..<end`, looking 8 bytes
    /// at a time; when fewer than 8 bytes are left before it, where the caller goes on byte by byte. `end` must
    /// not pass the buffer's end (it is clamped to it).
    @inline(__always)
    static func skipPlain(_ bytes: UnsafeBufferPointer<UInt8>, from index: Int, end: Int) -> Int {
        guard let base = bytes.baseAddress, index >= 0 else { return index }
        let end = min(end, bytes.count)
        var i = index
        while end &- i >= 8 {
            let special = specialBytes(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self).littleEndian)
            if special != 0 { return i &+ special.trailingZeroBitCount >> 3 }
            i &+= 8
        }
        return i
    }
}
