import FaultlineCore

/// Checks an ELF file from its first bytes while it streams in, so that an upload that cannot be a debug file
/// (a gzip bomb of zeros, a text file, another program) is refused after a few kilobytes instead of after
/// gigabytes have been written to disk.
///
/// What can be known early: the ELF identification and header (the first 52 or 64 bytes), and the build-id
/// when a `PT_NOTE` program header points at a GNU build-id note near the start of the file (executables,
/// shared libraries, and `objcopy --only-keep-debug` files all have one, at a few hundred bytes). Section
/// headers sit at the end of the file, so the full `ELFReader.inspect` after the upload stays the authority;
/// this only ever refuses earlier what it would refuse, plus a build-id note that contradicts the claim.
///
/// Memory is bounded: at most `maxPrefix` bytes are kept, and nothing after the check is decided.
public struct ELFPrefixCheck: Sendable {
    /// What the first bytes say.
    public enum Verdict: Sendable, Equatable {
        /// Not enough bytes yet.
        case undecided
        /// The header is fine; the build-id cannot be read from the first bytes (it is in a section only).
        case headerOnly
        /// The header is fine and a `PT_NOTE` segment holds this build-id.
        case buildID(BuildID)
    }

    /// The most bytes kept to find the build-id note; notes further in are left to the final check.
    public static let maxPrefix = 1 << 20

    var prefix: [UInt8] = []
    /// How many bytes the decision needs (grows as the header and program headers are read).
    var needed = 64
    public private(set) var verdict: Verdict = .undecided

    public init() {}

    /// Feeds the next bytes of the file.
    /// - Throws: `ELFError` as soon as the bytes seen cannot begin an ELF file.
    public mutating func feed(_ bytes: [UInt8]) throws {
        guard verdict == .undecided, !bytes.isEmpty else { return }
        let room = Self.maxPrefix - prefix.count
        prefix.append(contentsOf: bytes.prefix(room))
        try decide()
    }

    /// Called when the whole file has arrived: a file shorter than its ELF header is refused here.
    public mutating func finish() throws {
        guard verdict == .undecided else { return }
        try decide(final: true)
        if verdict == .undecided { verdict = .headerOnly }
    }

    mutating func decide(final: Bool = false) throws {
        // The identification: refused on its first wrong byte.
        let magic: [UInt8] = [0x7f, 0x45, 0x4c, 0x46]
        for i in 0..<min(4, prefix.count) where prefix[i] != magic[i] { throw ELFError.notELF }
        if prefix.count > 4, prefix[4] != 1, prefix[4] != 2 { throw ELFError.malformed("EI_CLASS \(prefix[4])") }
        if prefix.count > 5, prefix[5] != 1, prefix[5] != 2 { throw ELFError.malformed("EI_DATA \(prefix[5])") }
        guard prefix.count >= 6 else {
            if final { throw ELFError.notELF }
            return
        }
        let is64 = prefix[4] == 2
        let little = prefix[5] == 1
        let headerSize = is64 ? 64 : 52
        guard prefix.count >= headerSize else {
            if final { throw ELFError.truncated("the ELF header is cut short") }
            return
        }
        let h = ELFReader.Fields(bytes: Array(prefix[0..<headerSize]), little: little)
        let phoff = is64 ? h.u64(32) : UInt64(h.u32(28))
        let phentsize = UInt64(h.u16(is64 ? 54 : 42))
        let phnum = UInt64(h.u16(is64 ? 56 : 44))
        let limit = UInt64(Self.maxPrefix)
        guard phoff != 0, phnum > 0, phentsize >= (is64 ? 56 : 32) else { return finishEarly() }
        let (tableBytes, overflow1) = phnum.multipliedReportingOverflow(by: phentsize)
        let (tableEnd, overflow2) = phoff.addingReportingOverflow(tableBytes)
        guard !overflow1, !overflow2, tableEnd <= limit else { return finishEarly() }
        guard UInt64(prefix.count) >= tableEnd else { return }
        // The program headers have arrived: the notes they point at, within the kept prefix.
        var notes: [(offset: UInt64, size: UInt64)] = []
        var notesEnd: UInt64 = 0
        for i in 0..<Int(phnum) {
            let start = Int(phoff) + i * Int(phentsize)
            let p = ELFReader.Fields(bytes: Array(prefix[start..<(start + Int(phentsize))]), little: little)
            guard p.u32(0) == 4 else { continue }  // PT_NOTE
            let offset = is64 ? p.u64(8) : UInt64(p.u32(4))
            let size = is64 ? p.u64(32) : UInt64(p.u32(16))
            let (end, overflow) = offset.addingReportingOverflow(size)
            guard !overflow, end <= limit else { continue }
            notes.append((offset, size))
            notesEnd = max(notesEnd, end)
        }
        guard !notes.isEmpty else { return finishEarly() }
        guard UInt64(prefix.count) >= notesEnd else { return }
        let source = MemoryByteSource(prefix)
        for note in notes {
            if let id = try? ELFReader.buildID(source, offset: note.offset, size: note.size, little: little) {
                verdict = .buildID(id)
                prefix = []
                return
            }
        }
        finishEarly()
    }

    mutating func finishEarly() {
        verdict = .headerOnly
        prefix = []
    }
}
