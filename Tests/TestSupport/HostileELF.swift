import Foundation

/// Crafted debug files an attacker could upload, assembled by gcc from hand-written assembly in the test
/// (issue #9, finding 2). Each is a real ELF shared object with a build-id, linked at address 0, so that a
/// module based at 0 in a report maps frame addresses to file addresses one to one.
public enum HostileELF {
    /// An absolute `FUNC` symbol at `0xffffffffffffff00` of size `0x1000`: its end passes 2^64.
    /// A frame at `0xffffffffffffff10` used to trap on `symbol.address + symbol.size`.
    public static let absoluteSymbolAddress: UInt64 = 0xffff_ffff_ffff_ff00
    public static let absoluteSymbolAssembly = """
            .text
            .globl real_function
            .type real_function, @function
        real_function:
            ret
            .size real_function, .-real_function

            .globl huge_absolute
            .type huge_absolute, @function
            .set huge_absolute, 0xffffffffffffff00
            .size huge_absolute, 0x1000
            .section .note.GNU-stack,"",@progbits
        """

    /// Builds the absolute-symbol library; returns its path.
    public static func absoluteSymbolLibrary(in folder: TempFolder) throws -> String {
        try link(absoluteSymbolAssembly, name: "libabsolute", in: folder)
    }

    /// DWARF 4 written by hand: a CU with a line table, a subprogram `outer` and, inside it, an inlined call
    /// of `inlined_callee` whose `DW_AT_call_file`, `DW_AT_call_line` and `DW_AT_call_column` are
    /// `DW_FORM_data8` with the given values (`0xffffffffffffffff` used to trap on `Int(value)`).
    ///
    /// `outer` starts at the symbol `outer`; the inlined call covers `outer + 1 ..< outer + 3`.
    public static func inlineAssembly(callFile: UInt64, callLine: UInt64, callColumn: UInt64) -> String {
        """
            .text
            .globl outer
            .type outer, @function
        outer:
        .Lfunc_begin:
            .file 1 "hostile.c"
            .loc 1 10 0
            nop
        .Linline_begin:
            .loc 1 20 0
            nop
            nop
        .Linline_end:
            .loc 1 11 0
            ret
        .Lfunc_end:
            .size outer, .-outer

            .section .debug_abbrev,"",@progbits
        .Labbrev:
            .uleb128 1
            .uleb128 0x11
            .byte 1
            .uleb128 0x03
            .uleb128 0x08
            .uleb128 0x10
            .uleb128 0x17
            .uleb128 0x11
            .uleb128 0x01
            .uleb128 0x12
            .uleb128 0x07
            .byte 0, 0
            .uleb128 2
            .uleb128 0x2e
            .byte 1
            .uleb128 0x03
            .uleb128 0x08
            .uleb128 0x11
            .uleb128 0x01
            .uleb128 0x12
            .uleb128 0x07
            .byte 0, 0
            .uleb128 3
            .uleb128 0x1d
            .byte 0
            .uleb128 0x03
            .uleb128 0x08
            .uleb128 0x11
            .uleb128 0x01
            .uleb128 0x12
            .uleb128 0x07
            .uleb128 0x58
            .uleb128 0x07
            .uleb128 0x59
            .uleb128 0x07
            .uleb128 0x57
            .uleb128 0x07
            .byte 0, 0
            .byte 0

            .section .debug_info,"",@progbits
            .long .Linfo_end - .Linfo_start
        .Linfo_start:
            .value 4
            .long .Labbrev
            .byte 8
            .uleb128 1
            .asciz "hostile.c"
            .long .Lline
            .quad .Lfunc_begin
            .quad .Lfunc_end - .Lfunc_begin
            .uleb128 2
            .asciz "outer"
            .quad .Lfunc_begin
            .quad .Lfunc_end - .Lfunc_begin
            .uleb128 3
            .asciz "inlined_callee"
            .quad .Linline_begin
            .quad .Linline_end - .Linline_begin
            .quad \(callFile)
            .quad \(callLine)
            .quad \(callColumn)
            .byte 0
            .byte 0
        .Linfo_end:

            .section .debug_line,"",@progbits
        .Lline:
            .section .note.GNU-stack,"",@progbits
        """
    }

    /// Builds a library from `inlineAssembly`; returns its path.
    public static func inlineLibrary(
        callFile: UInt64, callLine: UInt64, callColumn: UInt64, name: String, in folder: TempFolder
    ) throws
        -> String
    {
        try link(inlineAssembly(callFile: callFile, callLine: callLine, callColumn: callColumn), name: name, in: folder)
    }

