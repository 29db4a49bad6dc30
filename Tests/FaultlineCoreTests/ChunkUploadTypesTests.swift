import FaultlineCore
import Foundation
import Testing

/// Identifiers and classification used by sentry-cli's chunk upload.
@Suite struct ChunkUploadTypesTests {
    func facts(_ kinds: Set<DebugFileKind>, _ fileType: String) -> DebugFileFacts {
        DebugFileFacts(
            buildID: BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a"), kinds: kinds, architecture: "x86_64", fileType: fileType,
            features: ["symtab"], compressedDebugSections: false)
    }

    @Test func objectClassFollowsWhatTheFileHolds() {
        // gcc -g PIE: ET_DYN with code and DWARF → a library (what sentry-cli itself reports for PIE).
        #expect(DifObjectClass.of(facts([.debuginfo, .executable], "shared_object")) == .lib)
        // Stripped PIE or .so: code only.
        #expect(DifObjectClass.of(facts([.executable], "shared_object")) == .lib)
        // Non-PIE executable.
        #expect(DifObjectClass.of(facts([.debuginfo, .executable], "executable")) == .exe)
        // objcopy --only-keep-debug keeps e_type but drops the code: a debug companion, whatever the type.
        #expect(DifObjectClass.of(facts([.debuginfo], "shared_object")) == .dbg)
        #expect(DifObjectClass.of(facts([.debuginfo], "executable")) == .dbg)
        #expect(DifObjectClass.of(facts([.executable], "relocatable")) == .rel)
        #expect(DifObjectClass.of(facts([.executable], "core")) == .dump)
        #expect(DifObjectClass.of(facts([.executable], "other")) == .other)
        // Only Sentry's object classes exist: sentry-cli 3.8.2 refuses anything else.
        #expect(Set(DifObjectClass.allCases.map(\.rawValue)) == ["none", "rel", "exe", "lib", "dump", "dbg", "src", "other"])
    }

    @Test func checksumsAreFortyHexDigits() {
        #expect(ChunkChecksum("21A2D0CF0000000000000000000000000000AB39")?.rawValue == "21a2d0cf0000000000000000000000000000ab39")
        #expect(ChunkChecksum(String(repeating: "a", count: 39)) == nil)
        #expect(ChunkChecksum(String(repeating: "a", count: 41)) == nil)
        #expect(ChunkChecksum("../" + String(repeating: "a", count: 37)) == nil)
        #expect(ChunkChecksum(String(repeating: "g", count: 40)) == nil)
        #expect(ChunkChecksum(digest: [UInt8](repeating: 0xab, count: 20))?.rawValue == String(repeating: "ab", count: 20))
        #expect(ChunkChecksum(digest: [UInt8](repeating: 0xab, count: 16)) == nil)
    }

    @Test func difDescriptionsRoundTripThroughTheirStoredForm() throws {
        let dif = DifDescription(
            id: "x", debugID: "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1", codeID: BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")!,
            cpuName: "x86_64", objectName: "crashy", size: 17968, sha1: ChunkChecksum(String(repeating: "1", count: 40))!,
            createdAt: Date(timeIntervalSince1970: 1_795_000_000.5), objectClass: .dbg, features: ["symtab", "debug"])
        let data = try JSONEncoder().encode(dif)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"created_at_ms\":1795000000500"))
        #expect(try JSONDecoder().decode(DifDescription.self, from: data) == dif)
        // A stored form with a broken id is refused, not trusted.
        let broken = Data(text.replacingOccurrences(of: "aba11aef", with: "zz").utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DifDescription.self, from: broken) }
    }
}
