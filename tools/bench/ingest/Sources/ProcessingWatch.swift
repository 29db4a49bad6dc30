import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

/// End-to-end processing under load: how fast reports go from the first request to grouped (stored →
/// symbolicated → grouped → counted), the backlog when the load ends and how long it takes to drain.
///
/// It reads the server's own counters from `/metrics` (`faultline_reports_accepted_total`, counted at commit,
/// and `faultline_reports_grouped_total`, counted when the worker's transaction committed), every 20 ms on a
/// connection of its own, so it needs nothing but the server: the same figures for any client (the Swift
/// client or wrk).
final class ProcessingWatch: Sendable {
    struct Counters: Sendable {
        var accepted: Int
        var grouped: Int
    }

    /// One poll: seconds since the watch's origin and the counters minus the baseline.
    struct Sample: Sendable {
        var seconds: Double
        var accepted: Int
        var grouped: Int
        var backlog: Int { accepted - grouped }
    }

    let client: HTTPClient
    let endpoint: String
    let origin = ContinuousClock.now
    let baseline: Mutex<Counters?> = Mutex(nil)
    let samples = Mutex<[Sample]>([])

    init(url: String) {
        var config = HTTPClient.Configuration()
        config.decompression = .disabled
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
        endpoint = url + "/metrics"
    }

    func shutdown() async throws { try await client.shutdown() }

    /// The server's counters now.
    func counters() async throws -> Counters {
        let response = try await client.execute(HTTPClientRequest(url: endpoint), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        var accepted = 0
        var grouped = 0
        for line in String(buffer: body).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, let value = Double(parts[1]) else { continue }
            // Counters without labels: the name, a space, the value.
            if parts[0] == "faultline_reports_accepted_total" { accepted = Int(value) }
            if parts[0] == "faultline_reports_grouped_total" { grouped = Int(value) }
        }
        return Counters(accepted: accepted, grouped: grouped)
    }

    var now: Double { (ContinuousClock.now - origin).milliseconds / 1000 }

    /// Waits until the worker has grouped everything accepted so far (the previous load's backlog), then takes
    /// the baseline every later figure is counted from.
    func settle(timeout: Double = 600) async throws {
        let deadline = now + timeout
        var last = try await counters()
        while last.grouped < last.accepted && now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            last = try await counters()
        }
        baseline.withLock { $0 = last }
    }

    /// One sample, relative to the baseline.
    @discardableResult
    func sample() async throws -> Sample {
        let c = try await counters()
        let base = baseline.withLock { $0 } ?? Counters(accepted: 0, grouped: 0)
        let s = Sample(seconds: now, accepted: c.accepted - base.accepted, grouped: c.grouped - base.grouped)
        samples.withLock { $0.append(s) }
        return s
    }

    /// Samples every 20 ms until cancelled.
    func poll() async {
        while !Task.isCancelled {
            _ = try? await sample()
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Samples until `expected` reports (or, when nil, everything accepted) are grouped; returns the time of
    /// the first sample that saw it.
    func drain(expected: Int?, timeout: Double = 600) async throws -> Double? {
        let deadline = now + timeout
        while now < deadline {
            let s = try await sample()
            if s.grouped >= (expected ?? s.accepted) && s.accepted > 0 { return s.seconds }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// The figures, given when the load started and ended (seconds since `origin`) and when the last report was
    /// seen grouped.
    func summary(loadStarted: Double, loadEnded: Double, drained: Double?) -> Summary {
        let all = samples.withLock { $0 }
        // The backlog at the end of the load: the first sample taken at or after it.
        let atEnd = all.first { $0.seconds >= loadEnded } ?? all.last
        let last = all.last
        let peak = all.filter { $0.seconds <= loadEnded }.map(\.backlog).max() ?? 0
        return Summary(
            accepted: last?.accepted ?? 0, grouped: last?.grouped ?? 0, loadSeconds: loadEnded - loadStarted,
            processedSeconds: drained.map { $0 - loadStarted }, backlogAtEnd: atEnd?.backlog ?? 0, peakBacklog: peak,
            drainSeconds: drained.map { max(0, $0 - loadEnded) })
    }

    struct Summary {
        var accepted: Int
        var grouped: Int
        var loadSeconds: Double
        var processedSeconds: Double?
        var backlogAtEnd: Int
        var peakBacklog: Int
        var drainSeconds: Double?

        var lines: [String] {
            guard let processedSeconds, let drainSeconds else {
                return [
                    "processing: NOT drained: \(grouped) of \(accepted) reports grouped (backlog at the end of the load: \(backlogAtEnd))"
                ]
            }
            return [
                String(
                    format:
                        "processing: %d reports grouped %.2f s after the first request: %.0f reports/s end to end (ingest: %.0f/s over %.2f s)",
                    grouped, processedSeconds, Double(grouped) / max(processedSeconds, 0.001),
                    Double(accepted) / max(loadSeconds, 0.001), loadSeconds),
                String(
                    format: "backlog: %d reports when the load ended (peak %d), drained %.2f s after it", backlogAtEnd,
                    peakBacklog, drainSeconds),
            ]
        }

        var json: [String: Double] {
            [
                "processed_reports": Double(grouped), "processed_seconds": processedSeconds ?? -1,
                "processed_per_second": processedSeconds.map { Double(grouped) / max($0, 0.001) } ?? -1,
                "backlog_at_end": Double(backlogAtEnd), "peak_backlog": Double(peakBacklog),
                "drain_seconds": drainSeconds ?? -1,
            ]
        }
    }

    /// `--watch`: for a load this process does not send (wrk). Settles, waits for the first accepted report,
    /// takes the load's end as the last time the accepted count grew (once it stood still for `quiet` seconds),
    /// and waits for the backlog to drain.
    func watchExternalLoad(quiet: Double = 3.0, timeout: Double = 600) async throws -> Summary {
        try await settle()
        let deadline = now + timeout
        var previous = try await sample()
        // The load starts: the first sample with more accepted; it started at most one poll earlier.
        var started: Double?
        while started == nil && now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            let s = try await sample()
            if s.accepted > previous.accepted { started = previous.seconds }
            previous = s
        }
        guard let started else { throw WatchTimeout() }
        var lastGrowth = previous.seconds
        var lastAccepted = previous.accepted
        while now - lastGrowth < quiet && now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            let s = try await sample()
            if s.accepted > lastAccepted {
                lastGrowth = s.seconds
                lastAccepted = s.accepted
            }
        }
        let drained = try await drain(expected: nil)
        return summary(loadStarted: started, loadEnded: lastGrowth, drained: drained)
    }

    struct WatchTimeout: Error {}
}
