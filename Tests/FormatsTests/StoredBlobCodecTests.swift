import FaultlineCore
import Foundation
import Testing

@testable import Formats

/// The zlib codec the server stores symbolication results with (`StoredBlobCodec.zlib`).
@Suite struct StoredBlobCodecTests {
    /// A result's JSON as the worker writes it: the same keys, build-ids and paths over and over.
    static let json: [UInt8] = {
        let slots = (0..<60).map { n in
            #"{"build_id":"8f3a1c2d4e5f60718293a4b5c6d7e8f901234567","frames":[{"file":"Sources/App/File\#(n % 7).swift","function":"Renderer.draw(frame:)","inlined":false,"line":\#(n * 13)}],"offset":\#(n * 4099),"status":"symbolicated"}"#
        }
        return Array(#"{"missing":[],"state":"complete","threads":[[\#(slots.joined(separator: ","))]]}"#.utf8)
    }()

    @Test func aResultShrinksStartsWithAZlibHeaderAndComesBackByteForByte() throws {
        let packed = try #require(StoredBlobCodec.zlib.compress(Self.json))
        // A zlib header: deflate (method 8) under a window of at most 32 KB, sized to the blob (16 KB here).
        #expect(packed.first.map { $0 & 0x0f == 8 && $0 >> 4 <= 7 } == true)
        #expect(packed.first == 0x68)
        #expect(!StoredBlobCodec.isPlain(packed))
        #expect(packed.count * 4 < Self.json.count)
        #expect(try StoredBlobCodec.zlib.decompress(packed, Self.json.count) == Self.json)
    }

    @Test func whatWouldNotShrinkIsLeftAlone() {
        // Two bytes of JSON cannot get smaller with a zlib header and checksum around them.
        #expect(StoredBlobCodec.zlib.compress(Array("{}".utf8)) == nil)
    }

    @Test func aDamagedOrOversizedBlobIsAnErrorNotACrash() throws {
        let packed = try #require(StoredBlobCodec.zlib.compress(Self.json))
        // Truncated, corrupted in the middle, or inflating past the reader's limit: each throws.
        #expect(throws: StoredBlobError.self) {
            try StoredBlobCodec.zlib.decompress(Array(packed.prefix(packed.count / 2)), 1 << 20)
        }
        var corrupted = packed
        corrupted[corrupted.count / 2] ^= 0xff
        #expect(throws: StoredBlobError.self) { try StoredBlobCodec.zlib.decompress(corrupted, 1 << 20) }
        #expect(throws: StoredBlobError.self) { try StoredBlobCodec.zlib.decompress(packed, Self.json.count - 1) }
        #expect(throws: StoredBlobError.self) { try StoredBlobCodec.zlib.decompress([], 1 << 20) }
    }
}
