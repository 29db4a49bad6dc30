import Formats
import Testing

/// The streaming multipart reader: framing, header parameters, and refusal of what is malformed.
@Suite struct MultipartParserTests {
    struct Part: Equatable {
        var headers: MultipartPartHeaders
        var body: [UInt8]
    }

    /// Feeds `body` in pieces of `piece` bytes (0: all at once) and collects the parts.
    func parse(
        _ body: [UInt8], boundary: String = "XyZ-123", piece: Int = 0, maxParts: Int = 1024,
        maxHeaderBytes: Int = 8 * 1024
    ) throws -> [Part] {
        var parser = try MultipartParser(boundary: boundary, maxHeaderBytes: maxHeaderBytes, maxParts: maxParts)
        var parts: [Part] = []
        var open = false
        let size = piece == 0 ? max(1, body.count) : piece
        var start = 0
        repeat {
            let end = min(body.count, start + size)
            for event in try parser.feed(body[start..<end]) {
                switch event {
                case .partStart(let headers):
                    #expect(!open, "a part started before the previous one ended")
                    parts.append(Part(headers: headers, body: []))
                    open = true
                case .bodyData(let bytes):
                    #expect(open)
                    parts[parts.count - 1].body += bytes
                case .partEnd:
                    #expect(open)
                    open = false
                }
            }
            start = end
        } while start < body.count
        try parser.finish()
        return parts
    }

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A body with two chunk parts as sentry-cli sends them (CRLF framing, quoted parameters).
    var twoParts: [UInt8] {
        bytes("--XyZ-123\r\nContent-Disposition: form-data; name=\"file_gzip\"; filename=\"aa\"\r\n")
            + bytes("Content-Type: application/octet-stream\r\n\r\n") + [0x1f, 0x8b, 0, 13, 10, 45, 45, 255]
            + bytes("\r\n--XyZ-123\r\ncontent-disposition: FORM-DATA;name=file;filename=\"b\\\"c\"\r\n\r\n")
            + bytes("\r\n--XyZ-12 not the boundary\r\n--XyZ-1") + bytes("\r\n--XyZ-123--\r\n")
    }

    @Test func readsPartsWhateverTheFeedSize() throws {
        let expected = [
            Part(
                headers: MultipartPartHeaders(
                    name: "file_gzip", filename: "aa", contentType: "application/octet-stream"),
                body: [0x1f, 0x8b, 0, 13, 10, 45, 45, 255]),
            Part(
                headers: MultipartPartHeaders(name: "file", filename: "b\"c"),
                body: bytes("\r\n--XyZ-12 not the boundary\r\n--XyZ-1")),
        ]
        // Every piece size, so the delimiter and the header block end are split at every position.
        for piece in [0, 1, 2, 3, 5, 7, 11, 13, 64] {
            #expect(try parse(twoParts, piece: piece) == expected, "piece size \(piece)")
        }
    }

    @Test func ignoresPreambleAndEpilogueAndAllowsPadding() throws {
        let body =
            bytes("this is a preamble\r\n--XyZ-123 \t\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nhi")
            + bytes("\r\n--XyZ-123--  epilogue, ignored\r\n--XyZ-123\r\n")
        let parts = try parse(body, piece: 4)
        #expect(parts == [Part(headers: MultipartPartHeaders(name: "f"), body: bytes("hi"))])
    }

    @Test func anEmptyPartBodyIsAPart() throws {
        let body = bytes(
            "--XyZ-123\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n\r\n--XyZ-123--")
        #expect(try parse(body) == [Part(headers: MultipartPartHeaders(name: "f", filename: "x"), body: [])])
    }

