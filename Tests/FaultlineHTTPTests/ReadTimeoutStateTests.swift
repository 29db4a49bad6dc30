@testable import FaultlineHTTP
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Testing

/// The read deadline's decisions, with the time given (the end-to-end tests run it on real sockets).
@Suite struct ReadTimeoutStateTests {
    let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
    let timeout = TimeAmount.seconds(1)
    var head: HTTPRequestPart { .head(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/")) }

    @Test func anIdleConnectionClosesSilentlyAfterTheTimeout() {
        let state = ReadTimeoutState(now: t0)
        #expect(state.deadlinePassed(now: t0 + .milliseconds(500), timeout: timeout) == .wait(until: t0 + timeout))
        #expect(state.deadlinePassed(now: t0 + timeout, timeout: timeout) == .close)
    }

    @Test func aHeadMustArriveWholeWithinTheTimeoutOfItsFirstByte() {
        var state = ReadTimeoutState(now: t0)
        state.bytesArrived(now: t0 + .milliseconds(100))
        state.bytesArrived(now: t0 + .milliseconds(900))  // trickling does not move the deadline
        #expect(state.deadlinePassed(now: t0 + .milliseconds(1100), timeout: timeout) == .answerTimeoutAndClose)
    }

    @Test func aStalledBodyIsAnswered408ButTheServersTurnHasNoDeadline() {
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        state.read(.body(ByteBuffer(string: "x")), now: t0 + .milliseconds(800))
        #expect(state.deadlinePassed(now: t0 + .milliseconds(1000), timeout: timeout) == .wait(until: t0 + .milliseconds(1800)))
        #expect(state.deadlinePassed(now: t0 + .milliseconds(1800), timeout: timeout) == .answerTimeoutAndClose)
        state.read(.end(nil), now: t0 + .milliseconds(1900))
        // The request is read: however long the answer takes, the client is not timed out.
        #expect(state.deadlinePassed(now: t0 + .seconds(60), timeout: timeout) == .wait(until: t0 + .seconds(61)))
        state.wrote(.head(HTTPResponse(status: .ok)), now: t0 + .seconds(61))
        state.wrote(.end(nil), now: t0 + .seconds(61))
        #expect(state.deadlinePassed(now: t0 + .seconds(62), timeout: timeout) == .close)
    }

    @Test func anAnswerStartedBeforeTheBodyEndedIsNotFollowedBy408() {
        var state = ReadTimeoutState(now: t0)
        state.read(head, now: t0)
        state.wrote(.head(HTTPResponse(status: .contentTooLarge)), now: t0)
        #expect(state.deadlinePassed(now: t0 + timeout, timeout: timeout) == .close)
        state.wrote(.end(nil), now: t0)
        state.closingSince = t0
        state.read(.body(ByteBuffer(string: "more")), now: t0 + .milliseconds(900))  // draining does not keep it open
        #expect(state.deadlinePassed(now: t0 + timeout, timeout: timeout) == .close)
    }
}
