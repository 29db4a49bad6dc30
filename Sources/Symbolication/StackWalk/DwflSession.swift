import CLibdw
import FaultlineCore

#if canImport(Glibc)
import Glibc
#endif

/// One libdwfl session over one snapshot: the `Dwfl` with the snapshot's modules reported at their bases, attached
/// to the snapshot's threads (`dwfl_attach_state`) with memory reads served from the captured regions.
///
/// Owned by one `StackWalker.walk` call on one thread, and ended (`dwfl_end`) when released. The C callbacks find
/// this object through the `dwfl_arg` pointer; libdwfl calls them only inside `dwfl_getthread_frames`, i.e. while
/// `walk(_:)` runs, so the object is alive whenever they run.
final class DwflSession {
    let architecture: ProcessSnapshot.Architecture
    let limits: StackWalker.Limits
    let memory: SnapshotMemory
    /// The snapshot's modules as reported (base order), for "is this address in a mapped module".
    let moduleRanges: [(low: UInt64, high: UInt64)]
    private let dwfl: OpaquePointer
    private let callbacks: UnsafeMutablePointer<Dwfl_Callbacks>
    private let threadCallbacks: UnsafeMutablePointer<Dwfl_Thread_Callbacks>
    /// A bare ELF header naming the machine: libdwfl picks its unwinder backend from it, whether or not any module
    /// has a file.
    private let machineHeader: UnsafeMutableRawPointer
    private let machineELF: OpaquePointer
    /// The registers the next `set_initial_registers` call gives libdwfl.
    var pending = Registers(values: [:], pc: 0)
    /// The thread being walked (its frames so far); set by `walk(_:)`, read by the frame callback.
    var state = ThreadWalk()

    struct Registers {
        var values: [Int: UInt64]
        var pc: UInt64
    }

    /// The DWARF numbers of the unwinder's registers: the general ones libdwfl takes, the stack pointer, and the
    /// callee-saved ones carried over a scanned frame.
    var generalRegisters: Range<Int> { architecture == .x86_64 ? 0..<17 : 0..<32 }
    var stackPointerRegister: UInt32 { architecture == .x86_64 ? 7 : 31 }
    var calleeSaved: [Int] { architecture == .x86_64 ? [3, 6, 12, 13, 14, 15] : Array(19...29) }

    init?(snapshot: ProcessSnapshot, limits: StackWalker.Limits, resolveELF: (ProcessSnapshot.Module) -> String?) {
        architecture = snapshot.architecture
        self.limits = limits
        memory = SnapshotMemory(snapshot.memory)
        elf_version(UInt32(EV_CURRENT))

        // A find_elf and a find_debuginfo that find nothing: libdw 0.188 crashes in dwfl_module_eh_cfi on a module
        // reported without a file when find_elf is NULL. Files come only from `resolveELF`, never from paths or
        // build-ids on this machine (the server's own libraries are not the crashed process's).
        callbacks = .allocate(capacity: 1)
        callbacks.initialize(to: Dwfl_Callbacks())
        callbacks.pointee.find_elf = { _, _, _, _, fileName, elf in
            fileName?.pointee = nil
            elf?.pointee = nil
            return -1
        }
        callbacks.pointee.find_debuginfo = { _, _, _, _, _, _, _, debugFile in
            debugFile?.pointee = nil
            return -1
        }
        threadCallbacks = .allocate(capacity: 1)
        threadCallbacks.initialize(to: Dwfl_Thread_Callbacks())
        machineHeader = Self.makeMachineHeader(snapshot.architecture)
        let header = elf_memory(machineHeader.assumingMemoryBound(to: CChar.self), Self.headerSize)
        guard let machineELF = header, let dwfl = dwfl_begin(callbacks) else {
            // Before every property is set, deinit does not run: release here what was made.
            if let header { elf_end(header) }
            callbacks.deallocate()
            threadCallbacks.deallocate()
            machineHeader.deallocate()
            return nil
        }
        self.machineELF = machineELF
        self.dwfl = dwfl

        // Modules in base order; one that wraps, is empty, or starts inside the previous one is not reported.
        var ranges: [(low: UInt64, high: UInt64)] = []
        dwfl_report_begin(dwfl)
        for module in snapshot.modules.sorted(by: { $0.base < $1.base }).prefix(limits.maxModules) {
            let (high, overflow) = module.base.addingReportingOverflow(module.size)
            guard !overflow, module.size > 0, module.base >= (ranges.last?.high ?? 0) else { continue }
            var reported: OpaquePointer?
            if let path = resolveELF(module) {
                reported = dwfl_report_elf(dwfl, module.path, path, -1, module.base, false)
            }
            if reported == nil { reported = dwfl_report_module(dwfl, module.path, module.base, high) }
            guard let reported else { continue }
            // The file's own extent (from its segments) may differ from the dump's; the later of the two ends.
            var low: Dwarf_Addr = 0
            var end: Dwarf_Addr = 0
            _ = dwfl_module_info(reported, nil, &low, &end, nil, nil, nil, nil)
            ranges.append((module.base, Swift.max(high, end)))
        }
        dwfl_report_end(dwfl, nil, nil)
        moduleRanges = ranges

        // Threads are only looked up by id (get_thread): enumerating them is never needed, but libdwfl requires it.
        threadCallbacks.pointee.next_thread = { _, _, _ in 0 }
        threadCallbacks.pointee.get_thread = { _, _, arg, threadArg in
            threadArg?.pointee = arg
            return true
        }
        threadCallbacks.pointee.memory_read = { _, address, result, arg in
            guard let arg, let result, let word = DwflSession.from(arg).memory.word(at: address) else { return false }
            result.pointee = word
            return true
        }
        threadCallbacks.pointee.set_initial_registers = { thread, arg in
            guard let thread, let arg else { return false }
            let session = DwflSession.from(arg)
            for (number, value) in session.pending.values where session.generalRegisters.contains(number) {
                var word = value
                guard dwfl_thread_state_registers(thread, Int32(number), 1, &word) else { return false }
            }
            dwfl_thread_state_register_pc(thread, session.pending.pc)
            return true
        }
        guard dwfl_attach_state(dwfl, machineELF, 1, threadCallbacks, Unmanaged.passUnretained(self).toOpaque())
        else { return nil }
    }

