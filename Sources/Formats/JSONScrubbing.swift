import FaultlineCore

/// Writes a scrubbed copy of a JSON document: the `Scrubber` decides, this walks and rewrites.
///
/// One pass with the strict pull parser (`JSONReader`). Bytes that no rule touches are copied as they are
/// (whitespace, key order, number spelling and escapes included), so a document without a match comes back as
/// `nil` — "unchanged" — and the caller keeps the client's bytes (and its gzip) untouched. Replaced strings are
/// re-encoded as JSON strings; a filtered number or bool becomes the string `"[Filtered]"`; a dropped IP address
/// becomes `null` (every reader treats `null` as absent).
public enum JSONScrubbing {
    /// The scrubbed bytes of the JSON value in `range` of `bytes`, or nil when nothing changed.
    /// - Throws: `FormatError` when the value is not well-formed JSON (nothing is scrubbed then).
    public static func scrub(_ bytes: [UInt8], range: Range<Int>? = nil, scrubber: Scrubber) throws -> [UInt8]? {
        let range = range ?? 0..<bytes.count
        guard scrubber.isActive, !range.isEmpty else { return nil }
        return try bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(bytes: buffer, range: range)
            var walker = Walker(bytes: buffer, end: range.upperBound, scrubber: scrubber, copied: range.lowerBound)
            try walker.value(&reader, filter: false, depth: 0, scope: .event)
            try reader.expectEnd()
            return walker.rewritten()
        }
    }

    /// The bytes of `value` as a JSON string literal (quotes included); also how the server writes strings into its
    /// own small JSON answers (`JSONAnswer`).
    package static func encodeString(_ value: some Collection<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in value {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5c, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5c, 0x5c])
            case 0x0a: out.append(contentsOf: [0x5c, UInt8(ascii: "n")])
            case 0x0d: out.append(contentsOf: [0x5c, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5c, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hexDigits[Int(b >> 4)])
                out.append(hexDigits[Int(b & 0x0f)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static let filteredLiteral: [UInt8] = {
        var out: [UInt8] = []
        encodeString(Array(Scrubber.filtered.utf8), into: &out)
        return out
    }()
    static let nullLiteral: [UInt8] = Array("null".utf8)

    struct Walker {
        let bytes: UnsafeBufferPointer<UInt8>
        let end: Int
        let scrubber: Scrubber
        /// The rewritten document so far; nil while nothing changed.
        var out: [UInt8]?
        /// Input bytes before this index are in `out` already.
        var copied: Int
        /// The decisions made so far in this walk, by key.
        var decisions = DecisionMemo()

        /// The whole rewritten document once the walk is done, or nil when nothing changed.
        func rewritten() -> [UInt8]? {
            guard var out else { return nil }
            out.append(contentsOf: bytes[copied..<end])
            return out
        }

        mutating func replace(_ range: Range<Int>, with replacement: [UInt8]) {
            if out == nil {
                out = []
                out!.reserveCapacity(end - copied + 64)
            }
            out!.append(contentsOf: bytes[copied..<range.lowerBound])
            out!.append(contentsOf: replacement)
            copied = range.upperBound
        }

        /// Walks one value in `scope`; with `filter`, every scalar in it is replaced with `[Filtered]`.
        mutating func value(_ reader: inout JSONReader, filter: Bool, depth: Int, scope: Scrubber.Scope) throws {
            guard depth < 512 else { throw FormatError(.malformedJSON, "nesting deeper than 512 levels") }
            switch try reader.peek() {
            case .object:
                try reader.readObject { r, key in try self.member(&r, key, filter: filter, depth: depth, scope: scope) }
            case .array where scope == .free && !filter:
                try pairs(&reader, depth: depth)
            case .array:
                try reader.readArray { r, _ in try self.value(&r, filter: filter, depth: depth + 1, scope: scope) }
            case .string:
                let start = reader.index
                let raw = try reader.rawString()
                if filter {
                    replace(start..<reader.index, with: JSONScrubbing.filteredLiteral)
                } else if let scrubbed = scrubbedText(raw) {
                    var literal: [UInt8] = []
                    JSONScrubbing.encodeString(scrubbed, into: &literal)
                    replace(start..<reader.index, with: literal)
                }
            case .number, .bool:
                let start = reader.index
                try reader.skipValue()
                if filter { replace(start..<reader.index, with: JSONScrubbing.filteredLiteral) }
            case .null:
                try reader.literal("null")
            }
        }

        mutating func member(
            _ reader: inout JSONReader, _ key: JSONReader.Key, filter: Bool, depth: Int, scope: Scrubber.Scope
        ) throws {
            if filter { return try value(&reader, filter: true, depth: depth + 1, scope: .free) }
            let (decision, inner) = decision(for: key, in: scope)
            try apply(decision, &reader, depth: depth + 1, scope: inner)
        }

        /// Walks one value under a key's decision.
        @inline(__always)
        mutating func apply(
            _ decision: Scrubber.KeyDecision, _ reader: inout JSONReader, depth: Int, scope: Scrubber.Scope
        ) throws {
            switch decision {
            case .inspect: try value(&reader, filter: false, depth: depth, scope: scope)
            case .keep: try reader.skipValue(depth: depth)
            case .filter: try value(&reader, filter: true, depth: depth, scope: scope)
            case .identity:
                guard try reader.peek() == .string else {
                    return try value(&reader, filter: false, depth: depth, scope: scope)
                }
                let start = reader.index
                if let replaced = identityText(try reader.rawString()) {
                    var literal: [UInt8] = []
                    JSONScrubbing.encodeString(replaced, into: &literal)
                    replace(start..<reader.index, with: literal)
                }
            case .drop:
                if try reader.consumeNull() { return }
                reader.skipWhitespace()
                let start = reader.index
                try reader.skipValue(depth: depth)
                replace(start..<reader.index, with: JSONScrubbing.nullLiteral)
            }
        }

        /// An array in a free map, read as Relay reads a pair list (`[["X-Api-Key", "…"], ["Cookie", "…"]]`, the
        /// shape Sentry SDKs send headers, cookies and query strings in): when the first element is a string, the
        /// second is treated as the value of a member of that name.
        mutating func pairs(_ reader: inout JSONReader, depth: Int) throws {
            var pairDecision: (decision: Scrubber.KeyDecision, scope: Scrubber.Scope)?
            try reader.readArray { r, n in
                if n == 1, let pair = pairDecision {
                    return try self.apply(pair.decision, &r, depth: depth + 1, scope: pair.scope)
                }
                if n == 0, try r.peek() == .string {
                    var probe = r
                    pairDecision = self.decision(for: try probe.rawString(), in: .free)
                }
                try self.value(&r, filter: false, depth: depth + 1, scope: .free)
            }
        }

        /// The scrubber's decision for the value of the member named `key` in `scope`, and the scope inside it.
        mutating func decision(for key: JSONReader.Key, in scope: Scrubber.Scope) -> (
            decision: Scrubber.KeyDecision, scope: Scrubber.Scope
        ) {
            if key.hasEscapes { return scrubber.decide(key: key.string, in: scope) }
            let name = UnsafeBufferPointer(rebasing: key.raw)
            let slot = decisions.find(name, in: scope)
            if slot.found { return (decisions.slots[slot.index].decision, decisions.slots[slot.index].inner) }
            let decision = scrubber.decide(key: name, in: scope)
            decisions.remember(name, decision, at: slot)
            return decision
        }

        /// A user id's stored text: its pseudonym when it is an e-mail address, else what the value rules make of it
        /// (nil: unchanged).
        func identityText(_ raw: JSONReader.Key) -> [UInt8]? {
            let identity: [UInt8]?
            if raw.hasEscapes {
                identity = Array(raw.string.utf8).withUnsafeBufferPointer { scrubber.identity(of: $0) }
            } else {
                identity = scrubber.identity(of: UnsafeBufferPointer(rebasing: raw.raw))
            }
            return identity ?? scrubbedText(raw)
        }

        func scrubbedText(_ raw: JSONReader.Key) -> [UInt8]? {
            if !raw.hasEscapes { return scrubber.scrub(text: UnsafeBufferPointer(rebasing: raw.raw)) }
            let decoded = Array(raw.string.utf8)
            return decoded.withUnsafeBufferPointer { scrubber.scrub(text: $0) }
        }
    }
}

/// The scrubber's decisions remembered for one walk, by the key's bytes as sent. A report repeats a few dozen key names
/// hundreds of times (every frame's, every breadcrumb's), and deciding one — lowercase, hash, look up the known names,
/// search the sensitive ones — cost ~250 instructions; finding it again costs a hash and a comparison of its bytes.
/// The keys are remembered by pointer into the body, which outlives the walk, with the scope they were decided in.
struct DecisionMemo {
    struct Slot {
        var hash: UInt64 = 0
        var name: UnsafePointer<UInt8>?
        var count = 0
        var scope = Scrubber.Scope.event
        var decision = Scrubber.KeyDecision.inspect
        var inner = Scrubber.Scope.event
    }

    static let capacity = 128  // a power of two
    static let longestName = 48
    /// Empty until the first key (a walk of a value without objects allocates nothing).
    var slots: [Slot] = []

    /// Where `name` in `scope` is remembered (`found`), or the free slot to remember it in (`index` -1: none, or too
    /// long).
    mutating func find(_ name: UnsafeBufferPointer<UInt8>, in scope: Scrubber.Scope) -> (
        found: Bool, index: Int, hash: UInt64, scope: Scrubber.Scope
    ) {
        guard let base = name.baseAddress, name.count <= Self.longestName else { return (false, -1, 0, scope) }
        var hash: UInt64 = (0xcbf2_9ce4_8422_2325 ^ UInt64(scope.rawValue)) &* 0x0000_0100_0000_01b3
        for i in 0..<name.count { hash = (hash ^ UInt64(base[i])) &* 0x0000_0100_0000_01b3 }
        if slots.isEmpty { slots = Array(repeating: Slot(), count: Self.capacity) }
        return slots.withUnsafeBufferPointer { slots in
            var index = Int(truncatingIfNeeded: hash) & (Self.capacity - 1)
            for _ in 0..<8 {
                guard let known = slots[index].name else { return (false, index, hash, scope) }
                if slots[index].hash == hash, slots[index].count == name.count,
                    slots[index].scope.rawValue == scope.rawValue,
                    Self.equal(known, base, name.count)
                {
                    return (true, index, hash, scope)
                }
                index = (index &+ 1) & (Self.capacity - 1)
            }
            return (false, -1, 0, scope)  // a crowded neighbourhood: decide without remembering
        }
    }

    mutating func remember(
        _ name: UnsafeBufferPointer<UInt8>, _ decision: (decision: Scrubber.KeyDecision, scope: Scrubber.Scope),
        at slot: (found: Bool, index: Int, hash: UInt64, scope: Scrubber.Scope)
    ) {
        guard slot.index >= 0 else { return }
        slots[slot.index] = Slot(
            hash: slot.hash, name: name.baseAddress, count: name.count, scope: slot.scope, decision: decision.decision,
            inner: decision.scope)
    }

    @inline(__always)
    static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        for i in 0..<count where a[i] != b[i] { return false }
        return true
    }
}
