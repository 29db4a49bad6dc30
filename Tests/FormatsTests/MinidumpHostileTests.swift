import FaultlineCore
import Formats
import TestSupport
import Testing

/// The minidump reader on crafted and damaged dumps: every input ends in a value or a `MinidumpError` that names
/// what is wrong, never a trap, an unbounded allocation or a long loop.
@Suite struct MinidumpHostileTests {
    func error(_ bytes: [UInt8]) -> MinidumpError? {
        do {
            _ = try Minidump(bytes: bytes)
            return nil
        } catch { return error }
    }

    func snapshotError(_ bytes: [UInt8]) throws -> MinidumpError? {
        let dump = try Minidump(bytes: bytes)
        do {
            _ = try dump.snapshot()
            return nil
        } catch { return error }
    }

    /// A Linux x86-64 dump: SystemInfo, a thread 7 whose context is the handler's, and an Exception on thread 7.
    func linuxDump() -> MinidumpFixture {
        var dump = MinidumpFixture()
        dump.stream(Minidump.StreamType.systemInfo, MinidumpFixture.systemInfo())
        let crash = MinidumpFixture.amd64Context(
            rip: 0x5555_0000_1234, rsp: 0x7FFF_0000_1000, rbp: 0x7FFF_0000_1100, rax: 42)
        let crashRVA = dump.add(crash)
        let handler = dump.add(MinidumpFixture.amd64Context(rip: 0x7F00_0000_0042, rsp: 0x7FFF_0000_0800))
        let stack = dump.add([UInt8](repeating: 0xAB, count: 256))
        let thread =
            le32(7) + le32(0) + le32(0) + le32(0) + le64(0) + le64(0x7FFF_0000_1000) + le32(256) + le32(stack)
            + le32(1232) + le32(handler)
        dump.stream(Minidump.StreamType.threadList, le32(1) + thread)
        dump.stream(
            Minidump.StreamType.exception,
            MinidumpFixture.exception(thread: 7, code: 11, flags: 2, address: 0xDEAD, context: (1232, crashRVA)))
        return dump
    }

