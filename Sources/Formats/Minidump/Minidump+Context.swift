import FaultlineCore

extension Minidump {
    /// A thread's registers, numbered as DWARF numbers them, decoded from a CPU context record.
    ///
    /// x86-64 (`CONTEXT_AMD64`, 1232 bytes): 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
    /// 8–15 r8–r15, 16 rip. arm64 (Crashpad's and Windows' `CONTEXT_ARM64`, and Breakpad's older layout,
    /// which keeps the registers at the same offsets): 0–30 x0–x30, 31 sp; `pc` apart.
    public struct CPUContext: Sendable, Equatable {
        public var architecture: ProcessSnapshot.Architecture
        /// `context_flags` as written.
        public var flags: UInt32
        public var registers: [Int: UInt64]
        public var pc: UInt64
        public var sp: UInt64
    }

    /// `CONTEXT_AMD64`.
    static let amd64ContextFlag: UInt32 = 0x0010_0000
    /// `CONTEXT_ARM64` (Windows, Crashpad) and Breakpad's older `MD_CONTEXT_ARM64_OLD`.
    static let arm64ContextFlag: UInt32 = 0x0040_0000
    static let arm64OldContextFlag: UInt32 = 0x8000_0000

    /// Offsets of x86-64's general registers in DWARF order (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8…r15).
    static let amd64RegisterOffsets = [120, 136, 128, 144, 168, 176, 160, 152, 184, 192, 200, 208, 216, 224, 232, 240]

    /// Decodes the context at `location`; nil when there is none (size 0).
    ///
    /// The architecture comes from the flags' CPU bits, checked against the record's size. A context that
    /// is neither x86-64 nor arm64 is kept as nil (a walker cannot use it); one that claims a CPU but is too
    /// short for its registers is an error.
    func readContext(_ location: Location, _ what: String) throws(MinidumpError) -> CPUContext? {
        guard location.size > 0 else { return nil }
        let body = try file.range(UInt64(location.rva), UInt64(location.size), what)
        guard body.count >= 8 else { return nil }
        // SystemInfo (read before any context) says which layout to try first: x86-64's flags sit at 48
        // behind six 64-bit home slots, where an arm64 record keeps x5.
        if systemInfo?.architecture == .arm64, let context = try readARM64Context(body, what) { return context }
        if let context = try readAMD64Context(body, what) { return context }
        return try readARM64Context(body, what)
    }

    func readAMD64Context(_ body: Range<Int>, _ what: String) throws(MinidumpError) -> CPUContext? {
        let at = body.lowerBound
        guard body.count >= 52, file.u32(at + 48) & 0xFFFF_0000 == Self.amd64ContextFlag else { return nil }
        guard body.count >= 256 else {
            throw MinidumpError(.truncated, "\(what) (x86-64) has \(body.count) bytes, fewer than 256")
        }
        var registers: [Int: UInt64] = [:]
        for (number, offset) in Self.amd64RegisterOffsets.enumerated() { registers[number] = file.u64(at + offset) }
        let pc = file.u64(at + 248)
        registers[16] = pc
        return CPUContext(
            architecture: .x86_64, flags: file.u32(at + 48), registers: registers, pc: pc, sp: file.u64(at + 152))
    }

    func readARM64Context(_ body: Range<Int>, _ what: String) throws(MinidumpError) -> CPUContext? {
        let at = body.lowerBound
        let flags = file.u32(at)
        guard flags & 0xFFFF_0000 == Self.arm64ContextFlag || flags & 0xFFFF_0000 == Self.arm64OldContextFlag else {
            return nil
        }
        guard body.count >= 272 else {
            throw MinidumpError(.truncated, "\(what) (arm64) has \(body.count) bytes, fewer than 272")
        }
        var registers: [Int: UInt64] = [:]
        for number in 0...31 { registers[number] = file.u64(at + 8 + 8 * number) }
        return CPUContext(
            architecture: .arm64, flags: flags, registers: registers, pc: file.u64(at + 264), sp: registers[31] ?? 0)
    }
}
