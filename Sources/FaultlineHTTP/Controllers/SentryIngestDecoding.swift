import FaultlineCore
import Formats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The seam between the Sentry routes and the Sentry formats (Formats): what one request carries, as
/// the ingest write it becomes.
enum SentryIngestDecoding {
    struct Contents {
        var eventID: EventID?
        var event: PreparedReport?
        /// The event item's JSON (stored as the report's payload).
        var eventBytes: [UInt8]
        var sessions: [SessionUpdate]
        var discarded: [DiscardedEvents]
        var attachments: [Attachment]

        /// The ingest write: the event's own JSON is its stored payload (an envelope's attachments are stored
        /// apart, not twice).
        func write(project: ProjectID) throws -> EnvelopeWrite {
            var batch: ReportBatch?
            if var event {
                event.range = 0..<eventBytes.count
                let payload = StoredPayload(
                    bytes: try BodyDecoding.deflateForStorage(eventBytes), encoding: .deflate, inflatedSize: eventBytes.count,
                    format: .sentryEvent)
                batch = ReportBatch(project: project, receivedAt: Date(), payload: payload, reports: [event])
            }
            return EnvelopeWrite(
                project: project, receivedAt: Date(), event: batch, sessions: sessions, discarded: discarded, attachments: attachments,
                eventID: eventID)
        }
    }

    static func publicKey(header: String?, query: [String: String]) -> String? {
        nil
    }

    static func envelope(_ bytes: [UInt8], limits: IngestLimits, maxAttachmentBytes: Int) throws -> Contents {
        throw FormatError(.malformedJSON, "not yet")
    }

    static func store(_ bytes: [UInt8], limits: IngestLimits) throws -> Contents {
        throw FormatError(.malformedJSON, "not yet")
    }
}