    @Test func boundaryComesFromTheContentType() throws {
        #expect(try MultipartParser.boundary(fromContentType: "multipart/form-data; boundary=abc") == "abc")
        #expect(try MultipartParser.boundary(fromContentType: "Multipart/Form-Data;boundary=\"a b:c\"") == "a b:c")
        #expect(
            try MultipartParser.boundary(
                fromContentType: "multipart/form-data; charset=utf-8; BOUNDARY=------------------------d74496d66958873e"
            )
                == "------------------------d74496d66958873e")
        for bad in [
            "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=\"\"",
            "multipart/form-data; boundary=\(String(repeating: "x", count: 71))",
            "multipart/form-data; boundary=a; boundary=b",
            "multipart/form-data; boundary=\"abc", "multipart/form-data; boundary=\"a\\\"b\"",
        ] {
            #expect(throws: FormatError.self, "\(bad)") { try MultipartParser.boundary(fromContentType: bad) }
        }
        for wrongType in [nil, "application/json", "multipart/mixed; boundary=abc"] {
            let error = #expect(throws: FormatError.self) { try MultipartParser.boundary(fromContentType: wrongType) }
            #expect(error?.code == .unsupportedMediaType)
        }
    }

    @Test func refusesMalformedBodies() throws {
        let head = "--XyZ-123\r\n"
        let disposition = "Content-Disposition: form-data; name=\"f\"\r\n"
        let cases: [(String, [UInt8])] = [
            ("no close delimiter", bytes(head + disposition + "\r\nabc\r\n--XyZ-123\r\n")),
            ("body cut short", bytes(head + disposition + "\r\nabc")),
            ("nothing at all", []),
            ("bare LF in headers", bytes(head + "Content-Disposition: form-data; name=f\n\r\n\r\nx\r\n--XyZ-123--")),
            ("no Content-Disposition", bytes(head + "Content-Type: text/plain\r\n\r\nx\r\n--XyZ-123--")),
            ("no headers at all", bytes(head + "\r\nx\r\n--XyZ-123--")),
            ("not form-data", bytes(head + "Content-Disposition: attachment; name=\"f\"\r\n\r\nx\r\n--XyZ-123--")),
            ("no name", bytes(head + "Content-Disposition: form-data; filename=\"f\"\r\n\r\nx\r\n--XyZ-123--")),
            (
                "duplicate parameter",
                bytes(
                    head + "Content-Disposition: form-data; name=\"f\"; filename=a; filename=b\r\n\r\nx\r\n--XyZ-123--")
            ),
            ("unterminated quote", bytes(head + "Content-Disposition: form-data; name=\"f\r\n\r\nx\r\n--XyZ-123--")),
            ("folded header", bytes(head + "Content-Disposition: form-data;\r\n name=\"f\"\r\n\r\nx\r\n--XyZ-123--")),
            ("two dispositions", bytes(head + disposition + disposition + "\r\nx\r\n--XyZ-123--")),
            ("junk after a boundary", bytes(head + disposition + "\r\nx\r\n--XyZ-123junk\r\n--XyZ-123--")),
            (
                "control character",
                bytes(head + "Content-Disposition: form-data; name=\"f\u{1}\"\r\n\r\nx\r\n--XyZ-123--")
            ),
        ]
        for (name, body) in cases {
            for piece in [0, 1] {
                #expect(throws: FormatError.self, "\(name), piece \(piece)") { try parse(body, piece: piece) }
            }
        }
    }

    @Test func limitsHeadersAndParts() throws {
        let long = bytes(
            "--XyZ-123\r\nContent-Disposition: form-data; name=\"f\"\r\nX-Padding: \(String(repeating: "p", count: 200))\r\n\r\nx\r\n--XyZ-123--"
        )
        #expect(throws: FormatError.self) { try parse(long, maxHeaderBytes: 128) }
        #expect(try parse(long, maxHeaderBytes: 512).count == 1)

        let part = "--XyZ-123\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nx\r\n"
        let three = bytes(part + part + part + "--XyZ-123--")
        #expect(try parse(three, maxParts: 3).count == 3)
        #expect(throws: FormatError.self) { try parse(three, maxParts: 2) }
    }

    @Test func aBodyThatKeepsAlmostMatchingTheBoundaryIsData() throws {
        // Every prefix of the delimiter, again and again: linear work, and every byte comes back as data.
        var data: [UInt8] = []
        let delimiter = bytes("\r\n--XyZ-123")
        for n in 1..<delimiter.count { data += delimiter[0..<n] }
        data += bytes("\r\r\n\r\n-\r\n--\r\n--X")
        let body =
            bytes("--XyZ-123\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n") + data + bytes("\r\n--XyZ-123--")
        for piece in [0, 1, 3, 10] {
            #expect(try parse(body, piece: piece).first?.body == data, "piece \(piece)")
        }
    }
}
