import FaultlineCore

/// A strict, streaming `multipart/form-data` reader (RFC 7578 over RFC 2046's framing).
///
/// Bytes are fed as they arrive; the parser hands back what it could decide so far (a part's headers,
/// pieces of its body, its end) and keeps only what it must: a part's header block (at most
/// `maxHeaderBytes`) and nothing of the bodies. The body delimiter `CRLF--boundary` is found with a
/// Knuth–Morris–Pratt matcher, so a body that keeps almost-matching the boundary costs linear time, and a
/// delimiter split across two feeds is still found.
///
/// Strict where a lenient reader would guess: the `Content-Disposition` of every part must be
/// `form-data` with a `name`; header lines must end in CRLF (no folding, no bare LF); the body must end
/// with the close delimiter `--boundary--`. A preamble before the first delimiter and an epilogue after
/// the last are ignored, as RFC 2046 says.
public struct MultipartParser: Sendable {
    /// What the parser decided.
    public enum Event: Sendable, Equatable {
        /// A new part and its headers.
        case partStart(MultipartPartHeaders)
        /// The next bytes of the current part's body.
        case bodyData([UInt8])
        /// The current part is complete.
        case partEnd
    }

    enum State: Sendable {
        /// Before the first delimiter (bytes are discarded).
        case preamble
        /// Just after a delimiter: `--` closes, optional spaces then CRLF open a part.
        case afterDelimiter
        /// Reading a part's header block.
        case headers
        /// Reading a part's body.
        case body
        /// After the close delimiter (bytes are discarded).
        case epilogue
    }

    /// `CRLF--boundary`.
    let delimiter: [UInt8]
    /// KMP failure function of `delimiter`.
    let failure: [Int]
    let maxHeaderBytes: Int
    let maxParts: Int
    var state = State.preamble
    /// How many bytes of `delimiter` the input ends with (preamble and body states).
    var matched: Int
    /// Pending bytes of the header block or the bytes after a delimiter.
    var pending: [UInt8] = []
    public private(set) var parts = 0

    /// - Parameters:
    ///   - boundary: the `boundary` parameter of the request's Content-Type (see `boundary(fromContentType:)`).
    ///   - maxHeaderBytes: most bytes one part's header block may have.
    ///   - maxParts: most parts one body may have.
    public init(boundary: String, maxHeaderBytes: Int = 8 * 1024, maxParts: Int = 1024) throws {
        guard Self.isValidBoundary(boundary) else {
            throw FormatError(
                .invalidField, "the multipart boundary must be 1–70 allowed characters", field: "boundary")
        }
        delimiter = Array("\r\n--\(boundary)".utf8)
        failure = Self.failureFunction(delimiter)
        self.maxHeaderBytes = maxHeaderBytes
        self.maxParts = maxParts
        // The first delimiter may start the body without a CRLF before it: start as if one was just read.
        matched = 2
    }

    /// The boundary of a `multipart/form-data` Content-Type (`multipart/form-data; boundary="abc"`).
    /// - Throws: `unsupportedMediaType` for any other type, `invalidField` without a usable boundary.
    public static func boundary(fromContentType header: String?) throws -> String {
        guard let header else { throw FormatError(.unsupportedMediaType, "Content-Type must be multipart/form-data") }
        var reader = HeaderValueReader(header)
        let type = reader.token()?.lowercased()
        guard type == "multipart/form-data" else {
            throw FormatError(.unsupportedMediaType, "Content-Type must be multipart/form-data")
        }
        let parameters = try reader.parameters()
        guard let boundary = parameters["boundary"], isValidBoundary(boundary) else {
            throw FormatError(
                .invalidField, "Content-Type needs a boundary of 1–70 allowed characters", field: "boundary")
        }
        return boundary
    }

