import NIOCore
import NIOHTTPTypes

/// The deadlines of one connection (pure: ``ReadTimeoutHandler`` feeds it events and the time, and applies the
/// answer of ``deadlinePassed(now:limits:)``).
///
/// The client's deadlines, each from ``ConnectionPolicy``:
/// - a request head must arrive whole within the timeout of its first byte (trickling does not help);
/// - a body may pause at most the timeout between pieces, and after a grace of the timeout from its head it must
///   have arrived at the minimum average rate (1 byte every 10 s passes the first rule but not this one; a large
///   upload on a slow but steady link passes both);
/// - an idle keep-alive connection is closed after the timeout;
/// - whenever the server has output the client does not take (the channel is not writable) for the timeout, the
///   connection is closed: a client that pipelines requests and never reads the answers holds nothing for long.
///
/// The server's turn has no read deadline: while a request is read and its answer is being made, and while the
/// application has not asked for more bytes (back-pressure: it has not taken what was read). Time when the server
/// held the reads is not counted against the client.
struct ReadTimeoutState {
    /// The policy's numbers, in the event loop's units.
    struct Limits: Equatable {
        var timeout: TimeAmount
        /// The least average rate of a body after its grace; 0: no minimum (the pause limit still holds).
        var minBodyBytesPerSecond: Int = 0
    }

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
    /// When the body being read began (its head arrived), moved later by the time the server held the reads.
    var bodySince: NIODeadline?
    /// Bytes of the body being read so far (saturating).
    var bodyBytes = 0
    /// Since when the application has not asked for more bytes (nil: it has asked, the client is awaited).
    var readsHeldSince: NIODeadline?
    /// Since when the channel has not been writable: the client does not take what the server sends.
    var unwritableSince: NIODeadline?

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
            bodySince = now
            bodyBytes = 0
        case .body(let bytes):
            let (sum, overflow) = bodyBytes.addingReportingOverflow(bytes.readableBytes)
            bodyBytes = overflow ? Int.max : sum
        case .end:
            bodyPending = false
            bodySince = nil
            bodyBytes = 0
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

    /// The application asked for more bytes: the client is awaited again, and the time the reads were held is
    /// added to the client's clocks.
    mutating func readRequested(now: NIODeadline) {
        guard let held = readsHeldSince else { return }
        readsHeldSince = nil
        let pause = now - held
        guard pause > .zero else { return }
        lastActivity = lastActivity + pause
        bodySince = bodySince.map { $0 + pause }
        looseBytesSince = looseBytesSince.map { $0 + pause }
    }

    /// A read from the socket ended; until the application asks again, the server holds the reads.
    mutating func readCompleted(now: NIODeadline) {
        if readsHeldSince == nil { readsHeldSince = now }
    }

    mutating func writabilityChanged(writable: Bool, now: NIODeadline) {
        if writable {
            unwritableSince = nil
        } else if unwritableSince == nil {
            unwritableSince = now
        }
    }

    /// What to do when the deadline timer fires at `now`: the earliest deadline that passed, else wait for the
    /// earliest one (never later than one timeout from now).
    func deadlinePassed(now: NIODeadline, limits: Limits) -> Action {
        let timeout = limits.timeout
        var earliest: (deadline: NIODeadline, action: Action)?
        func consider(_ deadline: NIODeadline, _ action: Action) {
            if earliest.map({ deadline < $0.deadline }) ?? true { earliest = (deadline, action) }
        }
        if let unwritableSince { consider(unwritableSince + timeout, .close) }
        if let closingSince {
            consider(closingSince + timeout, .close)
        } else if readsHeldSince != nil || (unanswered > 0 && !bodyPending) {
            // The server's turn: the application has not taken what was read, or the request is read and the
            // answer is being made.
        } else if bodyPending {
            let action: Action = unanswered > 0 && !answerStarted ? .answerTimeoutAndClose : .close
            consider(lastActivity + timeout, action)
            if let bodySince, limits.minBodyBytesPerSecond > 0 {
                consider(bodySince + timeout + Self.time(toSend: bodyBytes, at: limits.minBodyBytesPerSecond), action)
            }
        } else if let since = looseBytesSince {
            // A request head must arrive whole within the timeout of its first byte (trickling does not help).
            consider(since + timeout, .answerTimeoutAndClose)
        } else {
            consider(lastActivity + timeout, .close)
        }
        guard let earliest else { return .wait(until: now + timeout) }
        return now >= earliest.deadline ? earliest.action : .wait(until: earliest.deadline)
    }

    /// How long `bytes` take at `rate` bytes a second (checked: a count past a year's worth is a year).
    static func time(toSend bytes: Int, at rate: Int) -> TimeAmount {
        let year = Int64(365 * 86_400) * 1_000_000_000
        guard rate > 0, bytes > 0 else { return .zero }
        let (seconds, remainder) = bytes.quotientAndRemainder(dividingBy: rate)
        let (whole, overflow) = Int64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow || whole >= year { return .nanoseconds(year) }
        // remainder < rate, and a rate fits in 2^31: the product fits in an Int64.
        let part = Int64(clamping: remainder).multipliedReportingOverflow(by: 1_000_000_000)
        let fraction = part.overflow ? 1_000_000_000 : part.partialValue / Int64(clamping: rate)
        return .nanoseconds(min(year, whole + fraction))
    }
}
