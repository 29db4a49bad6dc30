import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// How long clients may keep the server waiting, and how many connections may be open at once.
public struct ConnectionPolicy: Sendable, Equatable {
    /// How long the server waits for a client: for a whole request head from its first byte, for each
    /// next piece of a body, and on an idle keep-alive connection. A client that stalls mid-request gets
    /// `408` (when no answer was started) and is disconnected; an idle connection is closed.
    public var readTimeout: Duration
    /// Connections open at once; the next one is answered `503` with `Retry-After` and closed.
    public var maxConnections: Int
    /// The `Retry-After` seconds of that `503`.
    public var retryAfterSeconds: Int

    public init(readTimeout: Duration = .seconds(30), maxConnections: Int = 1024, retryAfterSeconds: Int = 1) {
        self.readTimeout = readTimeout
        self.maxConnections = maxConnections
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// The open connections, shared by every connection of one server.
final class ConnectionCounter: Sendable {
    private let open = Atomic<Int>(0)
    let limit: Int

    init(limit: Int) { self.limit = max(1, limit) }

    /// Counts a new connection; false when it is past the limit (it counts until it closes all the same:
    /// it holds a file descriptor too).
    func opened() -> Bool { open.add(1, ordering: .relaxed).newValue <= limit }
    func closed() { open.subtract(1, ordering: .relaxed) }
    var current: Int { open.load(ordering: .relaxed) }
}

/// Hummingbird's HTTP/1 child channel with the connection guard in front: the cap (``ConnectionGateHandler``,
/// first in the pipeline, sees raw bytes) and the read timeout (``ReadTimeoutHandler``, between the HTTP codec
/// and the application, sees requests and responses).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let counter: ConnectionCounter
    let retryAfterSeconds: Int

    init(responder: @escaping HTTPChannelHandler.Responder, policy: ConnectionPolicy) {
        let timeout = TimeAmount.nanoseconds(Self.nanoseconds(policy.readTimeout))
        // A new read-timeout handler per connection (the closure is evaluated for each one).
        inner = HTTP1Channel(
            responder: responder,
            configuration: .init(additionalChannelHandlers: [ReadTimeoutHandler(timeout: timeout)], idleTimeout: nil))
        counter = ConnectionCounter(limit: policy.maxConnections)
        retryAfterSeconds = max(0, policy.retryAfterSeconds)
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
        let inner = inner
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ConnectionGateHandler(counter: counter, retryAfterSeconds: retryAfter))
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with the connection guard (read timeouts and a connection cap).
    static func guardedHTTP1(policy: ConnectionPolicy) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in GuardedHTTP1Channel(responder: responder, policy: policy) }
    }
}

/// Told to the read-timeout handler when bytes arrived from the client (before the HTTP decoder, so bytes
/// of a header line cut in the middle count too).
struct ClientBytesArrived: Sendable {}

/// First in the pipeline: counts the connection against the cap and answers one past it with `503`
/// (then lets the client read the answer and closes); reports arriving bytes to the read-timeout handler.
final class ConnectionGateHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    let counter: ConnectionCounter
    let retryAfterSeconds: Int
    private var counted = false
    private var rejected = false

    init(counter: ConnectionCounter, retryAfterSeconds: Int) {
        self.counter = counter
        self.retryAfterSeconds = retryAfterSeconds
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context: context)
        context.fireChannelActive()
    }

    private func admit(context: ChannelHandlerContext) {
        guard !counted else { return }
        counted = true
        if !counter.opened() {
            rejected = true
            reject(context: context)
        }
    }

    /// `503` + `Retry-After` + JSON (the API's error shape), then the output side is closed; what the client
    /// sends is read and dropped until it closes (or the read timeout closes the connection).
    private func reject(context: ChannelHandlerContext) {
        let message = "the server has too many open connections; retry in \(retryAfterSeconds) s"
        let body = #"{"detail":"\#(message)","error":"too_many_connections","message":"\#(message)"}"#
        let head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
            + "Retry-After: \(retryAfterSeconds)\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        let bytes = context.channel.allocator.buffer(string: head + body)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes))).whenComplete { _ in
            loopBound.value.close(mode: .output, promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if rejected { return }
        context.fireUserInboundEventTriggered(ClientBytesArrived())
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }

    private func release() {
        if counted {
            counted = false
            counter.closed()
        }
    }
}

