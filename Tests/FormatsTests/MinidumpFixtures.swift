import Formats

/// Builds small minidumps byte by byte for the reader's hostile-input tests: a header, a directory with room for
/// 16 streams, then whatever bodies the test appends (each at the RVA `add` returns).
struct MinidumpFixture {
    static let dataStart = 32 + 16 * 12
    var data: [UInt8] = []
    var directory: [(type: UInt32, size: UInt32, rva: UInt32)] = []

    /// Appends `bytes` (4-byte aligned) and returns their RVA.
    @discardableResult
    mutating func add(_ bytes: [UInt8]) -> UInt32 {
        while data.count % 4 != 0 { data.append(0) }
        let rva = UInt32(Self.dataStart + data.count)
        data += bytes
        return rva
    }

    /// Appends `bytes` as a stream of `type`.
    mutating func stream(_ type: UInt32, _ bytes: [UInt8]) {
        let rva = add(bytes)
        directory.append((type, UInt32(bytes.count), rva))
    }

    /// Appends a `MINIDUMP_STRING` and returns its RVA.
    mutating func string(_ text: String) -> UInt32 {
        let units = Array(text.utf16)
        return add(le32(UInt32(units.count * 2)) + units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } + [0, 0])
    }

    /// The file, with `streamCount` in the header (the directory's real count unless a test lies).
    func bytes(streamCount: UInt32? = nil, directoryRVA: UInt32 = 32) -> [UInt8] {
        var out = Array("MDMP".utf8) + le32(0xA793) + le32(streamCount ?? UInt32(directory.count)) + le32(directoryRVA)
        out += le32(0) + le32(0x6000_0000) + le64(0)
        for entry in directory.prefix(16) { out += le32(entry.type) + le32(entry.size) + le32(entry.rva) }
        out += [UInt8](repeating: 0, count: Self.dataStart - out.count)
        return out + data
    }

    /// A SystemInfo stream body: `architecture` (9 x86-64, 12 arm64), `platform` (0x8201 Linux).
    static func systemInfo(architecture: UInt16 = 9, platform: UInt32 = 0x8201) -> [UInt8] {
        le16(architecture) + le16(6) + le16(0) + [4, 1] + le32(6) + le32(1) + le32(0) + le32(platform) + le32(0)
            + le16(0) + le16(0) + [UInt8](repeating: 0, count: 24)
    }

    /// A 1232-byte x86-64 context with `rip`, `rsp`, `rbp` and `rax` set (flags CONTEXT_AMD64 | full).
    static func amd64Context(rip: UInt64, rsp: UInt64, rbp: UInt64 = 0, rax: UInt64 = 0) -> [UInt8] {
        var context = [UInt8](repeating: 0, count: 1232)
        put(&context, 48, le32(0x0010_000B))
        put(&context, 120, le64(rax))
        put(&context, 152, le64(rsp))
        put(&context, 160, le64(rbp))
        put(&context, 248, le64(rip))
        return context
    }

    /// A 912-byte arm64 context (Crashpad's layout) with x`n` = 0x1000 + n, `sp` and `pc`.
    static func arm64Context(pc: UInt64, sp: UInt64) -> [UInt8] {
        var context = [UInt8](repeating: 0, count: 912)
        put(&context, 0, le32(0x0040_0007))
        for n in 0...30 { put(&context, 8 + 8 * n, le64(0x1000 + UInt64(n))) }
        put(&context, 256, le64(sp))
        put(&context, 264, le64(pc))
        return context
    }

    /// An Exception stream body for `thread`: signal `code`, `si_code` `flags`, fault `address`, and a context.
    static func exception(
        thread: UInt32, code: UInt32, flags: UInt32, address: UInt64, context: (size: Int, rva: UInt32)
    )
        -> [UInt8]
    {
        var body = le32(thread) + le32(0) + le32(code) + le32(flags) + le64(0) + le64(address) + le32(0) + le32(0)
        body += [UInt8](repeating: 0, count: 120)
        return body + le32(UInt32(context.size)) + le32(context.rva)
    }

    static func put(_ bytes: inout [UInt8], _ at: Int, _ value: [UInt8]) {
        bytes.replaceSubrange(at..<(at + value.count), with: value)
    }
}

func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
