import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Sends what the ``DeliveryQueue`` holds: oldest first, each item to its route, retried with backoff.
///
/// A 2xx removes the item. A network error, 408, 5xx or 507 keeps it
/// and backs off (exponential, with jitter, capped), `Retry-After` (seconds or HTTP date) and
/// `X-Sentry-Rate-Limits` setting the earliest next try when the server sends them; a 429 does the same.
/// A 401/403 (the key is refused) keeps everything and tries again after the longest backoff. Other 4xx
/// answers mean the item can never be accepted: it is removed and counted. A minidump (``MinidumpUpload``) may
/// have a crash report with the same event id queued after it, its fallback: held back until the dump is
/// answered, removed when the dump is taken, sent when the dump is refused (a server without the endpoint). Reports carry their
/// event id, so a retry of a request whose answer was lost is a duplicate on the server, not a second event.
///
/// Waits are per route: a 429 (only reports are rate-limited) holds back reports while sessions go on; a
/// network error or a 5xx holds back both, since the server as a whole is not answering.
package actor Uploader {
    private let dsn: DSN
    private let queue: DeliveryQueue
    private let transport: any HTTPTransport
    private let clock: any UploaderClock
    private let policy: RetryPolicy
    private let log: @Sendable (String) -> Void
    private let signal = WakeSignal()
    private let kinds: Set<DeliveryQueue.Kind>

    /// The server refused the key once (logged once per uploader).
    private var keyRefused = false
    /// Consecutive failures (network error, 408, 5xx) since the last answer that was not one.
    private var failures = 0
    /// The earliest time each route may be tried again.
    private var notBefore: [Route: ContinuousClock.Instant] = [:]
    /// Items this uploader finished with but could not delete (a read-only folder): never sent twice in a row.
    private var finished: Set<String> = []
    /// Items a request is out for: a `drain` and `run` interleaving on this actor never send one twice at once.
    private var inFlight: Set<String> = []
    /// Event ids of minidumps the server took: their fallback crash reports are removed unsent, also one queued after
    /// the dump was answered (the launcher queues the fallback just after the dump, while this uploader already runs).
    private var takenDumps: Set<String> = []

    /// `POST {base}/api/v1/reports` or `…/sessions`; a minidump goes to Sentry's minidump endpoint and is held
    /// back with the reports.
    package enum Route: Sendable, Hashable {
        case reports, sessions
        package var path: String { self == .reports ? "/api/v1/reports" : "/api/v1/sessions" }
    }

    /// - Parameters:
    ///   - clock: the time the backoff and `Retry-After` are measured on (tests pass a manual one).
    ///   - policy: backoff bounds, request timeout and the jitter's random source.
    ///   - log: where the one line about a refused item goes (default: standard error).
    ///   - kinds: the items this uploader sends (default all); the others in the folder are left for another
    ///     process (an SDK under `faultline-run` may leave crashes and sessions to the launcher).
    package init(
        dsn: DSN, queue: DeliveryQueue, transport: any HTTPTransport,
        clock: any UploaderClock = SystemUploaderClock(), policy: RetryPolicy = RetryPolicy(),
        log: @escaping @Sendable (String) -> Void = Uploader.standardError,
        kinds: Set<DeliveryQueue.Kind> = Set(DeliveryQueue.Kind.allCases)
    ) {
        self.kinds = kinds
        self.dsn = dsn
        self.queue = queue
        self.transport = transport
        self.clock = clock
        self.policy = policy
        self.log = log
    }

    /// `faultline-swift/<version>`.
    package static let userAgent = "faultline-swift/\(FaultlineSDKVersion.current)"

    /// Sends until the queue is empty, or until `deadline`, whichever comes first; answers whether the queue
    /// is empty (of the kinds this uploader sends). Waits out backoff and `Retry-After` only while the deadline allows.
    package func drain(deadline: ContinuousClock.Instant) async -> Bool {
        while !Task.isCancelled {
            switch await step(deadline: deadline) {
            case .empty: return true
            case .sent: continue
            case .waitUntil(let instant):
                guard instant <= deadline else { return isEmpty() }
                do { try await clock.sleep(until: instant) } catch { return isEmpty() }
            }
        }
        return isEmpty()
    }

    /// ``drain(deadline:)`` for a thread that cannot `await` (the exit hook, the launcher after its child):
    /// blocks at most `timeout` seconds (plus one for the task to finish); answers whether the queue is empty.
    package nonisolated func drainBlocking(timeout: Double) -> Bool {
        guard timeout > 0 else { return false }
        let seconds = min(timeout, 3600)
        let done = DispatchSemaphore(value: 0)
        let emptied = Mutex(false)
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        Task.detached {
            let empty = await self.drain(deadline: deadline)
            emptied.withLock { $0 = empty }
            done.signal()
        }
        _ = done.wait(timeout: .now() + seconds + 1)
        return emptied.withLock { $0 }
    }

    /// Runs until the task is cancelled: drains, then sleeps until ``notify()`` or the next retry time.
    package func run() async {
        while !Task.isCancelled {
            switch await step(deadline: nil) {
            case .sent: continue
            case .empty: await signal.wait(until: nil, clock: clock)
            case .waitUntil(let instant): await signal.wait(until: instant, clock: clock)
            }
        }
    }

    /// Something was enqueued: wake ``run()``.
    package nonisolated func notify() { signal.fire() }

    /// The earliest next try of each route (for tests and diagnostics).
    package func retryTimes() -> [Route: ContinuousClock.Instant] { notBefore }

    // MARK: - One step

    enum Step { case empty, sent, waitUntil(ContinuousClock.Instant) }

    /// Whether nothing of this uploader's kinds is waiting.
    private func isEmpty() -> Bool {
        queue.pending().allSatisfy { !kinds.contains($0.kind) || finished.contains($0.path) }
    }

    /// Sends the oldest item whose route may be tried now; or says when one may be.
    private func step(deadline: ContinuousClock.Instant?) async -> Step {
        var items = queue.pending()
        for fallback in items where fallback.kind == .crash && takenDumps.contains(fallback.id) {
            queue.remove(fallback)
        }
        items.removeAll { $0.kind == .crash && takenDumps.contains($0.id) }
        finished.formIntersection(items.map(\.path))
        // A crash report kept as the fallback of a minidump (the same event id) waits until the dump is answered.
        let dumps = Set(items.filter { $0.kind == .minidump }.map(\.id))
        let waiting = items.filter {
            kinds.contains($0.kind) && !finished.contains($0.path) && !($0.kind == .crash && dumps.contains($0.id))
        }
        guard !waiting.isEmpty else { return .empty }
        let now = clock.now
        let free = waiting.filter { !inFlight.contains($0.path) }
        // Everything left is being sent by another call: look again shortly.
        guard !free.isEmpty else { return .waitUntil(now + .milliseconds(50)) }
        guard let item = free.first(where: { (notBefore[Self.route(of: $0)] ?? now) <= now }) else {
            let routes = Set(free.map(Self.route(of:)))
            let earliest = routes.compactMap { notBefore[$0] }.min() ?? now
            return .waitUntil(earliest)
        }
        var timeout = policy.requestTimeout
        if let deadline {
            let left = now.duration(to: deadline)
            guard left > .zero else { return .waitUntil(deadline + .seconds(1)) }
            timeout = min(timeout, max(0.2, left.seconds))
        }
        inFlight.insert(item.path)
        await send(item, timeout: timeout)
        inFlight.remove(item.path)
        return .sent
    }

    private static func route(of item: DeliveryQueue.Item) -> Route { item.kind == .session ? .sessions : .reports }

    private func send(_ item: DeliveryQueue.Item, timeout: Double) async {
        guard let body = queue.body(of: item) else {
            // Gone (another process sent it) or not a readable gzip file: either way never sendable.
            if fileExists(item.path) {
                queue.reject(item)
                log("faultline: dropped unreadable queue item \(item.path)")
            }
            finish(item)
            return
        }
        let route = Self.route(of: item)
        let isMinidump = item.kind == .minidump
        let headers = [
            ("Authorization", "Bearer \(dsn.key)"),
            ("Content-Type", isMinidump ? MinidumpUpload.contentType(eventID: item.id) : "application/json"),
            ("Content-Encoding", "gzip"),
            ("User-Agent", Self.userAgent),
        ]
        let url = isMinidump ? MinidumpUpload.url(dsn) : dsn.baseURL + route.path
        let answer: HTTPAnswer
        do {
            answer = try await transport.post(url: url, headers: headers, body: body, timeout: timeout)
        } catch {
            backOff(routes: [.reports, .sessions], retryAfter: nil)
            return
        }
        let now = clock.now
        let wall = clock.unixTime
        // Rate limits may come with any answer, a 2xx included.
        if let header = answer.headers["x-sentry-rate-limits"] {
            for (seconds, routes) in RetryPolicy.parseRateLimits(header) {
                for r in routes { hold(r, until: now + .seconds(min(seconds, policy.maxRetryAfter))) }
            }
        }
        let retryAfter = answer.headers["retry-after"].flatMap { RetryPolicy.parseRetryAfter($0, now: wall) }
        switch answer.status {
        case 200..<300:
            failures = 0
            queue.remove(item)
            if isMinidump {
                takenDumps.insert(item.id)
                for fallback in queue.pending() where fallback.kind == .crash && fallback.id == item.id {
                    queue.remove(fallback)
                }
            }
            finish(item)
        case 429:
            // Only this route is limited. A Retry-After under a second (or none at all, with no rate-limit
            // header either) would have the uploader hammer the limiter: at least a second, else the backoff.
            if let retryAfter {
                hold(route, until: now + .seconds(min(max(retryAfter, 1), policy.maxRetryAfter)))
            } else if answer.headers["x-sentry-rate-limits"] == nil {
                backOff(routes: [route], retryAfter: nil)
            }
        case 408, 500..<600:
            backOff(routes: [.reports, .sessions], retryAfter: retryAfter)
        case 401, 403:
            // A key the server does not take says nothing about the report: the DSN is wrong or the key was
            // replaced. Keep everything (the next run may have the right DSN) and try again rarely.
            if !keyRefused {
                log(
                    "faultline: the server refused the DSN's key (HTTP \(answer.status)); reports are kept and retried every \(Int(policy.maxDelay)) s; check the DSN"
                )
            }
            keyRefused = true
            for r in [Route.reports, .sessions] { hold(r, until: now + .seconds(policy.maxDelay)) }
        case 400..<500:
            failures = 0
            queue.reject(item)
            finish(item)
            // A refused minidump (a server without the endpoint answers 404 or 405): the crash report queued
            // beside it under the same event id goes instead, without the stack.
            let outcome = isMinidump ? "the crash is sent without its stack" : "it was dropped"
            log(
                "faultline: the server refused \(item.kind.rawValue) \(item.id) (HTTP \(answer.status)\(Self.errorSummary(answer.body))); \(outcome)"
            )
        default:
            // 1xx or a redirect URLSession did not follow: not an answer we can act on; try again later.
            backOff(routes: [.reports, .sessions], retryAfter: retryAfter)
        }
    }

    private func finish(_ item: DeliveryQueue.Item) {
        if fileExists(item.path) { finished.insert(item.path) }
    }

    /// Holds `routes` for the backoff of one more failure, or until `Retry-After` when that is later (it is the
    /// earliest next try the server allows; a `Retry-After: 0` does not make the uploader retry at once).
    private func backOff(routes: [Route], retryAfter: Double?) {
        failures = failures < 62 ? failures + 1 : failures
        let seconds = max(min(retryAfter ?? 0, policy.maxRetryAfter), policy.delay(afterFailures: failures))
        let until = clock.now + .seconds(seconds)
        for r in routes { hold(r, until: until) }
    }

    private func hold(_ route: Route, until: ContinuousClock.Instant) {
        if let current = notBefore[route], current >= until { return }
        notBefore[route] = until
    }

    private func fileExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// ` invalid_field at threads[0]: …`, from the server's JSON error body (bounded, best effort).
    static func errorSummary(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(512), as: UTF8.self)
        let flat = text.map { $0.isNewline ? " " : $0 }
        return flat.isEmpty ? "" : ": " + String(flat.prefix(300))
    }

    /// One line to standard error.
    package static let standardError: @Sendable (String) -> Void = { line in
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

/// The SDK's version, as it appears in `User-Agent`.
package enum FaultlineSDKVersion {
    package static let current = "0.1.0"
}

/// Backoff bounds and the parsing of the server's "not now" answers.
package struct RetryPolicy: Sendable {
    /// The first wait after a failure, seconds; doubled per further failure.
    package var baseDelay: Double = 1
    /// The longest wait between tries after failures (about five minutes).
    package var maxDelay: Double = 300
    /// The longest `Retry-After` / rate-limit wait honored; a larger one is cut to this.
    package var maxRetryAfter: Double = 3600
    /// Seconds one request may take.
    package var requestTimeout: Double = 30
    /// A number in [0, 1): the jitter's random source.
    package var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

    package init(
        baseDelay: Double = 1, maxDelay: Double = 300, maxRetryAfter: Double = 3600, requestTimeout: Double = 30,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.requestTimeout = requestTimeout
        self.random = random
    }

    /// Exponential with "equal jitter": half the capped exponential delay, plus a random part of the other half.
    package func delay(afterFailures n: Int) -> Double {
        let exponent = Double(max(0, min(n, 62) - 1))
        let full = min(maxDelay, baseDelay * pow(2, exponent))
        let r = random()
        let jitter = r.isFinite ? min(max(r, 0), 1) : 0.5
        return full / 2 + full / 2 * jitter
    }

    /// `Retry-After`: delta-seconds (`120`) or an HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`), as seconds from
    /// `now` (unix seconds); nil when it is neither. A date in the past is 0.
    package static func parseRetryAfter(_ value: String, now: Double) -> Double? {
        let text = value.trimmingASCIIWhitespace()
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard text.utf8.count <= 12, let seconds = Double(text) else { return Double(Int32.max) }
            return seconds
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, date - now)
    }

    /// `X-Sentry-Rate-Limits`: `seconds:categories:scope[:reason…], …`. An empty category list means every
    /// category; `error`, `default` and `crash` hold back reports, `session` sessions; others concern us not.
    package static func parseRateLimits(_ value: String) -> [(Double, Set<Uploader.Route>)] {
        var out: [(Double, Set<Uploader.Route>)] = []
        for quota in value.split(separator: ",").prefix(32) {
            let parts = quota.split(separator: ":", omittingEmptySubsequences: false)
            guard let first = parts.first else { continue }
            let secondsText = first.trimmingASCIIWhitespace()
            guard !secondsText.isEmpty, secondsText.utf8.count <= 12, let seconds = Double(secondsText),
                seconds.isFinite, seconds >= 0
            else { continue }
            let categories =
                parts.count > 1
                ? parts[1].split(separator: ";").map { $0.trimmingASCIIWhitespace().lowercased() }.filter {
                    !$0.isEmpty
                } : []
            var routes: Set<Uploader.Route> = []
            if categories.isEmpty {
                routes = [.reports, .sessions]
            } else {
                for c in categories {
                    if c == "error" || c == "default" || c == "crash" { routes.insert(.reports) }
                    if c == "session" { routes.insert(.sessions) }
                }
            }
            if !routes.isEmpty { out.append((seconds, routes)) }
        }
        return out
    }
}

