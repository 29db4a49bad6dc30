import CLibdw

#if canImport(Glibc)
import Glibc
#endif

/// One function, inline frame, file and line for an address.
public struct SymbolicatedFrame: Sendable, Equatable {
    /// Readable (demangled) name.
    public var function: String?
    /// The name as the binary has it (mangled), when it differs.
    public var linkageName: String?
    public var file: String?
    /// Line 0 and nil mean "no real location" (compiler-generated code); never invented.
    public var line: Int?
    public var column: Int?
    /// Whether this frame was inlined into the next one.
    public var inlined: Bool

    public init(
        function: String?, linkageName: String? = nil, file: String? = nil, line: Int? = nil, column: Int? = nil,
        inlined: Bool = false
    ) {
        self.function = function
        self.linkageName = linkageName
        self.file = file
        self.line = line
        self.column = column
        self.inlined = inlined
    }
}

/// What an address resolved to: the inline chain, innermost frame first.
public struct Resolution: Sendable, Equatable {
    public enum Source: String, Sendable {
        /// DWARF: function, inline chain, file and line.
        case dwarf
        /// Only the symbol table (ELF's, or Mach-O's `nlist` table): function and offset, no file or line.
        case symbolTable = "symbol_table"
    }
    public var frames: [SymbolicatedFrame]
    public var source: Source
    /// For symbol-table results: the offset of the address into the function.
    public var offset: UInt64?
}

/// An opened debug file whose lookup indexes are built per compilation unit, when an address first needs them.
///
/// libdw's per-address conveniences are traps here (`dwarf_addrdie` needs `.debug_aranges`, which clang and
/// swiftc do not emit; `dwarf_getscopes` re-walks the whole CU per address and misses Swift's
/// `DW_TAG_module`; symbol lookups scan linearly). So the module keeps its own indexes, in two layers:
///
/// 1. Opening reads only the unit table: each compilation unit's header, its DIE and its address ranges
///    (`DW_AT_ranges` or `low_pc`/`high_pc`), sorted for binary search. That is a few bytes per unit, so
///    opening costs the same for a 5 MB and a 250 MB file of the same number of units.
/// 2. The first address that lands in a unit walks that unit's DIEs once and keeps its functions' address
///    ranges (sorted) and each function's tree of inlined calls with resolved call sites. Units without any
///    address range (rare: type-only units, or a producer that omits them) are walked the first time an
///    address lands in no ranged unit.
///
/// A lookup then costs a binary search in the unit table, one in the unit's functions, a walk of one
/// function's inline tree, and `dwarf_getsrc_die` (itself a binary search) for the line. The ELF symbol
/// table (for code without DWARF) is read the first time it is needed.
///
/// Memory: `indexedBytes` estimates what has been built (our tables, names, and libdw's line tables of the
/// units used); `ModuleCache` budgets that, not the file's size. Past `maxIndexBytes` the least recently used
/// units' indexes are dropped (and rebuilt if used again), so one module's memory stays bounded whatever the
/// file's size.
///
/// Not thread-safe (lookups build indexes, and libdw handles are not thread-safe either): one owner (an actor)
/// per module; parallelism comes from several owners.
public final class DebugModule {
    /// An address range; `[low, high)`.
    typealias Span = (low: UInt64, high: UInt64)

    struct InlineNode {
        /// The first range; `more` holds the rest (most inlined calls have one range, so no allocation).
        var low: UInt64
        var high: UInt64
        var more: [Span]
        var parent: Int32  // index into the function's inlines, -1 for the function itself
        var name: Int32  // index into `names`, -1 for none
        var callLine: UInt32
        var callColumn: UInt32
        var callFile: String?

        func contains(_ address: UInt64) -> Bool {
            if low <= address, address < high { return true }
            return more.contains { $0.low <= address && address < $0.high }
        }
    }

