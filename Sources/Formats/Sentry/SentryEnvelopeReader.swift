import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes a Sentry envelope body (`POST /api/{project}/envelope/`) into what the server stores.
///
/// Broken framing or a broken envelope header fails the whole envelope (nothing after it can be trusted).
/// A malformed item fails only itself and is listed in `problems`: sentry-sdk puts the crashed session
/// update in the same envelope as the crash, and never retries, so one bad item must not lose the rest.
///
/// Items: `event` (at most one; a second is a problem), `attachment`, `session`, `sessions`,
/// `client_report`; every other type (`transaction`, `span`, `log`, `profile`, `check_in`, `replay_*`,
/// `user_report`, `feedback`, `statsd`…) is accepted and ignored, its type listed in `skipped`.
public enum SentryEnvelopeReader {
    /// Sessions one envelope may add (`session` items and the counts of `sessions` aggregates together); items
    /// past it are problems. A few bytes of aggregate JSON can count thousands of sessions: they are stored as counts
    /// (one row per aggregate and status) and charged to the project's session budget, and this bounds what one
    /// request can move the crash-free rates by.
    public static let maxSessionUpdates = 10_000

    /// Decodes `body`, the inflated envelope.
    ///
    /// - Parameters:
    ///   - receivedAt: when the server received it: the event's time when neither the event nor the
    ///     envelope header (`sent_at`) gives one.
    ///   - limits: applied to the event (trimmed) and to sessions (cut).
    ///   - maxAttachmentBytes: larger attachments go to `oversizedAttachments` instead of `attachments`.
    ///   - sessionSeed: makes the ids of sessions synthesised from aggregates unique to this request; see
    ///     `SentrySessions.aggregates(_:range:seed:limits:maxSessions:)` (e.g. the request's id, or a hash of
    ///     the body with the time received).
    /// - Throws: `FormatError` for broken framing or envelope header (`SentryEnvelope.parse`).
    public static func read(
        _ body: [UInt8], receivedAt: Date, limits: IngestLimits, maxAttachmentBytes: Int, sessionSeed: String
    ) throws -> SentryEnvelopeContents {
        let envelope = try SentryEnvelope.parse(body)
        var out = SentryEnvelopeContents(eventID: envelope.header.eventID)
        var sawEvent = false
        for (index, item) in envelope.items.enumerated() {
            let path = "items[\(index)]"
            do {
                switch item.type {
                case "event":
                    guard !sawEvent else {
                        throw FormatError(.invalidField, "an envelope holds at most one event; this one was ignored")
                    }
                    sawEvent = true
                    do {
                        let report = try SentryEvents.report(
                            body, range: item.payloadRange, fallbackEventID: envelope.header.eventID,
                            fallbackTime: envelope.header.sentAt ?? receivedAt, limits: limits)
                        out.event = PreparedReport(report: report, range: item.payloadRange)
                        out.eventID = report.eventID
                    } catch let error as FormatError {
                        out.eventError = error.prefixed(path)
                        throw error
                    }
                case "attachment":
                    guard let filename = item.filename, !filename.isEmpty else {
                        throw FormatError(.invalidField, "an attachment needs a file name", field: "filename")
                    }
                    let name = IngestLimits.truncate(filename, toBytes: 255)
                    guard item.payloadRange.count <= maxAttachmentBytes else {
                        out.oversizedAttachments.append(
                            OversizedAttachment(
                                filename: name, size: item.payloadRange.count, attachmentType: item.attachmentType))
                        continue
                    }
                    out.attachments.append(
                        Attachment(
                            filename: name, contentType: item.contentType, attachmentType: item.attachmentType,
                            bytes: Array(body[item.payloadRange])))
                case "session":
                    guard out.sessionCount < maxSessionUpdates else {
                        throw FormatError(
                            .tooLarge, "an envelope may hold at most \(maxSessionUpdates) session updates")
                    }
                    out.sessions.append(try SentrySessions.session(body, range: item.payloadRange, limits: limits))
                case "sessions":
                    let room = maxSessionUpdates - out.sessionCount
                    out.sessions += try SentrySessions.aggregates(
                        body, range: item.payloadRange, seed: "\(sessionSeed)\u{1f}\(index)", limits: limits,
                        maxSessions: min(SentrySessions.maxSynthesizedPerItem, room))
                case "client_report":
                    out.discarded += try SentryClientReports.discarded(body, range: item.payloadRange)
                default:
                    out.skipped.append(IngestLimits.truncate(item.type, toBytes: 64))
                }
            } catch let error as FormatError {
                out.problems.append(error.prefixed(path))
            }
        }
        return out
    }
}

/// Decodes a legacy store body (`POST /api/{project}/store/`): the whole body is one event's JSON.
public enum SentryStoreReader {
    /// Decodes `body`, the inflated event JSON; the event's range is the whole body.
    ///
    /// - Parameter receivedAt: the event's time when it has no `timestamp`.
    /// - Throws: `FormatError` when the event is malformed (there is nothing else to keep).
    public static func read(_ body: [UInt8], receivedAt: Date, limits: IngestLimits) throws -> SentryEnvelopeContents {
        let range = 0..<body.count
        let report = try SentryEvents.report(
            body, range: range, fallbackEventID: nil, fallbackTime: receivedAt, limits: limits)
        return SentryEnvelopeContents(eventID: report.eventID, event: PreparedReport(report: report, range: range))
    }
}
