import CompressNIO
import FaultlineCore
import Formats
import NIOCore
import Testing

@Suite struct BodyDecodingTests {
    func compress(_ bytes: [UInt8], _ algorithm: CompressionAlgorithm) throws -> ByteBuffer {
        var buffer = ByteBuffer(bytes: bytes)
        return try buffer.compress(with: algorithm)
    }

    @Test func inflatesGzipZlibAndRawDeflate() throws {
        let text = Array(String(repeating: "crash report ", count: 500).utf8)
        #expect(try BodyDecoding.inflate(try compress(text, .gzip()), encoding: .gzip, limit: 1 << 20) == text)
        #expect(try BodyDecoding.inflate(try compress(text, .zlib()), encoding: .deflate, limit: 1 << 20) == text)
        #expect(try BodyDecoding.inflate(try compress(text, .deflate()), encoding: .deflate, limit: 1 << 20) == text)
        #expect(try BodyDecoding.inflate(ByteBuffer(bytes: text), encoding: .identity, limit: 1 << 20) == text)
    }

    @Test func refusesOutputPastTheLimit() throws {
        let zeros = [UInt8](repeating: 0, count: 200_000)
        let gz = try compress(zeros, .gzip())
        #expect(try BodyDecoding.inflate(gz, encoding: .gzip, limit: 200_000).count == 200_000)
        let error = #expect(throws: FormatError.self) { try BodyDecoding.inflate(gz, encoding: .gzip, limit: 199_999) }
        #expect(error?.code == .tooLarge)
        #expect(throws: FormatError.self) {
            try BodyDecoding.inflate(ByteBuffer(bytes: zeros), encoding: .identity, limit: 10)
        }
    }

    @Test func corruptBytesAreACleanError() throws {
        var gz = try compress(Array("hello hello hello".utf8), .gzip())
        gz.moveWriterIndex(to: gz.writerIndex - 6)
        let garbage = ByteBuffer(bytes: [0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x03, 0xff, 0xff, 0xff])
        for body in [gz, garbage] {
            let error = #expect(throws: FormatError.self) {
                try BodyDecoding.inflate(body, encoding: .gzip, limit: 1 << 20)
            }
            #expect(error?.code == .corruptCompression)
        }
    }

    @Test func concatenatedGzipMembersInflateAndTrailingJunkDoesNot() throws {
        let a = try compress(Array("first ".utf8), .gzip())
        let b = try compress(Array("second".utf8), .gzip())
        var both = a
        var copy = b
        both.writeBuffer(&copy)
        #expect(try BodyDecoding.inflate(both, encoding: .gzip, limit: 100) == Array("first second".utf8))
        var junk = a
        junk.writeBytes([1, 2, 3])
        #expect(throws: FormatError.self) { try BodyDecoding.inflate(junk, encoding: .gzip, limit: 100) }
    }

    @Test func encodingHeaderParsing() {
        #expect(BodyDecoding.ContentEncoding(header: nil) == .identity)
        #expect(BodyDecoding.ContentEncoding(header: " GZIP ") == .gzip)
        #expect(BodyDecoding.ContentEncoding(header: "deflate") == .deflate)
        #expect(BodyDecoding.ContentEncoding(header: "br") == .br)
        #expect(BodyDecoding.ContentEncoding(header: "zstd") == nil)
        #expect(BodyDecoding.ContentEncoding(header: "gzip, br") == nil)
    }

    @Test func storedPayloadsRoundTrip() throws {
        let text = Array("{\"a\":1}".utf8)
        let stored = try BodyDecoding.deflateForStorage(text)
        #expect(try BodyDecoding.inflateStored(stored, limit: text.count) == text)
    }

    /// Stored bytes are compressed with a window and hash table sized to the input: every size, around each window
    /// boundary and past zlib's largest window, repetitive or not, inflates back exactly (through the stored-payload
    /// reader and through the results' codec), and the header never claims a window larger than zlib's.
    @Test func storedBytesOfEverySizeRoundTrip() throws {
        var rng = SystemRandomNumberGenerator()
        let sizes = [
            0, 1, 2, 255, 511, 512, 513, 1023, 1024, 1025, 9_700, 16_384, 16_385, 32_768, 32_769, 100_000, 1 << 20,
        ]
        for size in sizes {
            let random = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let repetitive = (0..<size).map { UInt8(ascii: "a") &+ UInt8($0 % 23) &+ UInt8(($0 / 4_000) % 3) }
            for input in [random, repetitive] {
                let stored = try BodyDecoding.deflateForStorage(input)
                #expect(try BodyDecoding.inflateStored(stored, limit: max(size, 1)) == input, "size \(size)")
                #expect(stored.count >= 2 && stored[0] & 0x0f == 8 && stored[0] >> 4 <= 7, "size \(size)")
                if let packed = StoredBlobCodec.zlib.compress(input) {
                    #expect(try StoredBlobCodec.zlib.decompress(packed, max(size, 1)) == input, "size \(size)")
                }
            }
        }
    }
}
