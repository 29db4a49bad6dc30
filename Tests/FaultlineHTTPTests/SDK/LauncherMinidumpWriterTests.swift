import FaultlineCore
import Formats
import Testing

@testable import faultline_run

/// The launcher's minidump writer read back by the server's reader, for both CPUs: the arm64 layout cannot be
/// produced by a real crash on this x86-64 machine, so it is checked here from made-up registers.
@Suite struct LauncherMinidumpWriterTests {
    static func content(cpu: MinidumpContent.CPU, context: [UInt8]) -> MinidumpContent {
        MinidumpContent(
            cpu: cpu, processID: 4242, time: 1_800_000_000, processors: 2,
            osDescription: "Linux 6.8.0-45-generic #45 SMP aarch64",
            threads: [
                .init(
                    id: 4243, name: "worker", context: context,
                    stack: .init(start: 0x7000_0000, bytes: Array(repeating: 0xab, count: 64))),
                .init(id: 4242, name: "main", context: context, stack: nil),
            ],
            memory: [.init(start: 0x1000, bytes: [0x90, 0x90])],
            modules: [
                .init(base: 0x40_0000, size: 0x2000, path: "/usr/bin/app", buildID: Array(0..<20)),
                .init(base: 0x7f00_0000_0000, size: 0x1000, path: "/lib/libnoid.so", buildID: nil),
            ],
            exception: .init(threadID: 4243, signal: 11, code: 1, address: 0x10),
            maps: Array("400000-402000 r-xp 00000000 08:01 1 /usr/bin/app\n".utf8),
            commandLine: Array("app\0--flag\0".utf8),
            status: nil)
    }

    @Test func anARM64DumpReadsBackWithItsRegistersStackAndModules() throws {
        var registers = MinidumpContext.ARM64()
        for i in 0..<31 { registers.x[i] = UInt64(0x1000 + i) }
        registers.sp = 0x7000_0010
        registers.pc = 0x40_0123
        let bytes = MinidumpWriter.write(Self.content(cpu: .arm64, context: MinidumpContext.arm64(registers)))
        let dump = try Minidump(bytes: bytes)
        #expect(dump.processID == 4242)
        #expect(dump.threadNames[4243] == "worker")
        #expect(dump.linux.cmdLine == ["app", "--flag"])
        #expect(dump.modules.map(\.name) == ["/usr/bin/app", "/lib/libnoid.so"])
        let snapshot = try dump.snapshot()
        #expect(snapshot.architecture == .arm64)
        let crashed = try #require(snapshot.threads.first)
        #expect(crashed.id == 4243 && crashed.crashed)
        #expect(crashed.pc == 0x40_0123)
        #expect(crashed.sp == 0x7000_0010)
        #expect(crashed.registers[29] == 0x1000 + 29)  // the frame pointer
        #expect(crashed.registers[30] == 0x1000 + 30)  // the link register
        #expect(
            snapshot.exception == ProcessSnapshot.Exception(signal: 11, code: 1, faultAddress: 0x10, threadID: 4243))
        #expect(snapshot.memory.map(\.start) == [0x1000, 0x7000_0000])
        #expect(snapshot.modules.first?.buildID == BuildID(bytes: Array(0..<20)))
        #expect(snapshot.modules.last?.buildID == nil)
    }

    @Test func anX86_64ContextKeepsEveryGeneralRegisterUnderItsDWARFNumber() throws {
        let r = MinidumpContext.AMD64(
            rax: 1, rbx: 2, rcx: 3, rdx: 4, rsi: 5, rdi: 6, rbp: 7, rsp: 0x7000_0008, r8: 9, r9: 10, r10: 11, r11: 12,
            r12: 13, r13: 14, r14: 15, r15: 16, rip: 0x40_0456, eflags: 0x202, cs: 0x33, ss: 0x2b)
        let snapshot = try Minidump(
            bytes: MinidumpWriter.write(Self.content(cpu: .x86_64, context: MinidumpContext.amd64(r)))
        )
        .snapshot()
        let crashed = try #require(snapshot.threads.first)
        // DWARF: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8–15 r8–r15.
        #expect([0, 1, 2, 3, 4, 5, 6].map { crashed.registers[$0] } == [1, 4, 3, 2, 5, 6, 7])
        #expect((8...15).map { crashed.registers[$0] } == (9...16).map { UInt64($0) })
        #expect(crashed.sp == 0x7000_0008 && crashed.pc == 0x40_0456)
    }

    @Test func theKernelVersionIsReadFromTheRelease() {
        #expect(MinidumpWriter.kernelVersion("Linux 6.8.0-45-generic #45 SMP x86_64") == (6, 8, 0))
        #expect(MinidumpWriter.kernelVersion("Linux") == (0, 0, 0))
    }

    @Test func aBuildIDIsFoundInANoteSegmentAndHostileNotesAreRefused() {
        // An ABI-tag note first, then the build-id note.
        var notes: [UInt8] =
            [4, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0] + Array("GNU\0".utf8) + Array(repeating: 0, count: 16)
        notes += [4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0] + Array("GNU\0".utf8) + [0xde, 0xad, 0xbe, 0xef]
        #expect(ProcessReader.gnuBuildID(inNotes: notes) == [0xde, 0xad, 0xbe, 0xef])
        // A descriptor size past the segment.
        let hostile: [UInt8] = [4, 0, 0, 0, 0xff, 0x0f, 0, 0, 3, 0, 0, 0] + Array("GNU\0".utf8) + [1, 2]
        #expect(ProcessReader.gnuBuildID(inNotes: hostile) == nil)
    }
}
