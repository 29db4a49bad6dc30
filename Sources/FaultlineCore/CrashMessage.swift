/// What a crashing program printed about its own death, understood: the Swift runtime's fatal-error line,
/// libstdc++'s uncaught-exception lines, glibc's failed assertion. Clients pass the text beside a crash
/// (the Swift crash endpoint's `message`); the Swift runtime's crash file itself does not hold it.
///
/// Pure and bounded: only the first `maxScannedBytes` of the text are looked at, line by line.
public struct CrashMessage: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// `file:line: Fatal error: message` (also `Precondition failed`, `Assertion failed`), from the Swift runtime.
        case swiftFatalError
        /// `terminate called after throwing an instance of 'T'` + `what():  message`, from libstdc++.
        case uncaughtCppException
        /// `prog: file.c:12: function: Assertion `expr' failed.`, from glibc's `assert`.
        case assertion
        /// Anything else: the first non-empty line.
        case other
    }

    public var kind: Kind
    /// The heading Swift printed (`Fatal error`, `Precondition failed`, `Assertion failed`), or the exception type.
    public var type: String?
    /// The message proper: `Index out of range`, the exception's `what()`, the failed expression.
    public var text: String
    /// The source location the message names (`app/main.swift`, 17), when it names one.
    public var file: String?
    public var line: Int?

    /// How much of a message is read.
    public static let maxScannedBytes = 4096

    public init(kind: Kind, type: String?, text: String, file: String? = nil, line: Int? = nil) {
        self.kind = kind
        self.type = type
        self.text = text
        self.file = file
        self.line = line
    }

    /// A one-line title: `Fatal error: Index out of range`, `std::runtime_error: too expensive`,
    /// `Assertion failed: n > 0`.
    public var title: String {
        switch kind {
        case .swiftFatalError, .assertion:
            let heading = type ?? "Fatal error"
            return text.isEmpty ? heading : "\(heading): \(text)"
        case .uncaughtCppException:
            let heading = type ?? "Uncaught C++ exception"
            return text.isEmpty ? heading : "\(heading): \(text)"
        case .other:
            return text
        }
    }

    static let swiftHeadings = ["Fatal error", "Precondition failed", "Assertion failed", "Unexpected error"]

    /// Parses `raw`; nil when it holds nothing but whitespace.
    public static func parse(_ raw: String) -> CrashMessage? {
        var scanned = Substring(raw)
        if scanned.utf8.count > maxScannedBytes {
            scanned = Substring(String(decoding: scanned.utf8.prefix(maxScannedBytes), as: UTF8.self))
        }
        let lines = scanned.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces }.filter {
            !$0.isEmpty && !isNoise($0)
        }
        guard let first = lines.first else { return nil }
        for (index, line) in lines.enumerated() {
            if let swift = swiftFatal(line) { return swift }
            if line.hasPrefix("terminate called after throwing an instance of ") {
                let type = quoted(line.dropFirst("terminate called after throwing an instance of ".count))
                var what = ""
                if index + 1 < lines.count, lines[index + 1].hasPrefix("what():") {
                    what = String(lines[index + 1].dropFirst("what():".count)).trimmingSpaces
                }
                return CrashMessage(kind: .uncaughtCppException, type: type, text: String(what.prefix(500)))
            }
            if line.hasPrefix("terminate called without an active exception") {
                return CrashMessage(
                    kind: .uncaughtCppException, type: "std::terminate", text: "called without an active exception")
            }
            if let assertion = glibcAssertion(line) { return assertion }
        }
        return CrashMessage(kind: .other, type: nil, text: String(first.prefix(500)))
    }

    /// Lines crash reporters print around the message, not the message: the Swift backtracer's banners
    /// (`*** Signal 4: Backtracing from 0x… done ***`), `Current stack trace:` and the frames under it.
    static func isNoise(_ line: String) -> Bool {
        if line.hasPrefix("***") || line.hasPrefix("Current stack trace") || line.hasPrefix("Stack dump") {
            return true
        }
        // "0    app    0x000055…" / "#0 0x00007f… in f": a printed frame.
        let head = line.prefix { $0 != " " && $0 != "\t" }
        let digits = head.hasPrefix("#") ? head.dropFirst() : head[...]
        return !digits.isEmpty && digits.allSatisfy(\.isNumber) && line.contains("0x")
    }

    /// `[file:line: ]Heading[: message]` with one of Swift's headings.
    static func swiftFatal(_ line: String) -> CrashMessage? {
        for heading in swiftHeadings {
            guard let range = line.firstRange(of: heading) else { continue }
            let before = line[..<range.lowerBound]
            let after = line[range.upperBound...]
            // The heading starts the line, or follows "file:line: ".
            var file: String?
            var number: Int?
            if !before.isEmpty {
                guard before.hasSuffix(": ") else { continue }
                let location = before.dropLast(2)
                guard let colon = location.lastIndex(of: ":"), let n = Int(location[location.index(after: colon)...])
                else { continue }
                file = String(location[..<colon])
                number = n
            }
            guard after.isEmpty || after.hasPrefix(":") else { continue }
            let text = after.isEmpty ? "" : String(after.dropFirst()).trimmingSpaces
            return CrashMessage(
                kind: .swiftFatalError, type: heading, text: String(text.prefix(500)), file: file, line: number)
        }
        return nil
    }

    /// `prog: file.c:12: function: Assertion `expr' failed.`
    static func glibcAssertion(_ line: String) -> CrashMessage? {
        guard line.hasSuffix("' failed."), let start = line.firstRange(of: "Assertion `") else { return nil }
        let expression = line[start.upperBound..<line.index(line.endIndex, offsetBy: -"' failed.".count)]
        guard expression.endIndex >= expression.startIndex else { return nil }
        // "prog: file.c:12: function: " before it.
        let parts = line[..<start.lowerBound].split(separator: ":", omittingEmptySubsequences: false).map {
            $0.trimmingSpaces
        }
        var file: String?
        var number: Int?
        if parts.count >= 4, let n = Int(parts[2]) {
            file = parts[1]
            number = n
        }
        return CrashMessage(
            kind: .assertion, type: "Assertion failed", text: String(expression.prefix(500)), file: file, line: number)
    }

    /// The text inside the first pair of single quotes, else the whole (trimmed) text.
    static func quoted(_ text: Substring) -> String {
        guard let open = text.firstIndex(of: "'") else { return text.trimmingSpaces }
        let rest = text[text.index(after: open)...]
        guard let close = rest.firstIndex(of: "'") else { return String(rest).trimmingSpaces }
        return String(rest[..<close])
    }
}

extension Substring {
    var trimmingSpaces: String { String(self).trimmingSpaces }
}
