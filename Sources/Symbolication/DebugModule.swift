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

    public init(function: String?, linkageName: String? = nil, file: String? = nil, line: Int? = nil, column: Int? = nil,
                inlined: Bool = false) {
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
        /// Only the ELF symbol table: function and offset, no file or line.
        case symbolTable = "symbol_table"
    }
    public var frames: [SymbolicatedFrame]
    public var source: Source
    /// For symbol-table results: the offset of the address into the function.
    public var offset: UInt64?
}

/// An opened debug file with its lookup indexes, built once.
///
/// libdw's per-address conveniences are traps here (`dwarf_addrdie` needs `.debug_aranges`, which clang and
/// swiftc do not emit; `dwarf_getscopes` re-walks the whole CU per address and misses Swift's
/// `DW_TAG_module`; symbol lookups scan linearly). So opening walks every CU once and keeps: functions'
/// address ranges sorted for binary search, each function's tree of inlined calls with resolved call
/// sites, and a sorted symbol table. Lookups then cost a binary search plus a walk of one function's
/// inline tree, and `dwarf_getsrc_die` (itself a binary search) for the line.
///
/// Not thread-safe: libdw handles are not. One owner (an actor) per module; parallelism comes from
/// several owners.
public final class DebugModule {
    struct InlineNode {
        var ranges: [(low: UInt64, high: UInt64)]
        var parent: Int  // index into the function's inlines, -1 for the function itself
        var name: String?
        var callFile: String?
        var callLine: Int
        var callColumn: Int
    }

    struct Function {
        var name: String?
        var cu: Int
        var inlines: [InlineNode]
    }

    struct RangeEntry {
        var low: UInt64
        var high: UInt64
        var function: Int
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
    let dwarf: OpaquePointer?
    var cus: [Dwarf_Die] = []
    /// Each CU's `DW_AT_name`: the file shown (with no line) when the line table does not cover an address.
    var cuNames: [String?] = []
    var functions: [Function] = []
    var ranges: [RangeEntry] = []
    /// CU address ranges (`function` = CU index), for addresses that no function DIE covers.
    var cuRanges: [RangeEntry] = []
    var symbols: [Symbol] = []
    /// Demangled names and normalised file names, computed once per distinct input (lookups repeat them).
    var demangled: [String: String] = [:]
    var fileNames: [UnsafePointer<CChar>: String] = [:]
    /// Names read while indexing, by their address in `.debug_str` (an inline tree repeats the same few).
    var indexedNames: [UnsafePointer<CChar>: String] = [:]
    /// The first `PT_LOAD`'s page-aligned `p_vaddr`: module-relative offsets are added to it.
    public private(set) var loadBias: UInt64 = 0
    /// The file's size in bytes (what the module cache budgets).
    public private(set) var fileSize: UInt64 = 0
    /// How deep the DIE tree is walked (real code nests a few dozen levels).
    static let maxDIEDepth = 256
    /// How many ranges one DIE's `DW_AT_ranges` list gives at most.
    static let maxRangesPerDIE = 100_000
    /// Whether DWARF was found (else only the symbol table answers).
    public var hasDWARF: Bool { dwarf != nil && !ranges.isEmpty }

