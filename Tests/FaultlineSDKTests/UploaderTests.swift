import Foundation
import Synchronization
import TestSupport
import Testing

@testable import FaultlineSDK

/// A clock whose sleeps return at once and move time forward: backoff can be checked exactly.
final class ManualClock: UploaderClock {
    private let state: Mutex<(now: ContinuousClock.Instant, sleeps: [Duration])>
    let start: ContinuousClock.Instant
    let unixStart: Double

    init(unixStart: Double = 1_795_410_981) {
        let start = ContinuousClock.now
        self.start = start
        self.unixStart = unixStart
        state = Mutex((start, []))
    }

    var now: ContinuousClock.Instant { state.withLock { $0.now } }
    var unixTime: Double { unixStart + start.duration(to: now).seconds }
    var sleeps: [Double] { state.withLock { $0.sleeps.map(\.seconds) } }

    func sleep(until instant: ContinuousClock.Instant) async throws {
        try Task.checkCancellation()
        state.withLock { s in
            s.sleeps.append(s.now.duration(to: instant))
            if instant > s.now { s.now = instant }
        }
    }
}

/// Answers from a script, one per request, and records the requests.
final class ScriptedTransport: HTTPTransport {
    typealias Script = @Sendable (Request) throws -> HTTPAnswer
    struct Request {
        var url: String
        var headers: [(String, String)]
        var body: [UInt8]
        var timeout: Double
        var json: String { String(decoding: Gzip.decompress(body) ?? [], as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    }

    private let state: Mutex<(script: [Script], requests: [Request])>
    /// Used once the script is used up.
    let fallback: Script

    init(
        _ script: [Script],
        fallback: @escaping Script = { _ in HTTPAnswer(status: 202, headers: [:], body: []) }
    ) {
        state = Mutex((script, []))
        self.fallback = fallback
    }

    var requests: [Request] { state.withLock { $0.requests } }

    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Double) async throws -> HTTPAnswer {
        let request = Request(url: url, headers: headers, body: body, timeout: timeout)
        let next = state.withLock { s -> (Script)? in
            s.requests.append(request)
            return s.script.isEmpty ? nil : s.script.removeFirst()
        }
        return try (next ?? fallback)(request)
    }
}

func answer(_ status: Int, _ headers: [String: String] = [:], _ body: String = "") -> ScriptedTransport.Script {
    { _ in HTTPAnswer(status: status, headers: headers, body: Array(body.utf8)) }
}

let connectionRefused: ScriptedTransport.Script = { _ in throw SDKError(.transport, "connection refused") }

final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var sink: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
}

@Suite struct UploaderTests {
    let dsn = try! DSN("http://0123456789abcdef0123456789abcdef@127.0.0.1:9/prefix/3")

    func id(_ n: Int) -> String { String(format: "%032x", n) }

    func setUp(_ script: [ScriptedTransport.Script], random: Double = 0.5)
        throws -> (TempFolder, DeliveryQueue, ScriptedTransport, ManualClock, LogLines, Uploader)
    {
        let folder = try TempFolder("sdk-uploader")
        let queue = try DeliveryQueue(directory: folder.path)
        let transport = ScriptedTransport(script)
        let clock = ManualClock()
        let log = LogLines()
        let uploader = Uploader(
            dsn: dsn, queue: queue, transport: transport, clock: clock, policy: RetryPolicy(random: { random }),
            log: log.sink)
        return (folder, queue, transport, clock, log, uploader)
    }

