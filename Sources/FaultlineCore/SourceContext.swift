/// Source paths as debug information and debuginfod clients write them, made comparable.
public enum SourcePaths {
    /// Longest path accepted (bytes).
    public static let maxBytes = 4096

    /// `path` made absolute-looking and lexically clean: `//` and `/./` collapse, `dir/..` is removed (never
    /// above the root), a trailing `/` goes. Relative paths stay relative (DWARF may name `src/a.c`). nil for an
    /// empty path, one longer than `maxBytes`, or one with a NUL byte. Pure text: never touches a file system.
    public static func normalized(_ path: String) -> String? {
        guard !path.isEmpty, path.utf8.count <= maxBytes, !path.utf8.contains(0) else { return nil }
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..":
                if let last = parts.last, last != ".." {
                    parts.removeLast()
                } else if !absolute {
                    parts.append(part)
                }
            default: parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? nil : joined
    }
}

/// A frame's source line: which binary (build-id), which file and which line.
public struct CodeLocation: Hashable, Sendable {
    public var buildID: BuildID
    public var file: String
    public var line: Int
    public init(buildID: BuildID, file: String, line: Int) {
        self.buildID = buildID
        self.file = file
        self.line = line
    }
}

/// Lines of source around a frame's line.
public struct SourceExcerpt: Sendable, Equatable {
    /// The number of `lines[0]` (1-based).
    public var firstLine: Int
    public var lines: [String]
    /// The frame's own line number.
    public var focus: Int

    public init(firstLine: Int, lines: [String], focus: Int) {
        self.firstLine = firstLine
        self.lines = lines
        self.focus = focus
    }

    /// Longest line kept (bytes); longer lines are cut (minified or generated code).
    public static let maxLineBytes = 500

    /// The lines `focus - radius ... focus + radius` of `text` (UTF-8 bytes; invalid sequences are replaced).
    /// nil when `focus` is not a line of the file. Bounded: reads the file once and keeps at most
    /// `2 * radius + 1` lines of at most `maxLineBytes` bytes.
    public static func around(_ focus: Int, radius: Int, in text: [UInt8]) -> SourceExcerpt? {
        guard focus >= 1, radius >= 0, radius <= 50 else { return nil }
        let first = focus > radius ? focus - radius : 1
        let (last, overflow) = focus.addingReportingOverflow(radius)
        guard !overflow else { return nil }
        var lines: [String] = []
        var number = 1
        var start = 0
        var i = 0
        while i <= text.count, number <= last {
            if i == text.count || text[i] == 0x0A {
                if i == text.count, start == i, number > 1 { break }  // no line after a final newline
                if number >= first {
                    var end = i
                    if end > start, text[end - 1] == 0x0D { end -= 1 }
                    let cut = min(end, start + maxLineBytes)
                    var line = String(decoding: text[start..<cut], as: UTF8.self)
                    if cut < end { line += "…" }
                    lines.append(line)
                }
                number += 1
                start = i + 1
            }
            i += 1
        }
        guard focus < first + lines.count else { return nil }
        return SourceExcerpt(firstLine: first, lines: lines, focus: focus)
    }
}

/// Reads source excerpts from a project's source bundles (a debug file of kind `sources` per build-id).
public protocol SourceContextReading: Sendable {
    /// The lines around each location whose file is in `project`'s source bundle of that build-id; locations
    /// without one are left out. Implementations open each bundle at most once per call.
    func excerpts(for locations: [CodeLocation], project: ProjectID, radius: Int) async -> [CodeLocation: SourceExcerpt]
}
