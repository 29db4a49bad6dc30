import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SentryIngestDecoding {
    /// A minidump as the envelope route stores it: converted once into a Sentry envelope
    /// (`MinidumpSubmission.sentryEnvelope`, the dump's command line scrubbed by the project's rules and its
    /// environment dropped), then read, scrubbed and framed as any envelope. Attachments are kept up to the dump
    /// limit, not the envelope route's attachment limit: the stored dump is what the worker walks.
    /// - Parameters:
    ///   - limits: applied to the event, as for every envelope.
    ///   - dumpLimits: the dump's size limit is the attachment limit here.
    ///   - seed: see `envelope(_:gzip:limits:maxAttachmentBytes:receivedAt:seed:scrubber:)`.
    /// - Throws: `FormatError` naming `upload_file_minidump` when the dump cannot be read, or the envelope
    ///   reader's error.
    public static func minidump(
        _ submission: MinidumpSubmission, limits: IngestLimits, dumpLimits: MinidumpSubmission.Limits,
        receivedAt: Date, seed: String, scrubber: Scrubber
    ) throws -> Contents {
        let bytes = try submission.sentryEnvelope(
            scrubbingCommandLine: { scrubber.scrub($0) ?? $0 }, maxThreads: limits.maxThreads)
        return try envelope(
            bytes, limits: limits, maxAttachmentBytes: dumpLimits.maxDumpBytes, receivedAt: receivedAt, seed: seed,
            scrubber: scrubber)
    }

    /// An envelope that carries an `event.minidump` attachment (sentry-native's breakpad and native backends), read
    /// again through the minidump path so that its dump is walked like one from the minidump endpoint.
    ///
    /// The envelope's sessions, client reports and skipped items are kept from `decoded` (the crash's session
    /// update travels with it); its event and attachments come from the converted envelope.
    /// - Parameters:
    ///   - original: the inflated envelope as the client sent it.
    ///   - decoded: what `envelope(…)` read from it.
    /// - Returns: nil when `decoded` holds no minidump item, so an ordinary envelope costs one scan of its
    ///   attachments' types.
    /// - Throws: `FormatError` for a dump that is not `MDMP`, is over `dumpLimits`, or cannot be read.
    public static func minidumpEnvelope(
        _ original: [UInt8], decoded: Contents, limits: IngestLimits, dumpLimits: MinidumpSubmission.Limits,
        receivedAt: Date, seed: String, scrubber: Scrubber
    ) throws -> Contents? {
        guard decoded.contents.carriesMinidump,
            let submission = try MinidumpSubmission.envelope(original, limits: dumpLimits)
        else { return nil }
        var converted = try minidump(
            submission, limits: limits, dumpLimits: dumpLimits, receivedAt: receivedAt, seed: seed, scrubber: scrubber)
        converted.contents.sessions = decoded.contents.sessions
        converted.contents.discarded = decoded.contents.discarded
        converted.contents.skipped = decoded.contents.skipped
        return converted
    }
}

extension SentryEnvelopeContents {
    /// Whether an `attachment` item is a minidump (`attachment_type: event.minidump`), within the attachment limit
    /// or over it.
    public var carriesMinidump: Bool {
        attachments.contains { $0.attachmentType == MinidumpSubmission.attachmentType }
            || oversizedAttachments.contains { $0.attachmentType == MinidumpSubmission.attachmentType }
    }
}
