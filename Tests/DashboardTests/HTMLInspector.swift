/// A small, strict reader of rendered HTML for the tests: the tags a page opens, their attributes, links and
/// headings. Strict on purpose: anything that is not a well-formed tag with quoted attributes counts as stray.
enum HTMLInspector {
    struct Tag {
        var name: String
        var attributes: [(name: String, value: String)]
        func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
    }

    /// A page read once: its opening tags and how many `<` were not a tag, a closing tag or the doctype.
    struct Page {
        var tags: [Tag]
        var stray: Int

        var hrefs: [String] { tags.compactMap { $0.attribute("href") } }
        var ids: Set<String> { Set(tags.compactMap { $0.attribute("id") }) }
        var headingLevels: [Int] {
            tags.compactMap { tag in
                guard tag.name.count == 2, tag.name.hasPrefix("h"), let level = Int(tag.name.dropFirst()) else {
                    return nil
                }
                return level
            }
        }
    }

    /// Every element the pages may open (what a browser would turn into live elements).
    static let allowedTags: Set<String> = [
        "strong",
        "html", "head", "meta", "title", "link", "body", "nav", "a", "ul", "ol", "li", "main", "footer", "h1", "h2",
        "h3",
        "h4", "section", "table", "caption", "thead", "tbody", "tr", "th", "td", "div", "p", "span", "code", "time",
        "dl",
        "dt", "dd", "details", "summary", "figure", "figcaption", "svg", "desc", "path", "circle", "rect", "line",
        "text",
        "form", "input", "label", "button", "textarea", "select", "option",
    ]

    static func parse(_ html: String) -> Page {
        let bytes = Array(html.utf8)
        var tags: [Tag] = []
        var stray = 0
        var i = 0
        func isNameByte(_ b: UInt8) -> Bool {
            (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || (b >= 0x30 && b <= 0x39) || b == 0x2d
        }
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0a || b == 0x09 || b == 0x0d }
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "<") else {
                i += 1
                continue
            }
            let rest = text(i..<min(i + 15, bytes.count)).lowercased()
            if rest.hasPrefix("<!doctype html>") {
                i += 15
                continue
            }
            var j = i + 1
            let closing = j < bytes.count && bytes[j] == UInt8(ascii: "/")
            if closing { j += 1 }
            let nameStart = j
            while j < bytes.count, isNameByte(bytes[j]) { j += 1 }
            guard j > nameStart, bytes[nameStart] >= 0x41 else {
                stray += 1
                i += 1
                continue
            }
            let name = text(nameStart..<j).lowercased()
            var attributes: [(name: String, value: String)] = []
            var ok = true
            while ok {
                while j < bytes.count, isSpace(bytes[j]) { j += 1 }
                guard j < bytes.count else {
                    ok = false
                    break
                }
                if bytes[j] == UInt8(ascii: ">") { break }
                if bytes[j] == UInt8(ascii: "/"), j + 1 < bytes.count, bytes[j + 1] == UInt8(ascii: ">") {
                    j += 1
                    break
                }
                if closing {
                    ok = false
                    break
                }
                let attributeStart = j
                while j < bytes.count, !isSpace(bytes[j]),
                    ![
                        UInt8(ascii: "="), UInt8(ascii: ">"), UInt8(ascii: "/"),
                        UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"),
                    ].contains(bytes[j])
                {
                    j += 1
                }
                guard j > attributeStart, j < bytes.count else {
                    ok = false
                    break
                }
                let attributeName = text(attributeStart..<j).lowercased()
                var value = ""
                if bytes[j] == UInt8(ascii: "=") {
                    j += 1
                    guard j < bytes.count, bytes[j] == UInt8(ascii: "\"") || bytes[j] == UInt8(ascii: "'") else {
                        ok = false
                        break
                    }
                    let quote = bytes[j]
                    let valueStart = j + 1
                    j = valueStart
                    while j < bytes.count, bytes[j] != quote { j += 1 }
                    guard j < bytes.count else {
                        ok = false
                        break
                    }
                    value = text(valueStart..<j)
                    j += 1
                }
                attributes.append((name: attributeName, value: value))
            }
            if ok {
                if !closing { tags.append(Tag(name: name, attributes: attributes)) }
                i = j + 1
            } else {
                stray += 1
                i += 1
            }
        }
        return Page(tags: tags, stray: stray)
    }

    /// The site path an `href` on the page at `page` points to (both relative to the site root); nil when it
    /// leaves the site.
    static func resolve(_ href: String, from page: String) -> String? {
        var parts = page.split(separator: "/").dropLast().map(String.init)
        for part in href.split(separator: "/", omittingEmptySubsequences: false) {
            switch part {
            case "..":
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            case ".", "": continue
            default: parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }
}
