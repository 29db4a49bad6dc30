/// A project's privacy settings: what the server scrubs from reports before it stores them.
///
/// On by default, as in Sentry ("Data Scrubber" and "Prevent Storing of IP Addresses" are both on for a new
/// project). `safeFields` are keys never scrubbed (their whole value is kept, by exact name, case-insensitive);
/// `sensitiveFields` are more key names whose values are filtered (substring, case-insensitive, like the
/// defaults).
public struct PrivacySettings: Sendable, Equatable, Codable {
    /// Whether values are scrubbed at all (key names, credit cards, IBANs, keys, tokens, URL passwords, user paths).
    public var scrubbing: Bool
    /// Keys whose values are always kept as sent (exact key name, case-insensitive).
    public var safeFields: [String]
    /// More key names whose values are filtered (substring, case-insensitive).
    public var sensitiveFields: [String]
    /// Whether IP address fields (`user.ip_address`, `request.env.REMOTE_ADDR`, a session's `attrs.ip_address`)
    /// are kept; when false they are dropped (stored as `null`) even with scrubbing off.
    public var keepIPAddresses: Bool
    /// Whether e-mail addresses and phone numbers in values are masked (`j***@example.com`, `+** *** ***45`): a
    /// switch of its own, on by default, applied even with `scrubbing` off.
    public var maskEmailsAndPhones: Bool

    public init(
        scrubbing: Bool = true, safeFields: [String] = [], sensitiveFields: [String] = [],
        keepIPAddresses: Bool = false,
        maskEmailsAndPhones: Bool = true
    ) {
        self.scrubbing = scrubbing
        self.safeFields = safeFields
        self.sensitiveFields = sensitiveFields
        self.keepIPAddresses = keepIPAddresses
        self.maskEmailsAndPhones = maskEmailsAndPhones
    }

    /// Whether these settings can change anything at all (false: ingest skips the scrubbing pass).
    public var changesAnything: Bool { scrubbing || !keepIPAddresses || maskEmailsAndPhones }

    enum CodingKeys: String, CodingKey {
        case scrubbing, safeFields, sensitiveFields, keepIPAddresses, maskEmailsAndPhones
    }

    /// Settings encoded before `maskEmailsAndPhones` existed decode with it on (the default).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            scrubbing: try c.decode(Bool.self, forKey: .scrubbing),
            safeFields: try c.decode([String].self, forKey: .safeFields),
            sensitiveFields: try c.decode([String].self, forKey: .sensitiveFields),
            keepIPAddresses: try c.decode(Bool.self, forKey: .keepIPAddresses),
            maskEmailsAndPhones: try c.decodeIfPresent(Bool.self, forKey: .maskEmailsAndPhones) ?? true)
    }
}