    deinit {
        dwfl_end(dwfl)
        elf_end(machineELF)
        machineHeader.deallocate()
        threadCallbacks.deallocate()
        callbacks.deallocate()
    }

    static func from(_ pointer: UnsafeMutableRawPointer) -> DwflSession {
        Unmanaged<DwflSession>.fromOpaque(pointer).takeUnretainedValue()
    }

    static let headerSize = 64
    /// The frame callback's answers: go on, or stop this libdwfl pass.
    static let next = Int32(DWARF_CB_OK)
    static let stop = Int32(DWARF_CB_ABORT)

    /// An ELF64 little-endian `ET_CORE` header with only the machine set: what `ebl_openbackend` reads.
    static func makeMachineHeader(_ architecture: ProcessSnapshot.Architecture) -> UnsafeMutableRawPointer {
        let header = UnsafeMutableRawPointer.allocate(byteCount: headerSize, alignment: 8)
        header.initializeMemory(as: UInt8.self, repeating: 0, count: headerSize)
        let bytes = header.assumingMemoryBound(to: UInt8.self)
        for (index, byte) in [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1].enumerated() { bytes[index] = UInt8(byte) }
        let machine: UInt16 = architecture == .x86_64 ? 62 : 183  // EM_X86_64, EM_AARCH64
        bytes[16] = 4  // ET_CORE
        bytes[18] = UInt8(machine & 0xFF)
        bytes[19] = UInt8(machine >> 8)
        bytes[20] = 1  // EV_CURRENT
        bytes[52] = UInt8(headerSize)  // e_ehsize
        return header
    }

    // MARK: walking one thread

    /// The walk of one thread in progress.
    struct ThreadWalk {
        var frames: [WalkedFrame] = []
        /// The last frame accepted: its unwinder address (a return address minus one) and registers, which a scan
        /// starts from.
        var lastLookupPC: UInt64 = 0
        var lastRegisters: [Int: UInt64] = [:]
        /// Whether the current libdwfl pass started at a scanned frame (its first frame is that frame again).
        var resumedFromScan = false
        var framesThisPass = 0
        var end: WalkedThread.End?
    }

