/// Where a connection comes from, as far as the per-address share of the connection cap is concerned.
///
/// An IPv4 client is its address. An IPv6 client is its /64: one host or one customer link usually gets a whole /64
/// (SLAAC, privacy addresses), so counting single IPv6 addresses would let one client take the cap alone. An
/// IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, a dual-stack listener's view of an IPv4 client) is that IPv4 address.
/// Anything else (a Unix socket) is one source.
public enum ConnectionSource: Hashable, Sendable {
    case ipv4(UInt32)
    case ipv6Prefix(UInt64)
    case other

    /// The source of an IPv4 client, from its 4 address bytes in network order.
    public init(ipv4 a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        self = .ipv4(UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d))
    }

    /// The source of an IPv6 client, from its 16 address bytes in network order; nil when there are not 16.
    public init?(ipv6 bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let b = Array(bytes)
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xff, b[11] == 0xff {
            self.init(ipv4: b[12], b[13], b[14], b[15])
            return
        }
        self = .ipv6Prefix(b[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
}

/// The open connections of one server: how many in all and how many from each ``ConnectionSource``, and whether the
/// next one may be served (pure; the HTTP edge holds one behind a lock and applies the answer).
///
/// Only admitted connections are counted. A refused one is answered `503` and closed within moments, so that a
/// client cannot keep the cap full with connections it was refused (they would otherwise count until it closes
/// them). An entry whose count drops to zero is removed: the table holds at most ``limit`` sources.
public struct ConnectionTally: Sendable, Equatable {
    /// Connections open at once, in all.
    public let limit: Int
    /// Connections open at once from one source.
    public let perSource: Int
    /// Admitted connections open now.
    public private(set) var open = 0
    /// Admitted connections open now, by source (no zero entries).
    public private(set) var bySource: [ConnectionSource: Int] = [:]

    /// What to do with a new connection.
    public enum Admission: Sendable, Equatable {
        /// Serve it; it is counted until ``ConnectionTally/closed(_:)``.
        case admitted
        /// Refuse it: the server holds ``ConnectionTally/limit`` connections.
        case overCap
        /// Refuse it: its source holds ``ConnectionTally/perSource`` connections (the others are still served).
        case overShare
    }

    /// - Parameters:
    ///   - limit: connections at once in all (at least 1).
    ///   - perSource: connections at once from one source (at least 1, at most `limit`).
    public init(limit: Int, perSource: Int) {
        self.limit = max(1, limit)
        self.perSource = min(self.limit, max(1, perSource))
    }

    /// Decides on a new connection from `source`, and counts it when it is admitted.
    public mutating func opened(from source: ConnectionSource) -> Admission {
        let fromSource = bySource[source, default: 0]
        if open >= limit { return .overCap }
        if fromSource >= perSource { return .overShare }
        open += 1
        bySource[source] = fromSource + 1
        return .admitted
    }

    /// Forgets an admitted connection from `source` (once per ``Admission/admitted``; an unknown source is ignored,
    /// so a double release cannot push a count below zero).
    public mutating func closed(from source: ConnectionSource) {
        guard let fromSource = bySource[source] else { return }
        open = max(0, open - 1)
        bySource[source] = fromSource > 1 ? fromSource - 1 : nil
    }
}