/// The scrubbing rules: what to replace, given an object key or a string value. Pure and allocation-free
/// when nothing matches, so a JSON rewriter can ask it about every key and string on the ingest hot path.
///
/// The rules follow Sentry Relay's defaults (`@password`, `@creditcard`, `@iban`, `@pemkey`, `@urlauth`,
/// `@bearer`, `@userpath`, and IP removal), with two deliberate differences: credit card numbers must pass the
/// Luhn check and IBANs their ISO 7064 mod-97 check (Relay matches the shape only), so that order numbers and
/// ids of the same length are not filtered. Matches are replaced with `[Filtered]`; user paths become
/// `[user]`; URL passwords keep the user name (`user:[Filtered]@host`), as Sentry's legacy scrubber does.
///
/// Debug metadata is never touched: `debug_meta`, `images`, `modules`, `registers`, `capturedMemory` subtrees,
/// and protocol fields (event and session ids, timestamps, release/version/build fields, build-ids, every
/// address field and function names), because symbolication and grouping depend on them byte for byte. That
/// allowlist holds only where the protocol puts those fields (`Scope`): inside a free map (`extra`, `tags`,
/// `request.data`, headers, a custom context, …) an `address` or a `session_id` is a value like any other.
///
/// Key names are compared lowercased with `-` and spaces folded to `_` (`X-Api-Key` is `x_api_key`); a key
/// name longer than 256 bytes is treated as sensitive.
public struct Scrubber: Sendable {
    /// The replacement for a filtered value or match.
    public static let filtered = "[Filtered]"
    /// The replacement for the user name in a home path.
    public static let userPlaceholder = "[user]"
    /// Key substrings whose values are filtered (Sentry's defaults).
    public static let defaultSensitiveFields = [
        "password", "secret", "passwd", "api_key", "apikey", "token", "auth", "credentials", "private_key",
        "privatekey", "mysql_pwd", "session", "pwd", "passphrase",
    ]
    /// Subtrees of debug metadata, left as sent.
    static let debugSubtrees: Set<String> = ["debug_meta", "images", "modules", "registers", "capturedmemory"]
    /// Protocol fields, left as sent (checked before the sensitive names: `session_id` is not a secret).
    static let protocolFields: Set<String> = [
        "event_id", "timestamp", "start_timestamp", "received", "received_at", "sent_at", "started", "duration",
        "release", "dist", "version", "app_version", "app_build", "build", "os_version", "build_id", "buildid",
        "debug_id", "code_id", "debug_file", "code_file", "session_id", "sid", "seq", "install_id", "trace_id",
        "span_id", "parent_span_id", "address", "instruction_addr", "image_addr", "symbol_addr", "base_address",
        "baseaddress", "end_address", "endoftext", "fault_address", "faultaddress", "image_size", "platform",
        "project_id", "package", "module", "function", "raw_function", "symbol",
    ]
    /// Fields holding a client's IP address, and the proxy headers that carry one (by their folded names).
    static let ipFields: Set<String> = [
        "ip_address", "remote_addr", "x_forwarded_for", "x_real_ip", "forwarded", "cf_connecting_ip", "true_client_ip",
        "x_client_ip", "x_cluster_client_ip", "fastly_client_ip", "x_original_forwarded_for", "x_forwarded",
        "forwarded_for", "client_ip",
    ]
    /// Members whose value is a free map (any key a client likes): the protocol allowlist does not apply inside.
    static let freeMaps: Set<String> = [
        "extra", "tags", "data", "headers", "cookies", "env", "query_string", "vars", "custom_keys", "params",
        "attributes", "other",
    ]
    /// Members holding a user id: at the top of a report or event (`user_id`, a session's `did`), and in `user`.
    static let identityFields: Set<String> = ["user_id", "did"]
    static let userIdentityFields: Set<String> = ["id", "email"]
    /// Sentry's known contexts: their members are protocol fields (`contexts.os.version`); any other context is
    /// a free map.
    static let knownContexts: Set<String> = ["device", "os", "app", "runtime", "browser", "gpu", "culture", "trace"]

    /// Where a member sits: what the protocol allowlist means there.
    public enum Scope: UInt8, Sendable, Equatable {
        /// The protocol's own fields (the top of a report or an event, frames, images, known contexts).
        case event
        /// The members of `contexts`: known context names lead back to `.event`, others to `.free`.
        case contexts
        /// A free map and everything under it: no protocol field is kept by its name.
        case free
        /// The members of `user`: a free map whose `id` and `email` are user ids.
        case user
    }

    /// What to do with the value of one object member.
    public enum KeyDecision: Sendable, Equatable {
        /// Look inside: scrub strings by value, decide nested keys.
        case inspect
        /// Keep the whole value as sent (debug metadata, protocol field, safe field).
        case keep
        /// Replace every scalar in the value with `[Filtered]` (a sensitive key, or a key name over 256 bytes).
        case filter
        /// Drop the value (store `null`): an IP address the project does not keep.
        case drop
        /// A user id (`user.id`, `user.email`, `user_id`, a session's `did`): an e-mail address becomes a keyed hash
        /// (`identity(of:)`); anything else is inspected.
        case identity
    }

    public let settings: PrivacySettings
    /// Makes pseudonymous user ids under the project's key; nil: e-mail user ids are masked like other values.
    public let identities: (any IdentityHashing)?
    /// The project's own sensitive names (folded), beyond the defaults.
    let extraSensitive: [[UInt8]]
    /// Safe field names (folded) by their FNV-1a hash.
    let safe: [UInt64: [UInt8]]

