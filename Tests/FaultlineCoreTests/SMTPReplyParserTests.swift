import FaultlineCore
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The SMTP reply parser reads a hostile server: the rule book of what it accepts and what ends the conversation.
@Suite struct SMTPReplyParserTests {
    func replies(_ pieces: [String]) throws(SMTPReplyProblem) -> [SMTPReply] {
        var parser = SMTPReplyParser()
        var out: [SMTPReply] = []
        for piece in pieces {
            try parser.feed(Array(piece.utf8))
            while let reply = parser.next() { out.append(reply) }
        }
        return out
    }

    @Test func aMultiLineReplyArrivingInPiecesIsOneReply() throws {
        let got = try replies([
            "250-mail.example.com hello\r\n250-STA", "RTTLS\r\n250-AUTH PLAIN LOGIN\r\n", "250 8BITMIME\r\n",
        ])
        #expect(
            got == [
                SMTPReply(code: 250, lines: ["mail.example.com hello", "STARTTLS", "AUTH PLAIN LOGIN", "8BITMIME"])
            ])
    }

    @Test func bareLineFeedsAndACodeAloneAreAccepted() throws {
        #expect(
            try replies(["220 ready\n354\r\n"]) == [
                SMTPReply(code: 220, lines: ["ready"]), SMTPReply(code: 354, lines: [""]),
            ])
    }

    @Test func codesOutsideTwoToFiveHundredsOrNotDigitsEndTheConversation() {
        for bad in ["199 no\r\n", "600 no\r\n", "2x0 no\r\n", "25\r\n", "250_x\r\n", "\r\n"] {
            #expect(throws: SMTPReplyProblem.badCode, "\(bad)") { try replies([bad]) }
        }
    }

    @Test func aContinuationWithAnotherCodeIsRefused() {
        #expect(throws: SMTPReplyProblem.codeChanged) { try replies(["250-a\r\n354 b\r\n"]) }
    }

    @Test func aLineThatNeverEndsIsRefusedAtTheLimitNotBuffered() {
        let long = "250 " + String(repeating: "x", count: SMTPReplyParser.maxLineBytes)
        #expect(throws: SMTPReplyProblem.lineTooLong) { try replies([long]) }
        // Exactly at the limit is a line.
        let fits = "250 " + String(repeating: "x", count: SMTPReplyParser.maxLineBytes - 4) + "\r\n"
        #expect((try? replies([fits]))?.first?.lines.first?.utf8.count == SMTPReplyParser.maxLineBytes - 4)
    }

    @Test func endlessContinuationLinesAreRefused() {
        let many = String(repeating: "250-x\r\n", count: SMTPReplyParser.maxLines + 1)
        #expect(throws: SMTPReplyProblem.tooManyLines) { try replies([many]) }
    }

    @Test func afterAProblemEveryFeedFails() {
        var parser = SMTPReplyParser()
        #expect(throws: SMTPReplyProblem.badCode) { try parser.feed(Array("abc\r\n".utf8)) }
        #expect(throws: SMTPReplyProblem.badCode) { try parser.feed(Array("250 ok\r\n".utf8)) }
    }

    @Test func partialInputIsVisibleForTheSTARTTLSCheck() throws {
        var parser = SMTPReplyParser()
        try parser.feed(Array("220 go ahead\r\n250 injected".utf8))
        #expect(parser.next()?.code == 220)
        #expect(parser.hasPartialInput)
    }

    @Test func theSummaryIsPrintableAndShort() {
        let reply = SMTPReply(code: 550, lines: ["no\u{1B}[31m such user " + String(repeating: "é", count: 300)])
        #expect(reply.summary.hasPrefix("550 no?[31m such user"))
        #expect(reply.summary.count == 200)
        #expect(reply.summary.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) })
    }
}

/// Messages as they are handed to SMTP.
@Suite struct MailMessageTests {
    let from = MailAddress("faultline@example.com")!
    let to = MailAddress("ada@example.com")!

    @Test func addressesThatCouldBreakACommandOrHeaderAreRefused() {
        for bad in [
            "a", "@x.org", "a@", "a@@x.org", "a b@x.org", "a@x.org>", "<a@x.org", "a@x.org\r\nRCPT TO:<b@y>",
            "ä@x.org", "a,b@x.org",
        ] {
            #expect(MailAddress(bad) == nil, "\(bad)")
        }
        #expect(MailAddress("first.last+tag@sub.example.com")?.domain == "sub.example.com")
    }

    @Test func theMessageIDIsStablePerAlertAndRecipient() {
        let a = MailMessage.messageID(kind: "alert", id: 7, recipient: to, domain: from.domain)
        #expect(a == MailMessage.messageID(kind: "alert", id: 7, recipient: to, domain: from.domain))
        #expect(a != MailMessage.messageID(kind: "alert", id: 8, recipient: to, domain: from.domain))
        #expect(a != MailMessage.messageID(kind: "alert", id: 7, recipient: from, domain: from.domain))
        #expect(a.hasPrefix("<faultline.alert.7.") && a.hasSuffix("@example.com>") && !a.contains("ada"))
    }

    @Test func aHostileSubjectCannotAddHeadersAndPartsDecodeBack() throws {
        let content = MailContent(
            subject: "boom\r\nBcc: all@example.com", text: "line\r\n.\r\nnot the end ✓", html: "<p>x</p>")
        let bytes = MailMessage.compose(
            from: from, fromName: "Faultline", to: to, content: content, messageID: "<m@example.com>",
            date: Date(timeIntervalSince1970: 1_795_947_451))
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        #expect(lines.contains("Subject: boom Bcc: all@example.com"))
        #expect(!lines.contains { $0.hasPrefix("Bcc:") })
        #expect(lines.contains("Date: Sun, 29 Nov 2026 10:17:31 +0000"))
        #expect(!text.contains("\n.\r"))  // the body is base64: no line of it is a lone dot
        #expect(lines.allSatisfy { $0.utf8.count <= 998 })
        let start = try #require(lines.firstIndex(of: "Content-Type: text/plain; charset=utf-8"))
        let encoded = lines[(start + 3)...].prefix { !$0.hasPrefix("--") }.joined()
        #expect(Data(base64Encoded: encoded).map { String(decoding: $0, as: UTF8.self) } == content.text)
    }

    @Test func nonASCIISubjectsBecomeEncodedWords() {
        let word = MailMessage.encodedWord("Crash-free sessions 99,1 % — below target")
        #expect(word.hasPrefix("=?UTF-8?B?"))
        #expect(word.components(separatedBy: "\r\n ").allSatisfy { $0.count <= 75 })
    }
}
