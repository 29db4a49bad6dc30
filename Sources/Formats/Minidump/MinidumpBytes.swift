/// Little-endian reads at file offsets of a minidump, each checked against the file's end.
///
/// Offsets in a minidump (RVAs) are 32-bit and sizes come from the file; every read here checks
/// `offset + size <= count` without overflow, and names what it was reading when it fails.
struct MinidumpBytes: Sendable {
    let bytes: [UInt8]

    var count: Int { bytes.count }

    /// The range `offset ..< offset + size` when it lies inside the file.
    func range(_ offset: UInt64, _ size: UInt64, _ what: @autoclosure () -> String) throws(MinidumpError) -> Range<Int>
    {
        let (end, overflow) = offset.addingReportingOverflow(size)
        guard !overflow, end <= UInt64(bytes.count) else {
            throw MinidumpError(
                .truncated,
                "\(what()) (\(size) bytes at offset \(offset)) runs past the end of the \(bytes.count)-byte file")
        }
        return Int(offset)..<Int(end)
    }

    func u16(_ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    func u32(_ offset: Int) -> UInt32 {
        bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    }

    func u64(_ offset: Int) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }

    /// A checked `u32` at `offset`: the four bytes must be inside the file.
    func u32(at offset: UInt64, _ what: @autoclosure () -> String) throws(MinidumpError) -> UInt32 {
        u32(try range(offset, 4, what()).lowerBound)
    }

    /// A `MINIDUMP_STRING` (a byte length, then UTF-16LE code units) at `rva`.
    func utf16String(at rva: UInt32, _ what: @autoclosure () -> String) throws(MinidumpError) -> String {
        let length = try u32(at: UInt64(rva), what())
        guard length <= Minidump.maxStringBytes else {
            throw MinidumpError(.tooLarge, "\(what()) claims \(length) bytes, more than \(Minidump.maxStringBytes)")
        }
        let body = try range(UInt64(rva) + 4, UInt64(length & ~1), what())
        var units: [UInt16] = []
        units.reserveCapacity(body.count / 2)
        var at = body.lowerBound
        while at < body.upperBound {
            units.append(u16(at))
            at += 2
        }
        if let nul = units.firstIndex(of: 0) { units.removeSubrange(nul...) }
        return String(decoding: units, as: UTF16.self)
    }

    /// A Crashpad `MinidumpUTF8String` (a byte length, then UTF-8 bytes and a NUL) at `rva`.
    func utf8String(at rva: UInt32, _ what: @autoclosure () -> String) throws(MinidumpError) -> String {
        let length = try u32(at: UInt64(rva), what())
        guard length <= Minidump.maxStringBytes else {
            throw MinidumpError(.tooLarge, "\(what()) claims \(length) bytes, more than \(Minidump.maxStringBytes)")
        }
        return Self.text(bytes[try range(UInt64(rva) + 4, UInt64(length), what())])
    }

    /// UTF-8 text up to its first NUL (invalid sequences become U+FFFD).
    static func text(_ slice: ArraySlice<UInt8>) -> String {
        let end = slice.firstIndex(of: 0) ?? slice.endIndex
        return String(decoding: slice[slice.startIndex..<end], as: UTF8.self)
    }
}