    /// Unwinds `thread`: libdwfl passes (CFI, frame pointers) and, where a pass fails, a scan that starts another.
    func walk(_ thread: ProcessSnapshot.Thread) -> ([WalkedFrame], WalkedThread.End) {
        var values = thread.registers
        values[Int(stackPointerRegister)] = thread.sp
        pending = Registers(values: values, pc: thread.pc)
        state = ThreadWalk()
        // Each pass adds at least one frame (or ends the walk), so there are at most maxFrames passes.
        for _ in 0...limits.maxFrames {
            state.framesThisPass = 0
            let result = dwfl_getthread_frames(
                dwfl, 1,
                { frame, arg in
                    guard let frame, let arg else { return DwflSession.stop }
                    return DwflSession.from(arg).accept(frame)
                }, Unmanaged.passUnretained(self).toOpaque())
            if state.frames.isEmpty {
                // Not even the context frame (libdwfl refused the registers): report it as the dump gave it.
                let reason = result < 0 ? String(cString: dwfl_errmsg(-1)) : "no frame"
                return (
                    [WalkedFrame(address: thread.pc, trust: .context, stackPointer: thread.sp)], .unwindFailed(reason)
                )
            }
            if let end = state.end, end == .frameLimit || end == .outermost { return (state.frames, end) }
            if result == 0 { return (state.frames, .outermost) }
            let failure = state.end ?? .unwindFailed(String(cString: dwfl_errmsg(-1)))
            guard state.frames.count < limits.maxFrames else { return (state.frames, .frameLimit) }
            guard let (returnAddress, slot) = scan() else { return (state.frames, failure) }
            let sp = slot &+ 8
            state.frames.append(WalkedFrame(address: returnAddress, trust: .scan, stackPointer: sp))
            // The next pass starts in the caller, inside the call (a return address minus one), so that libdwfl
            // looks up the call's CFI row, as it does for the return addresses it unwinds itself.
            var carried = state.lastRegisters.filter { calleeSaved.contains($0.key) }
            carried[Int(stackPointerRegister)] = sp
            pending = Registers(values: carried, pc: returnAddress &- 1)
            state.resumedFromScan = true
            state.end = nil
        }
        return (state.frames, .frameLimit)
    }

    /// The frame callback: keeps a frame libdwfl unwound, or stops the pass when it is not credible.
    func accept(_ frame: OpaquePointer) -> Int32 {
        var pc: Dwarf_Addr = 0
        var activation = false
        guard dwfl_frame_pc(frame, &pc, &activation) else { return Self.stop }
        let index = state.framesThisPass
        state.framesThisPass += 1
        var spValue: Dwarf_Word = 0
        let sp: UInt64? = dwfl_frame_reg(frame, stackPointerRegister, &spValue) == 0 ? spValue : nil
        let lookupPC = activation ? pc : pc &- 1
        if index == 0 {
            // The context frame, or the scanned frame this pass resumed from (already kept).
            if !state.resumedFromScan {
                state.frames.append(WalkedFrame(address: pc, trust: .context, stackPointer: sp))
            }
            remember(frame, lookupPC: lookupPC)
            return Self.next
        }
        if pc == 0 {
            state.end = .outermost
            return Self.stop
        }
        guard state.frames.count < limits.maxFrames else {
            state.end = .frameLimit
            return Self.stop
        }
        // The stack grows down: a caller's stack pointer is above its callee's. Equal is allowed only for the first
        // unwind from the context frame (a leaf function that has not moved the stack pointer, on arm64).
        let previous = state.frames.last?.stackPointer
        let firstUnwind = state.frames.count == 1
        guard let sp, let previous, sp > previous || (firstUnwind && sp == previous) else {
            state.end = .stackPointerNotIncreasing
            return Self.stop
        }
        let trust: FrameTrust = hasCFI(at: state.lastLookupPC) ? .cfi : .framePointer
        // A frame-pointer chain followed into garbage gives addresses outside every module: let a scan try instead.
        if trust == .framePointer, !inModule(pc) {
            state.end = .unwindFailed("the frame-pointer chain left the mapped modules")
            return Self.stop
        }
        state.frames.append(WalkedFrame(address: pc, trust: trust, stackPointer: sp))
        remember(frame, lookupPC: lookupPC)
        return Self.next
    }

    private func remember(_ frame: OpaquePointer, lookupPC: UInt64) {
        state.lastLookupPC = lookupPC
        var registers: [Int: UInt64] = [:]
        for number in calleeSaved + [Int(stackPointerRegister)] {
            var value: Dwarf_Word = 0
            if dwfl_frame_reg(frame, UInt32(number), &value) == 0 { registers[number] = value }
        }
        state.lastRegisters = registers
    }

