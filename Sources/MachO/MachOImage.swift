import FaultlineCore

/// A segment (`LC_SEGMENT`/`LC_SEGMENT_64`) and its sections.
public struct MachOSegment: Sendable, Equatable {
    /// `__TEXT`, `__DATA`, `__DWARF`, `__LINKEDIT`, … (empty in an object file's one segment).
    public var name: String
    /// Where the segment is mapped, before any slide.
    public var vmaddr: UInt64
    /// How many bytes it spans in memory.
    public var vmsize: UInt64
    /// Relative to the slice start.
    public var fileOffset: UInt64
    /// How many of its bytes are in the file (0 for `__PAGEZERO`, and for a dSYM's `__TEXT`).
    public var fileSize: UInt64
    /// Its sections in load-command order.
    public var sections: [MachOSection]
}

/// A section of a segment.
public struct MachOSection: Sendable, Equatable {
    /// The segment name the section itself carries (`__TEXT`, `__DWARF`; in an object file the one segment is unnamed
    /// and this tells the sections apart).
    public var segment: String
    /// Up to 16 bytes, as `__debug_str_offs` (Mach-O's name for `.debug_str_offsets`, cut to its field).
    public var name: String
    /// The section's address before any slide.
    public var address: UInt64
    /// Its size in memory (and in the file, when it has file data).
    public var size: UInt64
    /// Relative to the slice start; 0 when the section has no bytes in this file (a dSYM's `__TEXT`).
    public var fileOffset: UInt64
    /// `section.flags`: the low byte is the section type (zero-fill types have no file data).
    public var flags: UInt32

    /// Whether the section's bytes are in the file: a dSYM keeps the executable's sections with offset 0 and no data,
    /// zero-fill sections (`__bss`, `__common`, thread-local zero-fill) never have any.
    public var hasFileData: Bool {
        let type = flags & 0xff
        return fileOffset != 0 && size > 0 && type != 0x1 && type != 0xc && type != 0x12
    }
}

/// `LC_SYMTAB`: where the `nlist` entries and their strings are, relative to the slice start. Checked to lie inside
/// the slice.
public struct MachOSymbolTable: Sendable, Equatable {
    /// Where the `nlist` entries start.
    public var symbolsOffset: UInt64
    /// How many entries there are.
    public var count: Int
    /// 16 (`nlist_64`) or 12 (`nlist`).
    public var entrySize: Int
    /// Where the names (NUL-terminated, indexed by `n_strx`) start.
    public var stringsOffset: UInt64
    /// How many bytes of names there are.
    public var stringsSize: UInt64
}

/// One `nlist(_64)` entry with its name.
public struct MachOSymbol: Sendable, Equatable {
    /// The name as stored (with Mach-O's leading underscore); empty when `n_strx` is outside the string table.
    public var name: String
    /// `n_type`: `N_STAB` bits (0xe0) mark debugger entries, `N_TYPE` (0x0e) is 0xe for a symbol defined in a section.
    public var type: UInt8
    /// `n_sect`: the 1-based section ordinal, 0 for none.
    public var section: UInt8
    /// `n_desc`.
    public var description: UInt16
    /// `n_value`: the symbol's address before any slide, for a symbol defined in a section.
    public var value: UInt64

    /// A symbol defined in a section of this image (not a debugger entry, not undefined).
    public var isDefinedInSection: Bool { type & 0xe0 == 0 && type & 0x0e == 0x0e }
}

/// What a thin Mach-O image's load commands say: identity (`LC_UUID`), type, architecture, segments and sections,
/// the symbol table's place, the platform.
///
/// Read with bounds checks on every offset, count and size against the slice (`MachOImage.limits`), so a truncated or
/// hostile image is refused with a `MachOError`. Section contents are not read. Offsets are relative to the slice.
public struct MachOImage: Sendable, Equatable {
    /// The kinds of Mach-O file (`mach_header.filetype`) by the names Faultline stores.
    public enum FileType: String, Sendable, Equatable {
        case object, executable, dylib, bundle, dsym, dylinker, kext, other
    }

