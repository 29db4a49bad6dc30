/// How many client connections a process may hold open at once, from its open-files limit.
///
/// Every connection is a file descriptor, and so are the database (the SQLite file, its WAL and shared
/// memory, one set per pooled connection), the debug files the symbolicator keeps open, uploads being
/// written, outgoing webhook connections and the log. Running out makes every one of them fail, `/healthz`
/// included; the cap answers `503` instead while there is still room.
public enum ConnectionBudget {
    /// Descriptors kept for the database, the symbolicator's open debug files, webhooks and the process itself.
    public static let reservedFiles: UInt64 = 256
    /// The default cap never goes above this (memory per idle connection adds up too).
    public static let maxDefault = 16_384
    /// Nor below this (a tiny limit gets a small server, not none).
    public static let minDefault = 16

    /// The default cap for an open-files limit of `openFiles`: half of what is left after ``reservedFiles``
    /// (an upload holds a file open besides its socket), between ``minDefault`` and ``maxDefault``.
    public static func defaultMaxConnections(openFilesLimit openFiles: UInt64) -> Int {
        guard openFiles > reservedFiles else { return minDefault }
        let half = (openFiles - reservedFiles) / 2
        return Int(min(UInt64(maxDefault), max(UInt64(minDefault), half)))
    }

    /// The default share of one client address (``ConnectionSource``) in a cap of `maxConnections`: an eighth, at
    /// least ``minPerAddressDefault``, never more than the cap. One address cannot then hold every slot, while an
    /// office behind one NAT address still gets dozens of connections at the default cap.
    public static func defaultPerAddressShare(maxConnections: Int) -> Int {
        let cap = max(1, maxConnections)
        return min(cap, max(minPerAddressDefault, cap / 8))
    }

    /// The default per-address share is never below this (when the cap allows it).
    public static let minPerAddressDefault = 8
}
