/// One reply of an SMTP server (RFC 5321 §4.2): a three-digit code and its text lines.
public struct SMTPReply: Sendable, Equatable {
    /// 200…599; the first digit says what it means (2 done, 3 go on, 4 try later, 5 refused).
    public var code: Int
    /// The text of each line without the code and separator, at most ``SMTPReplyParser/maxLines`` lines.
    public var lines: [String]
    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    /// 2xx: the command was done.
    public var isPositive: Bool { (200..<300).contains(code) }
    /// 3xx: the server waits for more (after DATA, during AUTH).
    public var isIntermediate: Bool { (300..<400).contains(code) }
    /// 4xx: refused for now; the same mail may succeed later.
    public var isTransient: Bool { (400..<500).contains(code) }

    /// The code and the first line, at most 200 characters of printable ASCII: what an operator is shown of a reply.
    public var summary: String {
        let text = "\(code) \(lines.first ?? "")"
        var shown = ""
        for scalar in text.unicodeScalars.prefix(200) {
            shown.unicodeScalars.append((0x20..<0x7F).contains(scalar.value) ? scalar : "?")
        }
        return shown
    }
}

/// Why the bytes an SMTP server sent are not a reply. The server is not trusted: a line that never ends, a reply of
/// endless continuation lines, or a code that is not three digits ends the conversation instead of growing a buffer.
public enum SMTPReplyProblem: String, Error, Sendable, Equatable {
    /// A line longer than ``SMTPReplyParser/maxLineBytes``.
    case lineTooLong = "line_too_long"
    /// A multi-line reply of more than ``SMTPReplyParser/maxLines`` lines.
    case tooManyLines = "too_many_lines"
    /// A line that does not start with a code from 200 to 599 followed by a space, `-` or the line's end.
    case badCode = "bad_code"
    /// A continuation line whose code differs from the first line's.
    case codeChanged = "code_changed"
}

/// Splits the bytes an SMTP server sends into replies, as they arrive in pieces.
///
/// Bounded: a line may hold at most ``maxLineBytes`` bytes (RFC 5321 allows 512 with the CRLF; extensions in EHLO
/// answers stay far below 1000), a reply at most ``maxLines`` lines, and the bytes held are never more than one
/// line. A bare LF ends a line too (servers send them); a CR before it is dropped. Text is decoded as UTF-8 with
/// replacement, never trusted as anything but text.
public struct SMTPReplyParser: Sendable {
    public static let maxLineBytes = 1000
    public static let maxLines = 100

    private var line: [UInt8] = []
    private var pendingCode: Int?
    private var pendingLines: [String] = []
    private var ready: [SMTPReply] = []
    private var failed: SMTPReplyProblem?

    public init() {}

    /// Whether a partial line or reply is held (bytes the server sent past its last complete reply).
    public var hasPartialInput: Bool { !line.isEmpty || pendingCode != nil || !ready.isEmpty }

    /// Feeds bytes; throws the first problem (and again on every later call).
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(SMTPReplyProblem) {
        if let failed { throw failed }
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                do throws(SMTPReplyProblem) {
                    try finishLine()
                } catch {
                    failed = error
                    throw error
                }
                line.removeAll(keepingCapacity: true)
                continue
            }
            // At most maxLineBytes before the line's end; the CR of a CRLF may follow them.
            guard line.count < Self.maxLineBytes || (line.count == Self.maxLineBytes && byte == UInt8(ascii: "\r"))
            else {
                failed = .lineTooLong
                throw .lineTooLong
            }
            line.append(byte)
        }
    }

    /// The oldest complete reply, if one has arrived.
    public mutating func next() -> SMTPReply? {
        ready.isEmpty ? nil : ready.removeFirst()
    }

    private mutating func finishLine() throws(SMTPReplyProblem) {
        guard line.count >= 3 else { throw .badCode }
        var code = 0
        for byte in line[0..<3] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw .badCode }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard (200...599).contains(code) else { throw .badCode }
        var last = true
        if line.count > 3 {
            switch line[3] {
            case UInt8(ascii: " "): last = true
            case UInt8(ascii: "-"): last = false
            default: throw .badCode
            }
        }
        if let pendingCode, pendingCode != code { throw .codeChanged }
        guard pendingLines.count < Self.maxLines else { throw .tooManyLines }
        pendingCode = code
        pendingLines.append(line.count > 4 ? String(decoding: line[4...], as: UTF8.self) : "")
        if last {
            ready.append(SMTPReply(code: code, lines: pendingLines))
            pendingCode = nil
            pendingLines = []
            // A server that pipelines endless replies nobody asked for still holds at most maxLines of them.
            if ready.count > Self.maxLines { throw .tooManyLines }
        }
    }
}
