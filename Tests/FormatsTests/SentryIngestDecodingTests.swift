import CompressNIO
import FaultlineCore
import Foundation
import NIOCore
import Testing

@testable import Formats

/// What the Sentry envelope route stores as an event's raw payload: the client's own gzip when nothing was
/// scrubbed and little follows the event (no second compression on the hot path), else the envelope up to the
/// event, compressed again — and either way the stored payload reads back as the event that was accepted.
@Suite struct SentryIngestDecodingTests {
    let limits = IngestLimits()
    let scrubber = Scrubber(settings: PrivacySettings())

    func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        var buffer = ByteBuffer(bytes: bytes)
        return Array(try buffer.compress(with: .gzip()).readableBytesView)
    }

    func decode(_ body: [UInt8], gzip: [UInt8]?) throws -> (SentryIngestDecoding.Contents, StoredPayload) {
        let contents = try SentryIngestDecoding.envelope(
            body, gzip: gzip, limits: limits, maxAttachmentBytes: 1 << 20, receivedAt: SentryFixtures.receivedAt,
            seed: "t",
            scrubber: scrubber)
        let write = try contents.write(project: ProjectID(1), receivedAt: SentryFixtures.receivedAt)
        let payload = try #require(write.event?.payload)
        return (contents, payload)
    }

    /// The stored payload, read again as the worker reads it, is the accepted event.
    func expectRereads(_ payload: StoredPayload, _ contents: SentryIngestDecoding.Contents) throws {
        let event = try #require(contents.contents.event)
        let reread = try NativeReports.reread(payload, range: event.range, limits: limits)
        #expect(reread == event.report)
    }

    @Test func anUnscrubbedEventKeepsTheClientsGzip() throws {
        let body = SentryFixtures.envelope(
            SentryFixtures.pythonHeader, [SentryFixtures.item("event", SentryFixtures.pythonUnhandled)])
        let compressed = try gzip(body)
        let (contents, payload) = try decode(body, gzip: compressed)
        #expect(payload.encoding == .gzip)
        #expect(payload.bytes == compressed)
        #expect(payload.inflatedSize == body.count)
        #expect(payload.format == .sentryEvent)
        try expectRereads(payload, contents)
    }

    @Test func aScrubbedEventStoresTheScrubbedBytesCompressedAgain() throws {
        // A password in the event's extra data is scrubbed, so the client's bytes (which hold it) are never stored.
        let event = #"{"extra":{"password":"hunter2-secret"},"# + SentryFixtures.pythonUnhandled.dropFirst()
        let body = SentryFixtures.envelope(SentryFixtures.pythonHeader, [SentryFixtures.item("event", event)])
        let (contents, payload) = try decode(body, gzip: try gzip(body))
        #expect(payload.encoding == .deflate)
        let stored = try BodyDecoding.inflateStored(payload.bytes, limit: payload.inflatedSize)
        #expect(!String(decoding: stored, as: UTF8.self).contains("hunter2-secret"))
        #expect(String(decoding: body, as: UTF8.self).contains("hunter2-secret"))
        try expectRereads(payload, contents)
    }

    @Test func aLargeAttachmentAfterTheEventIsNotStoredWithIt() throws {
        let attachment = [UInt8](repeating: 0x41, count: SentryIngestDecoding.maxTrailingBytes + 1)
        let body = SentryFixtures.envelope(
            SentryFixtures.pythonHeader,
            [
                SentryFixtures.item("event", SentryFixtures.pythonUnhandled),
                SentryFixtures.item("attachment", attachment, extra: #","filename":"big.log""#),
            ])
        let (contents, payload) = try decode(body, gzip: try gzip(body))
        #expect(payload.encoding == .deflate)
        #expect(payload.inflatedSize < body.count - attachment.count)
        try expectRereads(payload, contents)
    }

    @Test func aBodyThatWasNotGzipIsCompressedOnce() throws {
        let body = SentryFixtures.envelope(
            SentryFixtures.pythonHeader, [SentryFixtures.item("event", SentryFixtures.pythonUnhandled)])
        let (contents, payload) = try decode(body, gzip: nil)
        #expect(payload.encoding == .deflate)
        try expectRereads(payload, contents)
    }
}