    /// Opens `path` and builds the indexes.
    public init(path: String) throws {
        elf_version(UInt32(EV_CURRENT))
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SymbolicationError(.openFailed, "cannot open \(path) (errno \(errno))") }
        var st = stat()
        if fstat(fd, &st) == 0 { fileSize = UInt64(clamping: st.st_size) }
        guard let elf = elf_begin(fd, ELF_C_READ_MMAP, nil), elf_kind(elf) == ELF_K_ELF else {
            close(fd)
            throw SymbolicationError(.notELF, "\(path) is not an ELF file")
        }
        self.elf = elf
        dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nil)
        readLoadBias()
        readSymbols()
        if dwarf != nil { indexDWARF() }
        ranges.sort { $0.low < $1.low }
        cuRanges.sort { $0.low < $1.low }
    }

    deinit {
        if let dwarf { dwarf_end(dwarf) }
        elf_end(elf)
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
        // Code in a CU without function DIEs (runtime glue): the symbol's name, with what the CU knows.
        if let cu = Self.containing(cuRanges, address) {
            let (file, line, column) = lineInfo(cu: cu.function, address: address)
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
        for index in cus.indices {
            var lines: OpaquePointer?
            var count = 0
            guard dwarf_getsrclines(&cus[index], &lines, &count) == 0, let lines else { continue }
            for row in 0..<count {
                rowsRead += 1
                if rowsRead > Self.maxSourceLineRows { return best.flatMap { resolveDWARF($0.address) } }
                guard let entry = dwarf_onesrcline(lines, row) else { break }
                var number: Int32 = 0
                guard dwarf_lineno(entry, &number) == 0, Int(number) == line else { continue }
                var address: Dwarf_Addr = 0
                guard dwarf_lineaddr(entry, &address) == 0, let source = dwarf_linesrc(entry, nil, nil) else { continue }
                let path = String(cString: source)
                let exact = path.hasSuffix(suffix)
                guard exact || path.hasSuffix(base) else { continue }
                // An exact path beats a same-named file; then the lowest address (the line's first instruction).
                if let current = best, (current.exact && !exact) || (current.exact == exact && current.address <= address) { continue }
                best = (address, exact)
            }
        }
        return best.flatMap { resolveDWARF($0.address) }
    }

    // MARK: lookups

    /// The entry containing `address`: the last one starting at or below it, stepping back over a few
    /// in case of nested entries (ranges of distinct functions do not overlap).
    static func containing(_ entries: [RangeEntry], _ address: UInt64) -> RangeEntry? {
        var lo = 0
        var hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].low <= address { lo = mid + 1 } else { hi = mid }
        }
        var index = lo - 1
        while index >= 0, index >= lo - 8 {
            let entry = entries[index]
            if entry.low <= address, address < entry.high { return entry }
            index -= 1
        }
        return nil
    }

    func resolveDWARF(_ address: UInt64) -> Resolution? {
        guard let entry = Self.containing(ranges, address) else { return nil }
        let function = functions[entry.function]

        // The inline chain: the deepest inlined call containing the address, then its parents.
        var containing: [Int] = []
        for (i, node) in function.inlines.enumerated() where node.ranges.contains(where: { $0.low <= address && address < $0.high }) {
            containing.append(i)
        }
        var chain: [Int] = []
        if var current = containing.max(by: { depth(function, $0) < depth(function, $1) }) {
            while current >= 0 {
                chain.append(current)
                current = function.inlines[current].parent
            }
        }

        var (file, line, column) = lineInfo(cu: function.cu, address: address)
        var frames: [SymbolicatedFrame] = []
        for nodeIndex in chain {
            let node = function.inlines[nodeIndex]
            frames.append(frame(name: node.name, file: file, line: line, column: column, inlined: true))
            file = node.callFile
            line = node.callLine
            column = node.callColumn
        }
        frames.append(frame(name: function.name, file: file, line: line, column: column, inlined: false))
        return Resolution(frames: frames, source: .dwarf, offset: nil)
    }

    func depth(_ function: Function, _ index: Int) -> Int {
        var d = 0
        var i = index
        while i >= 0 {
            d += 1
            i = function.inlines[i].parent
        }
        return d
    }

    func frame(name: String?, file: String?, line: Int?, column: Int?, inlined: Bool) -> SymbolicatedFrame {
        let readable = name.map { name -> String in
            if let known = demangled[name] { return known }
            let value = Demangler.demangle(name)
            demangled[name] = value
            return value
        }
        return SymbolicatedFrame(
            function: readable, linkageName: readable == name ? nil : name, file: file, line: line == 0 ? nil : line,
            column: column == 0 ? nil : column, inlined: inlined)
    }

    func lineInfo(cu: Int, address: UInt64) -> (String?, Int?, Int?) {
        guard cu < cus.count else { return (nil, nil, nil) }
        var die = cus[cu]
        guard let line = dwarf_getsrc_die(&die, address) else { return (cuNames[cu], nil, nil) }
        var lineNumber: Int32 = 0
        var column: Int32 = 0
        dwarf_lineno(line, &lineNumber)
        dwarf_linecol(line, &column)
        let file = dwarf_linesrc(line, nil, nil).map { pointer -> String in
            if let known = fileNames[pointer] { return known }
            let value = Self.normalize(String(cString: pointer))
            fileNames[pointer] = value
            return value
        }
        // libdw hands back the table's unsigned values as `int`: a negative one is a hostile huge value.
        return (file, lineNumber > 0 ? Int(lineNumber) : nil, column > 0 ? Int(column) : nil)
    }

    func resolveSymbol(_ address: UInt64) -> Resolution? {
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
        return Resolution(
            frames: [frame(name: symbol.name, file: symbol.file, line: nil, column: nil, inlined: false)], source: .symbolTable,
            offset: address - symbol.address)
    }

    // MARK: indexing

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
        var section: OpaquePointer? = nil
        var best: [Symbol] = []
        var shdr = GElf_Shdr()
        while let scn = elf_nextscn(elf, section) {
            section = scn
            guard gelf_getshdr(scn, &shdr) != nil, shdr.sh_type == UInt32(SHT_SYMTAB) || shdr.sh_type == UInt32(SHT_DYNSYM),
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
                found.append(Symbol(address: sym.st_value, size: sym.st_size, name: String(cString: name),
                                    file: local && currentFile?.isEmpty == false ? currentFile : nil))
            }
            // .symtab is a superset of .dynsym: prefer whichever has more.
            if found.count > best.count { best = found }
        }
        symbols = best.sorted { $0.address < $1.address }
    }

    func indexDWARF() {
        guard let dwarf else { return }
        var offset: Dwarf_Off = 0
        var next: Dwarf_Off = 0
        var headerSize: Int = 0
        while dwarf_nextcu(dwarf, offset, &next, &headerSize, nil, nil, nil) == 0 {
            // Each unit must move forward, or a hostile length would loop here forever.
            guard next > offset else { return }
            var cu = Dwarf_Die()
            if dwarf_offdie(dwarf, offset &+ Dwarf_Off(truncatingIfNeeded: headerSize), &cu) != nil {
                let cuIndex = cus.count
                cus.append(cu)
                for r in Self.ranges(&cu) { cuRanges.append(RangeEntry(low: r.low, high: r.high, function: cuIndex)) }
                var nameAttribute = Dwarf_Attribute()
                cuNames.append(
                    dwarf_attr(&cu, UInt32(DW_AT_name), &nameAttribute).flatMap { dwarf_formstring($0) }.map { String(cString: $0) })
                var files: OpaquePointer? = nil
                var fileCount = 0
                if dwarf_getsrcfiles(&cu, &files, &fileCount) != 0 { files = nil }
                var callFiles: [Int: String] = [:]
                var lastOffset = dwarf_dieoffset(&cu)
                walkChildren(
                    of: &cu, cu: cuIndex, files: files, fileCount: fileCount, callFiles: &callFiles, function: nil, parent: -1,
                    level: 0, lastOffset: &lastOffset)
            }
            offset = next
        }
    }

    func walkChildren(
        of die: inout Dwarf_Die, cu: Int, files: OpaquePointer?, fileCount: Int, callFiles: inout [Int: String], function: Int?,
        parent: Int, level: Int, lastOffset: inout Dwarf_Off
    ) {
        guard level < Self.maxDIEDepth else { return }
        var child = Dwarf_Die()
        guard dwarf_child(&die, &child) == 0 else { return }
        while true {
            // DIEs are visited in file order, each once: a `DW_AT_sibling` pointing back (a cycle) or into a
            // subtree already walked ends this list of children instead of looping or repeating work.
            let childOffset = dwarf_dieoffset(&child)
            guard childOffset > lastOffset, childOffset != Dwarf_Off.max else { return }
            lastOffset = childOffset
            let tag = dwarf_tag(&child)
            var function = function
            var parent = parent
            if tag == Int32(DW_TAG_subprogram) {
                let dieRanges = Self.ranges(&child)
                if !dieRanges.isEmpty {
                    functions.append(Function(name: name(&child), cu: cu, inlines: []))
                    function = functions.count - 1
                    parent = -1
                    for r in dieRanges { ranges.append(RangeEntry(low: r.low, high: r.high, function: function!)) }
                }
            } else if tag == Int32(DW_TAG_inlined_subroutine), let owner = function {
                let dieRanges = Self.ranges(&child)
                if !dieRanges.isEmpty {
                    var callFile: String?
                    var attribute = Dwarf_Attribute()
                    var value: Dwarf_Word = 0
                    // A file index past the CU's file table (or past `Int`) names no file.
                    if dwarf_attr(&child, UInt32(DW_AT_call_file), &attribute) != nil, dwarf_formudata(&attribute, &value) == 0,
                        let files, let index = Int(exactly: value), index < fileCount
                    {
                        if let known = callFiles[index] {
                            callFile = known
                        } else if let path = dwarf_filesrc(files, index, nil, nil) {
                            callFile = Self.normalize(String(cString: path))
                            callFiles[index] = callFile
                        }
                    }
                    let node = InlineNode(
                        ranges: dieRanges, parent: parent, name: name(&child), callFile: callFile,
                        callLine: Self.unsigned(&child, DW_AT_call_line), callColumn: Self.unsigned(&child, DW_AT_call_column))
                    functions[owner].inlines.append(node)
                    parent = functions[owner].inlines.count - 1
                }
            }
            if dwarf_haschildren(&child) != 0 {
                walkChildren(
                    of: &child, cu: cu, files: files, fileCount: fileCount, callFiles: &callFiles, function: function,
                    parent: parent, level: level + 1, lastOffset: &lastOffset)
            }
            var sibling = Dwarf_Die()
            guard dwarf_siblingof(&child, &sibling) == 0 else { return }
            child = sibling
        }
    }

    /// `a//b` and `a/./b` as `a/b`: libdw joins directory and file names verbatim, and a directory of `/`
    /// (Swift's `<compiler-generated>`) gives `//`.
    static func normalize(_ path: String) -> String {
        guard path.contains("//") || path.contains("/./") else { return path }
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) where part != "." { parts.append(part) }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }

    static func ranges(_ die: inout Dwarf_Die) -> [(low: UInt64, high: UInt64)] {
        var out: [(UInt64, UInt64)] = []
        var base: Dwarf_Addr = 0
        var start: Dwarf_Addr = 0
        var end: Dwarf_Addr = 0
        var offset: Int = 0
        var steps = 0
        // Bounded in steps, not only in kept ranges: a hostile list of empty ranges must not loop either.
        repeat {
            offset = dwarf_ranges(&die, offset, &base, &start, &end)
            steps += 1
            if offset > 0, end > start { out.append((start, end)) }
        } while offset > 0 && steps < maxRangesPerDIE
        return out
    }

    /// The linkage (mangled) name, else the plain name, following abstract origins and specifications.
    func name(_ die: inout Dwarf_Die) -> String? {
        var attribute = Dwarf_Attribute()
        for at in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name] {
            if dwarf_attr_integrate(&die, UInt32(at), &attribute) != nil, let s = dwarf_formstring(&attribute) {
                if let known = indexedNames[s] { return known }
                let value = String(cString: s)
                indexedNames[s] = value
                return value
            }
        }
        return nil
    }

    /// A line or column attribute; 0 (no location) when absent or beyond any real line (`DW_FORM_data8`
    /// lets a hostile file say 2^64 - 1).
    static func unsigned(_ die: inout Dwarf_Die, _ at: Int) -> Int {
        var attribute = Dwarf_Attribute()
        var value: Dwarf_Word = 0
        guard dwarf_attr(&die, UInt32(at), &attribute) != nil, dwarf_formudata(&attribute, &value) == 0,
            value <= UInt64(UInt32.max)
        else { return 0 }
        return Int(value)
    }
}

/// Errors of the Symbolication module.
public struct SymbolicationError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }
        public static let openFailed = Code(name: "open_failed")
        public static let notELF = Code(name: "not_elf")
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code): \(message)" }
}
