import FaultlineCore

/// What one Sentry envelope (or legacy store body) holds, decoded and validated: what the HTTP layer
/// stores and answers with.
public struct SentryEnvelopeContents: Sendable, Equatable {
    /// The event's id (what the server answers `{"id": …}` with): the parsed event's, else the envelope
    /// header's; nil for envelopes without an event (session updates, client reports).
    public var eventID: EventID?
    /// The event, with `range` = its payload's byte range in the body.
    public var event: PreparedReport?
    /// Why the envelope's event item was not taken, when it was malformed (also listed in `problems`);
    /// the rest of the envelope is still good, and the caller decides whether to answer 400.
    public var eventError: FormatError?
    public var sessions: [SessionUpdate]
    /// How many sessions `sessions` stand for (an aggregate's update counts its count).
    public var sessionCount: Int { sessions.sessionCount }
    /// What the client reported it dropped (its `client_report` items only).
    public var discarded: [DiscardedEvents]
    /// `attachment` items within the size limit, in envelope order.
    public var attachments: [Attachment]
    /// `attachment` items over the size limit: not returned, named so the server can record the drop.
    public var oversizedAttachments: [OversizedAttachment]
    /// Types of the items that were ignored (`transaction`, `profile`, `check_in`…), in envelope order.
    public var skipped: [String]
    /// Items that were malformed and left out without failing the envelope, their field paths starting
    /// with `items[N]` (a bad session item must not cost the crash it came with).
    public var problems: [FormatError]

    public init(
        eventID: EventID? = nil, event: PreparedReport? = nil, eventError: FormatError? = nil,
        sessions: [SessionUpdate] = [], discarded: [DiscardedEvents] = [], attachments: [Attachment] = [],
        oversizedAttachments: [OversizedAttachment] = [], skipped: [String] = [], problems: [FormatError] = []
    ) {
        self.eventID = eventID
        self.event = event
        self.eventError = eventError
        self.sessions = sessions
        self.discarded = discarded
        self.attachments = attachments
        self.oversizedAttachments = oversizedAttachments
        self.skipped = skipped
        self.problems = problems
    }
}

/// An attachment left out because it is larger than the server keeps.
public struct OversizedAttachment: Sendable, Equatable {
    public var filename: String
    /// Its size in bytes.
    public var size: Int
    /// Sentry's `attachment_type` of the item (`event.minidump` is read again under the minidump limits).
    public var attachmentType: String?

    public init(filename: String, size: Int, attachmentType: String? = nil) {
        self.filename = filename
        self.size = size
        self.attachmentType = attachmentType
    }

    /// The drop as a client report would record it: reason `too_large`, category `attachment`, quantity in
    /// bytes. Not added to `SentryEnvelopeContents.discarded`, which is only what the client reported.
    public var discard: DiscardedEvents { DiscardedEvents(reason: "too_large", category: "attachment", quantity: size) }
}
