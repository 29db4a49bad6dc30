import FaultlineCore
import Foundation
import TestSupport
import Testing

@testable import Symbolication

/// Snapshots made up to break the walker: every walk ends, within its bounds, whatever the registers, memory
/// and modules say.
@Suite struct StackWalkHostileTests {
    static let stack: UInt64 = 0x7FFF_0000_0000
    /// A module with no file: libdwfl knows the addresses belong to it, and unwinds through it by frame pointers.
    static let module = ProcessSnapshot.Module(path: "/app/bin", base: 0x40_0000, size: 0x10_0000, buildID: nil)
    let walker = StackWalker { _ in nil }

    /// Little-endian words from `start`.
    static func region(_ start: UInt64, _ words: [UInt64]) -> ProcessSnapshot.MemoryRegion {
        .init(
            start: start, bytes: words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } })
    }

    static func thread(pc: UInt64, sp: UInt64, rbp: UInt64, id: UInt64 = 1, crashed: Bool = true)
        -> ProcessSnapshot.Thread
    {
        .init(id: id, crashed: crashed, registers: [6: rbp, 7: sp], pc: pc, sp: sp)
    }

    static func snapshot(
        _ threads: [ProcessSnapshot.Thread], memory: [ProcessSnapshot.MemoryRegion],
        modules: [ProcessSnapshot.Module] = [module]
    ) -> ProcessSnapshot {
        ProcessSnapshot(architecture: .x86_64, threads: threads, memory: memory, modules: modules, exception: nil)
    }

    /// A frame-pointer chain of `count` frames of 16 bytes each from `stack`: `[rbp]` the next frame, `[rbp+8]` a
    /// return address in the module.
    static func chain(_ count: Int) -> ProcessSnapshot.MemoryRegion {
        let words = (0..<count).flatMap { index -> [UInt64] in
            [stack + UInt64(index + 1) * 16, module.base + 0x1000 + UInt64(index) * 4]
        }
        return region(stack, words)
    }

    @Test func aLongFramePointerChainStopsAtTheFrameLimit() {
        let limited = StackWalker(limits: .init(maxFrames: 50)) { _ in nil }
        let snapshot = Self.snapshot(
            [Self.thread(pc: Self.module.base + 0x10, sp: Self.stack - 8, rbp: Self.stack)], memory: [Self.chain(1000)])
        let thread = limited.walk(snapshot)[0]
        #expect(thread.frames.count == 50)
        #expect(thread.end == .frameLimit)
        #expect(thread.frames.dropFirst().allSatisfy { $0.trust == .framePointer })
        // Each caller is the return address its frame record holds.
        #expect(thread.frames[1].address == Self.module.base + 0x1000)
        #expect(thread.frames[2].address == Self.module.base + 0x1004)
    }

    @Test func aFramePointerLoopEnds() {
        // [rbp] = rbp: every frame record names itself.
        let memory = Self.region(Self.stack, [Self.stack, Self.module.base + 0x2000, 0, 0])
        let snapshot = Self.snapshot(
            [Self.thread(pc: Self.module.base + 0x10, sp: Self.stack - 8, rbp: Self.stack)], memory: [memory])
        let thread = walker.walk(snapshot)[0]
        #expect(thread.frames.count == 2, "\(thread.frames)")
        #expect(thread.end != .frameLimit)
    }

    @Test func libdwsFramePointerUnwinderRefusesAChainThatGoesDownTheStack() {
        // The record at stack+32 names one at stack, below it.
        let memory = Self.region(
            Self.stack, [0, Self.module.base + 0x2000, 0, 0, Self.stack, Self.module.base + 0x3000, 0, 0])
        let snapshot = Self.snapshot(
            [Self.thread(pc: Self.module.base + 0x10, sp: Self.stack + 24, rbp: Self.stack + 32)], memory: [memory])
        let thread = walker.walk(snapshot)[0]
        #expect(
            thread.frames.map(\.address) == [Self.module.base + 0x10, Self.module.base + 0x3000], "\(thread.frames)")
    }

    /// A function whose CFI computes the frame from `rbp` (CFA = rbp + 16): libdwfl follows whatever `rbp` chain the
    /// stack holds, so the walker's own stack-pointer check is what stops a chain that loops or goes down.
    static let rbpFramedFunction = """
            .text
            .globl framed
            .type framed,@function
        framed:
            .cfi_startproc
            push %rbp
            .cfi_def_cfa_offset 16
            .cfi_offset %rbp, -16
            mov %rsp, %rbp
            .cfi_def_cfa_register %rbp
            nop
            nop
            call framed
            nop
            pop %rbp
            .cfi_def_cfa %rsp, 8
            ret
            .cfi_endproc
            .size framed, .-framed
        """

    @Test(
        arguments: [
            // rbp names a record below the previous one: the second caller's stack pointer would be lower.
            ("down", [UInt64(0), 1, 0, 0, stack, 1, 0, 0, 0, 0], stack + 32),
            // A record naming itself: the second caller's stack pointer would be the same.
            ("loop", [stack, 1, 0, 0], stack),
        ] as [(String, [UInt64], UInt64)])
    func aCFIChainThatDoesNotClimbTheStackStops(name: String, words: [UInt64], rbp: UInt64) throws {
        let folder = try TempFolder("walk-cfi-loop")
        let library = try HostileELF.link(Self.rbpFramedFunction, name: "framed", in: folder)
        let framed = try #require(try HostileELF.address(of: "framed", in: library))
        let base: UInt64 = 0x7F00_0000_0000
        let pc = base + framed + 4  // after `push %rbp; mov %rsp, %rbp`: CFA = rbp + 16
        let returnAddress = base + framed + 11  // after `call framed`
        // Every 1 in the words is the return address.
        let memory = Self.region(Self.stack, words.map { $0 == 1 ? returnAddress : $0 })
        let module = ProcessSnapshot.Module(path: library, base: base, size: 0x10000, buildID: nil)
        let thread = ProcessSnapshot.Thread(id: 1, crashed: true, registers: [6: rbp, 7: rbp - 8], pc: pc, sp: rbp - 8)
        let snapshot = Self.snapshot([thread], memory: [memory], modules: [module])
        let walked = StackWalker { $0.path == library ? library : nil }.walk(snapshot)[0]
        #expect(walked.frames.map(\.address) == [pc, returnAddress], "\(name): \(walked.frames)")
        #expect(walked.frames.map(\.trust) == [.context, .cfi])
        #expect(walked.end == .stackPointerNotIncreasing)
    }

    /// arm64: the same shape with `x29`/`x30`, built for aarch64 by clang and lld (the walk needs the file, not the
    /// CPU).
    static let arm64FramedFunction = """
            .text
            .globl framed
            .type framed,%function
        framed:
            .cfi_startproc
            stp x29, x30, [sp, #-16]!
            .cfi_def_cfa_offset 16
            .cfi_offset w30, -8
            .cfi_offset w29, -16
            mov x29, sp
            .cfi_def_cfa w29, 16
            nop
            bl framed
            nop
            ldp x29, x30, [sp], #16
            .cfi_def_cfa wsp, 0
            ret
            .cfi_endproc
            .size framed, .-framed
        """

    @Test func arm64FramesUnwindWithCFIFromX29AndX30() throws {
        let folder = try TempFolder("walk-arm64")
        let source = try folder.write("framed.s", Self.arm64FramedFunction)
        let object = folder.file("framed.o")
        let library = folder.file("framed.so")
        try Command.check("clang", ["-target", "aarch64-linux-gnu", "-c", source, "-o", object])
        try Command.check("/usr/lib/llvm-19/bin/ld.lld", ["-shared", "--build-id", object, "-o", library])
        let framed = try #require(try HostileELF.address(of: "framed", in: library))
        let base: UInt64 = 0x7F00_0000_0000
        let pc = base + framed + 8  // after `stp x29, x30, [sp, #-16]!; mov x29, sp`: CFA = x29 + 16
        let returnAddress = base + framed + 16  // after `bl framed`
        // The frame record at the stack pointer names the next one (at +32), whose return address is 0: the end.
        let memory = Self.region(Self.stack, [Self.stack + 32, returnAddress, 0, 0, 0, 0])
        let module = ProcessSnapshot.Module(path: library, base: base, size: 0x20000, buildID: nil)
        let thread = ProcessSnapshot.Thread(
            id: 1, crashed: true, registers: [29: Self.stack, 30: 0x1234, 31: Self.stack], pc: pc, sp: Self.stack)
        let snapshot = ProcessSnapshot(
            architecture: .arm64, threads: [thread], memory: [memory], modules: [module], exception: nil)
        let walked = StackWalker { $0.path == library ? library : nil }.walk(snapshot)[0]
        #expect(walked.frames.map(\.address) == [pc, returnAddress], "\(walked.frames)")
        #expect(walked.frames.map(\.trust) == [.context, .cfi])
        #expect(walked.frames.map(\.stackPointer) == [Self.stack, Self.stack + 16])
        #expect(walked.end == .outermost)
    }

    @Test func aThreadWithNothingCapturedKeepsItsContextFrame() {
        let snapshot = Self.snapshot([Self.thread(pc: 0xDEAD, sp: 0x1000, rbp: 0)], memory: [], modules: [])
        let thread = walker.walk(snapshot)[0]
        #expect(thread.frames == [WalkedFrame(address: 0xDEAD, trust: .context, stackPointer: 0x1000)])
        if case .unwindFailed = thread.end {} else { Issue.record("end \(thread.end)") }
    }

    @Test func theCrashingThreadIsWalkedFirstAndEveryThreadIsWalked() {
        let threads = [
            Self.thread(pc: 0x1, sp: 0x10, rbp: 0, id: 7, crashed: false),
            Self.thread(pc: 0x2, sp: 0x20, rbp: 0, id: 8, crashed: true),
            Self.thread(pc: 0x3, sp: 0x30, rbp: 0, id: 9, crashed: false),
        ]
        let walked = walker.walk(Self.snapshot(threads, memory: []))
        #expect(walked.map(\.id) == [8, 7, 9])
        #expect(walked.map { $0.frames.first?.address } == [0x2, 0x1, 0x3])
    }

    @Test func hostileModulesRegistersAndMemoryNeverTrap() throws {
        let folder = try TempFolder("walk-hostile")
        let text = try folder.write("not-elf", "not an ELF file")
        let modules: [ProcessSnapshot.Module] = [
            .init(path: "wraps", base: UInt64.max - 10, size: 100, buildID: nil),
            .init(path: "empty", base: 0x1000, size: 0, buildID: nil),
            .init(path: "a", base: 0x10_0000, size: 0x1000, buildID: nil),
            .init(path: "overlaps-a", base: 0x10_0800, size: 0x1000, buildID: nil),
            .init(path: "text", base: 0x20_0000, size: 0x1000, buildID: nil),
            .init(path: "missing", base: 0x30_0000, size: 0x1000, buildID: nil),
        ]
        let memory: [ProcessSnapshot.MemoryRegion] = [
            .init(start: UInt64.max - 3, bytes: [1, 2, 3, 4, 5, 6, 7, 8]),
            Self.region(0x9000, [0x9000, 0x10_0010, 0x9000]),
            Self.region(0x9008, [1, 2, 3]),
        ]
        let threads = [
            ProcessSnapshot.Thread(
                id: 1, crashed: true, registers: [-1: 1, 999: 2, 6: 0x9000, 7: 0x9000], pc: UInt64.max, sp: UInt64.max),
            ProcessSnapshot.Thread(id: 1, crashed: true, registers: [:], pc: 0, sp: 0),
            ProcessSnapshot.Thread(
                id: 2, crashed: false, registers: [6: UInt64.max - 7], pc: 0x10_0010, sp: UInt64.max - 8),
        ]
        let walker = StackWalker { module in
            switch module.path {
            case "text": return text
            case "missing": return folder.file("missing")
            default: return nil
            }
        }
        for architecture in [ProcessSnapshot.Architecture.x86_64, .arm64] {
            let snapshot = ProcessSnapshot(
                architecture: architecture, threads: threads, memory: memory, modules: modules, exception: nil)
            let walked = walker.walk(snapshot)
            #expect(walked.count == 3)
            #expect(walked.allSatisfy { !$0.frames.isEmpty && $0.frames.count <= walker.limits.maxFrames })
            #expect(walked.allSatisfy { $0.frames.first?.trust == .context })
        }
    }

    @Test func threadsPastTheLimitKeepTheirContextFrame() {
        let limited = StackWalker(limits: .init(maxThreads: 1)) { _ in nil }
        let threads = (1...3).map {
            Self.thread(pc: Self.module.base + 0x10, sp: Self.stack - 8, rbp: Self.stack, id: $0, crashed: $0 == 1)
        }
        let walked = limited.walk(Self.snapshot(threads, memory: [Self.chain(4)]))
        #expect(walked[0].frames.count > 1)
        #expect(walked.dropFirst().allSatisfy { $0.frames.count == 1 && $0.end == .unwindFailed("thread limit") })
    }

    // MARK: the pieces

    @Test func memoryReadsStayInsideOneCapturedRegion() {
        let memory = SnapshotMemory([
            Self.region(0x2000, [0x1111, 0x2222]),
            Self.region(0x2008, [0x9999]),  // overlaps the first: dropped
            Self.region(0x1000, [0xAAAA]),  // out of order: sorted
            .init(start: UInt64.max - 3, bytes: [0, 0, 0, 0, 0, 0, 0, 0]),  // wraps: dropped
        ])
        #expect(memory.word(at: 0x1000) == 0xAAAA)
        #expect(memory.word(at: 0x2008) == 0x2222)
        #expect(memory.word(at: 0x200C) == nil)  // runs past the region's end
        #expect(memory.word(at: 0xFFF) == nil)
        #expect(memory.word(at: UInt64.max - 3) == nil)
        #expect(memory.bytes(at: 0x2000, count: 16)?.count == 16)
        #expect(memory.bytes(at: 0x2000, count: 17) == nil)
    }

    @Test(
        arguments: [
            ([0xE8, 0x10, 0x20, 0x30, 0x40], true),  // call rel32
            ([0xFF, 0xD0], true),  // call rax
            ([0x41, 0xFF, 0xD3], true),  // call r11
            ([0xFF, 0x15, 1, 2, 3, 4], true),  // call [rip+disp32]
            ([0xFF, 0x14, 0x24], true),  // call [rsp]
            ([0xFF, 0x54, 0x24, 0x08], true),  // call [rsp+8]
            ([0xFF, 0x50, 0x10], true),  // call [rax+0x10]
            ([0xFF, 0x90, 1, 2, 3, 4], true),  // call [rax+disp32]
            ([0xFF, 0xE0], false),  // jmp rax
            ([0x90, 0x90, 0x90, 0x90, 0x90], false),  // nops
            ([0xFF, 0x15, 1, 2, 3], false),  // a RIP-relative call would need 4 more bytes
            ([0xC3], false),
        ] as [([UInt8], Bool)])
    func x86CallInstructionsEndRightBeforeTheReturnAddress(bytes: [UInt8], isCall: Bool) {
        #expect(CallSite.isReturnAddress(after: bytes[...], architecture: .x86_64) == isCall)
    }

    @Test(arguments: [
        (0x9400_0010 as UInt32, true),  // bl
        (0xD63F_0100, true),  // blr x8
        (0xD63F_091F, true),  // blraaz x8
        (0xD65F_03C0, false),  // ret
        (0x1400_0010, false),  // b
        (0xD61F_0100, false),  // br x8
    ])
    func arm64CallInstructions(word: UInt32, isCall: Bool) {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) }
        #expect(CallSite.isReturnAddress(after: bytes[...], architecture: .arm64) == isCall)
    }
}
