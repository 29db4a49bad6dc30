import CLibdw

/// Building `DebugModule`'s indexes: the unit table when the file opens, one unit's functions when an address
/// first lands in it. Every count and offset here comes from an uploaded file: loops are bounded by forward
/// progress or by a fixed limit, and arithmetic does not trap.
extension DebugModule {
    /// Reads every compilation unit's header, DIE, name and address ranges (not its children).
    func readUnits() {
        guard let dwarf else { return }
        var offset: Dwarf_Off = 0
        var next: Dwarf_Off = 0
        var headerSize: Int = 0
        while dwarf_nextcu(dwarf, offset, &next, &headerSize, nil, nil, nil) == 0 {
            // Each unit must move forward, or a hostile length would loop here forever.
            guard next > offset, units.count < Int(Int32.max) else { break }
            var die = Dwarf_Die()
            if dwarf_offdie(dwarf, offset &+ Dwarf_Off(truncatingIfNeeded: headerSize), &die) != nil {
                let unit = Int32(units.count)
                let spans = Self.ranges(&die)
                for span in spans {
                    unitRanges.append(RangeEntry(low: span.low, high: span.high, unit: unit, function: -1))
                }
                if spans.isEmpty { unrangedUnits.append(unit) }
                var attribute = Dwarf_Attribute()
                let name = dwarf_attr(&die, UInt32(DW_AT_name), &attribute).flatMap { dwarf_formstring($0) }.map {
                    String(cString: $0)
                }
                units.append(Unit(die: die, name: name, hasRanges: !spans.isEmpty))
                baseBytes &+= name.map { Self.bytes(of: $0) } ?? 0
            }
            offset = next
        }
        unitRanges.sort { $0.low < $1.low }
        baseBytes &+= UInt64(units.count) &* UInt64(MemoryLayout<Unit>.stride)
        baseBytes &+= UInt64(unitRanges.count) &* UInt64(MemoryLayout<RangeEntry>.stride)
        baseBytes &+= UInt64(unrangedUnits.count) &* 4
    }

    /// Walks `unit`'s DIEs once and keeps its functions and their inline trees (after making room when the
    /// module is over `maxIndexBytes`, unless `makingRoom` is false).
    func indexUnit(_ unit: Int, makingRoom: Bool = true) {
        if makingRoom { makeRoom(keeping: unit) }
        var functions: [Function] = []
        var ranges: [RangeEntry] = []
        var walk = UnitWalk(unit: Int32(unit))
        var die = units[unit].die
        if dwarf_getsrcfiles(&die, &walk.files, &walk.fileCount) != 0 { walk.files = nil }
        var lastOffset = dwarf_dieoffset(&die)
        walkChildren(
            of: &die, walk: &walk, functions: &functions, ranges: &ranges, function: nil, parent: -1, level: 0,
            lastOffset: &lastOffset)
        ranges.sort { $0.low < $1.low }
        var bytes = UInt64(functions.count) &* UInt64(MemoryLayout<Function>.stride)
        bytes &+= UInt64(ranges.count) &* UInt64(MemoryLayout<RangeEntry>.stride)
        for function in functions where !function.inlines.isEmpty {
            bytes &+= 32 &+ UInt64(function.inlines.count) &* UInt64(MemoryLayout<InlineNode>.stride)
            for node in function.inlines where !node.more.isEmpty {
                bytes &+= 32 &+ UInt64(node.more.count) &* UInt64(MemoryLayout<Span>.stride)
            }
        }
        units[unit].functions = functions
        units[unit].ranges = ranges
        units[unit].indexed = true
        units[unit].bytes = bytes
        tableBytes &+= bytes
    }

    /// Walks the units that have no ranges of their own, once, and keeps their functions' ranges in
    /// `unrangedRanges` (these units are never dropped: an address that lands in no unit would walk them again).
    func indexUnrangedUnits() {
        makeRoom(keeping: -1)
        unrangedIndexed = true
        for unit in unrangedUnits {
            let index = Int(unit)
            // No room is made inside the loop: it could drop the units already gathered here.
            if !units[index].indexed { indexUnit(index, makingRoom: false) }
            unrangedRanges += units[index].ranges
        }
        unrangedRanges.sort { $0.low < $1.low }
        tableBytes &+= UInt64(unrangedRanges.count) &* UInt64(MemoryLayout<RangeEntry>.stride)
    }

    /// Keeps `tableBytes + nameBytes` within `maxIndexBytes` before another unit is indexed: drops the least
    /// recently used ranged units' indexes down to three quarters of the bound; when the names alone are still
    /// over it, drops every index and name (what is used again is rebuilt). `keeping` is the unit about to be
    /// indexed.
    func makeRoom(keeping: Int) {
        guard tableBytes &+ nameBytes > maxIndexBytes else { return }
        let target = maxIndexBytes / 4 * 3
        let candidates = units.indices.filter { units[$0].indexed && units[$0].hasRanges && $0 != keeping }
            .sorted { units[$0].lastUse < units[$1].lastUse }
        for unit in candidates where tableBytes &+ nameBytes > target {
            drop(unit)
        }
        guard tableBytes &+ nameBytes > maxIndexBytes else { return }
        for unit in units.indices where units[unit].indexed { drop(unit) }
        unrangedRanges = []
        unrangedIndexed = false
        names = []
        demangledNames = []
        nameIndex = [:]
        demangled = [:]
        fileNames = [:]
        tableBytes = 0
        nameBytes = 0
    }