    @Test func aCraftedDumpConvertsWithTheExceptionContext() throws {
        let snapshot = try Minidump(bytes: linuxDump().bytes()).snapshot()

        #expect(snapshot.architecture == .x86_64)
        #expect(snapshot.exception == ProcessSnapshot.Exception(signal: 11, code: 2, faultAddress: 0xDEAD, threadID: 7))
        let thread = try #require(snapshot.threads.first)
        #expect(snapshot.threads.count == 1)
        #expect(thread.crashed && thread.id == 7)
        #expect(thread.pc == 0x5555_0000_1234 && thread.sp == 0x7FFF_0000_1000)
        #expect(
            thread.registers[0] == 42 && thread.registers[6] == 0x7FFF_0000_1100 && thread.registers[16] == thread.pc)
        #expect(
            snapshot.memory == [
                ProcessSnapshot.MemoryRegion(start: 0x7FFF_0000_1000, bytes: [UInt8](repeating: 0xAB, count: 256))
            ])
    }

    @Test func arm64ContextsGiveX0ToX30SpAndPc() throws {
        var dump = MinidumpFixture()
        dump.stream(Minidump.StreamType.systemInfo, MinidumpFixture.systemInfo(architecture: 12))
        let context = dump.add(MinidumpFixture.arm64Context(pc: 0x4000_1000, sp: 0xFFFF_F000))
        dump.stream(
            Minidump.StreamType.exception,
            MinidumpFixture.exception(thread: 3, code: 7, flags: 1, address: 0x8, context: (912, context)))

        let snapshot = try Minidump(bytes: dump.bytes()).snapshot()
        #expect(snapshot.architecture == .arm64)
        let thread = try #require(snapshot.threads.first)
        #expect(thread.pc == 0x4000_1000 && thread.sp == 0xFFFF_F000 && thread.registers[31] == 0xFFFF_F000)
        #expect(
            thread.registers[0] == 0x1000 && thread.registers[29] == 0x1000 + 29 && thread.registers[30] == 0x1000 + 30)
        #expect(thread.registers.count == 32)
    }

    @Test func notAMinidumpIsSaidSo() {
        #expect(error(Array("PK\u{3}\u{4}and more bytes than a header has".utf8))?.code == .notMinidump)
        #expect(error(Array("{\"event_id\":1}".utf8))?.code == .notMinidump)
        #expect(error([])?.code == .truncated)
        #expect(error(Array("MDMP".utf8))?.code == .truncated)
    }

    @Test func directoryCountsAndOffsetsAreChecked() {
        let dump = linuxDump()
        let tooMany = error(dump.bytes(streamCount: 1_000_000))
        #expect(tooMany?.code == .tooLarge)
        let past = error(dump.bytes(streamCount: 3, directoryRVA: 0xFFFF_FFF0))
        #expect(past?.code == .truncated)
        #expect(past?.message.contains("stream directory") == true)
    }

    @Test func aListCountLargerThanItsStreamIsRefusedByName() {
        var dump = MinidumpFixture()
        dump.stream(Minidump.StreamType.threadList, le32(0xFFFF_FFFF) + [UInt8](repeating: 0, count: 48))
        let failure = error(dump.bytes())
        #expect(failure?.code == .malformed)
        #expect(failure?.message.contains("ThreadList") == true)

        var modules = MinidumpFixture()
        modules.stream(Minidump.StreamType.moduleList, le32(2) + [UInt8](repeating: 0, count: 108))
        #expect(error(modules.bytes())?.message.contains("ModuleList") == true)
    }

    @Test func hugeStringsAndShortContextsAreRefused() {
        var dump = MinidumpFixture()
        let name = dump.add(le32(0xFFFF_FFF0) + [0, 0])
        var module = le64(0x1000) + le32(0x1000) + le32(0) + le32(0) + le32(name)
        module += [UInt8](repeating: 0, count: 108 - module.count)
        dump.stream(Minidump.StreamType.moduleList, le32(1) + module)
        #expect(error(dump.bytes())?.code == .tooLarge)

        var short = MinidumpFixture()
        let context = short.add(Array(MinidumpFixture.amd64Context(rip: 1, rsp: 2).prefix(100)))
        short.stream(
            Minidump.StreamType.exception,
            MinidumpFixture.exception(thread: 1, code: 11, flags: 0, address: 0, context: (100, context)))
        let failure = error(short.bytes())
        #expect(failure?.code == .truncated)
        #expect(failure?.message.contains("Exception") == true)
    }

    @Test func modulesMayBePaddedAsDbghelpPadsThem() throws {
        var dump = MinidumpFixture()
        let name = dump.string("/usr/lib/libz.so.1")
        let buildID: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02]
        let codeView = dump.add(Array("LEpB".utf8) + buildID)
        var module = le64(0x7F00_0000_0000) + le32(0x2000) + le32(0) + le32(0) + le32(name)
        module += [UInt8](repeating: 0, count: 76 - module.count) + le32(UInt32(4 + buildID.count)) + le32(codeView)
        module += [UInt8](repeating: 0, count: 108 - module.count)
        dump.stream(Minidump.StreamType.moduleList, le32(1) + [0, 0, 0, 0] + module)

        let modules = try Minidump(bytes: dump.bytes()).modules
        #expect(modules.count == 1)
        #expect(modules.first?.name == "/usr/lib/libz.so.1")
        #expect(modules.first?.base == 0x7F00_0000_0000)
        #expect(modules.first?.buildID == BuildID("deadbeef0102"))
    }

    @Test func memoryNamingTheSameBytesManyTimesIsRefused() throws {
        // Given 2000 descriptors at distinct addresses, all naming the same 4 KiB of the file
        var dump = linuxDump()
        let page = dump.add([UInt8](repeating: 1, count: 4096))
        let descriptors = (0..<2000).flatMap { le64(0x1_0000_0000 + UInt64($0) * 0x10000) + le32(4096) + le32(page) }
        dump.stream(Minidump.StreamType.memoryList, le32(2000) + descriptors)

        // Then the snapshot refuses them instead of copying 8 MB out of a 100 KB file
        let failure = try snapshotError(dump.bytes())
        #expect(failure?.code == .tooLarge)
    }

    @Test func overlappingAndWrappingRangesAreTrimmed() throws {
        var dump = linuxDump()
        let bytes = dump.add((0..<256).map { UInt8($0) })
        let ranges = [
            le64(0x1000) + le32(256) + le32(bytes),
            le64(0x1080) + le32(256) + le32(bytes),  // overlaps the first by 128 bytes
            le64(UInt64.max - 15) + le32(64) + le32(bytes),  // runs past the top of the address space
        ]
        dump.stream(Minidump.StreamType.memoryList, le32(3) + ranges.flatMap { $0 })

        let memory = try Minidump(bytes: dump.bytes()).snapshot().memory
        let second = try #require(memory.first { $0.start == 0x1100 })
        #expect(second.bytes == Array((128..<256).map { UInt8($0) }))
        #expect(memory.first { $0.start == 0x1000 }?.bytes.count == 256)
        #expect(memory.last?.start == UInt64.max - 15 && memory.last?.bytes.count == 15)
        for (a, b) in zip(memory, memory.dropFirst()) { #expect(a.start + UInt64(a.bytes.count) <= b.start) }
    }

    @Test func otherPlatformsAreNotConverted() throws {
        var windows = MinidumpFixture()
        windows.stream(Minidump.StreamType.systemInfo, MinidumpFixture.systemInfo(platform: 2))
        #expect(try snapshotError(windows.bytes())?.code == .unsupported)

        var x86 = MinidumpFixture()
        x86.stream(Minidump.StreamType.systemInfo, MinidumpFixture.systemInfo(architecture: 0))
        #expect(try snapshotError(x86.bytes())?.code == .unsupported)
    }

    @Test func everyPrefixOfARealDumpIsReadOrRefused() throws {
        let real = try MinidumpSubmissionTests().dump("segfault")
        var refused = 0
        for length in stride(from: 0, to: real.count, by: 7) {
            if let failure = error(Array(real.prefix(length))) {
                #expect(!failure.message.isEmpty)
                refused += 1
            }
        }
        // Every stream sits inside the file, so no proper prefix past the header reads as the whole dump.
        #expect(refused == (real.count + 6) / 7)
    }

    @Test func flippedBytesNeverTrap() throws {
        let real = try MinidumpSubmissionTests().dump("second-thread")
        var generator = SplitMix64(seed: 34)
        var outcomes = (read: 0, refused: 0)
        for _ in 0..<400 {
            var bytes = real
            for _ in 0..<8 {
                let at = Int(generator.next() % UInt64(bytes.count))
                bytes[at] = UInt8(truncatingIfNeeded: generator.next())
            }
            do {
                let dump = try Minidump(bytes: bytes)
                _ = try? dump.snapshot()
                outcomes.read += 1
            } catch {
                #expect(!error.message.isEmpty)
                outcomes.refused += 1
            }
        }
        #expect(outcomes.read + outcomes.refused == 400)
        #expect(outcomes.read > 0)
    }
}
