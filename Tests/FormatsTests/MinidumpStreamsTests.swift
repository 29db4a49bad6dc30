import FaultlineCore
import Formats
import Foundation
import Testing

/// The streams Crashpad's x86-64 dumps do not carry, read from the crafted arm64 dump of the fuzz seeds
/// (`tools/fuzzing/make-seeds.py`, `breakpad_arm64_dump`): Breakpad's Linux streams, a Memory64List, RSDS and BpEL
/// modules, thread names, MiscInfo and CrashpadInfo module annotations.
@Suite struct MinidumpStreamsTests {
    static let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../tools/fuzzing/seeds/minidump/breakpad-arm64.dmp").standardized

    func dump() throws -> Minidump {
        try Minidump(bytes: [UInt8](try Data(contentsOf: Self.seed)))
    }

    @Test func breakpadLinuxStreams() throws {
        let linux = try dump().linux
        #expect(linux.cmdLine == ["/usr/bin/shop", "--port", "8080"])
        #expect(linux.environ == ["HOME=/home/alice", "TOKEN=secret"])
        #expect(linux.lsbRelease?.contains("DISTRIB_ID=Debian") == true)
        #expect(linux.maps?.hasSuffix("/usr/bin/shop\n") == true)
        #expect(linux.procStatus?.hasPrefix("Name:\tshop") == true)
    }

    @Test func modulesWithBpELAndRSDSRecords() throws {
        let modules = try dump().modules
        #expect(modules.map(\.name) == ["/usr/bin/shop", "/lib/aarch64-linux-gnu/libc.so.6"])
        #expect(modules.first?.buildID == BuildID("a1b2c3d4e5f60718293a4b5c6d7e8f9001122334"))
        // An RSDS record gives no GNU build-id: its GUID holds only the first 16 bytes of one.
        #expect(modules.last?.buildID == nil)
        guard case .pdb70(let guid, let age, let name) = modules.last?.codeView else {
            Issue.record("libc's CodeView record is not RSDS")
            return
        }
        #expect(guid == Array(BuildID("a1b2c3d4e5f60718293a4b5c6d7e8f90").map { hexBytes($0.rawValue) } ?? []))
        #expect(age == 0 && name == "libc.so.6")
    }

    @Test func crashpadModuleAnnotations() throws {
        let info = try #require(try dump().crashpad)
        #expect(info.annotations == ["prod": "shop", "ver": "2.0.1"])
        #expect(info.reportID == Array(0..<16))
        let module = try #require(info.modules.first)
        #expect(module.moduleIndex == 0)
        #expect(module.list == ["abort message: assertion failed", "second line"])
        #expect(module.simple == ["channel": "beta"])
        // Only string-typed annotation objects are kept.
        #expect(module.objects == ["sentry": "{\"release\":\"shop@2.0.1\"}"])
    }

    @Test func arm64SnapshotFromMemory64AndTheCrashContext() throws {
        let dump = try dump()
        #expect(dump.processID == 4242)
        #expect(dump.threadNames == [100: "main", 101: "io-worker"])
        let snapshot = try dump.snapshot()

        #expect(snapshot.architecture == .arm64)
        #expect(snapshot.exception == ProcessSnapshot.Exception(signal: 7, code: 1, faultAddress: 0x8, threadID: 100))
        #expect(snapshot.threads.map(\.id) == [100, 101])
        #expect(snapshot.threads.map(\.name) == ["main", "io-worker"])
        let crashed = try #require(snapshot.threads.first)
        // The Exception stream's context, not the thread list's (the handler's, pc 0x7f0000004321)
        #expect(crashed.crashed && crashed.pc == 0x5555_0000_1234)
        #expect(crashed.registers[29] == 0x7FFF_F000_0040 && crashed.registers[30] == 0x5555_0000_1200)
        #expect(snapshot.threads.last?.pc == 0x7F00_0000_8888)
        // Memory64List blocks, back to back in the file
        #expect(snapshot.memory.map(\.start) == [0x7FFF_F000_0000, 0x7FFF_F000_9000])
        #expect(snapshot.memory.first?.bytes == Array((0..<256).map { UInt8($0) }) + Array((0..<256).map { UInt8($0) }))
        #expect(snapshot.memory.last?.bytes == [UInt8](repeating: 0xAB, count: 256))
    }

    @Test func redactionDropsTheEnvironmentAndScrubsTheCommandLine() throws {
        let original = try dump()
        let redacted = original.redacted { $0 == "8080" ? "[port]" : $0.replacingOccurrences(of: "shop", with: "app") }

        // Then the dump still reads, same size, with no environment and the scrubbed arguments
        #expect(redacted.count == (try Data(contentsOf: Self.seed)).count)
        let again = try Minidump(bytes: redacted)
        #expect(again.linux.environ == nil)
        #expect(!String(decoding: redacted, as: UTF8.self).contains("TOKEN=secret"))
        #expect(again.linux.cmdLine == ["/usr/bin/app", "--port", "[port]"])
        #expect(again.streams.filter { $0.type == Minidump.StreamType.linuxEnviron }.isEmpty)
        // and everything else is as it was
        #expect(again.linux.maps == original.linux.maps)
        #expect(try again.snapshot() == original.snapshot())
        #expect(again.crashpad == original.crashpad)
    }

    func hexBytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return out
    }
}
