import FaultlineCore
import Formats
import Foundation
import Testing

@Suite struct SentryEnvelopeReaderTests {
    typealias F = SentryFixtures
    let limits = IngestLimits()

    func read(_ body: [UInt8], maxAttachmentBytes: Int = 1024, seed: String = "request-1") throws
        -> SentryEnvelopeContents
    {
        try SentryEnvelopeReader.read(
            body, receivedAt: F.receivedAt, limits: limits, maxAttachmentBytes: maxAttachmentBytes, sessionSeed: seed)
    }

    @Test func eventWithSessionAttachmentsAndClientReport() throws {
        // Given what sentry-sdk sends for a crash: the event, the crashed session, a log attachment (newlines
        // inside), one attachment over the limit, a client report and item types the server does not keep
        let log = "log line 1\nlog line 2\n"
        let big = [UInt8](repeating: 0x41, count: 2000)
        let minidump: [UInt8] = [0x4d, 0x44, 0x4d, 0x50, 0x0a, 0x00, 0x0a]
        let body = F.envelope(
            F.pythonHeader,
            [
                F.item("event", F.pythonUnhandled, extra: #","content_type":"application/json""#),
                F.item("session", F.pythonSession),
                F.item("attachment", log, extra: #","filename":"app.log","content_type":"text/plain""#),
                F.item("attachment", big, extra: #","filename":"core.bin""#),
                F.item("attachment", minidump, extra: #","filename":"crash.dmp","attachment_type":"event.minidump""#),
                F.item("transaction", #"{"type":"transaction"}"#),
                F.item("profile", "{}"),
                F.item("client_report", F.clientReport),
            ])
        let contents = try read(body)

        // Then the event is the payload's, located by its range in the body
        let event = try #require(contents.event)
        #expect(event.report.kind == .crash)
        #expect(event.report.eventID == EventID("0c3f9d3a6f1a4a53b2d1e9f0a8b7c6d5"))
        #expect(contents.eventID == event.report.eventID)  // the payload's id, not the header's
        #expect(String(decoding: body[event.range], as: UTF8.self) == F.pythonUnhandled)
        #expect(contents.eventError == nil)

        #expect(contents.sessions.count == 1)
        #expect(contents.sessions[0].status == .crashed)

        #expect(
            contents.attachments == [
                Attachment(filename: "app.log", contentType: "text/plain", attachmentType: nil, bytes: Array(log.utf8)),
                Attachment(filename: "crash.dmp", contentType: nil, attachmentType: "event.minidump", bytes: minidump),
            ])
        #expect(contents.oversizedAttachments == [OversizedAttachment(filename: "core.bin", size: 2000)])
        #expect(
            contents.oversizedAttachments[0].discard
                == DiscardedEvents(reason: "too_large", category: "attachment", quantity: 2000))

        #expect(
            contents.discarded == [
                DiscardedEvents(reason: "ratelimit_backoff", category: "error", quantity: 2),
                DiscardedEvents(reason: "send_error", category: "attachment", quantity: 1024),
                DiscardedEvents(reason: "filtered:before_send", category: "error", quantity: 1),
            ])
        #expect(contents.skipped == ["transaction", "profile"])
        #expect(contents.problems.isEmpty)
    }

    @Test func badItemsAreProblemsNotFailures() throws {
        // Given a good event between a session without a release, an invalid session status, a broken client
        // report, an attachment without a name and a second event
        let body = F.envelope(
            "{}",
            [
                F.item("session", #"{"sid":"s1","started":1,"status":"ok"}"#),
                F.item("event", F.pythonMessage),
                F.item("session", #"{"sid":"s2","started":1,"status":"sleeping","attrs":{"release":"r"}}"#),
                F.item("client_report", #"{"discarded_events":[{"reason":"x","category":"error","quantity":"2"}]}"#),
                F.item("attachment", "abc"),
                F.item("event", F.pythonHandled),
                F.item("session", #"{"sid":"s3","started":1,"status":"exited","attrs":{"release":"r"}}"#),
            ])
        let contents = try read(body)
        // Then the event and the good session survive and every bad item is named
        #expect(contents.event?.report.error?.message == "nightly export failed")
        #expect(contents.sessions.map(\.sessionID.rawValue) == ["s3"])
        #expect(
            contents.problems.map(\.field) == [
                "items[0].attrs.release", "items[2].status", "items[3].discarded_events[0].quantity",
                "items[4].filename",
                "items[5]",
            ])
    }

    @Test func aMalformedEventKeepsTheRestAndIsReported() throws {
        let body = F.envelope(
            #"{"event_id":"7077e450-fa6f-4594-850b-fed9428d1d98"}"#,
            [
                F.item("event", #"{"exception":{"values":[{"stacktrace":{"frames":[{"lineno":"x"}]}}]}}"#),
                F.item("session", F.pythonSession),
            ])
        let contents = try read(body)
        #expect(contents.event == nil)
        #expect(contents.eventError?.field == "items[0].exception.values[0].stacktrace.frames[0].lineno")
        #expect(contents.problems == [try #require(contents.eventError)])
        #expect(contents.eventID?.rawValue == "7077e450fa6f4594850bfed9428d1d98")  // the header's
        #expect(contents.sessions.count == 1)
    }

    @Test func sentryCLIEnvelopeWithoutLengthOrNewline() throws {
        // `{"event_id":…}\n{"type":"event","length":N}\n…` as `send-event --raw` forwards it, but with an item
        // that has no length and no final newline
        let body = Array((F.cliHeader + "\n{\"type\":\"event\"}\n" + F.cliEvent).utf8)
        let contents = try read(body)
        let event = try #require(contents.event)
        #expect(event.report.eventID.rawValue == "7077e450fa6f4594850bfed9428d1d98")
        #expect(event.report.timestamp == Date(timeIntervalSince1970: 1_795_324_473.581085))
        #expect(event.range.upperBound == body.count)
    }

    @Test func eventTimeFallsBackToSentAtThenReceivedAt() throws {
        let withSentAt = F.envelope(#"{"sent_at":"2026-11-22T05:10:00Z"}"#, [F.item("event", #"{"message":"m"}"#)])
        #expect(try read(withSentAt).event?.report.timestamp == Timestamps.parseISO8601("2026-11-22T05:10:00Z"))
        let without = F.envelope("{}", [F.item("event", #"{"message":"m"}"#)])
        #expect(try read(without).event?.report.timestamp == F.receivedAt)
    }

    @Test func sessionOnlyEnvelopes() throws {
        let items = (0..<100).map { i in
            F.item(
                "session",
                #"{"sid":"s\#(i)","started":"2026-11-22T05:08:09Z","status":"exited","attrs":{"release":"r@1"}}"#)
        }
        let contents = try read(F.envelope("{}", items + [F.item("sessions", F.pythonAggregates)]))
        #expect(contents.eventID == nil)
        #expect(contents.event == nil)
        #expect(contents.sessionCount == 100 + 6)
        // The aggregate's 6 sessions are 3 counted updates (exited, errored; crashed), not 6 rows.
        #expect(contents.sessions.count == 100 + 3)
    }

    @Test func sessionUpdatesPerEnvelopeAreBounded() throws {
        // Two aggregate items of 6,000 sessions each: the second would pass the envelope's 10,000.
        let aggregate = #"{"attrs":{"release":"r"},"aggregates":[{"started":0,"exited":6000}]}"#
        let contents = try read(F.envelope("{}", [F.item("sessions", aggregate), F.item("sessions", aggregate)]))
        #expect(contents.sessionCount == 6000)
        #expect(contents.sessions.count == 1)
        #expect(contents.problems.map(\.code) == [.tooLarge])
        #expect(contents.problems.first?.field?.hasPrefix("items[1]") == true)
    }

    @Test func storeBodyIsOneEvent() throws {
        let body = Array(F.pythonHandled.utf8)
        let contents = try SentryStoreReader.read(body, receivedAt: F.receivedAt, limits: limits)
        #expect(contents.event?.range == 0..<body.count)
        #expect(contents.eventID == EventID("9ec79c33ec9942ab8353589fcb2e04dc"))
        #expect(contents.sessions.isEmpty && contents.problems.isEmpty)
        #expect(throws: FormatError.self) {
            try SentryStoreReader.read(Array("{\"level\":1}".utf8), receivedAt: F.receivedAt, limits: limits)
        }
    }

    @Test func truncatedAndFlippedEnvelopesThrowFormatErrorsOrDecode() throws {
        // Given a realistic envelope, cut at every length and with bytes flipped at many places
        let body = F.envelope(
            F.pythonHeader,
            [
                F.item("event", F.nativeCrash()), F.item("session", F.pythonSession),
                F.item("sessions", F.pythonAggregates),
                F.item("client_report", F.clientReport), F.item("attachment", "a\nb", extra: #","filename":"f""#),
            ])
        func check(_ bytes: [UInt8]) {
            do {
                _ = try read(bytes)
            } catch is FormatError {
                // expected for most
            } catch {
                Issue.record("not a FormatError: \(error)")
            }
        }
        // When each is read, Then it decodes or throws a FormatError; nothing traps
        for n in stride(from: 0, through: body.count, by: 7) { check(Array(body.prefix(n))) }
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        for _ in 0..<400 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var copy = body
            let at = Int(state >> 33) % copy.count
            copy[at] = UInt8(truncatingIfNeeded: state >> 13)
            check(copy)
        }
        // And a length cut short names the item
        let truncated = Array(body.prefix(body.count - 3))
        let error = #expect(throws: FormatError.self) { try read(truncated) }
        #expect(error?.field == "items[4].length")
    }
}
