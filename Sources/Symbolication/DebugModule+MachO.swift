import CLibdw
import MachO

#if canImport(Glibc)
import Glibc
#endif

/// Opening a thin Mach-O file (a dSYM's DWARF file, an executable, a dylib) as the ELF image libdw reads.
///
/// One region of address space holds the image: `MachOELFImage`'s headers (anonymous pages, page aligned), then
/// the whole file mapped copy-on-write right after them (`MAP_PRIVATE | MAP_FIXED`), so the debug sections are the
/// file's own pages and nothing is copied: opening a 250 MB dSYM costs its load commands and its symbol table.
/// The region is readable and writable because libelf may write to an image it was given (`elf_memory` reads it
/// as `ELF_C_READ_MMAP_PRIVATE`); the mapping is private, so the stored file never changes.
extension DebugModule {
    /// The region `elf_memory` reads: headers, then the file.
    struct Mapping {
        var base: UnsafeMutableRawPointer
        var length: Int
        /// The synthetic headers' bytes at the start (counted in `indexedBytes`; the file's pages are the page
        /// cache's).
        var headerLength: Int
    }

    /// Most `nlist` entries read (a large app has a few hundred thousand).
    static let maxMachOSymbols = 1 << 24
    /// Longest symbol name read, in bytes (the demangler takes at most `Demangler.maxLength`).
    static let maxMachOSymbolName = 1 << 16

    /// Whether the file starts with a Mach-O or fat magic.
    static func isMachO(fd: Int32) -> Bool {
        var head = [UInt8](repeating: 0, count: 4)
        guard pread(fd, &head, 4, 0) == 4 else { return false }
        return MachOContainer.magic(of: head) != nil
    }

    /// Maps the thin Mach-O file open at `fd` (of `size` bytes) behind ELF headers.
    /// - Throws: `SymbolicationError` (`malformed`) when the Mach-O reader refuses the file, it is fat (stored files
    ///   are thin slices), or it cannot be mapped.
    static func mapMachO(fd: Int32, size: UInt64) throws -> Mapping {
        guard let length = Int(exactly: size), length > 0 else {
            throw SymbolicationError(.malformed, "empty Mach-O file")
        }
        // A first read-only mapping to read the load commands and symbols from.
        guard let file = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), file != MAP_FAILED else {
            throw SymbolicationError(.openFailed, "cannot map the Mach-O file (errno \(errno))")
        }
        defer { munmap(file, length) }
        let bytes = UnsafeRawBufferPointer(start: file, count: length)
        let read: MachOReadBytes = { offset, count in
            guard let start = Int(exactly: offset), count >= 0, start <= length, count <= length - start else {
                throw MachOError.truncated("\(count) bytes at \(offset) of \(length)")
            }
            return Array(bytes[start..<(start + count)])
        }
        let headers: [UInt8]
        do {
            let slices = try MachOContainer.slices(size: size, read: read)
            guard slices.count == 1, let slice = slices.first else {
                throw SymbolicationError(.malformed, "a fat Mach-O file (\(slices.count) slices): open one slice")
            }
            let image = try MachOImage.read(slice: slice, read: read)
            headers = try elfImage(of: image, bytes: bytes).headers(
                sliceOffset: slice.offset, pageSize: Int(getpagesize()))
        } catch let error as MachOError {
            throw SymbolicationError(.malformed, "\(error)")
        }

