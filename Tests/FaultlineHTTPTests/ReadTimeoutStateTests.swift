import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Testing

@testable import FaultlineHTTP

/// The read deadline's decisions, with the time given (the end-to-end tests run it on real sockets).
@Suite struct ReadTimeoutStateTests {
    let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
    let timeout = TimeAmount.seconds(1)
    /// The pause limit alone (no minimum rate), as the first rules were written.
    var limits: ReadTimeoutState.Limits { .init(timeout: timeout) }
    /// With a minimum body rate of 1 KiB/s.
    var rated: ReadTimeoutState.Limits { .init(timeout: timeout, minBodyBytesPerSecond: 1024) }
    var head: HTTPRequestPart { .head(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/")) }

    @Test func anIdleConnectionClosesSilentlyAfterTheTimeout() {
        let state = ReadTimeoutState(now: t0)
        #expect(state.deadlinePassed(now: t0 + .milliseconds(500), limits: limits) == .wait(until: t0 + timeout))
        #expect(state.deadlinePassed(now: t0 + timeout, limits: limits) == .close)
    }

    @Test func aHeadMustArriveWholeWithinTheTimeoutOfItsFirstByte() {
        var state = ReadTimeoutState(now: t0)
        state.bytesArrived(now: t0 + .milliseconds(100))
        state.bytesArrived(now: t0 + .milliseconds(900))  // trickling does not move the deadline
        #expect(state.deadlinePassed(now: t0 + .milliseconds(1100), limits: limits) == .answerTimeoutAndClose)
    }

    @Test func aStalledBodyIsAnswered408ButTheServersTurnHasNoDeadline() {
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        state.read(.body(ByteBuffer(string: "x")), now: t0 + .milliseconds(800))
        #expect(
            state.deadlinePassed(now: t0 + .milliseconds(1000), limits: limits)
                == .wait(until: t0 + .milliseconds(1800)))
        #expect(state.deadlinePassed(now: t0 + .milliseconds(1800), limits: limits) == .answerTimeoutAndClose)
        state.read(.end(nil), now: t0 + .milliseconds(1900))
        // The request is read: however long the answer takes, the client is not timed out.
        #expect(state.deadlinePassed(now: t0 + .seconds(60), limits: limits) == .wait(until: t0 + .seconds(61)))
        state.wrote(.head(HTTPResponse(status: .ok)), now: t0 + .seconds(61))
        state.wrote(.end(nil), now: t0 + .seconds(61))
        #expect(state.deadlinePassed(now: t0 + .seconds(62), limits: limits) == .close)
    }

    @Test func anAnswerStartedBeforeTheBodyEndedIsNotFollowedBy408() {
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        state.wrote(.head(HTTPResponse(status: .contentTooLarge)), now: t0)
        #expect(state.deadlinePassed(now: t0 + timeout, limits: limits) == .close)
        state.wrote(.end(nil), now: t0)
        state.closingSince = t0
        state.read(.body(ByteBuffer(string: "more")), now: t0 + .milliseconds(900))  // draining does not keep it open
        #expect(state.deadlinePassed(now: t0 + timeout, limits: limits) == .close)
    }

    @Test func aTricklingBodyIsCutAfterTheGraceWhateverItsPauses() {
        // Given a body sent one byte every 500 ms: never a pause of a whole timeout.
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        state.read(.body(ByteBuffer(string: "x")), now: t0 + .milliseconds(500))
        // Then with no minimum rate it is waited for; with 1 KiB/s it is behind one grace (1 s) + 1 ms after its head.
        #expect(
            state.deadlinePassed(now: t0 + .milliseconds(1002), limits: limits)
                == .wait(until: t0 + .milliseconds(1500)))
        #expect(
            state.deadlinePassed(now: t0 + .milliseconds(900), limits: rated)
                == .wait(until: t0 + .nanoseconds(1_000_976_562)))
        #expect(state.deadlinePassed(now: t0 + .milliseconds(1002), limits: rated) == .answerTimeoutAndClose)
    }

    @Test func aSteadyBodyAboveTheRatePassesHoweverLongItTakes() {
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        // 2 KiB every 250 ms (8 KiB/s) for 10 s: ten timeouts, and never behind.
        for step in 1...40 {
            let now = t0 + .milliseconds(Int64(step) * 250)
            state.read(.body(ByteBuffer(repeating: 0x20, count: 2048)), now: now)
            if case .wait = state.deadlinePassed(now: now + .milliseconds(200), limits: rated) {
            } else {
                Issue.record("cut at step \(step)")
            }
        }
        state.read(.end(nil), now: t0 + .seconds(10))
        #expect(state.deadlinePassed(now: t0 + .seconds(30), limits: rated) == .wait(until: t0 + .seconds(31)))
    }

    @Test func timeTheServerHeldTheReadsIsNotTheClients() {
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        // The application does not take what was read for 10 s (back-pressure): the server's turn.
        state.readCompleted(now: t0 + .milliseconds(100))
        #expect(state.deadlinePassed(now: t0 + .seconds(10), limits: rated) == .wait(until: t0 + .seconds(11)))
        // It asks again: the client's clocks move by the 10 s, so its deadline is 1 s after its head plus that.
        state.readRequested(now: t0 + .milliseconds(10_100))
        #expect(state.deadlinePassed(now: t0 + .milliseconds(10_500), limits: rated) == .wait(until: t0 + .seconds(11)))
        #expect(state.deadlinePassed(now: t0 + .seconds(11), limits: rated) == .answerTimeoutAndClose)
    }

    @Test func anAnswerTheClientDoesNotTakeClosesTheConnection() {
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        state.read(.end(nil), now: t0)
        state.wrote(.head(HTTPResponse(status: .ok)), now: t0)
        // The server's turn, and the client takes its bytes: no deadline.
        #expect(state.deadlinePassed(now: t0 + .seconds(5), limits: rated) == .wait(until: t0 + .seconds(6)))
        // It stops reading: the output stays unwritable; a timeout later the connection closes (no 408: it cannot
        // be written).
        state.writabilityChanged(writable: false, now: t0 + .seconds(5))
        #expect(state.deadlinePassed(now: t0 + .milliseconds(5500), limits: rated) == .wait(until: t0 + .seconds(6)))
        state.writabilityChanged(writable: false, now: t0 + .milliseconds(5900))  // still the first moment counts
        #expect(state.deadlinePassed(now: t0 + .seconds(6), limits: rated) == .close)
        // Had it read in time, the clock stops.
        state.writabilityChanged(writable: true, now: t0 + .milliseconds(5900))
        #expect(state.deadlinePassed(now: t0 + .seconds(6), limits: rated) == .wait(until: t0 + .seconds(7)))
    }

    @Test func theTimeToSendIsCheckedArithmetic() {
        #expect(ReadTimeoutState.time(toSend: 1536, at: 1024) == .milliseconds(1500))
        #expect(ReadTimeoutState.time(toSend: 0, at: 1024) == .zero)
        #expect(ReadTimeoutState.time(toSend: 10, at: 0) == .zero)
        let year = TimeAmount.seconds(365 * 86_400)
        #expect(ReadTimeoutState.time(toSend: Int.max, at: 1) == year)
        #expect(ReadTimeoutState.time(toSend: Int.max, at: 1 << 30) == year)
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        state.read(.body(ByteBuffer(string: "x")), now: t0)
        state.bodyBytes = Int.max - 1
        state.read(.body(ByteBuffer(string: "xx")), now: t0)
        #expect(state.bodyBytes == Int.max)
    }
}
