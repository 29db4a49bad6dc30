#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The stored JSON of a symbolication result and of a grouping, written directly: the same bytes as `JSONEncoder`
/// with `.sortedKeys` (keys in UTF-8 order, absent optionals left out, `/` written `\/`, control characters
/// escaped), several times faster.
///
/// Why: encoding every report's result with `JSONEncoder` (its generic containers, a dictionary per object, the
/// sort) was the largest single cost of processing a report (19 % of the server's CPU under ingest load, issue
/// #13). The format stays the one readers decode with `JSONDecoder`; a test compares the bytes with `JSONEncoder`'s
/// on varied and hostile values, so a change of either shows.
public enum StoredJSON {
    /// `report` as `JSONEncoder` with `.sortedKeys` writes it.
    public static func encode(_ report: SymbolicatedReport) -> Data {
        var out = Writer(capacity: 256 + report.threads.reduce(0) { $0 + $1.count * 128 })
        // Keys in UTF-8 order: failure_reason, message_site, missing, state, threads, walk.
        out.raw("{")
        var first = true
        if let failure = report.failure { out.key("failure_reason", &first); out.string(failure) }
        if let site = report.messageSite { out.key("message_site", &first); out.slot(site) }
        out.key("missing", &first)
        out.raw("[")
        for (index, module) in report.missing.enumerated() {
            out.raw(index > 0 ? ",{\"build_id\":" : "{\"build_id\":")
            out.string(module.buildID)
            out.raw(",\"module\":")
            out.string(module.module)
            out.raw("}")
        }
        out.raw("]")
        out.key("state", &first)
        out.string(report.state.rawValue)
        out.key("threads", &first)
        out.raw("[")
        for (t, thread) in report.threads.enumerated() {
            out.raw(t > 0 ? ",[" : "[")
            for (s, slot) in thread.enumerated() {
                if s > 0 { out.byte(UInt8(ascii: ",")) }
                out.slot(slot)
            }
            out.raw("]")
        }
        out.raw("]")
        if let walk = report.walk { out.walk(walk) }
        out.raw("}")
        return out.data()
    }

    /// `grouping` as `JSONEncoder` with `.sortedKeys` writes it.
    /// An alert's reason (`AlertDraft.reason`) as `JSONEncoder` with `.sortedKeys` writes it. A value that is not
    /// finite, which `JSONEncoder` refuses, is left out. (One per new issue, inside the worker's transaction.)
    public static func encode(reason: [String: Double]) -> String {
        var out = Writer(capacity: 16 + 32 * reason.count)
        out.raw("{")
        var first = true
        for (key, value) in reason.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
        where value.isFinite {
            if !first { out.byte(UInt8(ascii: ",")) }
            first = false
            out.string(key)
            out.byte(UInt8(ascii: ":"))
            // Swift's shortest form without a trailing ".0", as `JSONEncoder` writes a number (`1`, `-0`, `2.5`, `1e+20`).
            let digits = value.description
            out.raw(digits.hasSuffix(".0") ? String(digits.dropLast(2)) : digits)
        }
        out.raw("}")
        return out.text()
    }

    public static func encode(_ grouping: GroupingResult) -> String {
        var out = Writer()
        // Keys in UTF-8 order: components, culprit, fingerprint, source, title, title_rank.
        out.raw("{\"components\":[")
        for (index, component) in grouping.components.enumerated() {
            if index > 0 { out.raw(",") }
            out.string(component)
        }
        out.raw("]")
        if let culprit = grouping.culprit {
            out.raw(",\"culprit\":")
            out.string(culprit)
        }
        out.raw(",\"fingerprint\":")
        out.string(grouping.fingerprint.rawValue)
        out.raw(",\"source\":")
        out.string(grouping.source.rawValue)
        out.raw(",\"title\":")
        out.string(grouping.title)
        out.raw(",\"title_rank\":")
        out.number(grouping.titleRank)
        out.raw("}")
        return out.text()
    }

    /// The bytes written so far, in a buffer of its own (a results' JSON is ~10 KB of short pieces; appending them
    /// to an `Array` one by one cost more than writing them).
    struct Writer: ~Copyable {
        private var base: UnsafeMutablePointer<UInt8>
        private var capacity: Int
        private(set) var count = 0

        init(capacity: Int = 256) {
            self.capacity = max(capacity, 16)
            base = .allocate(capacity: self.capacity)
        }

        deinit { base.deallocate() }

        /// Room for `more` bytes after the written ones.
        @inline(__always)
        mutating func reserve(_ more: Int) {
            guard capacity - count < more else { return }
            var grown = capacity
            while grown - count < more { grown = grown &* 2 }
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            moved.update(from: base, count: count)
            base.deallocate()
            base = moved
            capacity = grown
        }

        @inline(__always)
        mutating func byte(_ value: UInt8) {
            reserve(1)
            base[count] = value
            count &+= 1
        }

        @inline(__always)
        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard let from = bytes.baseAddress, bytes.count > 0 else { return }
            reserve(bytes.count)
            (base + count).update(from: from.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            count &+= bytes.count
        }

        mutating func raw(_ text: StaticString) {
            text.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
        }

        mutating func raw(_ text: String) {
            var text = text
            text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
        }