    struct Function {
        var name: Int32  // index into `names`, -1 for none
        var inlines: [InlineNode]
        /// The lowest address of its ranges and the highest end.
        var lowest: UInt64
        var highest: UInt64
        /// The rows of the unit's line table that can answer for an address of this function (see
        /// `lineRow(unit:function:address:)`), found on the first lookup in it; `lowRow` -1 until then.
        var lowRow: Int32 = -1
        var highRow: Int32 = -1
    }

    struct RangeEntry {
        var low: UInt64
        var high: UInt64
        /// The unit the range belongs to (an index into `units`).
        var unit: Int32
        /// The function within the unit (an index into its `functions`); -1 for a unit's own range.
        var function: Int32
    }

    /// One compilation unit: its DIE from the start, its functions once an address landed in it.
    struct Unit {
        var die: Dwarf_Die
        /// `DW_AT_name`: the file shown (with no line) when the line table does not cover an address.
        var name: String?
        var hasRanges: Bool
        var indexed = false
        var functions: [Function] = []
        /// The functions' ranges, sorted by `low`.
        var ranges: [RangeEntry] = []
        /// What `functions` and `ranges` take (estimated), counted in `tableBytes`.
        var bytes: UInt64 = 0
        /// Whether libdw's line table of this unit was counted in `libdwBytes` (it stays until the module closes).
        var linesCounted = false
        /// libdw's line table of this unit once read (valid until the module closes), and its row count.
        var lines: OpaquePointer? = nil
        var lineCount = 0
        /// When the unit was last used (a tick of `clock`), for dropping the least recently used.
        var lastUse: UInt64 = 0
    }

    struct Symbol {
        var address: UInt64
        var size: UInt64
        var name: String
        /// For local symbols, the source file named by the `STT_FILE` symbol before them.
        var file: String?
    }

    let fd: Int32
    let elf: OpaquePointer
    /// For a Mach-O file: the region holding the ELF headers made for it and the file (see `DebugModule+MachO`).
    let mapping: Mapping?
    let dwarf: OpaquePointer?
    var units: [Unit] = []
    /// Every ranged unit's address ranges (`function` = -1), sorted by `low`.
    var unitRanges: [RangeEntry] = []
    /// Units with no address range of their own, and whether they were walked (see the type's overview).
    var unrangedUnits: [Int32] = []
    var unrangedIndexed = false
    /// The function ranges found in unranged units, sorted by `low`.
    var unrangedRanges: [RangeEntry] = []
    var symbolsRead = false
    var symbolStore: [Symbol] = []
    /// Function names read while indexing, each once (an inline tree repeats the same few), by their address in
    /// `.debug_str`; `demangledNames` beside them is filled on first use (lookups repeat them).
    var names: [String] = []
    var demangledNames: [String?] = []
    var nameIndex: [UnsafePointer<CChar>: Int32] = [:]
    /// Demangled symbol-table names, and normalised line-table file names, computed once per distinct input.
    var demangled: [String: String] = [:]
    var fileNames: [UnsafePointer<CChar>: String] = [:]
    /// Estimated bytes: the unit table and symbol table (`baseBytes`), units' indexes (`tableBytes`), names and
    /// caches (`nameBytes`), libdw's line tables (`libdwBytes`, never freed before the module closes).
    var baseBytes: UInt64 = 0
    var tableBytes: UInt64 = 0
    var nameBytes: UInt64 = 0
    var libdwBytes: UInt64 = 0
    var clock: UInt64 = 0
    /// The most `tableBytes + nameBytes` may reach before the least recently used units' indexes are dropped.
    public let maxIndexBytes: UInt64
    /// The first `PT_LOAD`'s page-aligned `p_vaddr`: module-relative offsets are added to it.
    public private(set) var loadBias: UInt64 = 0
    /// The file's size in bytes.
    public private(set) var fileSize: UInt64 = 0
    /// How deep the DIE tree is walked (real code nests a few dozen levels).
    static let maxDIEDepth = 256
    /// How many ranges one DIE's `DW_AT_ranges` list gives at most.
    static let maxRangesPerDIE = 100_000
    /// How many unit ranges before an address are checked for containing it (units' ranges rarely overlap;
    /// a hostile file's overlaps only cost answers, never unbounded work).
    static let maxOverlappingUnits = 16
    /// Most functions or inlined calls one unit's index keeps (indexes are `Int32`).
    static let maxEntriesPerUnit = 1 << 26
    /// The default for `maxIndexBytes`.
    public static let defaultMaxIndexBytes: UInt64 = 512 << 20