    public init(settings: PrivacySettings, identities: (any IdentityHashing)? = nil) {
        self.settings = settings
        self.identities = identities
        self.extraSensitive = settings.sensitiveFields.map { Self.folded($0) }.filter { !$0.isEmpty }
        var safe: [UInt64: [UInt8]] = [:]
        for name in settings.safeFields.map({ Self.folded($0) }) {
            safe[Self.fnv(String(decoding: name, as: UTF8.self))] = name
        }
        self.safe = safe
    }

    /// A key name as the rules compare it: ASCII lowercased, `-` and space folded to `_`.
    static func folded(_ name: String) -> [UInt8] { name.utf8.map(fold) }

    @inline(__always)
    static func fold(_ byte: UInt8) -> UInt8 {
        if byte >= 0x41 && byte <= 0x5a { return byte &+ 0x20 }
        if byte == UInt8(ascii: "-") || byte == UInt8(ascii: " ") { return UInt8(ascii: "_") }
        return byte
    }

    /// Whether a document needs walking at all.
    public var isActive: Bool { settings.changesAnything }

    // MARK: keys

    /// The decision for the value of the member named `key` (the key's decoded UTF-8) at the top of a report.
    public func decide(key: UnsafeBufferPointer<UInt8>) -> KeyDecision { decide(key: key, in: .event).decision }

