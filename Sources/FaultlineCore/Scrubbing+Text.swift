/// The rules for values inside free text: `name=value` pairs (query strings, cookies, form bodies, log lines),
/// e-mail addresses and phone numbers. Each is asked at the byte where it can start (see `Scrubber.byteClasses`)
/// and returns the range to replace, or nil.
extension Scrubber {
    /// Bytes a name in `name=value` or `name: value` is made of.
    @inline(__always)
    static func isNameByte(_ b: UInt8) -> Bool { isWord(b) && b < 0x80 || b == UInt8(ascii: "-") }

    /// Bytes that end an unquoted value in `name=value`.
    @inline(__always)
    static func endsValue(_ b: UInt8) -> Bool {
        switch b {
        case 0x20, 0x09, 0x0a, 0x0d, UInt8(ascii: "&"), UInt8(ascii: ";"), UInt8(ascii: ","), UInt8(ascii: "\""),
            UInt8(ascii: "'"), UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "<"),
            UInt8(ascii: ">"):
            return true
        default: return false
        }
    }

    /// The value after `=` or `:` at `i` when the name before it is sensitive (`password=hunter2`, `?api_key=…`,
    /// `session=…; theme=dark`, `passwd: hunter2`, `"secret": "x"`), as the key rule would filter it: the value becomes
    /// `[Filtered]`. After `:` a space or a quote must follow, so that `TokenStore::load` and `f(token:)` are left
    /// alone. An authorization scheme (`Authorization: Bearer x`) keeps its word; the credential after it is filtered.
    /// Nothing before `lastEnd` (the previous match) is looked at.
    func keyValue(_ t: UnsafeBufferPointer<UInt8>, at i: Int, after lastEnd: Int) -> (Range<Int>, [UInt8])? {
        let n = t.count
        let colon = t[i] == UInt8(ascii: ":")
        // The value: spaces, then a quoted string or a run up to a delimiter.
        var v = i + 1
        if colon {
            guard v < n, t[v] == 0x20 || t[v] == UInt8(ascii: "\"") || t[v] == UInt8(ascii: "'") else { return nil }
        } else if v < n, t[v] == UInt8(ascii: "=") {
            return nil
        }
        while v < n, t[v] == 0x20 || t[v] == 0x09 { v += 1 }
        guard v < n else { return nil }
        // The name: a quote may close it, and spaces may stand before the separator.
        var e = i
        while e > lastEnd, e > i - 3, t[e - 1] == 0x20 { e -= 1 }
        if e > lastEnd, t[e - 1] == UInt8(ascii: "\"") || t[e - 1] == UInt8(ascii: "'") { e -= 1 }
        var s = e
        while s > lastEnd, e - s < 64, Self.isNameByte(t[s - 1]) { s -= 1 }
        guard s < e, e - s < 64, s == lastEnd || s == 0 || !Self.isNameByte(t[s - 1]) else { return nil }
        let sensitive = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: e - s) { buffer -> Bool in
            for k in 0..<(e - s) { buffer[k] = Self.fold(t[s + k]) }
            let name = UnsafeBufferPointer(buffer)
            if let safeName = safe[Self.fnv(name)], Self.equal(safeName, name) { return false }
            return Self.isSensitive(folded: name, extra: extraSensitive)
        }
        guard sensitive, !Self.hasPrefix(t, at: v, "[Filtered]") else { return nil }
        var range = Self.valueRange(t, from: v)
        if let scheme = Self.credentialAfterScheme(t, range) { range = scheme }
        guard !range.isEmpty, !Self.isFiltered(t, range) else { return nil }
        return (range, Self.filteredBytes)
    }

    /// A quoted value's inside, or an unquoted run up to a delimiter, starting at `v`.
    static func valueRange(_ t: UnsafeBufferPointer<UInt8>, from v: Int) -> Range<Int> {
        let quote = t[v]
        if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
            var k = v + 1
            while k < t.count, t[k] != quote, t[k] != 0x0a {
                if t[k] == UInt8(ascii: "\\") { k += 1 }
                k += 1
            }
            return (v + 1)..<min(k, t.count)
        }
        var k = v
        while k < t.count, !endsValue(t[k]) { k += 1 }
        return v..<k
    }

    /// For a value that is an authorization scheme followed by a credential (`Bearer x`, `Basic x`), the
    /// credential's range.
    static func credentialAfterScheme(_ t: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int>? {
        let schemes: [StaticString] = ["bearer", "basic", "digest", "token", "negotiate"]
        guard
            schemes.contains(where: {
                range.count == $0.utf8CodeUnitCount && hasPrefix(t, at: range.lowerBound, $0, caseInsensitive: true)
            }),
            range.upperBound < t.count, t[range.upperBound] == 0x20
        else { return nil }
        var k = range.upperBound
        while k < t.count, t[k] == 0x20 { k += 1 }
        let start = k
        while k < t.count, !endsValue(t[k]) { k += 1 }
        return k > start ? start..<k : nil
    }

    static func isFiltered(_ t: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        range.count == filteredBytes.count && hasPrefix(t, at: range.lowerBound, "[Filtered]")
    }

    static func fnv(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    // MARK: e-mail addresses

    @inline(__always)
    static func isLocalPartByte(_ b: UInt8) -> Bool {
        isDigit(b) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == UInt8(ascii: ".")
            || b == UInt8(ascii: "_")
            || b == UInt8(ascii: "%") || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
    }

    @inline(__always)
    static func isLabelByte(_ b: UInt8) -> Bool {
        isDigit(b) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == UInt8(ascii: "-")
    }

    /// An e-mail address around the `@` at `i`: a local part (letters, digits, `._%+-`, starting with a letter or
    /// digit) and a domain of at least two labels whose last is 2+ letters. The local part is masked after its first
    /// character, the domain kept: `jane.doe@example.com` → `j***@example.com`. A masked address is not matched
    /// again (`*` is no local-part byte). Nothing before `lastEnd` is looked at.
    static func email(_ t: UnsafeBufferPointer<UInt8>, at i: Int, after lastEnd: Int) -> (Range<Int>, [UInt8])? {
        var s = i
        while s > lastEnd, i - s < 64, isLocalPartByte(t[s - 1]) { s -= 1 }
        // The first character a letter or digit (`+`/`.`/`-` before it belong to something else).
        while s < i, !(isDigit(t[s]) || (t[s] | 0x20 >= 0x61 && t[s] | 0x20 <= 0x7a)) { s += 1 }
        guard s < i, s == 0 || !isWord(t[s - 1]) || s == lastEnd else { return nil }
        // The domain: labels separated by single dots; the last label letters only, 2+.
        var k = i + 1
        var labels = 0
        var lastLabelLetters = false
        var end = i + 1
        while k < t.count, k - i < 256 {
            let start = k
            var letters = true
            while k < t.count, isLabelByte(t[k]) {
                if !(t[k] | 0x20 >= 0x61 && t[k] | 0x20 <= 0x7a) { letters = false }
                k += 1
            }
            guard k > start else { break }
            labels += 1
            lastLabelLetters = letters && k - start >= 2
            end = k
            guard k + 1 < t.count, t[k] == UInt8(ascii: "."), isLabelByte(t[k + 1]) else { break }
            k += 1
        }
        guard labels >= 2, lastLabelLetters, boundaryAfter(t, end) else { return nil }
        var replacement: [UInt8] = [t[s]]
        replacement.append(contentsOf: maskBytes)
        replacement.append(contentsOf: t[i..<end])
        return (s..<end, replacement)
    }

    static let maskBytes = Array("***".utf8)

    // MARK: phone numbers

    /// A phone number at `i` (on a word boundary): 7–15 digits, either international (`+` then digits, spaces or
    /// dashes between groups, an area code in parentheses allowed: `+44 20 7946 0958`, `+1 (555) 123-4567`,
    /// `+4915123456789`) or national with an area code in parentheses (`(555) 123-4567`) or at least two dashes
    /// (`555-123-4567`). Every digit but the last two becomes `*`; separators stay.
    ///
    /// Not phone numbers, and left alone: digit runs without `+` (counters, timestamps, decimal addresses, build
    /// ids), dates (`2026-11-28`, `28-11-2026`), times (a `:` after the digits), versions and IPv4 addresses (`.`
    /// is no separator), hex (`0x7f…`, UUIDs: a letter next to the digits ends the word), and national numbers
    /// written with spaces only (a list of numbers looks the same).
    static func phone(_ t: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, [UInt8])? {
        guard boundaryBefore(t, i) else { return nil }
        let n = t.count
        // Most digits at a word's start begin a short number ("event 3", "screen-4"): a run of digits not followed by
        // a separator and another digit is no phone number, decided before anything else is set up.
        if isDigit(t[i]) {
            var k = i + 1
            while k < n, isDigit(t[k]) { k += 1 }
            guard k + 1 < n, t[k] == 0x20 || t[k] == UInt8(ascii: "-"),
                isDigit(t[k + 1]) || t[k + 1] == UInt8(ascii: "(")
            else { return nil }
        }
        var j = i
        let international = t[j] == UInt8(ascii: "+")
        if international {
            j += 1
            guard j < n, isDigit(t[j]) else { return nil }
        }
        var digits = 0
        var dashes = 0
        var parentheses = 0
        var groups = (0, 0, 0)
        var groupCount = 0
        var current = 0
        var end = i
        func closeGroup() {
            guard current > 0 else { return }
            switch groupCount {
            case 0: groups.0 = current
            case 1: groups.1 = current
            case 2: groups.2 = current
            default: break
            }
            groupCount += 1
            current = 0
        }
        while j < n {
            let b = t[j]
            if isDigit(b) {
                digits += 1
                guard digits <= 15 else { return nil }
                current += 1
                j += 1
                end = j
            } else if b == UInt8(ascii: "("), current == 0, parentheses == 0 {
                var k = j + 1
                while k < n, isDigit(t[k]), k - j <= 5 { k += 1 }
                guard k > j + 1, k < n, t[k] == UInt8(ascii: ")") else { break }
                digits += k - j - 1
                current = k - j - 1
                closeGroup()
                parentheses += 1
                j = k + 1
                end = j
                if j + 1 < n, t[j] == 0x20, isDigit(t[j + 1]) { j += 1 }
            } else if b == 0x20 || b == UInt8(ascii: "-"), current > 0, j + 1 < n,
                isDigit(t[j + 1]) || t[j + 1] == UInt8(ascii: "(")
            {
                closeGroup()
                if b == UInt8(ascii: "-") { dashes += 1 }
                j += 1
            } else {
                break
            }
        }
        closeGroup()
        guard digits >= 7, digits <= 15, end > i, boundaryAfter(t, end) else { return nil }
        if end < n {
            let after = t[end]
            // A time (`18:23`), a decimal or version (`.5`), a path or a date with more parts.
            if after == UInt8(ascii: ":") || after == UInt8(ascii: "/") || after == UInt8(ascii: "@") { return nil }
            if after == UInt8(ascii: ".") || after == UInt8(ascii: "-"), end + 1 < n, isDigit(t[end + 1]) { return nil }
        }
        if !international {
            guard parentheses > 0 || dashes >= 2 else { return nil }
            // Dates: 2026-11-28, 28-11-2026.
            if groups == (4, 2, 2) || groups == (2, 2, 4) || (groups.0 == 4 && groups.1 == 2 && groups.2 == 2) {
                return nil
            }
        }
        var replacement = Array(t[i..<end])
        var kept = 0
        for k in stride(from: replacement.count - 1, through: 0, by: -1) where isDigit(replacement[k]) {
            if kept < 2 {
                kept += 1
            } else {
                replacement[k] = UInt8(ascii: "*")
            }
        }
        return (i..<end, replacement)
    }
}