    /// Whether DWARF was found (else only the symbol table answers).
    public var hasDWARF: Bool { dwarf != nil && (!unitRanges.isEmpty || !unrangedUnits.isEmpty) }
    /// How many compilation units the file has.
    public var unitCount: Int { units.count }
    /// How many units' functions are indexed now (they are indexed when an address first lands in them).
    public var indexedUnitCount: Int { units.reduce(0) { $0 + ($1.indexed ? 1 : 0) } }
    /// The estimated memory of everything built so far, in bytes (what `ModuleCache` budgets).
    public var indexedBytes: UInt64 { baseBytes &+ tableBytes &+ nameBytes &+ libdwBytes }

    /// Opens `path` and reads its unit table; functions are indexed per unit as lookups need them.
    ///
    /// `path` is an ELF file, or a thin Mach-O file (a dSYM's DWARF file, an executable, a dylib) that is presented
    /// to libdw as an ELF image whose load bias is `__TEXT`'s vmaddr (see `DebugModule+MachO`).
    ///
    /// - Parameter maxIndexBytes: past this many bytes of indexes and names, the least recently used units'
    ///   indexes are dropped.
    /// - Throws: `SymbolicationError` when the file cannot be opened, is neither ELF nor Mach-O, or is a Mach-O
    ///   file the reader refuses or a fat one (`malformed`).
    public init(path: String, maxIndexBytes: UInt64 = DebugModule.defaultMaxIndexBytes) throws {
        self.maxIndexBytes = maxIndexBytes
        elf_version(UInt32(EV_CURRENT))
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SymbolicationError(.openFailed, "cannot open \(path) (errno \(errno))") }
        var st = stat()
        if fstat(fd, &st) == 0 { fileSize = UInt64(clamping: st.st_size) }
        // A thin Mach-O file is presented to libelf as an ELF image (`DebugModule+MachO`).
        var mapping: Mapping?
        if Self.isMachO(fd: fd) {
            do {
                mapping = try Self.mapMachO(fd: fd, size: fileSize)
            } catch {
                close(fd)
                throw error
            }
        }
        self.mapping = mapping
        let opened =
            mapping.map { elf_memory($0.base.assumingMemoryBound(to: CChar.self), $0.length) }
            ?? elf_begin(fd, ELF_C_READ_MMAP, nil)
        guard let elf = opened, elf_kind(elf) == ELF_K_ELF else {
            if let opened { elf_end(opened) }
            if let mapping { munmap(mapping.base, mapping.length) }
            close(fd)
            throw SymbolicationError(.notELF, "\(path) is neither an ELF nor a Mach-O file")
        }
        self.elf = elf
        baseBytes = UInt64(mapping?.headerLength ?? 0)
        dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nil)
        readLoadBias()
        if dwarf != nil { readUnits() }
    }

    deinit {
        if let dwarf { dwarf_end(dwarf) }
        elf_end(elf)
        if let mapping { munmap(mapping.base, mapping.length) }
        close(fd)
    }

    /// Resolves an offset from the module's load address (`address - image base` in a crash report).
    public func resolve(moduleOffset: UInt64) -> Resolution? {
        resolve(fileAddress: moduleOffset &+ loadBias)
    }

    /// Resolves a link-time address (as `nm` and llvm-symbolizer's `--obj` use them).
    public func resolve(fileAddress address: UInt64) -> Resolution? {
        if let resolution = resolveDWARF(address) { return resolution }
        guard var resolution = resolveSymbol(address) else { return nil }
        // Code in a CU without function DIEs (runtime glue): the symbol's name, with what the CU's line table
        // knows. No row (padding between functions, which Mach-O symbols cover): the symbol alone, as
        // llvm-symbolizer answers.
        if let cu = Self.containing(unitRanges, address),
            let (file, line, column) = lineInfo(unit: Int(cu.unit), address: address)
        {
            resolution.frames[0].file = file
            resolution.frames[0].line = line == 0 ? nil : line
            resolution.frames[0].column = column == 0 ? nil : column
        }
        return resolution
    }

    /// Most line-table rows `resolve(sourceFile:line:)` reads before it gives up (hostile or huge files).
    static let maxSourceLineRows = 20_000_000

    /// Resolves a source location a crash message named (`app/main.swift:17: Fatal error: …`) to the code at the
    /// start of that line: the inline chain of its lowest address. `file` matches a line-table path ending in it
    /// (`app/main.swift` matches `/src/Sources/app/main.swift`), else one with the same file name. Nil when no
    /// row has the line, or the debug file has no DWARF.
    public func resolve(sourceFile file: String, line: Int) -> Resolution? {
        guard dwarf != nil, line > 0, !file.isEmpty else { return nil }
        let base = "/" + (file.split(separator: "/").last.map(String.init) ?? file)
        let suffix = file.hasPrefix("/") ? file : "/" + file
        var best: (address: UInt64, exact: Bool)?
        var rowsRead = 0
        for index in units.indices {
            guard let (lines, count) = lineTable(index) else { continue }
            for row in 0..<count {
                rowsRead += 1
                if rowsRead > Self.maxSourceLineRows { return best.flatMap { resolveDWARF($0.address) } }
                guard let entry = dwarf_onesrcline(lines, row) else { break }
                var number: Int32 = 0
                guard dwarf_lineno(entry, &number) == 0, Int(number) == line else { continue }
                var address: Dwarf_Addr = 0
                guard dwarf_lineaddr(entry, &address) == 0, let source = dwarf_linesrc(entry, nil, nil) else {
                    continue
                }
                let path = String(cString: source)
                let exact = path.hasSuffix(suffix)
                guard exact || path.hasSuffix(base) else { continue }
                // An exact path beats a same-named file; then the lowest address (the line's first instruction).
                if let current = best,
                    (current.exact && !exact) || (current.exact == exact && current.address <= address)
                {
                    continue
                }
                best = (address, exact)
            }
        }
        return best.flatMap { resolveDWARF($0.address) }
    }

    // MARK: lookups

    /// The entry containing `address`: the last one starting at or below it, stepping back over a few
    /// in case of nested entries (ranges of distinct functions do not overlap).
    static func containing(_ entries: [RangeEntry], _ address: UInt64) -> RangeEntry? {
        var index = lastStarting(atOrBelow: address, in: entries)
        let stop = index - 8
        while index >= 0, index > stop {
            let entry = entries[index]
            if entry.low <= address, address < entry.high { return entry }
            index -= 1
        }
        return nil
    }

    /// The index of the last entry whose `low` is at or below `address`, -1 when none is.
    static func lastStarting(atOrBelow address: UInt64, in entries: [RangeEntry]) -> Int {
        var lo = 0
        var hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].low <= address { lo = mid + 1 } else { hi = mid }
        }
        return lo - 1
    }

    /// The function containing `address`: in the units whose ranges contain it (indexed now if they were not),
    /// else in the units without ranges.
    func function(at address: UInt64) -> RangeEntry? {
        var index = Self.lastStarting(atOrBelow: address, in: unitRanges)
        let stop = index - Self.maxOverlappingUnits
        while index >= 0, index > stop {
            let entry = unitRanges[index]
            index -= 1
            guard entry.low <= address, address < entry.high else { continue }
            let unit = Int(entry.unit)
            if !units[unit].indexed { indexUnit(unit) }
            clock &+= 1
            units[unit].lastUse = clock
            if let found = Self.containing(units[unit].ranges, address) { return found }
        }
        guard !unrangedUnits.isEmpty else { return nil }
        if !unrangedIndexed { indexUnrangedUnits() }
        return Self.containing(unrangedRanges, address)
    }

    func resolveDWARF(_ address: UInt64) -> Resolution? {
        guard dwarf != nil, let entry = function(at: address) else { return nil }
        let unit = Int(entry.unit)
        let function = units[unit].functions[Int(entry.function)]

        // The inline chain: the deepest inlined call containing the address, then its parents.
        var deepest = -1
        var deepestDepth = 0
        for (i, node) in function.inlines.enumerated() where node.contains(address) {
            let d = depth(function, i)
            if d > deepestDepth {
                deepest = i
                deepestDepth = d
            }
        }

        var (file, line, column) = lineInfo(unit: unit, function: Int(entry.function), address: address)
        var frames: [SymbolicatedFrame] = []
        frames.reserveCapacity(deepestDepth + 1)
        var current = deepest
        while current >= 0 {
            let node = function.inlines[current]
            frames.append(frame(name: node.name, file: file, line: line, column: column, inlined: true))
            file = node.callFile
            line = Int(node.callLine)
            column = Int(node.callColumn)
            current = Int(node.parent)
        }
        frames.append(frame(name: function.name, file: file, line: line, column: column, inlined: false))
        return Resolution(frames: frames, source: .dwarf, offset: nil)
    }

    /// How many inlined calls deep node `index` is (parents always come before their children, so this ends).
    func depth(_ function: Function, _ index: Int) -> Int {
        var d = 0
        var i = index
        while i >= 0 {
            d += 1
            i = Int(function.inlines[i].parent)
        }
        return d
    }

    func frame(name index: Int32, file: String?, line: Int?, column: Int?, inlined: Bool) -> SymbolicatedFrame {
        guard index >= 0, Int(index) < names.count else {
            return SymbolicatedFrame(
                function: nil, file: file, line: line == 0 ? nil : line, column: column == 0 ? nil : column,
                inlined: inlined)
        }
        let name = names[Int(index)]
        let readable: String
        if let known = demangledNames[Int(index)] {
            readable = known
        } else {
            readable = Demangler.demangle(name)
            demangledNames[Int(index)] = readable
            if readable != name { nameBytes &+= Self.bytes(of: readable) }
        }
        return SymbolicatedFrame(
            function: readable, linkageName: readable == name ? nil : name, file: file, line: line == 0 ? nil : line,
            column: column == 0 ? nil : column, inlined: inlined)
    }

    /// The file, line and column of the row of `unit`'s line table that answers for `address`; nil when none does.
    func lineInfo(unit: Int, address: UInt64) -> (String?, Int?, Int?)? {
        guard unit >= 0, unit < units.count else { return nil }
        if !units[unit].linesCounted { _ = lineTable(unit) }
        guard let row = dwarf_getsrc_die(&units[unit].die, address) else { return nil }
        return location(row, unit: unit)
    }

    /// The line, file and column for `address` in a function of `unit`: the row `dwarf_getsrc_die` would give,
    /// found among the function's rows only (a few cache lines instead of the whole unit's table).
    func lineInfo(unit: Int, function: Int, address: UInt64) -> (String?, Int?, Int?) {
        guard let (lines, count) = lineTable(unit), count > 0 else { return (units[unit].name, nil, nil) }
        var window = (
            low: Int(units[unit].functions[function].lowRow), high: Int(units[unit].functions[function].highRow)
        )
        if window.low < 0 {
            window = rowWindow(lines: lines, count: count, of: units[unit].functions[function])
            // Kept when it fits (a table of 2^31 rows is searched whole every time instead).
            if let low = Int32(exactly: window.low), let high = Int32(exactly: window.high) {
                units[unit].functions[function].lowRow = low
                units[unit].functions[function].highRow = high
            }
        }
        let index = Self.lastRowIndex(lines: lines, from: window.low, through: window.high, atOrBelow: address)
        return location(Self.answeringRow(lines: lines, index: index, address: address), unit: unit)
    }

    /// `unit`'s line table, read (and counted) on first use.
    func lineTable(_ unit: Int) -> (OpaquePointer, Int)? {
        if let lines = units[unit].lines { return (lines, units[unit].lineCount) }
        guard !units[unit].linesCounted else { return nil }  // read before, and libdw had none
        var lines: OpaquePointer?
        var count = 0
        guard dwarf_getsrclines(&units[unit].die, &lines, &count) == 0, let lines else {
            units[unit].linesCounted = true
            return nil
        }
        countLines(unit: unit, rows: count)
        units[unit].lines = lines
        units[unit].lineCount = count
        return (lines, count)
    }

    /// The rows that can answer for the function's addresses: from the last row at or below its lowest address
    /// to the last row below its highest end. libdw's table is sorted by address, so for any address of the
    /// function the last row at or below it lies in between.
    func rowWindow(lines: OpaquePointer, count: Int, of function: Function) -> (low: Int, high: Int) {
        let low = Self.lastRowIndex(lines: lines, from: 0, through: count - 1, atOrBelow: function.lowest)
        // `highest` > `lowest` (ranges are never empty), so `highest - 1` is at or above `lowest`.
        let high = Self.lastRowIndex(lines: lines, from: 0, through: count - 1, atOrBelow: function.highest &- 1)
        return (low, max(low, high))
    }

    /// The index of the last row in `from...through` whose address is at or below `address`, else `from`: the
    /// search of `dwarf_getsrc_die`, over a part of the table.
    static func lastRowIndex(lines: OpaquePointer, from: Int, through: Int, atOrBelow address: UInt64) -> Int {
        var l = from
        var u = through
        while l < u {
            let middle = u - (u - l) / 2
            var rowAddress: Dwarf_Addr = 0
            guard let row = dwarf_onesrcline(lines, middle), dwarf_lineaddr(row, &rowAddress) == 0 else { return l }
            if address < rowAddress { u = middle - 1 } else { l = middle }
        }
        return l
    }

    /// The row at `index` when it answers for `address` (at or below it, and not an end of sequence), as
    /// `dwarf_getsrc_die` decides.
    static func answeringRow(lines: OpaquePointer, index: Int, address: UInt64) -> OpaquePointer? {
        var rowAddress: Dwarf_Addr = 0
        var end = false
        guard let row = dwarf_onesrcline(lines, index), dwarf_lineaddr(row, &rowAddress) == 0, rowAddress <= address,
            dwarf_lineendsequence(row, &end) == 0, !end
        else { return nil }
        return row
    }

    func location(_ line: OpaquePointer?, unit: Int) -> (String?, Int?, Int?) {
        guard let line else { return (units[unit].name, nil, nil) }
        var lineNumber: Int32 = 0
        var column: Int32 = 0
        dwarf_lineno(line, &lineNumber)
        dwarf_linecol(line, &column)
        let file = dwarf_linesrc(line, nil, nil).map { pointer -> String in
            if let known = fileNames[pointer] { return known }
            let value = Self.normalize(String(cString: pointer))
            fileNames[pointer] = value
            nameBytes &+= Self.bytes(of: value) &+ 32
            return value
        }
        // libdw hands back the table's unsigned values as `int`: a negative one is a hostile huge value.
        return (file, lineNumber > 0 ? Int(lineNumber) : nil, column > 0 ? Int(column) : nil)
    }

    /// Counts libdw's line table of `unit` once (libdw keeps it until the module closes).
    func countLines(unit: Int, rows: Int) {
        guard !units[unit].linesCounted else { return }
        units[unit].linesCounted = true
        // A `Dwarf_Line` is 40 bytes, and libdw keeps a sorted copy of the rows' pointers beside them.
        libdwBytes &+= UInt64(clamping: rows).multipliedReportingOverflow(by: 48).partialValue
    }

    var symbols: [Symbol] {
        if !symbolsRead { readSymbols() }
        return symbolStore
    }

    func resolveSymbol(_ address: UInt64) -> Resolution? {
        let symbols = self.symbols
        var lo = 0
        var hi = symbols.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if symbols[mid].address <= address { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let symbol = symbols[lo - 1]
        // A hostile symbol may end past the top of the address space: such an end is the top.
        let (end, overflow) = symbol.address.addingReportingOverflow(symbol.size)
        guard symbol.size == 0 || overflow || address < end else { return nil }
        let readable: String
        if let known = demangled[symbol.name] {
            readable = known
        } else {
            readable = Demangler.demangle(symbol.name)
            demangled[symbol.name] = readable
            nameBytes &+= Self.bytes(of: readable) &+ 48
        }
        let frame = SymbolicatedFrame(
            function: readable, linkageName: readable == symbol.name ? nil : symbol.name,
            file: symbol.file)
        return Resolution(frames: [frame], source: .symbolTable, offset: address - symbol.address)
    }

    /// The heap bytes of a string (small ones live inline).
    static func bytes(of string: String) -> UInt64 {
        let count = UInt64(string.utf8.count)
        return count <= 15 ? 0 : count &+ 32
    }

    // MARK: the file's headers

    func readLoadBias() {
        var count = 0
        guard elf_getphdrnum(elf, &count) == 0 else { return }
        var phdr = GElf_Phdr()
        // `e_phnum` may claim more headers than exist (extended numbering allows 2^32): stop at the first unreadable one.
        for i in 0..<min(count, Int(Int32.max)) {
            guard gelf_getphdr(elf, Int32(i), &phdr) != nil else { return }
            if phdr.p_type == UInt32(PT_LOAD) {
                let align = max(phdr.p_align, 1)
                loadBias = phdr.p_vaddr & ~(align - 1)
                return
            }
        }
    }

    func readSymbols() {
        symbolsRead = true
        var section: OpaquePointer? = nil
        var best: [Symbol] = []
        var shdr = GElf_Shdr()
        while let scn = elf_nextscn(elf, section) {
            section = scn
            guard gelf_getshdr(scn, &shdr) != nil,
                shdr.sh_type == UInt32(SHT_SYMTAB) || shdr.sh_type == UInt32(SHT_DYNSYM),
                shdr.sh_entsize > 0, let data = elf_getdata(scn, nil)
            else { continue }
            // A hostile `sh_size` claims any count: bound it by the bytes libelf actually has, and by what
            // `gelf_getsym` can index.
            let available = UInt64(clamping: data.pointee.d_size) / max(shdr.sh_entsize, 1)
            let count = Int(clamping: min(shdr.sh_size / shdr.sh_entsize, available, UInt64(Int32.max)))
            var found: [Symbol] = []
            var sym = GElf_Sym()
            var currentFile: String?
            for i in 0..<count {
                guard gelf_getsym(data, Int32(i), &sym) != nil else { break }
                if sym.st_info & 0xf == UInt8(STT_FILE) {
                    currentFile = elf_strptr(elf, Int(shdr.sh_link), Int(sym.st_name)).map { String(cString: $0) }
                    continue
                }
                guard sym.st_info & 0xf == UInt8(STT_FUNC), sym.st_value != 0, sym.st_shndx != UInt16(SHN_UNDEF),
                    let name = elf_strptr(elf, Int(shdr.sh_link), Int(sym.st_name))
                else { continue }
                let local = sym.st_info >> 4 == UInt8(STB_LOCAL)
                found.append(
                    Symbol(
                        address: sym.st_value, size: sym.st_size, name: String(cString: name),
                        file: local && currentFile?.isEmpty == false ? currentFile : nil))
            }
            // .symtab is a superset of .dynsym: prefer whichever has more.
            if found.count > best.count { best = found }
        }
        symbolStore = best.sorted { $0.address < $1.address }
        var bytes = UInt64(symbolStore.count) &* UInt64(MemoryLayout<Symbol>.stride)
        for symbol in symbolStore { bytes &+= Self.bytes(of: symbol.name) }
        baseBytes &+= bytes
    }
}

/// Errors of the Symbolication module.
public struct SymbolicationError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }
        public static let openFailed = Code(name: "open_failed")
        public static let notELF = Code(name: "not_elf")
        /// A Mach-O file the reader refuses, or a fat one (stored files are thin slices).
        public static let malformed = Code(name: "malformed")
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code): \(message)" }
}
