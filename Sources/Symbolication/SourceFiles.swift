import CLibdw

#if canImport(Glibc)
import Glibc
#endif

/// The source files a debug file's line tables name: what `symupload --include-sources` collects.
///
/// Only files that code lines point at (`dwarf_getsrclines`), not every file of each unit's file table: a
/// frame's `file:line` can only name one of these, and a file table also lists headers that declared a type
/// and nothing more. Paths are normalised the way frames are (`DebugModule.normalize`), so a bundle's key for a
/// file is exactly what the symbolicated frame shows. The DWARF is walked once, without building the
/// symbolicator's indexes.
public enum SourceFiles {
    /// Most line-table rows read (a hostile or enormous file stops here; what was found so far is returned).
    static let maxRows = 50_000_000

    /// Most distinct compilation directories kept (one per unit at most; a hostile file stops adding here).
    static let maxCompilationDirectories = 10_000

    /// What a debug file's line tables name, and the folders its units were compiled in.
    public struct Inventory: Sendable, Equatable {
        /// The distinct source paths code lines point at, normalised, sorted.
        public var paths: [String]
        /// The distinct `DW_AT_comp_dir` values of the units that have line tables, as written (untrusted: a
        /// file can name any folder), sorted.
        public var compilationDirectories: [String]
    }

    /// The source paths of `path`'s line tables and the compilation directories of their units; both empty
    /// when it has no DWARF.
    ///
    /// - Throws: `SymbolicationError` when the file cannot be opened or is not ELF.
    public static func inventory(ofFile path: String) throws -> Inventory {
        elf_version(UInt32(EV_CURRENT))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SymbolicationError(.openFailed, "cannot open \(path) (errno \(errno))") }
        defer { close(fd) }
        guard let elf = elf_begin(fd, ELF_C_READ_MMAP, nil) else {
            throw SymbolicationError(.notELF, "\(path) is not an ELF file")
        }
        defer { elf_end(elf) }
        guard elf_kind(elf) == ELF_K_ELF else { throw SymbolicationError(.notELF, "\(path) is not an ELF file") }
        guard let dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nil) else {
            return Inventory(paths: [], compilationDirectories: [])
        }
        defer { dwarf_end(dwarf) }
        var found = Set<String>()
        var directories = Set<String>()
        // The same file is named by thousands of rows; libdw hands back one pointer per file table entry.
        var seenPointers = Set<UnsafePointer<CChar>>()
        var rows = 0
        var offset: Dwarf_Off = 0
        var next: Dwarf_Off = 0
        var headerSize = 0
        units: while dwarf_nextcu(dwarf, offset, &next, &headerSize, nil, nil, nil) == 0, next > offset {
            var cu = Dwarf_Die()
            defer { offset = next }
            guard dwarf_offdie(dwarf, offset &+ Dwarf_Off(truncatingIfNeeded: headerSize), &cu) != nil else { continue }
            var lines: OpaquePointer?
            var count = 0
            guard dwarf_getsrclines(&cu, &lines, &count) == 0, let lines else { continue }
            var attribute = Dwarf_Attribute()
            if directories.count < maxCompilationDirectories,
                dwarf_attr_integrate(&cu, UInt32(DW_AT_comp_dir), &attribute) != nil,
                let directory = dwarf_formstring(&attribute)
            {
                directories.insert(String(cString: directory))
            }
            for row in 0..<count {
                rows &+= 1
                if rows > maxRows { break units }
                guard let entry = dwarf_onesrcline(lines, row), let source = dwarf_linesrc(entry, nil, nil) else {
                    continue
                }
                guard seenPointers.insert(source).inserted else { continue }
                found.insert(DebugModule.normalize(String(cString: source)))
            }
        }
        return Inventory(paths: found.sorted(), compilationDirectories: directories.sorted())
    }
}