extension Substring {
    func trimmingASCIIWhitespace() -> String { String(self).trimmingASCIIWhitespace() }
}

/// RFC 9110 HTTP-date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), and the obsolete RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms.
package enum HTTPDate {
    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Unix seconds, or nil.
    package static func parse(_ text: String) -> Double? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }).map { String($0) }
        var day: Int?
        var month: Int?
        var year: Int?
        var time: (Int, Int, Int)?
        for token in tokens.prefix(8) {
            if token.contains(":") {
                let p = token.split(separator: ":")
                guard p.count == 3, let h = Int(p[0]), let m = Int(p[1]), let s = Int(p[2]),
                    (0...23).contains(h), (0...59).contains(m), (0...60).contains(s)
                else { return nil }
                time = (h, m, s)
            } else if let i = months.firstIndex(of: token.lowercased()) {
                month = i + 1
            } else if token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), token.utf8.count <= 4, let n = Int(token) {
                if token.utf8.count == 4 {
                    year = n
                } else if day == nil {
                    day = n
                } else {
                    year = n < 70 ? 2000 + n : 1900 + n
                }
            }
        }
        guard let day, let month, let year, let time, (1...31).contains(day), (1970...9999).contains(year) else {
            return nil
        }
        return Double(CivilTime.days(year: year, month: month, day: day) * 86400 + time.0 * 3600 + time.1 * 60 + time.2)
    }
}

