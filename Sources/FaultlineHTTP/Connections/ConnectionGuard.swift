import FaultlineCore
import HummingbirdCore
import Logging
import NIOCore

/// How long clients may keep the server waiting, and how many connections may be open at once, in all and from one
/// address.
public struct ConnectionPolicy: Sendable, Equatable {
    /// How long the server waits for a client: for a whole request head from its first byte, for each next piece of
    /// a body, on an idle keep-alive connection, and for the client to take an answer the server cannot write on
    /// (a client that does not read). A client that stalls mid-request gets `408` (when no answer was started) and
    /// is disconnected; an idle connection or one that does not read is closed. The output is writable again once
    /// NIO's buffer for it falls from 64 to 32 KiB, so in effect an answer must be read at 32 KiB per timeout or
    /// faster (about 1 KiB/s at 30 s), like ``minBodyBytesPerSecond`` for bodies.
    public var readTimeout: Duration
    /// The least average rate of a request body, in bytes a second, counted from its head after a grace of
    /// ``readTimeout``; a slower body gets `408` and the connection closes. 0: no minimum (only pauses count).
    public var minBodyBytesPerSecond: Int
    /// Connections open at once; the next one is answered `503` with `Retry-After` and closed.
    public var maxConnections: Int
    /// Connections open at once from one address (IPv4) or /64 (IPv6); the next one from there is answered `503`
    /// while others are still served. nil: ``ConnectionBudget/defaultPerAddressShare(maxConnections:)``. Behind a
    /// reverse proxy every client has the proxy's address: set it to ``maxConnections`` there.
    public var maxConnectionsPerAddress: Int?
    /// The `Retry-After` seconds of that `503`.
    public var retryAfterSeconds: Int

    /// - Parameters:
    ///   - readTimeout: see ``readTimeout``.
    ///   - minBodyBytesPerSecond: see ``minBodyBytesPerSecond``.
    ///   - maxConnections: see ``maxConnections``.
    ///   - maxConnectionsPerAddress: see ``maxConnectionsPerAddress``.
    ///   - retryAfterSeconds: see ``retryAfterSeconds``.
    public init(
        readTimeout: Duration = .seconds(30), minBodyBytesPerSecond: Int = 1024, maxConnections: Int = 1024,
        maxConnectionsPerAddress: Int? = nil, retryAfterSeconds: Int = 1
    ) {
        self.readTimeout = readTimeout
        self.minBodyBytesPerSecond = minBodyBytesPerSecond
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The share of one address that applies: the one set, else the default, at most the cap.
    public var effectivePerAddress: Int {
        min(
            max(1, maxConnections),
            maxConnectionsPerAddress ?? ConnectionBudget.defaultPerAddressShare(maxConnections: maxConnections))
    }
}

/// Hummingbird's HTTP/1 child channel with the connection guard in front: the cap and the per-address share
/// (``ConnectionGateHandler``, first in the pipeline, sees raw bytes) and the deadlines (``ReadTimeoutHandler``,
/// between the HTTP codec and the application, sees requests, responses, reads and writability).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let counter: ConnectionCounter
    let retryAfterSeconds: Int
    let refusedLinger: TimeAmount

    init(responder: @escaping HTTPChannelHandler.Responder, policy: ConnectionPolicy) {
        let limits = ReadTimeoutState.Limits(
            timeout: .nanoseconds(Self.nanoseconds(policy.readTimeout)),
            minBodyBytesPerSecond: max(0, policy.minBodyBytesPerSecond))
        // A new read-timeout handler per connection (the closure is evaluated for each one).
        inner = HTTP1Channel(
            responder: responder,
            configuration: .init(additionalChannelHandlers: [ReadTimeoutHandler(limits: limits)], idleTimeout: nil))
        counter = ConnectionCounter(limit: policy.maxConnections, perAddress: policy.effectivePerAddress)
        retryAfterSeconds = max(0, policy.retryAfterSeconds)
        // A refused client gets a moment to read its 503, never long: refused connections are not counted.
        refusedLinger = min(limits.timeout, .seconds(2))
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow || seconds < 0 { return seconds < 0 ? 1 : Int64.max / 2 }
        return max(1, whole &+ attoseconds / 1_000_000_000)
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let counter = counter
        let retryAfter = retryAfterSeconds
        let linger = refusedLinger
        let inner = inner
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGateHandler(counter: counter, retryAfterSeconds: retryAfter, refusedLinger: linger))
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with the connection guard (deadlines, a connection cap and a per-address share of it).
    static func guardedHTTP1(policy: ConnectionPolicy) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in GuardedHTTP1Channel(responder: responder, policy: policy) }
    }
}
