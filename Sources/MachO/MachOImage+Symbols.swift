extension MachOImage {
    /// The bytes of `section` (which must have file data), read through `read` with the slice's offset added.
    /// - Parameter maxBytes: refuse a larger section rather than allocate it.
    /// - Throws: `MachOError` when the section has no data in the file or is larger than `maxBytes`.
    public func bytes(of section: MachOSection, maxBytes: Int, read: MachOReadBytes) throws -> [UInt8] {
        guard section.hasFileData else {
            throw MachOError.malformed("section \(section.segment),\(section.name) has no data in the file")
        }
        guard section.size <= UInt64(maxBytes) else {
            throw MachOError.unsupported(
                "section \(section.segment),\(section.name) has \(section.size) bytes (at most \(maxBytes) are read)")
        }
        try Checked.within(section.fileOffset, section.size, slice.size, "section \(section.segment),\(section.name)")
        return try read(slice.offset + section.fileOffset, Int(section.size))
    }

    /// The symbol table's entries with their names, in table order.
    /// - Parameters:
    ///   - maxSymbols: refuse a larger table rather than allocate it.
    ///   - maxStringBytes: refuse a larger string table.
    ///   - maxNameBytes: a name is cut here (its NUL is looked for no further).
    /// - Throws: `MachOError` past the limits, and when the names read add up to more than four times the string
    ///   table (at least 1 MiB): names of a hostile table that all start near the front of a long string table
    ///   without NULs would otherwise cost `count × maxNameBytes` in time and memory. A name offset outside the string
    ///   table gives an empty name.
    public func symbols(
        maxSymbols: Int = 4_000_000, maxStringBytes: Int = 256 << 20, maxNameBytes: Int = 1 << 16,
        read: MachOReadBytes
    ) throws -> [MachOSymbol] {
        guard let table = symbolTable, table.count > 0 else { return [] }
        guard table.count <= maxSymbols else {
            throw MachOError.unsupported("\(table.count) symbols (at most \(maxSymbols) are read)")
        }
        guard table.stringsSize <= UInt64(maxStringBytes) else {
            throw MachOError.unsupported(
                "\(table.stringsSize) bytes of symbol names (at most \(maxStringBytes) are read)")
        }
        // LC_SYMTAB's ranges were checked against the slice when the image was read.
        let entries = MachOFields(
            bytes: try read(slice.offset + table.symbolsOffset, table.count * table.entrySize), bigEndian: false)
        let strings = try read(slice.offset + table.stringsOffset, Int(table.stringsSize))
        var out: [MachOSymbol] = []
        out.reserveCapacity(table.count)
        let nameBudget = max(strings.count.multipliedReportingOverflow(by: 4).partialValue, 1 << 20)
        var nameBytes = 0
        for i in 0..<table.count {
            let e = i * table.entrySize
            let nameOffset = Int(entries.u32(e))
            var name = ""
            if nameOffset < strings.count {
                let tail = strings[nameOffset..<(nameOffset + min(max(maxNameBytes, 0), strings.count - nameOffset))]
                let bytes = tail[tail.startIndex..<(tail.firstIndex(of: 0) ?? tail.endIndex)]
                nameBytes += bytes.count + 1
                guard nameBytes <= nameBudget else {
                    throw MachOError.malformed("the symbol names add up to more than \(nameBudget) bytes")
                }
                name = String(decoding: bytes, as: UTF8.self)
            }
            out.append(
                MachOSymbol(
                    name: name, type: entries.bytes[e + 4], section: entries.bytes[e + 5],
                    description: entries.u16(e + 6),
                    value: is64Bit ? entries.u64(e + 8) : UInt64(entries.u32(e + 8))))
        }
        return out
    }
}
