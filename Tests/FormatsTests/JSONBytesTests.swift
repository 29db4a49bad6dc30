import FaultlineCore
import Foundation
import Testing

@testable import Formats

/// The word-at-a-time string scanning (`JSONBytes`) must find exactly the byte a byte-by-byte scan finds.
@Suite struct JSONBytesTests {
    /// The first index in `from..<end` whose byte is `"`, `\` or below 0x20, by a plain loop.
    func slowFirstSpecial(_ bytes: [UInt8], from: Int, end: Int) -> Int {
        var i = from
        while i < end, bytes[i] != 0x22, bytes[i] != 0x5c, bytes[i] >= 0x20 { i += 1 }
        return i
    }

    /// `skipPlain` stops at the first special byte, or within the last 8 bytes before `end` when there is none
    /// earlier (never past a special byte, never past `end`).
    func check(_ bytes: [UInt8], from: Int, end: Int) {
        let fast = bytes.withUnsafeBufferPointer { JSONBytes.skipPlain($0, from: from, end: end) }
        let slow = slowFirstSpecial(bytes, from: from, end: end)
        if slow <= end - 8 || (slow < end && fast == slow) {
            #expect(fast == slow, "bytes \(bytes), from \(from), end \(end)")
        } else {
            #expect(
                fast <= slow && fast >= from && end - fast < 8,
                "bytes \(bytes), from \(from), end \(end): stopped at \(fast)")
        }
    }

    @Test func findsEverySpecialByteAtEveryPosition() {
        // Every byte value at every position of a 16-byte run of plain bytes, and a second special byte after it.
        for value in 0...255 {
            for position in 0..<16 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 16)
                bytes[position] = UInt8(value)
                check(bytes, from: 0, end: 16)
                if position < 15 {
                    bytes[15] = 0x22
                    check(bytes, from: 0, end: 16)
                }
            }
        }
    }

    @Test func agreesWithAByteLoopOnRandomText() {
        // Seeded: bytes drawn mostly from plain ASCII and UTF-8 continuation bytes, sometimes special ones.
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        let alphabet: [UInt8] =
            Array("abcXYZ019 {}[]:,.-_/".utf8) + [
                0xc3, 0xa9, 0xe4, 0xb8, 0xad, 0x7f, 0x80, 0xff, 0x21, 0x23, 0x5b, 0x5d,
            ]
        let special: [UInt8] = [0x22, 0x5c, 0x00, 0x0a, 0x1f]
        for _ in 0..<20_000 {
            let count = Int(next() % 40)
            let bytes = (0..<count).map { _ in
                next() % 29 == 0
                    ? special[Int(next() % UInt64(special.count))] : alphabet[Int(next() % UInt64(alphabet.count))]
            }
            let from = count == 0 ? 0 : Int(next() % UInt64(count))
            let end = from + Int(next() % UInt64(count - from + 1))
            check(bytes, from: from, end: end)
        }
    }

    @Test func stringsReadTheSameAcrossWordBoundaries() throws {
        // Escapes and multi-byte characters at every offset from a word boundary decode as Foundation decodes them.
        for pad in 0..<17 {
            let text = String(repeating: "x", count: pad) + #"é\"q\\u\n中"# + String(repeating: "y", count: 17 - pad)
            let json = Array("\"\(text)\"".utf8)
            let decoded = try JSONReader.with(json, range: 0..<json.count) { try $0.readString() }
            let expected = try JSONDecoder().decode(String.self, from: Data(json))
            #expect(decoded == expected)
            // The splitter skips the first string and finds the element after it, exactly.
            let head = Array(#"{"a":"\#(text)","reports":["#.utf8)
            let element = Array(#"{"k":"\#(text)"}"#.utf8)
            let body = head + element + Array("]}".utf8)
            #expect(try JSONBatchSplitter.split(body) == .batch([head.count..<(head.count + element.count)]))
        }
    }

    @Test func controlCharactersInStringsAreStillRefused() {
        for pad in 0..<17 {
            let json = Array(("\"" + String(repeating: "x", count: pad)).utf8) + [0x01] + Array("x\"".utf8)
            #expect(throws: FormatError.self) {
                try JSONReader.with(json, range: 0..<json.count) { try $0.readString() }
            }
        }
    }
}
