/// Words of Hangul that are large once folded for the search index (issue #39, finding 3): the tests of search entries
/// over PostgreSQL's 1 MiB `tsvector` limit (Tests/StoreConformanceTests, Tests/FaultlineHTTPTests) make reports of them.
public enum HangulWords {
    /// Word `n`: seven characters, each nine leading consonants (ᄀ, which join what follows into one character) and a
    /// syllable with a trailing consonant; 210 bytes, and 252 once folded (a syllable folds from three bytes to three
    /// jamo of three). Distinct for every `n` below 399⁷: the syllables spell `n` in base 399.
    public static func word(_ n: Int) -> String {
        var word = ""
        var rest = n
        for _ in 0..<7 {
            word += String(repeating: "\u{1100}", count: 9)
            word.unicodeScalars.append(Unicode.Scalar(UInt32(0xAC01 + 28 * (rest % 399)))!)
            rest /= 399
        }
        return word
    }

    /// Words `first..<first + count`, one space apart.
    public static func words(_ first: Int, _ count: Int) -> String {
        (first..<(first + count)).map(word).joined(separator: " ")
    }
}