        /// A non-negative or negative integer in decimal, as `String(value)` writes it.
        mutating func number<Value: BinaryInteger>(_ value: Value) {
            if let small = Int64(exactly: value) {
                var magnitude = small.magnitude
                if small < 0 { byte(UInt8(ascii: "-")) }
                var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
                withUnsafeMutableBytes(of: &digits) { buffer in
                    var at = buffer.count
                    repeat {
                        at -= 1
                        buffer[at] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                        magnitude /= 10
                    } while magnitude > 0
                    append(UnsafeRawBufferPointer(rebasing: buffer[at...]))
                }
            } else {
                raw(String(value))
            }
        }

        /// The bytes as `Data`.
        func data() -> Data { Data(bytes: base, count: count) }

        /// The bytes as a `String` (the writer writes UTF-8).
        func text() -> String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

        /// `"name":`, after a comma unless it is the object's first key.
        mutating func key(_ name: StaticString, _ first: inout Bool) {
            if !first { byte(UInt8(ascii: ",")) }
            first = false
            byte(UInt8(ascii: "\""))
            raw(name)
            raw("\":")
        }

        /// Keys in UTF-8 order: build_id, frames, offset, status.
        /// `,"walk":{…}`: keys crashed, end, frames, id, name in a thread; address, trust in a frame.
        mutating func walk(_ walk: WalkedStacks) {
            raw(",\"walk\":{\"threads\":[")
            for (t, thread) in walk.threads.enumerated() {
                raw(t > 0 ? ",{\"crashed\":" : "{\"crashed\":")
                raw(thread.crashed ? "true" : "false")
                if let end = thread.end {
                    raw(",\"end\":")
                    string(end)
                }
                raw(",\"frames\":[")
                for (f, frame) in thread.frames.enumerated() {
                    raw(f > 0 ? ",{\"address\":" : "{\"address\":")
                    number(frame.address)
                    raw(",\"trust\":")
                    string(frame.trust.rawValue)
                    raw("}")
                }
                raw("],\"id\":")
                number(thread.id)
                if let name = thread.name {
                    raw(",\"name\":")
                    string(name)
                }
                raw("}")
            }
            raw("]}")
        }

        mutating func slot(_ slot: SymbolicatedFrameSlot) {
            if let buildID = slot.buildID {
                raw("{\"build_id\":")
                string(buildID)
                raw(",\"frames\":[")
            } else {
                raw("{\"frames\":[")
            }
            for (index, frame) in slot.frames.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                self.frame(frame)
            }
            if let offset = slot.offset {
                raw("],\"offset\":")
                number(offset)
                raw(",\"status\":")
            } else {
                raw("],\"status\":")
            }
            string(slot.status)
            byte(UInt8(ascii: "}"))
        }

        /// Keys in UTF-8 order: column, file, function, inlined, line.
        mutating func frame(_ frame: ResolvedFrame) {
            byte(UInt8(ascii: "{"))
            var first = true
            if let column = frame.column { key("column", &first); number(column) }
            if let file = frame.file { key("file", &first); string(file) }
            if let function = frame.function { key("function", &first); string(function) }
            key("inlined", &first)
            raw(frame.inlined ? "true" : "false")
            if let line = frame.line { key("line", &first); number(line) }
            byte(UInt8(ascii: "}"))
        }

        /// A JSON string with `JSONEncoder`'s escapes: `"` `\` `/`, the short forms of backspace, form feed,
        /// newline, return and tab, `\u00xx` (lower-case hex) for the other control characters; the rest as is.
        mutating func string(_ text: String) {
            byte(UInt8(ascii: "\""))
            var text = text
            text.withUTF8 { utf8 in
                // Eight bytes at a time up to the first word with a byte to escape (most strings have none).
                var clean = 0
                if let base = UnsafeRawPointer(utf8.baseAddress) {
                    while clean + 8 <= utf8.count,
                        !Self.mayNeedEscape(base.loadUnaligned(fromByteOffset: clean, as: UInt64.self))
                    {
                        clean += 8
                    }
                }
                var mark = 0
                for index in clean..<utf8.count {
                    let byte = utf8[index]
                    guard
                        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                            || byte == UInt8(ascii: "/")
                    else { continue }
                    append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[mark..<index])))
                    mark = index + 1
                    self.byte(UInt8(ascii: "\\"))
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): self.byte(byte)
                    case 0x08: self.byte(UInt8(ascii: "b"))
                    case 0x0c: self.byte(UInt8(ascii: "f"))
                    case 0x0a: self.byte(UInt8(ascii: "n"))
                    case 0x0d: self.byte(UInt8(ascii: "r"))
                    case 0x09: self.byte(UInt8(ascii: "t"))
                    default:
                        raw("u00")
                        self.byte(Self.hex(byte >> 4))
                        self.byte(Self.hex(byte & 0x0f))
                    }
                }
                append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[mark..<utf8.count])))
            }
            byte(UInt8(ascii: "\""))
        }

        /// Whether one of the eight bytes of `word` is a control character, `"`, `\` or `/` (exact, as a yes or no:
        /// the usual has-a-zero-byte test on the word and on its XOR with each of the three bytes).
        @inline(__always)
        static func mayNeedEscape(_ word: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            @inline(__always) func zeroByte(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & highs }
            let control = (word &- ones &* 0x20) & ~word & highs
            return control | zeroByte(word ^ (ones &* 0x22)) | zeroByte(word ^ (ones &* 0x5c))
                | zeroByte(word ^ (ones &* 0x2f)) != 0
        }

        static func hex(_ nibble: UInt8) -> UInt8 {
            nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
    }
}