/// The read deadline of one connection (pure: the handler feeds it events and the time).
struct ReadTimeoutState {
    /// Requests whose head was read and whose answer has not ended.
    var unanswered = 0
    /// A request head was read and its end not yet.
    var bodyPending = false
    /// The answer to the oldest unanswered request has begun.
    var answerStarted = false
    /// Bytes arrived that have not become part of a request yet (a head being received) — and since when.
    var looseBytesSince: NIODeadline?
    /// The last sign of life from the client (a request part), or the end of the last answer.
    var lastActivity: NIODeadline
    /// When an answer that asked for the connection to close was sent: it closes one timeout later at the
    /// latest, whatever the client still sends.
    var closingSince: NIODeadline?

    init(now: NIODeadline) { lastActivity = now }

    enum Action: Equatable {
        case wait(until: NIODeadline)
        case close
        case answerTimeoutAndClose
    }

    mutating func bytesArrived(now: NIODeadline) {
        if looseBytesSince == nil { looseBytesSince = now }
    }

    mutating func read(_ part: HTTPRequestPart, now: NIODeadline) {
        lastActivity = now
        looseBytesSince = nil
        switch part {
        case .head:
            unanswered &+= 1
            bodyPending = true
        case .body: break
        case .end: bodyPending = false
        }
    }

    mutating func wrote(_ part: HTTPResponsePart, now: NIODeadline) {
        switch part {
        case .head: answerStarted = true
        case .body: break
        case .end:
            answerStarted = false
            unanswered = max(0, unanswered &- 1)
            if unanswered == 0 { lastActivity = now }
            if let since = looseBytesSince, since < now { looseBytesSince = now }
        }
    }

    /// What to do when the deadline timer fires at `now`.
    func deadlinePassed(now: NIODeadline, timeout: TimeAmount) -> Action {
        if let closingSince { return now >= closingSince + timeout ? .close : .wait(until: closingSince + timeout) }
        if unanswered > 0, !bodyPending {
            // The server's turn (the request is read, the answer is being made): no client deadline.
            return .wait(until: now + timeout)
        }
        let deadline: NIODeadline
        let action: Action
        if bodyPending {
            deadline = lastActivity + timeout
            action = unanswered > 0 && !answerStarted ? .answerTimeoutAndClose : .close
        } else if let since = looseBytesSince {
            // A request head must arrive whole within the timeout of its first byte (trickling does not help).
            deadline = since + timeout
            action = .answerTimeoutAndClose
        } else {
            deadline = lastActivity + timeout
            action = .close
        }
        return now >= deadline ? action : .wait(until: deadline)
    }
}

/// Closes connections whose client keeps the server waiting (see ``ConnectionPolicy/readTimeout``), answering
/// `408` with a JSON body when a request was under way and no answer had begun. Also closes the output side
/// after an answer that says `Connection: close` (such as a `413` sent before the body was read), so the
/// client is not left sending a body nobody reads.
final class ReadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let timeout: TimeAmount
    private var state = ReadTimeoutState(now: .now())
    private var timer: Scheduled<Void>?
    private var closeAfterAnswer = false
    private var done = false

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { stop() }

    private func start(context: ChannelHandlerContext) {
        guard timer == nil, !done else { return }
        state = ReadTimeoutState(now: .now())
        schedule(context: context, at: .now() + timeout)
    }

    private func stop() {
        done = true
        timer?.cancel()
        timer = nil
    }

    private func schedule(context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer?.cancel()
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.fire(context: context)
        }
    }

    private func fire(context: ChannelHandlerContext) {
        timer = nil
        guard !done else { return }
        switch state.deadlinePassed(now: .now(), timeout: timeout) {
        case .wait(let until):
            schedule(context: context, at: until)
        case .close:
            stop()
            context.close(promise: nil)
        case .answerTimeoutAndClose:
            stop()
            let message = "the request did not arrive in time (read timeout)"
            let body = #"{"detail":"\#(message)","error":"request_timeout","message":"\#(message)"}"#
            let head = HTTPResponse(
                status: .requestTimeout,
                headerFields: [.contentType: "application/json; charset=utf-8", .connection: "close", .contentLength: String(body.utf8.count)])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: body))), promise: nil)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ClientBytesArrived {
            state.bytesArrived(now: .now())
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        state.read(unwrapInboundIn(data), now: .now())
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        state.wrote(part, now: .now())
        switch part {
        case .head(let head):
            if head.headerFields[.connection]?.lowercased() == "close" { closeAfterAnswer = true }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guard closeAfterAnswer else {
                context.write(data, promise: promise)
                return
            }
            closeAfterAnswer = false
            state.closingSince = .now()
            // Half-close: the client reads the whole answer, then sees the end; what it still sends is drained
            // until it closes or the read timeout passes.
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(data).whenComplete { result in
                promise?.completeWith(result)
                loopBound.value.close(mode: .output, promise: nil)
            }
        }
    }
}