    @Test func sendsOldestFirstToEachRouteWithTheHeaders() async throws {
        let (folder, queue, transport, clock, log, uploader) = try setUp([
            answer(202, [:], #"{"applied":1,"unchanged":0}"#),
            answer(202, [:], #"{"accepted":["\#(id(2))"],"duplicates":[],"rejected":[]}"#),
            // A resend whose first answer was lost: the server lists it as a duplicate. Success all the same.
            answer(202, [:], #"{"accepted":["\#(id(3))"],"duplicates":["\#(id(3))"],"rejected":[]}"#),
        ])
        defer { withExtendedLifetime(folder) {} }  // the folder lives as long as the test
        try queue.enqueue(kind: .session, id: id(1), json: Array(#"{"s":1}"#.utf8))
        try queue.enqueue(kind: .crash, id: id(2), json: Array(#"{"r":2}"#.utf8))
        try queue.enqueue(kind: .nonfatal, id: id(3), json: Array(#"{"r":3}"#.utf8))
        let empty = await uploader.drain(deadline: clock.now + .seconds(60))
        #expect(empty)
        #expect(queue.pending().isEmpty)
        let sent = transport.requests
        #expect(
            sent.map(\.url) == [
                "http://127.0.0.1:9/prefix/api/v1/sessions", "http://127.0.0.1:9/prefix/api/v1/reports",
                "http://127.0.0.1:9/prefix/api/v1/reports",
            ])
        #expect(sent.map(\.json) == [#"{"s":1}"#, #"{"r":2}"#, #"{"r":3}"#])
        for request in sent {
            #expect(request.header("Authorization") == "Bearer 0123456789abcdef0123456789abcdef")
            #expect(request.header("Content-Encoding") == "gzip")
            #expect(request.header("Content-Type") == "application/json")
            #expect(request.header("User-Agent")?.hasPrefix("faultline-swift/") == true)
            #expect(request.timeout > 0 && request.timeout <= 30)
        }
        #expect(clock.sleeps.isEmpty)
        #expect(log.all.isEmpty)
    }

    @Test func networkErrorsBackOffExponentiallyThenSucceed() async throws {
        let (folder, queue, transport, clock, _, uploader) = try setUp([
            connectionRefused, connectionRefused, answer(503), answer(202),
        ])
        defer { withExtendedLifetime(folder) {} }  // the folder lives as long as the test
        try queue.enqueue(kind: .crash, id: id(1), json: Array("{}".utf8))
        let empty = await uploader.drain(deadline: clock.now + .seconds(600))
        #expect(empty)
        #expect(transport.requests.count == 4)
        // Equal jitter with the random source at 0.5: 3/4 of 1, 2, 4 seconds.
        #expect(clock.sleeps == [0.75, 1.5, 3.0])
    }

    @Test func backoffIsCappedAndJittered() {
        let low = RetryPolicy(random: { 0 })
        let high = RetryPolicy(random: { 0.999999 })
        #expect(low.delay(afterFailures: 1) == 0.5)
        #expect(low.delay(afterFailures: 4) == 4)
        #expect(low.delay(afterFailures: 30) == 150)
        #expect(high.delay(afterFailures: 30) <= 300)
        #expect(high.delay(afterFailures: 30) > 299)
        #expect(high.delay(afterFailures: Int.max) <= 300)
        #expect(RetryPolicy(random: { .nan }).delay(afterFailures: 2) == 1.5)
    }

    @Test func retryAfterSetsTheNextTry() async throws {
        let (folder, queue, transport, clock, _, uploader) = try setUp([
            answer(503, ["retry-after": "7"]),
            answer(429, ["retry-after": "Sun, 23 Nov 2026 05:16:51 GMT"]),  // 30 s after the clock's start (+7)
            answer(202),
        ])
        defer { withExtendedLifetime(folder) {} }  // the folder lives as long as the test
        try queue.enqueue(kind: .crash, id: id(1), json: Array("{}".utf8))
        let empty = await uploader.drain(deadline: clock.now + .seconds(600))
        #expect(empty)
        #expect(transport.requests.count == 3)
        #expect(clock.sleeps == [7, 23])
    }

    @Test func retryAfterZeroDoesNotHammerTheServer() async throws {
        let (folder, queue, transport, clock, _, uploader) = try setUp([
            answer(503, ["retry-after": "0"]), answer(503, ["retry-after": "0"]),
            answer(429, ["retry-after": "0"]), answer(429, [:]), answer(429, [:]),
            answer(202),
        ])
        defer { withExtendedLifetime(folder) {} }
        try queue.enqueue(kind: .crash, id: id(1), json: Array("{}".utf8))
        #expect(await uploader.drain(deadline: clock.now + .seconds(600)))
        #expect(transport.requests.count == 6)
        // 503s back off as without Retry-After; a 429's Retry-After is at least a second; 429s without any
        // header back off further.
        #expect(clock.sleeps == [0.75, 1.5, 1, 3, 6])
    }

    @Test func aRateLimitHoldsBackReportsButNotSessions() async throws {
        let (folder, queue, transport, clock, _, uploader) = try setUp([
            answer(429, ["retry-after": "10"]),
            answer(202),
            answer(202),
        ])
        defer { withExtendedLifetime(folder) {} }  // the folder lives as long as the test
        try queue.enqueue(kind: .crash, id: id(1), json: Array(#"{"r":1}"#.utf8))
        try queue.enqueue(kind: .session, id: id(2), json: Array(#"{"s":2}"#.utf8))
        let empty = await uploader.drain(deadline: clock.now + .seconds(600))
        #expect(empty)
        #expect(transport.requests.map(\.json) == [#"{"r":1}"#, #"{"s":2}"#, #"{"r":1}"#])
        #expect(clock.sleeps == [10])
    }

    @Test func sentryRateLimitsHeaderIsHonored() async throws {
        let (folder, queue, transport, clock, _, uploader) = try setUp([
            answer(429, ["x-sentry-rate-limits": "42:error;transaction:organization:quota, 5:session:key"]),
            answer(202), answer(202),
        ])
        defer { withExtendedLifetime(folder) {} }  // the folder lives as long as the test
        try queue.enqueue(kind: .crash, id: id(1), json: Array(#"{"r":1}"#.utf8))
        try queue.enqueue(kind: .session, id: id(2), json: Array(#"{"s":2}"#.utf8))
        let empty = await uploader.drain(deadline: clock.now + .seconds(600))
        #expect(empty)
        // Sessions wait 5 s, reports 42 s.
        #expect(transport.requests.map(\.json) == [#"{"r":1}"#, #"{"s":2}"#, #"{"r":1}"#])
        #expect(clock.sleeps == [5, 37])
    }

    @Test func aRefusedItemIsDroppedCountedLoggedAndDoesNotBlockTheRest() async throws {
        let (folder, queue, transport, clock, log, uploader) = try setUp([
            answer(
                400, [:], #"{"error":"invalid_field","field":"kind","message":"must be \"crash\" or \"nonfatal\""}"#),
            answer(202),
        ])
        defer { withExtendedLifetime(folder) {} }  // the folder lives as long as the test
        try queue.enqueue(kind: .nonfatal, id: id(1), json: Array(#"{"bad":1}"#.utf8))
        try queue.enqueue(kind: .crash, id: id(2), json: Array(#"{"good":2}"#.utf8))
        let empty = await uploader.drain(deadline: clock.now + .seconds(60))
        #expect(empty)
        #expect(transport.requests.count == 2)
        #expect(queue.rejected() == 1)
        #expect(queue.dropped() == 0)
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains("400") == true && log.all.first?.contains(id(1)) == true)
        #expect(log.all.first?.contains("invalid_field") == true)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func aRefusedKeyKeepsEverythingAndRetriesRarely() async throws {
        // Given a server that refuses the key, then (a DSN fixed, a key restored) takes the reports.
        let (folder, queue, transport, clock, log, uploader) = try setUp([
            answer(401, [:], #"{"error":"unauthorized"}"#),
            answer(202),
            answer(202),
        ])
        defer { withExtendedLifetime(folder) {} }
        try queue.enqueue(kind: .crash, id: id(1), json: Array(#"{"one":1}"#.utf8))
        try queue.enqueue(kind: .nonfatal, id: id(2), json: Array(#"{"two":2}"#.utf8))
        // Within a minute nothing more is tried and nothing is dropped.
        let emptyEarly = await uploader.drain(deadline: clock.now + .seconds(60))
        #expect(!emptyEarly)
        #expect(transport.requests.count == 1)
        #expect(queue.pending().count == 2)
        #expect(queue.rejected() == 0)
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains("401") == true)
        // After the longest backoff both go, oldest first.
        let empty = await uploader.drain(deadline: clock.now + .seconds(600))
        #expect(empty)
        #expect(transport.requests.count == 3)
        #expect(queue.pending().isEmpty)
    }

    @Test func drainStopsAtTheDeadlineAndKeepsTheItem() async throws {
        let folder = try TempFolder("sdk-uploader")
        let queue = try DeliveryQueue(directory: folder.path)
        let clock = ManualClock()
        let failing = ScriptedTransport([], fallback: { _ in HTTPAnswer(status: 500, headers: [:], body: []) })
        let up = Uploader(
            dsn: dsn, queue: queue, transport: failing, clock: clock, policy: RetryPolicy(random: { 0.5 }))
        try queue.enqueue(kind: .crash, id: id(1), json: Array("{}".utf8))
        let deadline = clock.now + .seconds(20)
        let empty = await up.drain(deadline: deadline)
        #expect(!empty)
        #expect(queue.pending().count == 1)
        // Tries at 0, 0.75, 2.25, 5.25, 11.25; the next (at 23.25) is past the deadline.
        #expect(failing.requests.count == 5)
        #expect(clock.now <= deadline)
        #expect(failing.requests.allSatisfy { $0.timeout <= 20 })
    }

    @Test func anUploaderSendsOnlyItsKinds() async throws {
        let (folder, queue, transport, clock, _, _) = try setUp([])
        defer { withExtendedLifetime(folder) {} }
        let nonFatalsOnly = Uploader(dsn: dsn, queue: queue, transport: transport, clock: clock, kinds: [.nonfatal])
        try queue.enqueue(kind: .crash, id: id(1), json: Array("{}".utf8))
        try queue.enqueue(kind: .nonfatal, id: id(2), json: Array("{}".utf8))
        try queue.enqueue(kind: .session, id: id(3), json: Array("{}".utf8))
        #expect(await nonFatalsOnly.drain(deadline: clock.now + .seconds(5)))
        #expect(transport.requests.count == 1)
        #expect(queue.pending().map(\.kind) == [.crash, .session])
    }

    /// A transport that holds each request until released, to make two callers overlap.
    final class GatedTransport: HTTPTransport {
        let state = Mutex<(requests: [String], waiters: [CheckedContinuation<Void, Never>])>(([], []))
        var requests: [String] { state.withLock { $0.requests } }
        func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Double) async throws -> HTTPAnswer {
            await withCheckedContinuation { c in
                state.withLock { s in
                    s.requests.append(String(decoding: Gzip.decompress(body) ?? [], as: UTF8.self))
                    s.waiters.append(c)
                }
            }
            return HTTPAnswer(status: 202, headers: [:], body: [])
        }
        func release() {
            for w in state.withLock({ s in
                defer { s.waiters = [] }; return s.waiters
            }) { w.resume() }
        }
    }

    @Test func overlappingDrainsNeverSendAnItemTwice() async throws {
        let folder = try TempFolder("sdk-uploader")
        let queue = try DeliveryQueue(directory: folder.path)
        try queue.enqueue(kind: .crash, id: id(1), json: Array(#"{"n":1}"#.utf8))
        try queue.enqueue(kind: .crash, id: id(2), json: Array(#"{"n":2}"#.utf8))
        let transport = GatedTransport()
        let uploader = Uploader(dsn: dsn, queue: queue, transport: transport)
        let first = Task { await uploader.drain(deadline: .now + .seconds(60)) }
        let second = Task { await uploader.drain(deadline: .now + .seconds(60)) }
        // Both callers are in: the two items are out, one each, before any answer.
        for _ in 0..<6000 where transport.requests.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(Set(transport.requests) == [#"{"n":1}"#, #"{"n":2}"#])
        transport.release()
        #expect(await first.value)
        #expect(await second.value)
        #expect(transport.requests.count == 2)
        #expect(queue.pending().isEmpty)
    }

    @Test func unreadableItemsAreDroppedWithoutARequest() async throws {
        let (folder, queue, transport, clock, _, uploader) = try setUp([])
        _ = try folder.write("0000000000000001-crash-\(id(1)).gz", "not gzip")
        try queue.enqueue(kind: .crash, id: id(2), json: Array("{}".utf8))
        let empty = await uploader.drain(deadline: clock.now + .seconds(60))
        #expect(empty)
        #expect(transport.requests.count == 1)
        #expect(queue.rejected() == 1)
    }

    @Test func runSendsWhatIsNotifiedAndStopsWhenCancelled() async throws {
        let folder = try TempFolder("sdk-uploader")
        let queue = try DeliveryQueue(directory: folder.path)
        let transport = ScriptedTransport([])
        let uploader = Uploader(dsn: dsn, queue: queue, transport: transport)
        let task = Task { await uploader.run() }
        for n in 1...3 {
            try queue.enqueue(kind: .nonfatal, id: id(n), json: Array("{\"n\":\(n)}".utf8))
            uploader.notify()
            // Bounded wait for the background sender (not a timing assertion: it fails only if nothing is sent).
            for _ in 0..<3000 where transport.requests.count < n { try await Task.sleep(for: .milliseconds(10)) }
            #expect(transport.requests.count == n)
        }
        #expect(queue.pending().isEmpty)
        task.cancel()
        await task.value
    }

    @Test(arguments: [
        ("120", 120.0),
        (" 0 ", 0),
        ("Sun, 23 Nov 2026 05:16:31 GMT", 10),
        ("Sunday, 23-Nov-26 05:16:31 GMT", 10),
        ("Sun Nov 23 05:16:31 2026", 10),
        ("Sun, 23 Nov 2026 05:00:00 GMT", 0),
    ])
    func retryAfterForms(_ text: String, _ seconds: Double) {
        #expect(RetryPolicy.parseRetryAfter(text, now: 1_795_410_981) == seconds)
    }

    @Test(arguments: [
        "", "soon", "-5", "1.5", "Sun, 32 Nov 2026 05:16:31 GMT", "Sun, 23 Nov 2026 25:16:31 GMT",
        String(repeating: "9", count: 100),
    ])
    func retryAfterGarbage(_ text: String) {
        #expect(RetryPolicy.parseRetryAfter(text, now: 1_795_410_981) == nil)
    }

    @Test func rateLimitHeaderForms() {
        let parsed = RetryPolicy.parseRateLimits(
            "60::organization, 30:session:key, 10:transaction:org, x:error, 5:error;default:org:reason:ns")
        #expect(parsed.count == 3)
        #expect(parsed[0].0 == 60 && parsed[0].1 == [.reports, .sessions])
        #expect(parsed[1].0 == 30 && parsed[1].1 == [.sessions])
        #expect(parsed[2].0 == 5 && parsed[2].1 == [.reports])
        #expect(RetryPolicy.parseRateLimits(String(repeating: ":,", count: 10_000)).isEmpty)
    }
}
