/// A thread's registers as a minidump context record: `MINIDUMP_CONTEXT_AMD64` (1232 bytes) or Crashpad's
/// ARM64 context (`CONTEXT_ARM64`, 912 bytes). Pure; the tracer fills the registers from `PTRACE_GETREGSET`.
enum MinidumpContext {
    /// x86-64 general registers, as `user_regs_struct` names them.
    struct AMD64 {
        var rax: UInt64 = 0, rbx: UInt64 = 0, rcx: UInt64 = 0, rdx: UInt64 = 0
        var rsi: UInt64 = 0, rdi: UInt64 = 0, rbp: UInt64 = 0, rsp: UInt64 = 0
        var r8: UInt64 = 0, r9: UInt64 = 0, r10: UInt64 = 0, r11: UInt64 = 0
        var r12: UInt64 = 0, r13: UInt64 = 0, r14: UInt64 = 0, r15: UInt64 = 0
        var rip: UInt64 = 0, eflags: UInt64 = 0
        var cs: UInt64 = 0, ss: UInt64 = 0, ds: UInt64 = 0, es: UInt64 = 0, fs: UInt64 = 0, gs: UInt64 = 0
        /// The 512-byte `FXSAVE` area (`NT_PRFPREG`), when it could be read.
        var fxsave: [UInt8]?
    }

    /// arm64 registers, as `user_pt_regs` and `user_fpsimd_state` hold them.
    struct ARM64 {
        /// x0…x30 (x29 the frame pointer, x30 the link register).
        var x: [UInt64] = Array(repeating: 0, count: 31)
        var sp: UInt64 = 0
        var pc: UInt64 = 0
        var pstate: UInt64 = 0
        /// v0…v31, 16 bytes each, then `fpsr` and `fpcr`, when they could be read.
        var vector: [UInt8]?
        var fpsr: UInt32 = 0
        var fpcr: UInt32 = 0
    }

    /// `CONTEXT_AMD64 | CONTROL | INTEGER | SEGMENTS`, and `FLOATING_POINT` when the FXSAVE area is there.
    static func amd64(_ r: AMD64) -> [UInt8] {
        var w = ByteWriter()
        w.zeros(6 * 8)  // P1Home…P6Home
        let flags: UInt32 = 0x0010_0000 | 0x1 | 0x2 | 0x4 | (r.fxsave?.count == 512 ? 0x8 : 0)
        w.u32(flags)
        let mxcsr = r.fxsave.flatMap {
            $0.count == 512 ? UInt32($0[24]) | UInt32($0[25]) << 8 | UInt32($0[26]) << 16 | UInt32($0[27]) << 24 : nil
        }
        w.u32(mxcsr ?? 0)
        for segment in [r.cs, r.ds, r.es, r.fs, r.gs, r.ss] { w.u16(UInt16(truncatingIfNeeded: segment)) }
        w.u32(UInt32(truncatingIfNeeded: r.eflags))
        w.zeros(6 * 8)  // Dr0…Dr3, Dr6, Dr7
        for value in [r.rax, r.rcx, r.rdx, r.rbx, r.rsp, r.rbp, r.rsi, r.rdi] { w.u64(value) }
        for value in [r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15] { w.u64(value) }
        w.u64(r.rip)
        if let area = r.fxsave, area.count == 512 { w.bytes(area) } else { w.zeros(512) }
        w.zeros(26 * 16)  // VectorRegister
        w.zeros(6 * 8)  // VectorControl, DebugControl, last branch and exception addresses
        precondition(w.count == amd64Size)
        return w.data
    }

    static let amd64Size = 1232
    static let arm64Size = 912

    /// `CONTEXT_ARM64 | CONTROL | INTEGER`, and `FLOATING_POINT` when the vector registers are there.
    static func arm64(_ r: ARM64) -> [UInt8] {
        var w = ByteWriter()
        let hasVector = r.vector?.count == 32 * 16
        w.u32(0x0040_0000 | 0x1 | 0x2 | (hasVector ? 0x4 : 0))
        w.u32(UInt32(truncatingIfNeeded: r.pstate))
        for index in 0..<31 { w.u64(index < r.x.count ? r.x[index] : 0) }
        w.u64(r.sp)
        w.u64(r.pc)
        if let vector = r.vector, hasVector { w.bytes(vector) } else { w.zeros(32 * 16) }
        w.u32(r.fpcr)
        w.u32(r.fpsr)
        w.zeros(8 * 4 + 8 * 8 + 2 * 4 + 2 * 8)  // Bcr, Bvr, Wcr, Wvr
        precondition(w.count == arm64Size)
        return w.data
    }
}
