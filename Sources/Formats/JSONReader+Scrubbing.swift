import FaultlineCore

/// Scrubbing while parsing: what lets `NativeReports.decode(_:limits:scrubber:)` read a one-report body once
/// instead of walking it twice (`JSONScrubbing` to rewrite it, then the parser over the rewritten bytes).
///
/// A `JSONReader` with `scrubbing` set applies the scrubber's rules to what it reads, as `JSONScrubbing.Walker`
/// would have before: object members get the scrubber's decision for their key (`mode`), strings read as values
/// come back scrubbed, and values the parser skips are walked by the `Walker` itself. Every replacement is written
/// into the walker's output, so the rewritten body comes out of the same pass.
///
/// The contract is narrow on purpose: when the reader meets something the shortcut does not rewrite exactly as the
/// two passes would (a filtered number or bool, a dropped IP address, a scrubbed string read as an address), it
/// throws `ScrubAsYouParse.Unsupported`, and any error at all sends the caller back to the two passes, so every
/// answer that is not a success is theirs. The `native` fuzz target and `NativeReportsTests` compare both.
struct ScrubAsYouParse {
    /// Thrown where reading on would not give what parsing the scrubbed document gives.
    struct Unsupported: Error {}

    enum Mode {
        /// Scrub strings by their text, decide nested keys.
        case inspect
        /// Every scalar becomes `[Filtered]`.
        case filter
        /// Kept as sent: nothing inside is looked at.
        case keep
        /// A user id: an e-mail address becomes its pseudonym (`Scrubber.identity(of:)`), anything else is inspected.
        case identity
    }

    var walker: JSONScrubbing.Walker
    /// What applies to the value being read.
    var mode = Mode.inspect
    /// Where the value being read sits (what the protocol allowlist means there).
    var scope = Scrubber.Scope.event
    /// Containers around the value being read (the `Walker`'s depth, for its nesting limit).
    var depth = 0

    /// The mode for the value of the member named `key` under the current mode; `valueIsNull` says whether it is
    /// `null` (asked only for a key whose value is dropped).
    mutating func mode(forMemberNamed key: JSONReader.Key, valueIsNull: () throws -> Bool) throws -> Mode {
        switch mode {
        case .keep: return .keep
        case .filter:
            scope = .free
            return .filter
        case .inspect, .identity:
            let (decision, inner) = walker.decision(for: key, in: scope)
            scope = inner
            switch decision {
            case .inspect: return .inspect
            case .keep: return .keep
            case .filter: return .filter
            case .identity: return .identity
            case .drop:
                // Nothing to drop when it is null already (the parser reads the null); otherwise the parser
                // would have to read a `null` the input does not have.
                guard try valueIsNull() else { throw Unsupported() }
                return .keep
            }
        }
    }
}

extension JSONReader {
    // The state lives in the reader (`scrubbing`, a struct) and is changed in place: a class here cost a retain,
    // a release and an exclusivity check per access, more than the walk it saves.

    /// Under `scrubbing`, the member whose value `body` reads gets its key's mode (and one level more of depth).
    @inline(__always)
    mutating func scrubbingMember(_ key: Key, _ body: (inout JSONReader, Key) throws -> Void) throws {
        guard isScrubbing else { return try body(&self, key) }
        let outer = scrubbing!.mode
        let outerScope = scrubbing!.scope
        let (bytes, value, end) = (bytes, index, end)  // a dropped value is looked at only when there is one
        let inner = try scrubbing!.mode(forMemberNamed: key) {
            var probe = JSONReader(bytes: bytes, range: value..<end)
            return try probe.peek() == .null
        }
        scrubbing!.mode = inner
        scrubbing!.depth += 1
        defer {
            scrubbing!.mode = outer
            scrubbing!.scope = outerScope
            scrubbing!.depth -= 1
        }
        try body(&self, key)
    }

    /// Under `scrubbing`, one level more of depth for an array element.
    @inline(__always)
    mutating func scrubbingElement(_ n: Int, _ body: (inout JSONReader, Int) throws -> Void) throws {
        guard isScrubbing else { return try body(&self, n) }
        // An array in a free map may be a pair list, which only the `Walker` reads as one.
        if scrubbing!.mode != .keep, scrubbing!.mode != .filter, scrubbing!.scope == .free {
            throw ScrubAsYouParse.Unsupported()
        }
        scrubbing!.depth += 1
        defer { scrubbing!.depth -= 1 }
        try body(&self, n)
    }

    /// A skipped value under `scrubbing`: the `Walker` walks it (rewriting what its rules match), as it would have.
    mutating func scrubbingSkip() throws {
        var plain = JSONReader(bytes: bytes, range: index..<end)
        let depth = scrubbing!.depth
        switch scrubbing!.mode {
        case .keep: try plain.skipValue(depth: depth)
        case .inspect: try scrubbing!.walker.value(&plain, filter: false, depth: depth, scope: scrubbing!.scope)
        case .filter: try scrubbing!.walker.value(&plain, filter: true, depth: depth, scope: .free)
        case .identity: try scrubbing!.walker.apply(.identity, &plain, depth: depth, scope: scrubbing!.scope)
        }
        index = plain.index
    }

    /// A string value under `scrubbing` (the opening quote next): its scrubbed text, the replacement written.
    mutating func scrubbingString() throws -> String {
        let start = index
        let raw = try rawString()
        switch scrubbing!.mode {
        case .filter:
            scrubbing!.walker.replace(start..<index, with: JSONScrubbing.filteredLiteral)
            return Scrubber.filtered
        case .inspect, .identity:
            let mode = scrubbing!.mode
            if let scrubbed = mode == .identity
                ? scrubbing!.walker.identityText(raw) : scrubbing!.walker.scrubbedText(raw)
            {
                var literal: [UInt8] = []
                JSONScrubbing.encodeString(scrubbed, into: &literal)
                scrubbing!.walker.replace(start..<index, with: literal)
                return String(decoding: scrubbed, as: UTF8.self)
            }
        case .keep:
            break
        }
        guard raw.hasEscapes else { return String(decoding: raw.raw, as: UTF8.self) }
        // Escapes are checked by decoding them (`rawString` only finds the end).
        index = start + 1
        return try stringBody(closingQuoteRequired: true)
    }

    /// Throws `Unsupported` when a string read raw (an address) would have been rewritten.
    mutating func scrubbingCheckRaw(_ raw: Key) throws {
        guard isScrubbing else { return }
        switch scrubbing!.mode {
        case .keep: return
        case .filter: throw ScrubAsYouParse.Unsupported()
        case .inspect: if scrubbing!.walker.scrubbedText(raw) != nil { throw ScrubAsYouParse.Unsupported() }
        case .identity: if scrubbing!.walker.identityText(raw) != nil { throw ScrubAsYouParse.Unsupported() }
        }
    }

    /// Throws `Unsupported` for a number or bool that would have been `[Filtered]` (a string to the parser).
    @inline(__always)
    mutating func scrubbingCheckScalar() throws {
        if isScrubbing, scrubbing!.mode == .filter { throw ScrubAsYouParse.Unsupported() }
    }
}