        let (total, overflow) = headers.count.addingReportingOverflow(length)
        guard !overflow, let region = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            region != MAP_FAILED
        else {
            throw SymbolicationError(.openFailed, "cannot reserve \(headers.count) + \(length) bytes (errno \(errno))")
        }
        headers.withUnsafeBytes { region.copyMemory(from: $0.baseAddress!, byteCount: headers.count) }
        let fileAt = region + headers.count
        guard let mapped = mmap(fileAt, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0),
            mapped == fileAt
        else {
            munmap(region, total)
            throw SymbolicationError(.openFailed, "cannot map the Mach-O file after its headers (errno \(errno))")
        }
        return Mapping(base: region, length: total, headerLength: headers.count)
    }

    /// The ELF view of `image`: its `__DWARF` debug sections, `__TEXT`, and the symbols of `__TEXT,__text` read from
    /// the `nlist` table in `bytes` (the whole file).
    static func elfImage(of image: MachOImage, bytes: UnsafeRawBufferPointer) throws -> MachOELFImage {
        let slice = image.slice
        var sections: [MachOELFImage.Section] = []
        var textOrdinal = 0
        var text: (address: UInt64, size: UInt64)?
        var ordinal = 0
        for segment in image.segments {
            for section in segment.sections {
                ordinal += 1
                if section.segment == "__TEXT", section.name == "__text", text == nil {
                    textOrdinal = ordinal
                    text = (section.address, section.size)
                }
                guard section.segment == "__DWARF", section.hasFileData,
                    let name = MachOELFImage.elfName(ofMachOSection: section.name),
                    !sections.contains(where: { $0.name == name })
                else { continue }
                // The reader checks sections against the slice; a section past it is refused here again, since
                // libelf would read past the mapping.
                let (end, overflow) = section.fileOffset.addingReportingOverflow(section.size)
                guard !overflow, end <= slice.size else {
                    throw MachOError.truncated("section \(section.name) ends past the slice")
                }
                sections.append(.init(name: name, fileOffset: section.fileOffset, size: section.size))
            }
        }
        let textSegment = image.segments.first { $0.name == "__TEXT" }
        var symbols: (symbols: [MachOELFImage.Symbol], strtab: [UInt8]) = ([], [0])
        if let table = image.symbolTable, let text, image.is64Bit {
            let (entries, strings) = try nlistEntries(table, slice: slice, bytes: bytes)
            symbols = MachOELFImage.symbols(
                MachOELFImage.textEntries(entries, textOrdinal: textOrdinal, text: text),
                strings: strings, text: text)
        }
        return MachOELFImage(
            machine: MachOELFImage.machine(cpuType: slice.cpuType),
            isLibrary: image.fileType == .dylib || image.fileType == .bundle, textVMAddr: textSegment?.vmaddr ?? 0,
            textVMSize: textSegment?.vmsize ?? 0, text: text, sections: sections, symbols: symbols.symbols,
            strtab: symbols.strtab, uuid: image.uuid)
    }

    /// The `nlist_64` entries of `table` that are defined in a section, with the place of their names (bounded
    /// to `maxMachOSymbolName` bytes) in the string table, which is returned too (a part of `bytes`).
    static func nlistEntries(_ table: MachOSymbolTable, slice: MachOSlice, bytes: UnsafeRawBufferPointer) throws
        -> ([MachOELFImage.Entry], UnsafeRawBufferPointer)
    {
        guard table.entrySize == 16 else { return ([], UnsafeRawBufferPointer(rebasing: bytes[0..<0])) }
        let count = min(table.count, maxMachOSymbols)
        guard let symbolsAt = Int(exactly: slice.offset &+ table.symbolsOffset),
            let stringsAt = Int(exactly: slice.offset &+ table.stringsOffset),
            let stringsSize = Int(exactly: table.stringsSize),
            symbolsAt <= bytes.count, count <= (bytes.count - symbolsAt) / 16,
            stringsAt <= bytes.count, stringsSize <= bytes.count - stringsAt
        else { throw MachOError.truncated("the symbol table ends past the file") }
        let strings = UnsafeRawBufferPointer(rebasing: bytes[stringsAt..<(stringsAt + stringsSize)])
        var entries: [MachOELFImage.Entry] = []
        for i in 0..<count {
            let at = symbolsAt + i * 16
            let type = bytes[at + 4]
            // Only symbols defined in a section can be kept: the others are not worth their names.
            guard type & 0xe0 == 0, type & 0x0e == 0x0e else { continue }
            let strx = Int(bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian)
            guard strx < strings.count else { continue }
            // Names are bounded, so a table without NULs costs linear time, not quadratic.
            let window = strings[strx..<min(strings.count, strx + maxMachOSymbolName)]
            let end = window.firstIndex(of: 0) ?? window.endIndex
            entries.append(
                MachOELFImage.Entry(
                    value: bytes.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self).littleEndian, type: type,
                    section: bytes[at + 5], name: strx, length: end - strx))
        }
        return (entries, strings)
    }
}
