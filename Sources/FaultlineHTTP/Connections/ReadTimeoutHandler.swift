import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes connections whose client keeps the server waiting (``ReadTimeoutState`` decides; see
/// ``ConnectionPolicy``), answering `408` with a JSON body when a request was under way and no answer had begun.
/// Also closes the output side after an answer that says `Connection: close` (such as a `413` sent before the body
/// was read), so the client is not left sending a body nobody reads.
///
/// It sits between the HTTP codec and the application, so it sees request and response parts, the application's
/// requests for more bytes (`read`, held back by the async channel while the application has not taken what was
/// read) and the channel's writability (which the async channel's writer waits for).
final class ReadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let limits: ReadTimeoutState.Limits
    private var state = ReadTimeoutState(now: .now())
    private var timer: Scheduled<Void>?
    private var closeAfterAnswer = false
    private var done = false

    init(limits: ReadTimeoutState.Limits) { self.limits = limits }

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
        if !context.channel.isWritable { state.writabilityChanged(writable: false, now: .now()) }
        schedule(context: context, at: .now() + limits.timeout)
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
        switch state.deadlinePassed(now: .now(), limits: limits) {
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
                headerFields: [
                    .contentType: "application/json; charset=utf-8", .connection: "close",
                    .contentLength: String(body.utf8.count),
                ])
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

    func channelReadComplete(context: ChannelHandlerContext) {
        state.readCompleted(now: .now())
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        state.readRequested(now: .now())
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        state.writabilityChanged(writable: context.channel.isWritable, now: .now())
        context.fireChannelWritabilityChanged()
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
