import Formats
import Foundation
import NIOCore
import Testing

/// Brotli bodies (`Content-Encoding: br`, what sentry-sdk sends when `brotli` is importable). The fixtures
/// were made by the reference encoder: `Fixtures/brotli/make-fixtures.sh`.
@Suite struct BrotliDecodingTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/brotli")

    func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    @Test func decodesWhatTheReferenceEncoderWrote() throws {
        // Given an envelope compressed by the brotli CLI at quality 11
        let plain = try fixture("envelope.txt")
        let compressed = try fixture("envelope.txt.br")
        #expect(compressed.count < plain.count)
        // When it is decoded, Then it is the original, byte for byte
        #expect(try BodyDecoding.inflate(ByteBuffer(bytes: compressed), encoding: .br, limit: 1 << 20) == plain)
        // And the limit counts the decoded bytes: exactly enough is fine, one byte less is not
        #expect(try BodyDecoding.inflate(ByteBuffer(bytes: compressed), encoding: .br, limit: plain.count) == plain)
        let error = #expect(throws: FormatError.self) {
            try BodyDecoding.inflate(ByteBuffer(bytes: compressed), encoding: .br, limit: plain.count - 1)
        }
        #expect(error?.code == .tooLarge)
    }

    @Test func aBombStopsAtTheLimit() throws {
        // Given 54 bytes that decode to 64 MiB of zeros
        let bomb = try fixture("zeros-64MiB.br")
        #expect(bomb.count < 100)
        // When the limit is 1 MiB, Then decoding stops there with tooLarge
        let error = #expect(throws: FormatError.self) {
            try BodyDecoding.inflate(ByteBuffer(bytes: bomb), encoding: .br, limit: 1 << 20)
        }
        #expect(error?.code == .tooLarge)
        // And with room for all of it, the many output chunks add up to exactly the original
        let all = try BodyDecoding.inflate(ByteBuffer(bytes: bomb), encoding: .br, limit: 64 << 20)
        #expect(all.count == 64 << 20)
        #expect(all.allSatisfy { $0 == 0 })
    }

    @Test func truncatedCorruptOrTrailingBytesAreCleanErrors() throws {
        let plain = try fixture("envelope.txt")
        let compressed = try fixture("envelope.txt.br")
        var flipped = compressed
        flipped[flipped.count / 2] ^= 0xff
        let cases: [(String, [UInt8])] = [
            ("truncated", Array(compressed.dropLast(8))),
            ("cut in the middle", Array(compressed.prefix(compressed.count / 2))),
            ("trailing junk", compressed + [0x01, 0x02, 0x03]),
            ("garbage", Array("this is not brotli at all, just text".utf8)),
            ("flipped byte", flipped),
        ]
        for (name, body) in cases {
            do {
                let out = try BodyDecoding.inflate(ByteBuffer(bytes: body), encoding: .br, limit: 1 << 20)
                // A flipped byte may still decode (brotli has no checksum), but never to the original.
                #expect(name == "flipped byte" && out != plain, "\(name) decoded")
            } catch let error as FormatError {
                #expect(error.code == .corruptCompression, "\(name): \(error)")
            }
        }
        #expect(try BodyDecoding.inflate(ByteBuffer(bytes: []), encoding: .br, limit: 10) == [])
    }
}
