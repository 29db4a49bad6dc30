import FaultlineCore
import Formats
import Foundation
import Testing

/// The framing alone (client-protocols.md §1.3).
@Suite struct SentryEnvelopeTests {
    typealias F = SentryFixtures

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func payload(_ body: [UInt8], _ item: SentryEnvelope.Item) -> String {
        String(decoding: body[item.payloadRange], as: UTF8.self)
    }

    @Test func readsHeaderAndLengthDelimitedItems() throws {
        // Given the observed sentry-sdk shape: an event and an attachment whose payload holds newlines
        let log = "log line 1\nlog line 2\n"
        let body = F.envelope(
            F.pythonHeader,
            [
                F.item("event", F.pythonHandled, extra: #","content_type":"application/json""#),
                F.item("attachment", log, extra: #","filename":"app.log","content_type":"text/plain""#),
            ])
        let envelope = try SentryEnvelope.parse(body)

        #expect(envelope.header.eventID == EventID("9ec79c33ec9942ab8353589fcb2e04dc"))
        #expect(envelope.header.sentAt == Timestamps.parseISO8601("2026-11-22T05:08:09.158496Z"))
        #expect(envelope.items.map(\.type) == ["event", "attachment"])
        #expect(payload(body, envelope.items[0]) == F.pythonHandled)
        #expect(envelope.items[0].contentType == "application/json")
        // The attachment is exactly its 22 bytes, newlines included
        #expect(payload(body, envelope.items[1]) == log)
        #expect(envelope.items[1].length == 22)
        #expect(envelope.items[1].filename == "app.log")
        #expect(envelope.items[1].attachmentType == nil)
    }

    @Test func itemsWithoutLengthRunToTheNextNewlineOrTheEnd() throws {
        let body = bytes(
            "{}\n{\"type\":\"session\"}\n{\"sid\":\"a\"}\n\n\n{\"type\":\"client_report\"}\n{\"x\":1}\n{\"type\":\"sessions\"}\n{\"y\":2}"
        )
        let envelope = try SentryEnvelope.parse(body)
        #expect(envelope.header.eventID == nil)
        #expect(envelope.items.map(\.type) == ["session", "client_report", "sessions"])
        #expect(envelope.items.map { payload(body, $0) } == [#"{"sid":"a"}"#, #"{"x":1}"#, #"{"y":2}"#])
        #expect(envelope.items.allSatisfy { $0.length == nil })
    }

    @Test func optionalFinalNewlineEmptyPayloadsAndHyphenatedIDs() throws {
        // No newline after the last payload; a zero-length item; a header-only envelope.
        let body = bytes(
            #"{"event_id":"7077e450-fa6f-4594-850b-fed9428d1d98"}"# + "\n"
                + #"{"type":"attachment","length":0,"filename":"empty"}"# + "\n\n" + #"{"type":"event","length":2}"#
                + "\n{}")
        let envelope = try SentryEnvelope.parse(body)
        #expect(envelope.header.eventID?.rawValue == "7077e450fa6f4594850bfed9428d1d98")
        #expect(envelope.items.map(\.payloadRange.count) == [0, 2])
        #expect(payload(body, envelope.items[1]) == "{}")
        #expect(try SentryEnvelope.parse(bytes("{}")).items.isEmpty)
        #expect(try SentryEnvelope.parse(bytes("{}\n")).items.isEmpty)
        // An item header at the very end, without payload or newline
        #expect(try SentryEnvelope.parse(bytes("{}\n{\"type\":\"session\"}")).items[0].payloadRange == 21..<21)
        // CRLF after headers is tolerated (JSON whitespace)
        #expect(try SentryEnvelope.parse(bytes("{}\r\n{\"type\":\"x\",\"length\":1}\r\nA")).items.count == 1)
    }

    @Test(arguments: [
        // (body, field, code)
        ("", "header", FormatError.Code.malformedEnvelope),
        ("not json\n", "header", .malformedEnvelope),
        ("{\"event_id\":\n", "header.event_id", .malformedJSON),
        ("[1]\n", "header", .malformedEnvelope),
        (#"{"event_id":"xyz"}"#, "header.event_id", .invalidField),
        (#"{"sent_at":"now"}"#, "header.sent_at", .invalidField),
        ("{}\n{\"length\":2}\nab", "items[0].type", .invalidField),
        ("{}\n{\"type\":\"\"}\n", "items[0].type", .invalidField),
        ("{}\n{\"type\":5}\n", "items[0].type", .invalidField),
        ("{}\ngarbage\n", "items[0]", .malformedEnvelope),
        ("{}\n{\"type\":\"event\",\"length\":10}\n{}", "items[0].length", .malformedEnvelope),
        (
            "{}\n{\"type\":\"a\",\"length\":1}\nx\n{\"type\":\"event\",\"length\":99999999999}\n{}", "items[1].length",
            .malformedEnvelope
        ),
        ("{}\n{\"type\":\"event\",\"length\":-1}\n", "items[0].length", .invalidField),
        ("{}\n{\"type\":\"event\",\"length\":1.5}\nab", "items[0].length", .invalidField),
        // A length one byte short leaves the payload's last byte where the newline must be.
        ("{}\n{\"type\":\"event\",\"length\":1}\nab\n", "items[0].length", .malformedEnvelope),
        ("{}\n{\"type\":\"event\"} trailing\n", "items[0]", .malformedJSON),
    ])
    func brokenFramingIsFatalAndNamed(_ body: String, _ field: String, _ code: FormatError.Code) {
        let error = #expect(throws: FormatError.self) { try SentryEnvelope.parse(bytes(body)) }
        #expect(error?.field == field, "\(body)")
        #expect(error?.code == code, "\(body)")
    }

    @Test func itemCountIsBounded() throws {
        let many = "{}\n" + String(repeating: "{\"type\":\"x\",\"length\":0}\n\n", count: 1001)
        let error = #expect(throws: FormatError.self) { try SentryEnvelope.parse(bytes(many)) }
        #expect(error?.code == .tooLarge)
        #expect(error?.field == "items")
        let enough = "{}\n" + String(repeating: "{\"type\":\"x\",\"length\":0}\n\n", count: 1000)
        #expect(try SentryEnvelope.parse(bytes(enough)).items.count == 1000)
    }
}