/// Calendar arithmetic without Foundation's calendars (pure, no locale).
enum CivilTime {
    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm); inputs are bounded by callers.
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }
}

/// The time the uploader waits on: monotonic instants for waits, wall-clock seconds for HTTP dates.
package protocol UploaderClock: Sendable {
    var now: ContinuousClock.Instant { get }
    /// Unix seconds (for `Retry-After: <HTTP-date>`).
    var unixTime: Double { get }
    func sleep(until instant: ContinuousClock.Instant) async throws
}

/// The real clocks.
package struct SystemUploaderClock: UploaderClock {
    package init() {}
    package var now: ContinuousClock.Instant { ContinuousClock.now }
    package var unixTime: Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
    package func sleep(until instant: ContinuousClock.Instant) async throws {
        try await ContinuousClock().sleep(until: instant)
    }
}

extension Duration {
    var seconds: Double {
        let (s, attos) = components
        return Double(s) + Double(attos) / 1e18
    }
}

/// Wakes ``Uploader/run()``: a `fire()` before the wait is remembered, so a notify is never lost.
final class WakeSignal: Sendable {
    private struct State {
        var fired = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func fire() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let w = s.waiter { s.waiter = nil; return w }
            s.fired = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns on `fire()`, at `until`, or when the task is cancelled.
    func wait(until: ContinuousClock.Instant?, clock: any UploaderClock) async {
        if state.withLock({ s in
            let f = s.fired; s.fired = false; return f
        }) {
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                        let resumeNow = self.state.withLock { s -> Bool in
                            if s.fired || Task.isCancelled { s.fired = false; return true }
                            s.waiter = c
                            return false
                        }
                        if resumeNow { c.resume() }
                    }
                } onCancel: {
                    self.fire()
                }
            }
            group.addTask {
                if let until {
                    try? await clock.sleep(until: until)
                } else {
                    // No retry time: only `fire()` or cancellation ends the wait.
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                }
            }
            await group.next()
            group.cancelAll()
        }
        // A cancelled waiter task fired the signal to get out; that is not a notify.
        state.withLock { s in s.fired = false }
    }
}
