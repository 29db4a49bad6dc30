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
        var out = Writer()
        out.bytes.reserveCapacity(64 + report.threads.reduce(0) { $0 + $1.count * 96 })
        // Keys in UTF-8 order: failure_reason, message_site, missing, state, threads.
        out.raw("{")
        var first = true
        if let failure = report.failure { out.key("failure_reason", &first); out.string(failure) }
        if let site = report.messageSite { out.key("message_site", &first); out.slot(site) }
        out.key("missing", &first)
        out.raw("[")
        for (index, module) in report.missing.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{\"build_id\":")
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
            if t > 0 { out.raw(",") }
            out.raw("[")
            for (s, slot) in thread.enumerated() {
                if s > 0 { out.raw(",") }
                out.slot(slot)
            }
            out.raw("]")
        }
        out.raw("]}")
        return Data(out.bytes)
    }

    /// `grouping` as `JSONEncoder` with `.sortedKeys` writes it.
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
        out.raw(String(grouping.titleRank))
        out.raw("}")
        return String(decoding: out.bytes, as: UTF8.self)
    }

    struct Writer {
        var bytes: [UInt8] = []

        mutating func raw(_ text: StaticString) {
            text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }

        mutating func raw(_ text: String) {
            bytes.append(contentsOf: text.utf8)
        }

        /// `"name":`, after a comma unless it is the object's first key.
        mutating func key(_ name: StaticString, _ first: inout Bool) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes.append(UInt8(ascii: "\""))
            raw(name)
            raw("\":")
        }

        /// Keys in UTF-8 order: build_id, frames, offset, status.
        mutating func slot(_ slot: SymbolicatedFrameSlot) {
            raw("{")
            var first = true
            if let buildID = slot.buildID { key("build_id", &first); string(buildID) }
            key("frames", &first)
            raw("[")
            for (index, frame) in slot.frames.enumerated() {
                if index > 0 { raw(",") }
                self.frame(frame)
            }
            raw("]")
            if let offset = slot.offset { key("offset", &first); raw(String(offset)) }
            key("status", &first)
            string(slot.status)
            raw("}")
        }

        /// Keys in UTF-8 order: column, file, function, inlined, line.
        mutating func frame(_ frame: ResolvedFrame) {
            raw("{")
            var first = true
            if let column = frame.column { key("column", &first); raw(String(column)) }
            if let file = frame.file { key("file", &first); string(file) }
            if let function = frame.function { key("function", &first); string(function) }
            key("inlined", &first)
            raw(frame.inlined ? "true" : "false")
            if let line = frame.line { key("line", &first); raw(String(line)) }
            raw("}")
        }

        /// A JSON string with `JSONEncoder`'s escapes: `"` `\` `/`, the short forms of backspace, form feed,
        /// newline, return and tab, `\u00xx` (lower-case hex) for the other control characters; the rest as is.
        mutating func string(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            var text = text
            text.withUTF8 { utf8 in
                var mark = 0
                for index in utf8.indices {
                    let byte = utf8[index]
                    guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/")
                    else { continue }
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                    mark = index + 1
                    bytes.append(UInt8(ascii: "\\"))
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
                    case 0x08: bytes.append(UInt8(ascii: "b"))
                    case 0x0c: bytes.append(UInt8(ascii: "f"))
                    case 0x0a: bytes.append(UInt8(ascii: "n"))
                    case 0x0d: bytes.append(UInt8(ascii: "r"))
                    case 0x09: bytes.append(UInt8(ascii: "t"))
                    default:
                        raw("u00")
                        bytes.append(Self.hex(byte >> 4))
                        bytes.append(Self.hex(byte & 0x0f))
                    }
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<utf8.count]))
            }
            bytes.append(UInt8(ascii: "\""))
        }

        static func hex(_ nibble: UInt8) -> UInt8 {
            nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
    }
}