    /// Where the image lies in its file.
    public var slice: MachOSlice
    /// `MH_MAGIC_64` (else `MH_MAGIC`).
    public var is64Bit: Bool
    /// `mach_header.filetype` by name.
    public var fileType: FileType
    /// `mach_header.filetype` as read.
    public var rawFileType: UInt32
    /// The 16 bytes of `LC_UUID`, in file order.
    public var uuid: [UInt8]?
    /// `LC_SEGMENT(_64)` commands in load-command order.
    public var segments: [MachOSegment]
    /// `LC_SYMTAB`, checked to lie inside the slice.
    public var symbolTable: MachOSymbolTable?
    /// `ios`, `macos`, `iossimulator`, … from `LC_BUILD_VERSION` or `LC_VERSION_MIN_*`.
    public var platform: String?
    /// `15.0`, `11.0.1`.
    public var minOS: String?
    /// The SDK version the image was built with, spelled like `minOS`.
    public var sdk: String?
    /// A dylib's install name (`LC_ID_DYLIB`).
    public var installName: String?

    /// `slice.architecture`.
    public var architecture: String { slice.architecture }

    /// The build-id Faultline keys the image by: the UUID's bytes as 32 lowercase hex digits, not byte-swapped. Nil
    /// without `LC_UUID` or with an all-zero one (which would collide across unrelated files).
    public var buildID: BuildID? {
        guard let uuid, uuid.contains(where: { $0 != 0 }) else { return nil }
        return BuildID(bytes: uuid)
    }

    /// `__TEXT`'s vmaddr: where the image expects to be loaded (`0x100000000` for an arm64 executable).
    public var textVMAddr: UInt64? { segments.first { $0.name == "__TEXT" }?.vmaddr }

    /// The first section named `name` whose own segment name is `segment`.
    public func section(_ segment: String, _ name: String) -> MachOSection? {
        for s in segments {
            if let hit = s.sections.first(where: { $0.segment == segment && $0.name == name }) { return hit }
        }
        return nil
    }

    /// `__DWARF,__debug_info` with data: the image serves `debuginfo`.
    public var hasDebugInfo: Bool { section("__DWARF", "__debug_info")?.hasFileData ?? false }
    /// `__TEXT,__text` with data, in a file that is not a dSYM: the image serves `executable`.
    public var hasCode: Bool { fileType != .dsym && (section("__TEXT", "__text")?.hasFileData ?? false) }
    /// `__unwind_info`, `__eh_frame` or `__debug_frame` with data.
    public var hasUnwindInfo: Bool {
        [("__TEXT", "__unwind_info"), ("__TEXT", "__eh_frame"), ("__DWARF", "__debug_frame")].contains {
            section($0.0, $0.1)?.hasFileData ?? false
        }
    }
    /// `LC_SYMTAB` with entries.
    public var hasSymbols: Bool { (symbolTable?.count ?? 0) > 0 }

    /// `symtab`, `debug`, `unwind` (the names sentry-cli uses).
    public var features: [String] {
        var out: [String] = []
        if hasSymbols { out.append("symtab") }
        if hasDebugInfo { out.append("debug") }
        if hasUnwindInfo { out.append("unwind") }
        return out
    }

    /// `LC_UUID` as Apple prints it: upper-case, hyphenated (`4C4C44C1-5555-3144-A18D-19088842705B`).
    public var uuidString: String? { uuid.map(Self.uuidString) }

    /// 16 bytes as an upper-case hyphenated UUID.
    public static func uuidString(_ bytes: [UInt8]) -> String {
        let hex = Hex.encode(bytes).uppercased()
        guard bytes.count == 16 else { return hex }
        let h = Array(hex)
        return [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map { String($0) }.joined(separator: "-")
    }
}
