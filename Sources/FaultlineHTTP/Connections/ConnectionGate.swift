import FaultlineCore
import NIOCore
import Synchronization

/// The open connections of one server, shared by all of them: a ``ConnectionTally`` behind one lock, so that the
/// count in all and the count per address are decided together (two connections from one address arriving on two
/// event loops at once cannot both take its last slot).
final class ConnectionCounter: Sendable {
    private let tally: Mutex<ConnectionTally>

    init(limit: Int, perAddress: Int) { tally = Mutex(ConnectionTally(limit: limit, perSource: perAddress)) }

    /// Decides on a new connection from `source`; an admitted one counts until ``closed(from:)``.
    func opened(from source: ConnectionSource) -> ConnectionTally.Admission {
        tally.withLock { $0.opened(from: source) }
    }

    func closed(from source: ConnectionSource) { tally.withLock { $0.closed(from: source) } }

    /// Admitted connections open now.
    var current: Int { tally.withLock { $0.open } }
    /// Sources with an admitted connection open now.
    var sources: Int { tally.withLock { $0.bySource.count } }

    /// The source of a peer's address: IPv4 by address, IPv6 by /64 (see ``ConnectionSource``).
    static func source(of address: SocketAddress?) -> ConnectionSource {
        switch address {
        case .v4(let v4):
            // `s_addr` is in network order in memory: its bytes are the address's, first to last.
            let bytes = withUnsafeBytes(of: v4.address.sin_addr.s_addr) { Array($0) }
            return bytes.count == 4 ? ConnectionSource(ipv4: bytes[0], bytes[1], bytes[2], bytes[3]) : .other
        case .v6(let v6):
            return withUnsafeBytes(of: v6.address.sin6_addr) { ConnectionSource(ipv6: $0) } ?? .other
        default:
            return .other
        }
    }
}

/// Told to the read-timeout handler when bytes arrived from the client (before the HTTP decoder, so bytes
/// of a header line cut in the middle count too).
struct ClientBytesArrived: Sendable {}

/// First in the pipeline: admits the connection against the cap and its address's share, and answers one past
/// either with `503` (then lets the client read the answer and closes it shortly after); reports arriving bytes to
/// the read-timeout handler.
///
/// A slot is released exactly once, when the channel goes inactive or the handler is removed (whichever comes
/// first), on every path: a client that closes, a timeout, a reset, the server stopping.
final class ConnectionGateHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private enum Slot {
        case notYet
        case held(ConnectionSource)
        case refused
        case released
    }

    let counter: ConnectionCounter
    let retryAfterSeconds: Int
    /// How long a refused client has to read the `503` before the connection is closed.
    let refusedLinger: TimeAmount
    private var slot = Slot.notYet

    init(counter: ConnectionCounter, retryAfterSeconds: Int, refusedLinger: TimeAmount) {
        self.counter = counter
        self.retryAfterSeconds = retryAfterSeconds
        self.refusedLinger = refusedLinger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context: context)
        context.fireChannelActive()
    }

    private func admit(context: ChannelHandlerContext) {
        guard case .notYet = slot else { return }
        let source = ConnectionCounter.source(of: context.channel.remoteAddress)
        switch counter.opened(from: source) {
        case .admitted:
            slot = .held(source)
        case .overCap:
            slot = .refused
            refuse(context: context, message: "the server has too many open connections")
        case .overShare:
            slot = .refused
            refuse(context: context, message: "too many open connections from your address")
        }
    }

    /// `503` + `Retry-After` + JSON (the API's error shape), then the output side is closed; what the client sends
    /// is read and dropped until it closes, or ``refusedLinger`` passes. A refused connection is not counted: it
    /// would otherwise let a client hold the cap with connections it was refused.
    private func refuse(context: ChannelHandlerContext, message reason: String) {
        let message = "\(reason); retry in \(retryAfterSeconds) s"
        let body = #"{"detail":"\#(message)","error":"too_many_connections","message":"\#(message)"}"#
        let head =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
            + "Retry-After: \(retryAfterSeconds)\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        let bytes = context.channel.allocator.buffer(string: head + body)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes))).whenComplete { _ in
            loopBound.value.close(mode: .output, promise: nil)
        }
        let channel = context.channel
        context.eventLoop.scheduleTask(in: refusedLinger) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .refused = slot { return }
        context.fireUserInboundEventTriggered(ClientBytesArrived())
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }

    private func release() {
        if case .held(let source) = slot { counter.closed(from: source) }
        slot = .released
    }
}