    /// RFC 2046's `bchars`, 1–70 of them, not ending in a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { b in
            (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z"))
                || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) || Array("'()+_,-./:=? ".utf8).contains(b)
        }
    }

    static func failureFunction(_ pattern: [UInt8]) -> [Int] {
        var failure = [Int](repeating: 0, count: pattern.count + 1)
        var k = 0
        for i in 1..<pattern.count {
            while k > 0, pattern[i] != pattern[k] { k = failure[k] }
            if pattern[i] == pattern[k] { k += 1 }
            failure[i + 1] = k
        }
        return failure
    }

    /// Feeds the next bytes of the body; returns what they completed, in order.
    /// - Throws: `FormatError(.invalidField)` for malformed framing or headers.
    public mutating func feed(_ input: some Collection<UInt8>) throws -> [Event] {
        var events: [Event] = []
        let bytes = Array(input)
        var i = 0
        while i < bytes.count {
            switch state {
            case .preamble, .body:
                i = scan(bytes, from: i, into: &events)
            case .afterDelimiter:
                pending.append(bytes[i])
                i += 1
                try afterDelimiter()
            case .headers:
                let b = bytes[i]
                i += 1
                pending.append(b)
                guard pending.count <= maxHeaderBytes else {
                    throw FormatError(
                        .invalidField, "a part's headers are longer than \(maxHeaderBytes) bytes", field: "multipart")
                }
                guard b == 10 else { continue }
                // The block ends with an empty line: CRLF CRLF, or a lone CRLF when the part has no headers.
                let n = pending.count
                if n == 2 || (n >= 4 && pending[n - 4] == 13 && pending[n - 3] == 10 && pending[n - 2] == 13) {
                    guard pending[n - 2] == 13 else {
                        throw MultipartPartHeaders.malformed("a bare LF in the part headers")
                    }
                    let headers = try MultipartPartHeaders(block: pending.dropLast(n == 2 ? 2 : 4))
                    pending = []
                    state = .body
                    matched = 0
                    events.append(.partStart(headers))
                }
            case .epilogue:
                i = bytes.count
            }
        }
        return events
    }

    /// Ends the body. - Throws: when the close delimiter was not seen.
    public func finish() throws {
        guard case .epilogue = state else {
            throw FormatError(.invalidField, "the multipart body ends before its closing boundary", field: "multipart")
        }
    }

    /// Runs the delimiter matcher over `bytes[from...]` in the preamble or body state; stops after a
    /// complete delimiter (returning the index after it) or at the end of the input.
    mutating func scan(_ bytes: [UInt8], from start: Int, into events: inout [Event]) -> Int {
        let inBody = state == .body
        var data: [UInt8] = []
        var i = start
        while i < bytes.count {
            // Fast path: nothing matched, skip to the next CR.
            if matched == 0 {
                var j = i
                while j < bytes.count, bytes[j] != 13 { j += 1 }
                if inBody, j > i { data.append(contentsOf: bytes[i..<j]) }
                i = j
                if i == bytes.count { break }
            }
            let b = bytes[i]
            i += 1
            var k = matched
            while k > 0, delimiter[k] != b {
                let fallback = failure[k]
                // The bytes given up on were a delimiter prefix: they are body data after all.
                if inBody { data.append(contentsOf: delimiter[0..<(k - fallback)]) }
                k = fallback
            }
            if delimiter[k] == b {
                k += 1
            } else if inBody {
                data.append(b)
            }
            matched = k
            if matched == delimiter.count {
                if inBody, !data.isEmpty { events.append(.bodyData(data)) }
                if inBody { events.append(.partEnd) }
                data = []
                matched = 0
                pending = []
                state = .afterDelimiter
                return i
            }
        }
        if inBody, !data.isEmpty { events.append(.bodyData(data)) }
        return i
    }

    /// After a delimiter: `--` is the close delimiter; otherwise optional transport padding (spaces, tabs)
    /// and CRLF start the next part's headers.
    mutating func afterDelimiter() throws {
        if pending == [UInt8(ascii: "-"), UInt8(ascii: "-")] {
            state = .epilogue
            pending = []
            return
        }
        if pending.count == 1, pending[0] == UInt8(ascii: "-") { return }
        let last = pending[pending.count - 1]
        if last == 10 {
            guard pending.count >= 2, pending[pending.count - 2] == 13,
                pending.dropLast(2).allSatisfy({ $0 == 32 || $0 == 9 })
            else { throw FormatError(.invalidField, "a multipart boundary line is malformed", field: "multipart") }
            parts += 1
            guard parts <= maxParts else {
                throw FormatError(.invalidField, "more than \(maxParts) parts", field: "multipart")
            }
            pending = []
            state = .headers
            return
        }
        guard last == 32 || last == 9 || last == 13, pending.count <= 64 else {
            throw FormatError(.invalidField, "a multipart boundary line is malformed", field: "multipart")
        }
    }
}

/// The headers of one part that `multipart/form-data` gives meaning to.
public struct MultipartPartHeaders: Sendable, Equatable {
    /// The form field's name (`Content-Disposition: form-data; name="…"`).
    public var name: String
    /// The file name, when the part is a file (`filename="…"`).
    public var filename: String?
    /// The part's `Content-Type`, if given.
    public var contentType: String?
    /// The part's `Content-Transfer-Encoding`, if given (RFC 7578 deprecates it; a reader should refuse
    /// anything but the identity encodings).
    public var transferEncoding: String?

