import FaultlineCore
import Formats
import Foundation
import Testing

@Suite struct SentrySessionsTests {
    typealias F = SentryFixtures
    let limits = IngestLimits()

    func session(_ json: String) throws -> SessionUpdate {
        let bytes = Array(json.utf8)
        return try SentrySessions.session(bytes, range: 0..<bytes.count, limits: limits)
    }

    func aggregates(_ json: String, seed: String = "seed", max: Int = SentrySessions.maxSynthesizedPerItem) throws
        -> [SessionUpdate]
    {
        let bytes = Array(json.utf8)
        return try SentrySessions.aggregates(
            bytes, range: 0..<bytes.count, seed: seed, limits: limits, maxSessions: max)
    }

    @Test func pythonApplicationSession() throws {
        let update = try session(F.pythonSession)
        #expect(
            update
                == SessionUpdate(
                    sessionID: try #require(SessionID("4faa8588-5e83-4798-b470-e562a7baaa05")), distinctID: "user-2",
                    release: "1.4.0", environment: "production",
                    started: try #require(Timestamps.parseISO8601("2026-11-22T05:08:09.159101Z")), status: .crashed,
                    errors: 1))
    }

    @Test func nativeSessionUpdatesAndErrored() throws {
        // sentry-native: several updates, `duration`, no timestamp; unix `started`; `seq` when Relay-style.
        let running = try session(
            #"{"init":true,"sid":"S-1","status":"ok","errors":0,"started":1795324000.25,"duration":1.5,"seq":3,"attrs":{"release":"n@1","environment":"dev"}}"#
        )
        #expect(running.sessionID.rawValue == "s-1")
        #expect(running.status == .ok && running.duration == 1.5 && running.seq == 3)
        #expect(running.started == Date(timeIntervalSince1970: 1_795_324_000.25))
        #expect(running.distinctID == nil)
        // No status means ok; `errored` is a running session with at least one error.
        #expect(try session(#"{"sid":"a","started":0,"attrs":{"release":"r"}}"#).status == .ok)
        let errored = try session(#"{"sid":"a","started":0,"status":"errored","attrs":{"release":"r"}}"#)
        #expect(errored.status == .ok && errored.errors == 1)
        #expect(
            try session(#"{"sid":"a","started":0,"status":"abnormal","did":7,"attrs":{"release":"r"}}"#).distinctID
                == "7")
    }

    @Test(arguments: [
        (#"{"started":0,"attrs":{"release":"r"}}"#, "sid"),
        (#"{"sid":"has space","started":0,"attrs":{"release":"r"}}"#, "sid"),
        (#"{"sid":"a","attrs":{"release":"r"}}"#, "started"),
        (#"{"sid":"a","started":0}"#, "attrs.release"),
        (#"{"sid":"a","started":0,"attrs":{"release":""}}"#, "attrs.release"),
        (#"{"sid":"a","started":0,"status":"paused","attrs":{"release":"r"}}"#, "status"),
        (#"{"sid":"a","started":0,"errors":-2,"attrs":{"release":"r"}}"#, "errors"),
        (#"{"sid":"a","started":0,"duration":-1,"attrs":{"release":"r"}}"#, "duration"),
        (#"{"sid":"a","started":0,"init":"yes","attrs":{"release":"r"}}"#, "init"),
        (#"{"sid":"a","started":"soon","attrs":{"release":"r"}}"#, "started"),
    ])
    func invalidSessionsNameTheField(_ json: String, _ field: String) {
        let error = #expect(throws: FormatError.self) { try session(json) }
        #expect(error?.field == field, "\(json)")
    }

    @Test func aggregatesBecomeOneCountedUpdatePerStatus() throws {
        let updates = try aggregates(F.pythonAggregates)
        // 3 exited + 2 errored (exited with an error) in the first minute, 1 crashed in the second: three counted
        // updates (issue #39: one row per status, not one per session)
        #expect(updates.count == 3)
        #expect(updates.sessionCount == 6)
        #expect(updates.allSatisfy { $0.release == "2.0.0" && $0.environment == "production" })
        let minute = try #require(Timestamps.parseISO8601("2026-11-22T05:14:00Z"))
        let first = updates.filter { $0.started == minute }
        #expect(first.filter { $0.status == .exited && $0.errors == 0 }.map(\.count) == [3])
        #expect(first.filter { $0.status == .exited && $0.errors == 1 }.map(\.count) == [2])
        #expect(first.allSatisfy { $0.distinctID == nil })
        let crashed = try #require(updates.last)
        #expect(crashed.status == .crashed && crashed.distinctID == "user-7" && crashed.count == 1)
        #expect(crashed.started == Date(timeIntervalSince1970: 1_795_325_700))

        // Ids: valid, distinct, UUID-shaped; the same for the same seed, different for another seed
        let ids = updates.map(\.sessionID.rawValue)
        #expect(Set(ids).count == 3)
        #expect(ids.allSatisfy { $0.count == 36 && Array($0)[14] == "8" })
        #expect(try aggregates(F.pythonAggregates).map(\.sessionID) == updates.map(\.sessionID))
        #expect(
            Set(try aggregates(F.pythonAggregates, seed: "other").map(\.sessionID)).isDisjoint(
                with: updates.map(\.sessionID)))
    }

    @Test func aggregateCountsAreCapped() throws {
        let json =
            #"{"attrs":{"release":"r"},"aggregates":[{"started":0,"exited":6000},{"started":60,"crashed":4001}]}"#
        let error = #expect(throws: FormatError.self) { try aggregates(json) }
        #expect(error?.code == .tooLarge)
        #expect(error?.field == "aggregates[1]")
        #expect(try aggregates(json, max: 10_001).sessionCount == 10_001)
        #expect(try aggregates(json, max: 10_001).count == 2)
        let huge = #"{"attrs":{"release":"r"},"aggregates":[{"started":0,"exited":1,"crashed":9223372036854775807}]}"#
        #expect(throws: FormatError.self) { try aggregates(huge) }
        #expect(try aggregates(#"{"attrs":{"release":"r"},"aggregates":[]}"#).isEmpty)
    }

    @Test(arguments: [
        (#"{"aggregates":[{"started":0,"exited":1}]}"#, "attrs.release"),
        (#"{"attrs":{"release":"r"},"aggregates":[{"exited":1}]}"#, "aggregates[0].started"),
        (#"{"attrs":{"release":"r"},"aggregates":[{"started":0,"exited":-1}]}"#, "aggregates[0].exited"),
        (#"{"attrs":{"release":"r"},"aggregates":[{"started":0,"crashed":"2"}]}"#, "aggregates[0].crashed"),
        (#"{"attrs":{"release":"r"},"aggregates":{"started":0}}"#, "aggregates"),
    ])
    func invalidAggregatesNameTheField(_ json: String, _ field: String) {
        let error = #expect(throws: FormatError.self) { try aggregates(json) }
        #expect(error?.field == field, "\(json)")
    }

    @Test func clientReports() throws {
        let bytes = Array(F.clientReport.utf8)
        let discarded = try SentryClientReports.discarded(bytes, range: 0..<bytes.count)
        #expect(discarded.map(\.reason) == ["ratelimit_backoff", "send_error", "filtered:before_send"])  // zero dropped
        let more = Array(
            #"{"rate_limited_events":[{"reason":"quota","category":"error","quantity":5}],"filtered_sampling_events":[{"reason":"rule","category":"transaction","quantity":1}],"future":[]}"#
                .utf8)
        #expect(
            try SentryClientReports.discarded(more, range: 0..<more.count) == [
                DiscardedEvents(reason: "rate_limited:quota", category: "error", quantity: 5),
                DiscardedEvents(reason: "filtered_sampling:rule", category: "transaction", quantity: 1),
            ])
        let bad = Array(#"{"discarded_events":[{"reason":"x","quantity":1}]}"#.utf8)
        let error = #expect(throws: FormatError.self) { try SentryClientReports.discarded(bad, range: 0..<bad.count) }
        #expect(error?.field == "discarded_events[0].category")
    }
}
