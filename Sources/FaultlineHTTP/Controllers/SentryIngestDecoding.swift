import FaultlineCore
import Formats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The seam between the Sentry routes and the Sentry formats: what one request carries, as the ingest write
/// it becomes.
enum SentryIngestDecoding {
    struct Contents {
        var contents: SentryEnvelopeContents
        /// What is kept as the event's raw payload: the envelope up to the end of its event item (the header
        /// supplies the event's fallbacks on re-reading; attachments after it are stored apart, not twice).
        var storedBytes: [UInt8]
        var eventID: EventID? { contents.eventID }

        /// `receivedAt` is provisional: the ingest service stamps the write with its own clock when it admits it.
        func write(project: ProjectID, receivedAt: Date) throws -> EnvelopeWrite {
            var batch: ReportBatch?
            if let event = contents.event {
                let payload = StoredPayload(
                    bytes: try BodyDecoding.deflateForStorage(storedBytes), encoding: .deflate, inflatedSize: storedBytes.count,
                    format: .sentryEvent)
                batch = ReportBatch(project: project, receivedAt: receivedAt, payload: payload, reports: [event])
            }
            return EnvelopeWrite(
                project: project, receivedAt: receivedAt, event: batch, sessions: contents.sessions,
                discarded: contents.discarded + contents.oversizedAttachments.map(\.discard), attachments: contents.attachments,
                eventID: contents.eventID)
        }
    }

    /// The DSN key of a request: `X-Sentry-Auth`, `Authorization: Sentry …`, or the query string.
    static func publicKey(xSentryAuth: String?, authorization: String?, query: String?) -> String? {
        SentryAuth.from(xSentryAuth: xSentryAuth, authorization: authorization, query: query)?.publicKey
    }

    /// An envelope, scrubbed (its JSON items re-framed) before it is read. Malformed items are left out (a
    /// malformed event is in `contents.eventError`).
    static func envelope(
        _ original: [UInt8], limits: IngestLimits, maxAttachmentBytes: Int, receivedAt: Date, seed: String, scrubber: Scrubber
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
        return Contents(contents: contents, storedBytes: Array(bytes[0..<end]))
    }

    /// A legacy store body (one event JSON), scrubbed before it is read.
    static func store(_ original: [UInt8], limits: IngestLimits, receivedAt: Date, scrubber: Scrubber) throws -> Contents {
        let bytes = try JSONScrubbing.scrub(original, scrubber: scrubber) ?? original
        let contents = try SentryStoreReader.read(bytes, receivedAt: receivedAt, limits: limits)
        if let error = contents.eventError { throw error }
        return Contents(contents: contents, storedBytes: bytes)
    }
}