    /// DWARF whose `DW_AT_sibling` links point into the subtree just walked, nested `depth` levels: a walker
    /// that follows them naively visits 2^depth DIEs. Each level is a `DW_TAG_lexical_block` (children yes,
    /// with a `DW_AT_sibling` pointing to its own first child) holding the next; the innermost holds the
    /// subprogram `deep` covering the function.
    public static func siblingLoopAssembly(depth: Int) -> String {
        var info = ""
        for level in 0..<depth {
            info += "\n.Lblock\(level):\n    .uleb128 4\n    .long .Lblock\(level + 1) - .Lcu\n"
        }
        info +=
            "\n.Lblock\(depth):\n    .uleb128 2\n    .asciz \"deep\"\n    .quad .Lfunc_begin\n    .quad .Lfunc_end - .Lfunc_begin\n"
        info += "    .byte 0\n"  // no children of `deep` (the abbrev says children: yes)
        info += String(repeating: "    .byte 0\n", count: depth)
        return """
                .text
                .globl deep
                .type deep, @function
            deep:
            .Lfunc_begin:
                .file 1 "deep.c"
                .loc 1 5 0
                nop
                ret
            .Lfunc_end:
                .size deep, .-deep

                .section .debug_abbrev,"",@progbits
            .Labbrev:
                .uleb128 1
                .uleb128 0x11
                .byte 1
                .uleb128 0x03
                .uleb128 0x08
                .uleb128 0x10
                .uleb128 0x17
                .byte 0, 0
                .uleb128 2
                .uleb128 0x2e
                .byte 1
                .uleb128 0x03
                .uleb128 0x08
                .uleb128 0x11
                .uleb128 0x01
                .uleb128 0x12
                .uleb128 0x07
                .byte 0, 0
                .uleb128 4
                .uleb128 0x0b
                .byte 1
                .uleb128 0x01
                .uleb128 0x13
                .byte 0, 0
                .byte 0

                .section .debug_info,"",@progbits
            .Lcu:
                .long .Linfo_end - .Linfo_start
            .Linfo_start:
                .value 4
                .long .Labbrev
                .byte 8
                .uleb128 1
                .asciz "deep.c"
                .long .Lline
            \(info)
                .byte 0
            .Linfo_end:

                .section .debug_line,"",@progbits
            .Lline:
                .section .note.GNU-stack,"",@progbits
            """
    }

    /// DWARF 4 written by hand with one compilation unit per entry of `units`, each holding one subprogram
    /// `fn<i>` that covers the real function `fn<i>` (four bytes). A unit's own `DW_AT_low_pc` and
    /// `DW_AT_high_pc` (`DW_FORM_data8`, a length) are the given assembler expressions, so they can lie: miss
    /// the function, wrap past 2^64, or claim the whole address space. Units with `function: false` hold no
    /// subprogram (and no code).
    public static func unitRangesAssembly(units: [(low: String, length: String, function: Bool)]) -> String {
        var text = "    .text\n"
        for (i, unit) in units.enumerated() where unit.function {
            text += """
                    .globl fn\(i)
                    .type fn\(i), @function
                fn\(i):
                .Lfn\(i)_begin:
                    nop
                    nop
                    nop
                    ret
                .Lfn\(i)_end:
                    .size fn\(i), .-fn\(i)

                """
        }
        // 1: compile unit (children; name, low_pc addr, high_pc data8); 2: subprogram (name, low_pc, high_pc).
        text += """
                .section .debug_abbrev,"",@progbits
            .Labbrev:
                .uleb128 1
                .uleb128 0x11
                .byte 1
                .uleb128 0x03
                .uleb128 0x08
                .uleb128 0x11
                .uleb128 0x01
                .uleb128 0x12
                .uleb128 0x07
                .byte 0, 0
                .uleb128 2
                .uleb128 0x2e
                .byte 0
                .uleb128 0x03
                .uleb128 0x08
                .uleb128 0x11
                .uleb128 0x01
                .uleb128 0x12
                .uleb128 0x07
                .byte 0, 0
                .byte 0
                .section .debug_info,"",@progbits

            """
        for (i, unit) in units.enumerated() {
            text += """
                    .long .Lcu\(i)_end - .Lcu\(i)_start
                .Lcu\(i)_start:
                    .value 4
                    .long .Labbrev
                    .byte 8
                    .uleb128 1
                    .asciz "unit\(i).c"
                    .quad \(unit.low)
                    .quad \(unit.length)

                """
            if unit.function {
                text += """
                        .uleb128 2
                        .asciz "fn\(i)"
                        .quad .Lfn\(i)_begin
                        .quad .Lfn\(i)_end - .Lfn\(i)_begin

                    """
            }
            text += """
                    .byte 0
                .Lcu\(i)_end:

                """
        }
        text += """
                .section .note.GNU-stack,"",@progbits

            """
        return text
    }

    /// Assembles and links `assembly` into `name.so` (no C runtime, a GNU build-id, linked at 0).
    public static func link(_ assembly: String, name: String, in folder: TempFolder) throws -> String {
        let source = try folder.write(name + ".s", assembly)
        let output = folder.file(name + ".so")
        try Command.check("gcc", ["-nostdlib", "-shared", "-Wl,--build-id", "-o", output, source])
        return output
    }

    /// The address of `symbol` in `binary`, from `nm`.
    public static func address(of symbol: String, in binary: String) throws -> UInt64? {
        let out = try Command.check("nm", ["--defined-only", binary])
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3, parts[2] == symbol { return UInt64(parts[0], radix: 16) }
        }
        return nil
    }
}
