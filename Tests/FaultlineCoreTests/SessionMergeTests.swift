import FaultlineCore
import Foundation
import Testing

@Suite struct SessionMergeTests {
    let id = SessionID("4faa8588-5e83-4798-b470-e562a7baaa05")!
    let started = Date(timeIntervalSince1970: 1_795_000_000)

    func update(_ status: SessionStatus, errors: Int = 0, seq: Int64? = nil, duration: Double? = nil) -> SessionUpdate {
        SessionUpdate(
            sessionID: id, distinctID: "user-1", release: "1.0", started: started, status: status,
            errors: errors, duration: duration, seq: seq)
    }

    @Test func aFirstUpdateCreatesTheSession() throws {
        let state = try #require(SessionState.merging(update(.ok), into: nil))
        #expect(state.status == .ok)
        #expect(state.distinctID == "user-1")
    }

    @Test func terminalStatesAreFinal() throws {
        let crashed = try #require(SessionState.merging(update(.crashed), into: nil))
        #expect(SessionState.merging(update(.exited), into: crashed) == nil)
        #expect(SessionState.merging(update(.ok, errors: 5), into: crashed) == nil)
    }

    @Test func aRetryChangesNothing() throws {
        let first = try #require(SessionState.merging(update(.ok, errors: 1, seq: 1), into: nil))
        #expect(SessionState.merging(update(.ok, errors: 1, seq: 1), into: first) == nil)
    }

    @Test func aStaleSequenceNumberIsIgnored() throws {
        let later = try #require(SessionState.merging(update(.ok, errors: 2, seq: 5), into: nil))
        #expect(SessionState.merging(update(.exited, seq: 3), into: later) == nil)
    }

    @Test func errorsNeverDecreaseAndErroredIsDerived() throws {
        let running = try #require(SessionState.merging(update(.ok, errors: 3, seq: 1), into: nil))
        let ended = try #require(SessionState.merging(update(.exited, errors: 1, seq: 2, duration: 12), into: running))
        #expect(ended.errors == 3)
        #expect(ended.status == .exited)
        #expect(ended.isErrored)
        #expect(ended.duration == 12)
        let crashed = try #require(SessionState.merging(update(.crashed, errors: 1, seq: 2), into: running))
        #expect(!crashed.isErrored)
    }
}
