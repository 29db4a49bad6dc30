/// Escaping of text for HTML and XML (inline SVG).
///
/// Event data is hostile: a function name, a breadcrumb or a release can hold `<script>`, quotes or `&`. Mustache
/// escapes `{{value}}` by itself; this escaper is for the markup the module writes in Swift (the SVG charts), so
/// that nothing interpolated there can close a tag or an attribute either.
public enum Markup {
    /// `text` with `& < > " '` replaced by entities and control characters (which XML forbids) replaced by
    /// U+FFFD, safe inside element content and inside single- or double-quoted attribute values.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _
            where scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
                || scalar.value == 0xfffe || scalar.value == 0xffff:
                out += "\u{fffd}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
