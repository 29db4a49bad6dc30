import Foundation
import Symbolication
import Testing

/// Every symbolicator crash the fuzzer found (`Fixtures/fuzz/` beside this file, docs/fuzzing.md) stays a
/// regression test: each input is opened as a debug file and asked for the same addresses the `symbolicate` fuzz
/// target asks for — hostile constants and every 8-byte word of the file, as link-time addresses and as offsets.
/// Before the fix of issue #9 each of these trapped on `symbol.address + symbol.size`.
@Suite struct FuzzCrashRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/fuzz")

    static var inputs: [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasSuffix(".s") && !$0.hasSuffix(".md") }.sorted().map {
            folder.appendingPathComponent($0)
        }
    }

    @Test func theCommittedCrashInputsAreThere() {
        // The replay below must not pass by finding nothing.
        #expect(Self.inputs.count >= 3)
    }

    @Test(arguments: inputs) func aFuzzerCrashInputResolvesWithoutTrapping(_ input: URL) throws {
        let bytes = [UInt8](try Data(contentsOf: input))
        let module = try DebugModule(path: input.path)
        var addresses: [UInt64] = [
            0, 1, 0x1000, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000,
            0xffff_ffff_ffff_ff00, 0xffff_ffff_ffff_ff10, .max,
        ]
        var index = 0
        while index + 8 <= bytes.count {
            var value: UInt64 = 0
            for k in 0..<8 { value |= UInt64(bytes[index + k]) << (8 * UInt64(k)) }
            addresses.append(value)
            addresses.append(value &+ 1)
            index += 8
        }
        var resolved = 0
        for address in addresses {
            if module.resolve(fileAddress: address) != nil { resolved += 1 }
            if module.resolve(moduleOffset: address) != nil { resolved += 1 }
        }
        // Each input holds symbols (that is how it crashed): some address in it must still resolve.
        #expect(resolved > 0)
    }
}