    /// Whether the module containing `address` has a CFI row for it (in `.eh_frame` or `.debug_frame`): then libdwfl
    /// unwound the frame above with CFI, else with its frame-pointer fallback. libdwfl does not say which it used;
    /// this asks the question it asked first. (Where a row exists but its rules cannot be evaluated, for example a
    /// saved register in memory the dump did not capture, libdwfl falls back to frame pointers and the frame is still
    /// called `cfi`: rare, since CFI rules read the stack the dump captures.)
    func hasCFI(at address: UInt64) -> Bool {
        guard let module = dwfl_addrmodule(dwfl, address) else { return false }
        var bias: Dwarf_Addr = 0
        if let cfi = dwfl_module_eh_cfi(module, &bias), Self.hasRow(cfi, address &- bias) { return true }
        if let cfi = dwfl_module_dwarf_cfi(module, &bias), Self.hasRow(cfi, address &- bias) { return true }
        return false
    }

    private static func hasRow(_ cfi: OpaquePointer, _ address: UInt64) -> Bool {
        var frame: OpaquePointer?
        guard dwarf_cfi_addrframe(cfi, address, &frame) == 0 else { return false }
        free(UnsafeMutableRawPointer(frame))
        return true
    }

    func inModule(_ address: UInt64) -> Bool {
        moduleRanges.contains { $0.low <= address && address < $0.high }
    }

    // MARK: scanning

    /// The first word above the last frame's stack pointer that returns just after a call in a module with a file:
    /// the return address and where it was found. Reads at most `scanWords` words (four times as many above the
    /// context frame).
    func scan() -> (returnAddress: UInt64, slot: UInt64)? {
        guard let start = state.lastRegisters[Int(stackPointerRegister)] ?? state.frames.last?.stackPointer else {
            return nil
        }
        let words = state.frames.count == 1 ? limits.scanWords &* 4 : limits.scanWords
        for index in 0..<UInt64(Swift.max(0, words)) {
            let (slot, overflow) = start.addingReportingOverflow(index &* 8)
            guard !overflow, let value = memory.word(at: slot) else { return nil }
            if isReturnAddress(value) { return (value, slot) }
        }
        return nil
    }

    /// Whether `address` follows a call instruction in a module whose code is known (captured, or in its file).
    func isReturnAddress(_ address: UInt64) -> Bool {
        let window = UInt64(CallSite.window)
        guard address > window, let module = dwfl_addrmodule(dwfl, address &- 1) else { return false }
        let from = address - window
        if let bytes = memory.bytes(at: from, count: CallSite.window) {
            return CallSite.isReturnAddress(after: bytes, architecture: architecture)
        }
        guard let bytes = Self.code(module, from: from, count: CallSite.window) else { return false }
        return CallSite.isReturnAddress(after: bytes[...], architecture: architecture)
    }

    /// `count` bytes of a module's file at a process address, read from the loadable segment holding them.
    static func code(_ module: OpaquePointer, from address: UInt64, count: Int) -> [UInt8]? {
        var bias: Dwarf_Addr = 0
        guard let elf = dwfl_module_getelf(module, &bias) else { return nil }
        let fileAddress = address &- bias
        var headerCount = 0
        guard elf_getphdrnum(elf, &headerCount) == 0 else { return nil }
        var size = 0
        guard let raw = elf_rawfile(elf, &size) else { return nil }
        for index in 0..<Swift.min(headerCount, 65_536) {
            var header = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(index), &header) != nil, header.p_type == PT_LOAD,
                header.p_vaddr <= fileAddress
            else { continue }
            let offsetInSegment = fileAddress - header.p_vaddr
            guard offsetInSegment <= header.p_filesz, UInt64(count) <= header.p_filesz - offsetInSegment else {
                continue
            }
            let (offset, overflow) = header.p_offset.addingReportingOverflow(offsetInSegment)
            guard !overflow, offset <= UInt64(size), UInt64(count) <= UInt64(size) - offset else { return nil }
            let start = UnsafeRawPointer(raw).advanced(by: Int(offset))
            return Array(UnsafeRawBufferPointer(start: start, count: count))
        }
        return nil
    }
}