    public init(name: String, filename: String? = nil, contentType: String? = nil, transferEncoding: String? = nil) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.transferEncoding = transferEncoding
    }

    /// Parses a header block (lines separated by CRLF, without the blank line).
    init(block: some Collection<UInt8>) throws {
        var disposition: String?
        var contentType: String?
        var transferEncoding: String?
        let bytes = Array(block)
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var i = 0
        while i < bytes.count {
            if bytes[i] == 13 {
                guard i + 1 < bytes.count, bytes[i + 1] == 10 else {
                    throw Self.malformed("a bare CR in the part headers")
                }
                lines.append(bytes[start..<i])
                i += 2
                start = i
            } else if bytes[i] == 10 {
                throw Self.malformed("a bare LF in the part headers")
            } else {
                i += 1
            }
        }
        if start < bytes.count { lines.append(bytes[start...]) }
        for line in lines {
            guard let first = line.first, first != 32, first != 9 else {
                throw Self.malformed("folded or empty part header lines are not allowed")
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw Self.malformed("a part header line has no colon")
            }
            guard line[line.startIndex..<colon].allSatisfy({ $0 > 32 && $0 < 127 }), colon > line.startIndex else {
                throw Self.malformed("a part header has an invalid name")
            }
            guard line.allSatisfy({ $0 >= 32 || $0 == 9 }), !line.contains(127) else {
                throw Self.malformed("a part header has control characters")
            }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingASCIISpaces()
            switch name {
            case "content-disposition":
                guard disposition == nil else { throw Self.malformed("two Content-Disposition headers in one part") }
                disposition = String(value)
            case "content-type":
                guard contentType == nil else { throw Self.malformed("two Content-Type headers in one part") }
                contentType = String(value)
            case "content-transfer-encoding":
                transferEncoding = String(value).lowercased()
            default:
                break
            }
        }
        guard let disposition else { throw Self.malformed("a part has no Content-Disposition") }
        var reader = HeaderValueReader(disposition)
        guard reader.token()?.lowercased() == "form-data" else {
            throw Self.malformed("a part's Content-Disposition must be form-data")
        }
        let parameters = try reader.parameters()
        guard let name = parameters["name"] else { throw Self.malformed("a part's Content-Disposition has no name") }
        self.init(
            name: name, filename: parameters["filename"], contentType: contentType, transferEncoding: transferEncoding)
    }

    static func malformed(_ message: String) -> FormatError {
        FormatError(.invalidField, message, field: "multipart")
    }
}

/// Reads `token *( ";" name "=" ( token / quoted-string ) )` header values (Content-Type,
/// Content-Disposition).
struct HeaderValueReader {
    let bytes: [UInt8]
    var index = 0

    init(_ value: String) { bytes = Array(value.utf8) }

    static func isTokenByte(_ b: UInt8) -> Bool {
        b > 32 && b < 127 && !Array("()<>@,;:\\\"[]?={}".utf8).contains(b)
    }

    mutating func skipSpaces() {
        while index < bytes.count, bytes[index] == 32 || bytes[index] == 9 { index += 1 }
    }

    /// A token; `/` is allowed inside, so that a media type reads as one.
    mutating func token() -> String? {
        skipSpaces()
        let start = index
        while index < bytes.count, Self.isTokenByte(bytes[index]) || bytes[index] == UInt8(ascii: "/") { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    /// The parameters after the leading token; names are lowercased. Duplicates are refused (they are how
    /// a smuggled second file name would look).
    mutating func parameters() throws -> [String: String] {
        var out: [String: String] = [:]
        while true {
            skipSpaces()
            guard index < bytes.count else { return out }
            guard bytes[index] == UInt8(ascii: ";") else { throw Self.malformed("expected ';' between parameters") }
            index += 1
            skipSpaces()
            if index == bytes.count { return out }  // a trailing ';' is harmless
            let start = index
            while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
            guard index > start else { throw Self.malformed("a parameter has no name") }
            let name = String(decoding: bytes[start..<index], as: UTF8.self).lowercased()
            skipSpaces()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw Self.malformed("parameter \(name) has no value")
            }
            index += 1
            skipSpaces()
            let value: String
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                value = try quotedString()
            } else {
                let valueStart = index
                while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
                guard index > valueStart else { throw Self.malformed("parameter \(name) has an empty value") }
                value = String(decoding: bytes[valueStart..<index], as: UTF8.self)
            }
            guard out[name] == nil else { throw Self.malformed("parameter \(name) is given twice") }
            out[name] = value
        }
    }

    mutating func quotedString() throws -> String {
        index += 1  // the opening quote
        var out: [UInt8] = []
        while index < bytes.count {
            let b = bytes[index]
            index += 1
            switch b {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw Self.malformed("a quoted string ends in a backslash") }
                out.append(bytes[index])
                index += 1
            default:
                out.append(b)
            }
        }
        throw Self.malformed("a quoted string is not closed")
    }

    static func malformed(_ message: String) -> FormatError {
        FormatError(.invalidField, message, field: "multipart")
    }
}
