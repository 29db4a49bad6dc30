import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The seam between the Sentry routes and the Sentry formats: what one request carries, as the ingest write
/// it becomes.
public enum SentryIngestDecoding {
    public struct Contents: Sendable {
        public var contents: SentryEnvelopeContents
        /// What is kept as the event's raw payload: the envelope's header line and its event item (the header
        /// supplies the event's fallbacks on re-reading; other items are stored apart or not at all).
        public var storedBytes: [UInt8]
        /// The client's own gzip of the whole body, stored instead of compressing `storedBytes` again when
        /// scrubbing changed nothing and at most `maxTrailingBytes` follow the event (re-reading uses the event's
        /// range, the same in both); `inflatedSize` is the whole body's. Nil: compress `storedBytes`.
        public var clientGzip: (bytes: [UInt8], inflatedSize: Int)?
        public var eventID: EventID? { contents.eventID }

        /// `receivedAt` is provisional: the ingest service stamps the write with its own clock when it admits it.
        public func write(project: ProjectID, receivedAt: Date) throws -> EnvelopeWrite {
            var batch: ReportBatch?
            if let event = contents.event {
                let payload =
                    try clientGzip.map {
                        StoredPayload(
                            bytes: $0.bytes, encoding: .gzip, inflatedSize: $0.inflatedSize, format: .sentryEvent)
                    }
                    ?? StoredPayload(
                        bytes: try BodyDecoding.deflateForStorage(storedBytes), encoding: .deflate,
                        inflatedSize: storedBytes.count,
                        format: .sentryEvent)
                batch = ReportBatch(project: project, receivedAt: receivedAt, payload: payload, reports: [event])
            }
            return EnvelopeWrite(
                project: project, receivedAt: receivedAt, event: batch, sessions: contents.sessions,
                discarded: contents.discarded + contents.oversizedAttachments.map(\.discard),
                attachments: contents.attachments,
                eventID: contents.eventID)
        }
    }

    /// The DSN key of a request: `X-Sentry-Auth`, `Authorization: Sentry …`, or the query string.
    public static func publicKey(xSentryAuth: String?, authorization: String?, query: String?) -> String? {
        SentryAuth.from(xSentryAuth: xSentryAuth, authorization: authorization, query: query)?.publicKey
    }

    /// Bytes after the event item up to which the client's gzip is stored as it came (a trailing newline, a
    /// session update, a client report); past it (attachments, a minidump), only the envelope up to the event is
    /// kept, compressed again.
    public static let maxTrailingBytes = 4096

    /// An envelope, scrubbed (its JSON items re-framed) before it is read. Malformed items are left out (a
    /// malformed event is in `contents.eventError`). `gzip`: the body as the client sent it, when it was gzip'd.
    public static func envelope(
        _ original: [UInt8], gzip: [UInt8]? = nil, limits: IngestLimits, maxAttachmentBytes: Int, receivedAt: Date,
        seed: String,
        scrubber: Scrubber
    ) throws -> Contents {
        let scrubbed = try SentryEnvelope.scrub(original, scrubber: scrubber)
        let bytes = scrubbed.bytes ?? original
        var contents = try SentryEnvelopeReader.read(
            bytes, receivedAt: receivedAt, limits: limits, maxAttachmentBytes: maxAttachmentBytes, sessionSeed: seed)
        if contents.event != nil, let first = scrubbed.unscrubbedEvents.min(by: { $0.key < $1.key }) {
            // An event the parser took but the scrubber could not walk is refused, never stored unscrubbed.
            contents.event = nil
            contents.eventError = first.value
        }
        let end = contents.event?.range.upperBound ?? 0
        let (stored, shift) = try eventOnly(bytes, event: contents.event?.range)
        if shift > 0, let event = contents.event {
            contents.event = PreparedReport(
                report: event.report, range: (event.range.lowerBound - shift)..<(event.range.upperBound - shift))
        }
        var out = Contents(contents: contents, storedBytes: stored)
        if let gzip, scrubbed.bytes == nil, shift == 0, contents.event != nil, original.count - end <= maxTrailingBytes
        {
            out.clientGzip = (gzip, original.count)
        }
        return out
    }

    /// The envelope's header line and the item ending at `eventEnd`, without the items before it (an attachment
    /// sent before the event would otherwise be stored inside the event's payload), and by how many bytes the
    /// event moved.
    static func eventOnly(_ bytes: [UInt8], event range: Range<Int>?) throws -> (bytes: [UInt8], shift: Int) {
        guard let range else { return ([], 0) }
        let eventEnd = range.upperBound
        // The common case without parsing the framing again: the event's payload follows the first item's header line.
        if let headerEnd = bytes.firstIndex(of: 0x0a),
            let itemHeaderEnd = bytes[(headerEnd + 1)...].firstIndex(of: 0x0a),
            itemHeaderEnd + 1 == range.lowerBound
        {
            return (Array(bytes[0..<eventEnd]), 0)
        }
        let envelope = try SentryEnvelope.parse(bytes)
        guard let first = envelope.items.first,
            let event = envelope.items.first(where: { $0.payloadRange.upperBound == eventEnd }),
            event.headerRange.lowerBound > first.headerRange.lowerBound
        else { return (Array(bytes[0..<eventEnd]), 0) }
        var out = Array(bytes[0..<first.headerRange.lowerBound])
        out.append(contentsOf: bytes[event.headerRange.lowerBound..<eventEnd])
        return (out, event.headerRange.lowerBound - first.headerRange.lowerBound)
    }

    /// A legacy store body (one event JSON), scrubbed before it is read.
    public static func store(_ original: [UInt8], limits: IngestLimits, receivedAt: Date, scrubber: Scrubber) throws
        -> Contents
    {
        let bytes = try JSONScrubbing.scrub(original, scrubber: scrubber) ?? original
        let contents = try SentryStoreReader.read(bytes, receivedAt: receivedAt, limits: limits)
        if let error = contents.eventError { throw error }
        return Contents(contents: contents, storedBytes: bytes)
    }
}