    /// The decision for the value of the member named `key` (the key's decoded UTF-8) in `scope`, and the scope of
    /// what is inside that value.
    public func decide(key: UnsafeBufferPointer<UInt8>, in scope: Scope) -> (decision: KeyDecision, scope: Scope) {
        // A name this long is no protocol field: hostile or generated, its value is filtered rather than trusted.
        guard key.count <= 256 else { return (settings.scrubbing ? .filter : .inspect, .free) }
        // Asked for every key of every report: fold into a stack buffer, look names up by an FNV-1a hash
        // (confirmed byte by byte), no allocation.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(key.count, 1)) { lower in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for i in 0..<key.count {
                let b = Self.fold(key[i])
                lower[i] = b
                hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3
            }
            let name = UnsafeBufferPointer(rebasing: lower[0..<key.count])
            var inner = scope == .contexts || scope == .user ? Scope.free : scope
            switch Self.knownKind(hash: hash, name: name) {
            case .keep?: if scope == .event { return (.keep, .event) }
            case .ip?: return (settings.keepIPAddresses ? .keep : .drop, .free)
            case .freeMap?: if scope == .event { inner = .free }
            case .contexts?: if scope == .event { inner = .contexts }
            case .knownContext?: if scope == .contexts { inner = .event }
            case .user?: if scope == .event { inner = .user }
            case .identity?: if scope == .event { return (.identity, .free) }
            case .userIdentity?: if scope == .user { return (.identity, .free) }
            case nil: break
            }
            // Scrubbing off: keep walking (an IP field may sit deeper), but no key or value rule applies.
            guard settings.scrubbing else { return (.inspect, inner) }
            if let safeName = safe[hash], Self.equal(safeName, name) { return (.keep, inner) }
            return (Self.isSensitive(folded: name, extra: extraSensitive) ? .filter : .inspect, inner)
        }
    }

    /// Whether a folded key name contains a default or a project's sensitive name.
    @inline(__always)
    static func isSensitive(folded name: UnsafeBufferPointer<UInt8>, extra: [[UInt8]]) -> Bool {
        if containsDefaultPattern(name) { return true }
        for pattern in extra where contains(name, pattern) { return true }
        return false
    }

    enum KnownKind { case keep, ip, freeMap, contexts, knownContext, user, identity, userIdentity }

    /// The known kind of a key, from an open-addressing table indexed by the key's FNV-1a hash (the hash is
    /// already computed, so no second hash as a `Dictionary` would do).
    static func knownKind(hash: UInt64, name: UnsafeBufferPointer<UInt8>) -> KnownKind? {
        knownTable.withUnsafeBufferPointer { table in
            var slot = Int(truncatingIfNeeded: hash & UInt64(table.count - 1))
            for _ in 0..<table.count {
                guard let entry = table[slot] else { return nil }
                if entry.hash == hash, Self.equal(entry.name, name) { return entry.kind }
                slot = (slot + 1) & (table.count - 1)
            }
            return nil
        }
    }

    static let knownTable: [(hash: UInt64, name: [UInt8], kind: KnownKind)?] = {
        var table = [(hash: UInt64, name: [UInt8], kind: KnownKind)?](repeating: nil, count: 256)
        for (hash, entry) in knownKeys {
            var slot = Int(truncatingIfNeeded: hash & 255)
            while table[slot] != nil { slot = (slot + 1) & 255 }
            table[slot] = (hash, entry.name, entry.kind)
        }
        return table
    }()
    /// Debug subtrees, protocol fields and IP fields by the FNV-1a hash of their lowercase name.
    static let knownKeys: [UInt64: (name: [UInt8], kind: KnownKind)] = {
        var out: [UInt64: (name: [UInt8], kind: KnownKind)] = [:]
        for name in debugSubtrees.union(protocolFields) { out[fnv(name)] = (Array(name.utf8), .keep) }
        for name in ipFields { out[fnv(name)] = (Array(name.utf8), .ip) }
        for name in freeMaps { out[fnv(name)] = (Array(name.utf8), .freeMap) }
        for name in knownContexts { out[fnv(name)] = (Array(name.utf8), .knownContext) }
        for name in identityFields { out[fnv(name)] = (Array(name.utf8), .identity) }
        for name in userIdentityFields { out[fnv(name)] = (Array(name.utf8), .userIdentity) }
        out[fnv("contexts")] = (Array("contexts".utf8), .contexts)
        out[fnv("user")] = (Array("user".utf8), .user)
        precondition(
            out.count == debugSubtrees.count + protocolFields.count + ipFields.count + freeMaps.count
                + knownContexts.count + identityFields.count + userIdentityFields.count + 2,
            "a known key name is in two lists")
        return out
    }()

    static func fnv(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// `decide(key:)` for a `String` key.
    public func decide(key: String) -> KeyDecision {
        Array(key.utf8).withUnsafeBufferPointer { decide(key: $0) }
    }

    /// `decide(key:in:)` for a `String` key.
    public func decide(key: String, in scope: Scope) -> (decision: KeyDecision, scope: Scope) {
        Array(key.utf8).withUnsafeBufferPointer { decide(key: $0, in: scope) }
    }

    /// Whether `a` and `b` hold the same bytes: a plain loop (the generic `elementsEqual` was 2.6 % of an
    /// ingest's instructions here).
    @inline(__always)
    static func equal(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { a in
            for i in 0..<a.count where a[i] != b[i] { return false }
            return true
        }
    }

    /// Whether a lowercase key name contains one of Sentry's default sensitive names. Asked for nearly every key of
    /// every report: only the names starting with the byte at hand are compared there (a bit mask per byte), instead
    /// of searching the name once per pattern.
    static func containsDefaultPattern(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard name.count >= shortestDefaultPattern else { return false }
        return defaultPatternStarts.withUnsafeBufferPointer { starts in
            defaultPatternBytes.withUnsafeBufferPointer { patterns in
                for i in 0...(name.count - shortestDefaultPattern) {
                    var candidates = starts[Int(name[i])]
                    while candidates != 0 {
                        let (offset, count) = defaultPatternRanges[candidates.trailingZeroBitCount]
                        candidates &= candidates &- 1
                        guard i + count <= name.count else { continue }
                        var j = 1
                        while j < count, name[i + j] == patterns[offset + j] { j += 1 }
                        if j == count { return true }
                    }
                }
                return false
            }
        }
    }

    static let defaultPatterns: [[UInt8]] = defaultSensitiveFields.map { Array($0.utf8) }
    static let defaultPatternBytes: [UInt8] = defaultPatterns.flatMap { $0 }
    /// Each default pattern's offset in `defaultPatternBytes` and its length.
    static let defaultPatternRanges: [(offset: Int, count: Int)] = {
        var offset = 0
        return defaultPatterns.map { pattern in
            defer { offset += pattern.count }
            return (offset, pattern.count)
        }
    }()
    static let shortestDefaultPattern = defaultPatterns.map(\.count).min() ?? 1
    /// For each byte, the default patterns that start with it (bit k: `defaultPatterns[k]`).
    static let defaultPatternStarts: [UInt16] = {
        precondition(defaultPatterns.count <= 16 && defaultPatterns.allSatisfy { !$0.isEmpty })
        var starts = [UInt16](repeating: 0, count: 256)
        for (k, pattern) in defaultPatterns.enumerated() { starts[Int(pattern[0])] |= 1 << k }
        return starts
    }()

    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] {
                var j = 1
                while j < needle.count, haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    // MARK: values

    /// The scrubbed text of a string value, or nil when no rule matched (the common case, without allocating).
    public func scrub(text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let rules = settings.scrubbing
        let contacts = settings.maskEmailsAndPhones
        guard rules || contacts, !text.isEmpty else { return nil }
        var matches: [(Range<Int>, [UInt8])] = []
        var i = 0
        let n = text.count
        // Asked for every string of every report: a table says which bytes can start a match at all, and which of
        // them only at a word's start (cards, IBANs, `Bearer`, whose rules need a boundary before), so most bytes cost
        // one lookup and most rules are only called where they could match.
        Self.byteClasses.withUnsafeBufferPointer { classes in
            while i < n {
                let b = text[i]
                let kind = classes[Int(b)]
                guard kind & (Self.startsAnywhere | Self.startsAtWord) != 0,
                    kind & Self.startsAnywhere != 0 || i == 0 || classes[Int(text[i - 1])] & Self.wordByte == 0
                else {
                    i += 1
                    continue
                }
                let next = i + 1 < n ? text[i + 1] | 0x20 : 0
                let match: (Range<Int>, [UInt8])?
                switch b {
                case UInt8(ascii: "-"): match = rules && next == UInt8(ascii: "-") ? Self.pemKey(text, at: i) : nil
                case UInt8(ascii: "b"): match = rules ? Self.bearer(text, at: i) : nil
                case UInt8(ascii: "B"): match = rules ? Self.bearer(text, at: i) ?? Self.iban(text, at: i) : nil
                case UInt8(ascii: "/"):
                    if !rules {
                        match = nil
                    } else if next == UInt8(ascii: "/") {
                        match = Self.urlAuth(text, at: i)
                    } else if next == UInt8(ascii: "h") || next == UInt8(ascii: "u") {
                        match = Self.unixUserPath(text, at: i)
                    } else {
                        match = nil
                    }
                case UInt8(ascii: "\\"):
                    match =
                        rules && (next == UInt8(ascii: "u") || next == UInt8(ascii: "d") || next == UInt8(ascii: "p"))
                        ? Self.windowsUserPath(text, at: i) : nil
                case UInt8(ascii: "="), UInt8(ascii: ":"):
                    match = rules ? keyValue(text, at: i, after: matches.last?.0.upperBound ?? 0) : nil
                case UInt8(ascii: "@"):
                    match = contacts ? Self.email(text, at: i, after: matches.last?.0.upperBound ?? 0) : nil
                case UInt8(ascii: "3")...UInt8(ascii: "6"):
                    match = (rules ? Self.creditCard(text, at: i) : nil) ?? (contacts ? Self.phone(text, at: i) : nil)
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "("):
                    match = contacts ? Self.phone(text, at: i) : nil
                default: match = rules ? Self.iban(text, at: i) : nil
                }
                if let match {
                    matches.append(match)
                    i = match.0.upperBound
                } else {
                    i += 1
                }
            }
        }
        guard !matches.isEmpty else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(n)
        var last = 0
        for (range, replacement) in matches {
            out.append(contentsOf: text[last..<range.lowerBound])
            out.append(contentsOf: replacement)
            last = range.upperBound
        }
        out.append(contentsOf: text[last..<n])
        return out
    }

    /// `scrub(text:)` for a `String`: the scrubbed string, or nil when nothing matched.
    public func scrub(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { scrub(text: $0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    static let filteredBytes = Array(Scrubber.filtered.utf8)
    static let userBytes = Array(Scrubber.userPlaceholder.utf8)

    /// `byteClasses` bits: a word byte (`isWord`); a byte where a rule may match anywhere (`-` of a PEM armor, `/` of a
    /// URL or a home folder, `\\` of a Windows profile, `=`/`:` after a sensitive name, `@` of an e-mail address); a
    /// byte where a rule may match at a word's start only (`B`/`b` of `Bearer`, digits of a card or phone number, `+`
    /// and `(` of a phone number, `A`–`Z` of an IBAN).
    static let wordByte: UInt8 = 1
    static let startsAnywhere: UInt8 = 2
    static let startsAtWord: UInt8 = 4
    static let byteClasses: [UInt8] = (0...255).map { (value: Int) -> UInt8 in
        let b = UInt8(value)
        var kind: UInt8 = isWord(b) ? wordByte : 0
        if Array("-/\\=:@".utf8).contains(b) { kind |= startsAnywhere }
        if b == UInt8(ascii: "b") || (0x41...0x5a).contains(b) || isDigit(b) || b == UInt8(ascii: "+")
            || b == UInt8(ascii: "(")
        {
            kind |= startsAtWord
        }
        return kind
    }

    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    static func isWord(_ b: UInt8) -> Bool {
        isDigit(b) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == UInt8(ascii: "_") || b >= 0x80
    }
    static func boundaryBefore(_ t: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool { i == 0 || !isWord(t[i - 1]) }
    static func boundaryAfter(_ t: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool { i >= t.count || !isWord(t[i]) }

    static func hasPrefix(
        _ t: UnsafeBufferPointer<UInt8>, at i: Int, _ prefix: StaticString, caseInsensitive: Bool = false
    ) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard i >= 0, i + n <= t.count else { return false }
        return prefix.withUTF8Buffer { p in
            for k in 0..<n {
                var a = t[i + k]
                var b = p[k]
                if caseInsensitive {
                    if a >= 0x41 && a <= 0x5a { a &+= 0x20 }
                    if b >= 0x41 && b <= 0x5a { b &+= 0x20 }
                }
                if a != b { return false }
            }
            return true
        }
    }

    /// A credit card number at `i`: Relay's vendor prefixes (Amex 34/37, Visa 4, Mastercard 51–55, Discover 65 and
    /// 6011) with 15 or 16 digits, a space or dash allowed between any two digits, on word boundaries, and the Luhn
    /// check. The whole number becomes `[Filtered]`.
    static func creditCard(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, [UInt8])? {
        guard boundaryBefore(t, i) else { return nil }
        // Cheap rejection first (most numbers in reports are short): at least 15 digits, separators allowed.
        var seen = 0
        var k = i
        while k < t.count, seen < 15 {
            if isDigit(t[k]) {
                seen += 1
            } else if !(t[k] == UInt8(ascii: "-") || t[k] == UInt8(ascii: " ")) {
                break
            }
            k += 1
        }
        guard seen >= 15 else { return nil }
        var digits: [Int] = []
        var j = i
        var lastDigitEnd = i
        while j < t.count, digits.count < 16 {
            let b = t[j]
            if isDigit(b) {
                digits.append(Int(b &- 0x30))
                j += 1
                lastDigitEnd = j
            } else if (b == UInt8(ascii: "-") || b == UInt8(ascii: " ")) && !digits.isEmpty && j + 1 < t.count
                && isDigit(t[j + 1])
            {
                j += 1
            } else {
                break
            }
        }
        func valid(_ count: Int) -> Bool {
            guard digits.count >= count else { return false }
            let d = Array(digits.prefix(count))
            let prefixOK: Bool
            switch count {
            case 15: prefixOK = d[0] == 3 && (d[1] == 4 || d[1] == 7)
            case 16:
                prefixOK =
                    d[0] == 4 || (d[0] == 5 && (1...5).contains(d[1])) || (d[0] == 6 && d[1] == 5)
                    || (d[0] == 6 && d[1] == 0 && d[2] == 1 && d[3] == 1)
            default: prefixOK = false
            }
            return prefixOK && luhn(d)
        }
        // The end of the `count`-th digit.
        func end(after count: Int) -> Int {
            var seen = 0
            var k = i
            while k < t.count {
                if isDigit(t[k]) {
                    seen += 1
                    if seen == count { return k + 1 }
                }
                k += 1
            }
            return k
        }
        for count in [16, 15] where valid(count) {
            let e = count == digits.count ? lastDigitEnd : end(after: count)
            if boundaryAfter(t, e) { return (i..<e, filteredBytes) }
        }
        return nil
    }

    /// The Luhn checksum over `digits` (the last is the check digit).
    public static func luhn(_ digits: [Int]) -> Bool {
        var sum = 0
        for (k, digit) in digits.reversed().enumerated() {
            var d = digit
            if k % 2 == 1 {
                d *= 2
                if d > 9 { d -= 9 }
            }
            sum += d
        }
        return sum % 10 == 0
    }

    static let ibanCountries: Set<String> = Set(
        ("AT AD AE AL AZ BA BE BG BH BR BY CH CR CY CZ DE DK DO EE EG ES FI FO FR GB GE GI GL GR GT HR HU IE IL IQ IS IT "
            + "JO KW KZ LB LC LI LT LU LV LY MC MD ME MK MR MT MU NL NO PK PL PS PT QA RO RU RS SA SC SE SI SK SM ST SV TL "
            + "TN TR UA VA VG XK DZ AO BJ BF BI CV CM CF TD KM CG CI DJ GQ GA GW HN IR MG ML MA MZ NI NE SN TG")
            .split(separator: " ").map(String.init))

    /// An IBAN at `i`: a country code from Relay's list, two check digits, 11–29 letters or digits, on word
    /// boundaries, and the mod-97 check (ISO 13616).
    static func iban(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, [UInt8])? {
        guard boundaryBefore(t, i), i + 15 <= t.count else { return nil }
        let upper: ClosedRange<UInt8> = 0x41...0x5a
        guard upper.contains(t[i + 1]), isDigit(t[i + 2]), isDigit(t[i + 3]) else { return nil }
        guard ibanCountries.contains(String(decoding: [t[i], t[i + 1]], as: UTF8.self)) else { return nil }
        var j = i + 4
        while j < t.count, j - i < 34, isDigit(t[j]) || upper.contains(t[j]) || (t[j] >= 0x61 && t[j] <= 0x7a) {
            j += 1
        }
        let bban = j - i - 4
        guard bban >= 11, bban <= 29, boundaryAfter(t, j) else { return nil }
        // mod 97 over BBAN + country + check digits, letters as 10…35.
        var remainder = 0
        for k in Array(i + 4..<j) + Array(i..<i + 4) {
            var b = t[k]
            if b >= 0x61 && b <= 0x7a { b &-= 0x20 }
            if isDigit(b) {
                remainder = (remainder * 10 + Int(b &- 0x30)) % 97
            } else {
                remainder = (remainder * 100 + Int(b &- 0x41) + 10) % 97
            }
        }
        return remainder == 1 ? (i..<j, filteredBytes) : nil
    }

    /// A PEM private key at `i` (`-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----`): the body between
    /// the armor lines becomes `[Filtered]`, the armor stays so a reader sees what was there.
    static func pemKey(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, [UInt8])? {
        guard hasPrefix(t, at: i, "-----BEGIN ") else { return nil }
        var j = i + 11
        while j < t.count, (t[j] >= 0x41 && t[j] <= 0x5a) || t[j] == UInt8(ascii: " ") { j += 1 }
        guard hasPrefix(t, at: j - 12, " PRIVATE KEY"), hasPrefix(t, at: j, "-----") else { return nil }
        j += 5
        while j < t.count, t[j] == UInt8(ascii: " ") || t[j] == UInt8(ascii: "\t") { j += 1 }
        if j < t.count, t[j] == UInt8(ascii: "\r") { j += 1 }
        if j < t.count, t[j] == UInt8(ascii: "\n") { j += 1 }
        let bodyStart = j
        var k = j
        while k < t.count {
            if hasPrefix(t, at: k, "-----END ") {
                var bodyEnd = k
                if bodyEnd > bodyStart, t[bodyEnd - 1] == UInt8(ascii: "\n") { bodyEnd -= 1 }
                if bodyEnd > bodyStart, t[bodyEnd - 1] == UInt8(ascii: "\r") { bodyEnd -= 1 }
                guard bodyEnd > bodyStart else { return nil }
                return (bodyStart..<bodyEnd, filteredBytes)
            }
            k += 1
        }
        return nil
    }

    /// `Bearer <token>` at `i` (any case, word boundary before): the token becomes `[Filtered]`.
    static func bearer(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, [UInt8])? {
        guard boundaryBefore(t, i), hasPrefix(t, at: i, "bearer", caseInsensitive: true) else { return nil }
        var j = i + 6
        let spaceStart = j
        while j < t.count, t[j] == UInt8(ascii: " ") || t[j] == UInt8(ascii: "\t") || t[j] == UInt8(ascii: "\n") {
            j += 1
        }
        guard j > spaceStart else { return nil }
        let tokenStart = j
        while j < t.count,
            !(t[j] == UInt8(ascii: " ") || t[j] == UInt8(ascii: "\t") || t[j] == UInt8(ascii: "\n")
                || t[j] == UInt8(ascii: "\r"))
        {
            j += 1
        }
        guard j > tokenStart else { return nil }
        return (tokenStart..<j, filteredBytes)
    }

    /// `//user:password@` at `i` (the `//` of a URL): the password becomes `[Filtered]`, the user name stays.
    static func urlAuth(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, [UInt8])? {
        guard i + 1 < t.count, t[i + 1] == UInt8(ascii: "/") else { return nil }
        func allowed(_ b: UInt8) -> Bool {
            isDigit(b) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == UInt8(ascii: "%")
                || b == UInt8(ascii: "_")
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
        }
        var j = i + 2
        let userStart = j
        while j < t.count, allowed(t[j]) { j += 1 }
        guard j > userStart, j < t.count, t[j] == UInt8(ascii: ":") else { return nil }
        j += 1
        let passwordStart = j
        while j < t.count, allowed(t[j]) { j += 1 }
        guard j > passwordStart, j < t.count, t[j] == UInt8(ascii: "@") else { return nil }
        return (passwordStart..<j, filteredBytes)
    }

    /// Folders whose next path component is a user's name (matched without case at a `/` or `\\`).
    static let unixUserFolders: [StaticString] = ["/home/", "/users/"]
    static let windowsUserFolders: [StaticString] = ["\\users\\", "\\documents and settings\\", "\\profiles\\"]

    /// `/home/<name>` or `/Users/<name>` at `i`: the name becomes `[user]`.
    static func unixUserPath(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, [UInt8])? {
        userPath(t, at: i, folders: unixUserFolders)
    }

    /// `\Users\<name>`, `\Documents and Settings\<name>` or `\Profiles\<name>` at `i` (the backslash): the name
    /// becomes `[user]`.
    static func windowsUserPath(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, [UInt8])? {
        userPath(t, at: i, folders: windowsUserFolders)
    }

    static func userPath(_ t: UnsafeBufferPointer<UInt8>, at i: Int, folders: [StaticString]) -> (Range<Int>, [UInt8])?
    {
        for folder in folders where hasPrefix(t, at: i, folder, caseInsensitive: true) {
            return userName(t, from: i + folder.utf8CodeUnitCount)
        }
        return nil
    }

    static func userName(_ t: UnsafeBufferPointer<UInt8>, from start: Int) -> (Range<Int>, [UInt8])? {
        var j = start
        while j < t.count, t[j] != UInt8(ascii: "/"), t[j] != UInt8(ascii: "\\"), t[j] != 0x0a, t[j] != 0x0d, t[j] != 0
        { j += 1 }
        guard j > start else { return nil }
        // Already scrubbed, or a placeholder: leave it.
        if hasPrefix(t, at: start, "[user]"), j == start + 6 { return nil }
        return (start..<j, userBytes)
    }
}
