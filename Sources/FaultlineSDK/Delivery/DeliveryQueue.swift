/// A disk-backed outbox: every report and session update is written here (gzip, atomically) before anything
/// tries to send it, and removed only after the server's 2xx, so a crash of the app, of the launcher or of
/// the server loses nothing that fits the bounds.
///
/// CONTRACT (owner: sdk-delivery helper). Bounded in count and bytes; the oldest items are dropped first and
/// counted (`dropped`). At most ``Limits/unsentNonFatals`` non-fatal reports are kept; an older one goes when a
/// ninth arrives. Several processes may use one folder at once (the launcher and its child): writes are
/// rename-atomic and removal of a missing item is not an error.
package struct DeliveryQueue: Sendable {
    package enum Kind: String, Sendable {
        case crash, nonfatal, session
    }

    package struct Item: Sendable, Equatable {
        package var kind: Kind
        /// The file in the queue folder.
        package var path: String
        /// For reports: the event id (32 hex digits). For sessions: the session id.
        package var id: String
    }

    package var directory: String
    package var maxItems: Int
    package var maxBytes: Int

    package init(directory: String, maxItems: Int = 200, maxBytes: Int = 16 << 20) throws {
        self.directory = directory
        self.maxItems = maxItems
        self.maxBytes = maxBytes
        throw SDKError(.unimplemented, "DeliveryQueue.init")
    }

    /// Stores `json` (the uncompressed request body) durably; `fsync` for crashes, not for non-fatals.
    @discardableResult
    package func enqueue(kind: Kind, id: String, json: [UInt8]) throws -> Item {
        throw SDKError(.unimplemented, "DeliveryQueue.enqueue")
    }

    /// The items waiting, oldest first.
    package func pending() -> [Item] { [] }
    /// The gzip-compressed body of `item`, or nil when it is gone or unreadable.
    package func body(of item: Item) -> [UInt8]? { nil }
    package func remove(_ item: Item) {}
    package func removeAll() {}
    /// Items dropped for the bounds since the folder was made.
    package func dropped() -> Int { 0 }
}