    func drop(_ unit: Int) {
        units[unit].functions = []
        units[unit].ranges = []
        units[unit].indexed = false
        tableBytes = tableBytes >= units[unit].bytes ? tableBytes - units[unit].bytes : 0
        units[unit].bytes = 0
    }

    /// What a walk of one unit carries: its file table and the call-site file names read so far.
    struct UnitWalk {
        var unit: Int32
        var files: OpaquePointer? = nil
        var fileCount = 0
        var callFiles: [Int: String] = [:]
        var entries = 0
    }

    func walkChildren(
        of die: inout Dwarf_Die, walk: inout UnitWalk, functions: inout [Function], ranges: inout [RangeEntry],
        function: Int?, parent: Int32, level: Int, lastOffset: inout Dwarf_Off
    ) {
        guard level < Self.maxDIEDepth else { return }
        var child = Dwarf_Die()
        guard dwarf_child(&die, &child) == 0 else { return }
        while walk.entries < Self.maxEntriesPerUnit {
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
                    walk.entries += 1
                    let lowest = dieRanges.map(\.low).min() ?? 0
                    let highest = dieRanges.map(\.high).max() ?? 0
                    functions.append(Function(name: name(&child), inlines: [], lowest: lowest, highest: highest))
                    let index = functions.count - 1
                    function = index
                    parent = -1
                    for r in dieRanges {
                        ranges.append(RangeEntry(low: r.low, high: r.high, unit: walk.unit, function: Int32(index)))
                    }
                }
            } else if tag == Int32(DW_TAG_inlined_subroutine), let owner = function {
                let dieRanges = Self.ranges(&child)
                if let first = dieRanges.first {
                    walk.entries += 1
                    var callFile: String?
                    var attribute = Dwarf_Attribute()
                    var value: Dwarf_Word = 0
                    // A file index past the CU's file table (or past `Int`) names no file.
                    if dwarf_attr(&child, UInt32(DW_AT_call_file), &attribute) != nil,
                        dwarf_formudata(&attribute, &value) == 0,
                        let files = walk.files, let index = Int(exactly: value), index < walk.fileCount
                    {
                        if let known = walk.callFiles[index] {
                            callFile = known
                        } else if let path = dwarf_filesrc(files, index, nil, nil) {
                            callFile = Self.normalize(String(cString: path))
                            walk.callFiles[index] = callFile
                            nameBytes &+= callFile.map { Self.bytes(of: $0) } ?? 0
                        }
                    }
                    let node = InlineNode(
                        low: first.low, high: first.high, more: Array(dieRanges.dropFirst()), parent: parent,
                        name: name(&child),
                        callLine: Self.unsigned(&child, DW_AT_call_line),
                        callColumn: Self.unsigned(&child, DW_AT_call_column),
                        callFile: callFile)
                    functions[owner].inlines.append(node)
                    parent = Int32(functions[owner].inlines.count - 1)
                }
            }
            if dwarf_haschildren(&child) != 0 {
                walkChildren(
                    of: &child, walk: &walk, functions: &functions, ranges: &ranges, function: function, parent: parent,
                    level: level + 1, lastOffset: &lastOffset)
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

    static func ranges(_ die: inout Dwarf_Die) -> [Span] {
        var out: [Span] = []
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

    /// The linkage (mangled) name, else the plain name, following abstract origins and specifications: an
    /// index into `names` (-1 for none), each distinct `.debug_str` string read once.
    func name(_ die: inout Dwarf_Die) -> Int32 {
        var attribute = Dwarf_Attribute()
        for at in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name] {
            if dwarf_attr_integrate(&die, UInt32(at), &attribute) != nil, let s = dwarf_formstring(&attribute) {
                if let known = nameIndex[s] { return known }
                guard names.count < Int(Int32.max) else { return -1 }
                let value = String(cString: s)
                let index = Int32(names.count)
                names.append(value)
                demangledNames.append(nil)
                nameIndex[s] = index
                // The string, its slot in `names` and `demangledNames`, and its `nameIndex` entry.
                nameBytes &+= Self.bytes(of: value) &+ 16 &+ 17 &+ 24
                return index
            }
        }
        return -1
    }

    /// A line or column attribute; 0 (no location) when absent or beyond any real line (`DW_FORM_data8`
    /// lets a hostile file say 2^64 - 1).
    static func unsigned(_ die: inout Dwarf_Die, _ at: Int) -> UInt32 {
        var attribute = Dwarf_Attribute()
        var value: Dwarf_Word = 0
        guard dwarf_attr(&die, UInt32(at), &attribute) != nil, dwarf_formudata(&attribute, &value) == 0,
            let small = UInt32(exactly: value)
        else { return 0 }
        return small
    }
}
