import ArgumentParser
import AsyncHTTPClient
import CompressNIO
import Foundation
import NIOCore
import Synchronization

/// Load generator for `POST /api/v1/reports`: realistic gzip'd crash reports over N concurrent keep-alive
/// connections; prints reports/s and latency percentiles. Every report has its own event id, so every
/// one is a real insert (no duplicates).
@main
struct IngestBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest-bench", abstract: "Post realistic gzip'd crash reports to a Faultline server and measure.")

    @Option(help: "Server base URL.") var url = "http://127.0.0.1:8080"
    @Option(help: "A project's ingest key.") var key: String
    @Option(help: "Concurrent keep-alive connections.") var connections = 32
    @Option(help: "Requests to send (after warm-up).") var requests = 20_000
    @Option(help: "Reports per request (1 = one report per request, as a crash handler sends).") var batch = 1
    @Option(help: "Warm-up requests, not measured.") var warmup = 1_000
    @Option(help: "Seed for the generated reports.") var seed: UInt64 = 1
    @Option(
        help:
            "Crashed-thread stacks to choose from (each report picks one at random, so reports share at most this many issues, as real crashes do); 0: every report its own stack (about one issue per report)."
    )
    var issues = 0
    @Flag(help: "Print one JSON line instead of text.") var json = false
    @Option(
        help:
            "Write the generated request bodies to this file (4-byte big-endian length + gzip'd body, repeated) for wrk, and exit."
    )
    var emitBodies: String?
    @Flag(
        help:
            "Put personal data in every report (a password custom key, a card number in a breadcrumb) so the server's scrubbing rewrites each body."
    )
    var secrets = false
    @Flag(
        help:
            "Also measure processing end to end: wait for the backlog to drain before the load, then report the rate from the first request to the last report grouped, the backlog when the load ended and how long it took to drain (from the server's /metrics)."
    )
    var processing = false
    @Flag(
        help:
            "Send nothing: watch /metrics for a load another client sends (wrk) and report its processing figures (as --processing)."
    )
    var watch = false

    func run() async throws {
        if watch {
            let watcher = ProcessingWatch(url: url)
            let summary = try await watcher.watchExternalLoad()
            try await watcher.shutdown()
            try printProcessing(summary)
            return
        }
        let total = warmup + requests
        var rng = SplitMix(seed: seed)
        var bodies: [ByteBuffer] = []
        bodies.reserveCapacity(total)
        var compressed = 0
        var inflated = 0
        for r in 0..<total {
            let reports = (0..<batch).map {
                ReportGenerator.crash(index: r * batch + $0, run: seed, rng: &rng, secrets: secrets, issues: issues)
            }
            let text = batch == 1 ? reports[0] : "{\"reports\":[" + reports.joined(separator: ",") + "]}"
            var buffer = ByteBuffer(string: text)
            let gz = try buffer.compress(with: .gzip())
            if r >= warmup {
                compressed += gz.readableBytes
                inflated += text.utf8.count
            }
            bodies.append(gz)
        }

        if let emitBodies {
            var out = [UInt8]()
            for body in bodies.dropFirst(warmup) {
                let n = UInt32(body.readableBytes)
                out += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
                out += body.readableBytesView
            }
            try Data(out).write(to: URL(fileURLWithPath: emitBodies))
            print(
                String(
                    format: "wrote %d bodies, %.0f B gzip'd (%.0f B inflated) each on average", requests,
                    Double(compressed) / Double(max(requests, 1)), Double(inflated) / Double(max(requests, 1))))
            return
        }

        var config = HTTPClient.Configuration()
        config.connectionPool = .init(
            idleTimeout: .seconds(120), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        config.decompression = .disabled
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)

        let endpoint = url + "/api/v1/reports"
        let key = self.key
        let stats = Stats()
        let frozen = bodies
        let post: @Sendable (ByteBuffer) async -> Int = { body in
            var request = HTTPClientRequest(url: endpoint)
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "Content-Encoding", value: "gzip")
            request.body = .bytes(body)
            do {
                let response = try await client.execute(request, timeout: .seconds(60))
                _ = try await response.body.collect(upTo: 1 << 20)
                return Int(response.status.code)
            } catch {
                return -1
            }
        }

        // Warm-up: connections, caches, the server's first group commits.
        try await runWorkers(count: connections, range: 0..<warmup) { i in _ = await post(frozen[i]) }

        // Processing: start from an empty backlog, sample the server's counters while the load runs.
        let watcher = processing ? ProcessingWatch(url: url) : nil
        try await watcher?.settle()
        let poller = watcher.map { w in Task { await w.poll() } }
        let loadStarted = watcher?.now ?? 0

        let clock = ContinuousClock()
        let started = clock.now
        try await runWorkers(count: connections, range: warmup..<total) { i in
            let t0 = clock.now
            let status = await post(frozen[i])
            let ms = (clock.now - t0).milliseconds
            stats.latencies.withLock { $0.append(ms) }
            if status != 202 { stats.failures.withLock { $0[status, default: 0] += 1 } }
        }
        let elapsed = (clock.now - started).milliseconds / 1000
        let loadEnded = watcher?.now ?? 0
        try await client.shutdown()
        poller?.cancel()
        var processed: ProcessingWatch.Summary?
        if let watcher {
            _ = await poller?.value
            let drained = try await watcher.drain(expected: nil)
            processed = watcher.summary(loadStarted: loadStarted, loadEnded: loadEnded, drained: drained)
            try await watcher.shutdown()
        }
        let sorted = stats.latencies.withLock { $0.sorted() }
        func pct(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        let failed = stats.failures.withLock { $0 }
        let okRequests = requests - failed.values.reduce(0, +)
        let reportsPerSecond = Double(okRequests * batch) / elapsed
        let result: [String: Double] = [
            "requests": Double(requests), "batch": Double(batch), "connections": Double(connections),
            "seconds": elapsed, "reports_per_second": reportsPerSecond,
            "requests_per_second": Double(okRequests) / elapsed,
            "p50_ms": pct(0.50), "p99_ms": pct(0.99), "max_ms": sorted.last ?? 0,
            "avg_compressed_bytes": Double(compressed) / Double(max(requests, 1)),
            "avg_inflated_bytes": Double(inflated) / Double(max(requests, 1)), "failed": Double(requests - okRequests),
        ]
        if json {
            let data = try JSONSerialization.data(
                withJSONObject: result.merging(processed?.json ?? [:]) { a, _ in a }, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(
                String(
                    format: "requests: %d x %d report(s), %d connections, %.2f s", requests, batch, connections, elapsed
                ))
            print(
                String(
                    format: "body: %.0f B gzip'd (%.0f B inflated) per request", result["avg_compressed_bytes"]!,
                    result["avg_inflated_bytes"]!))
            print(
                String(
                    format: "throughput: %.0f reports/s (%.0f requests/s)", reportsPerSecond,
                    result["requests_per_second"]!))
            print(
                String(format: "latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms", pct(0.5), pct(0.99), sorted.last ?? 0))
            print(
                "failed: \(failed.isEmpty ? "none" : failed.map { "\($0.value)× status \($0.key)" }.joined(separator: ", "))"
            )
            for line in processed?.lines ?? [] { print(line) }
        }
    }

    func printProcessing(_ summary: ProcessingWatch.Summary) throws {
        if json {
            let data = try JSONSerialization.data(withJSONObject: summary.json, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for line in summary.lines { print(line) }
        }
    }

    /// Runs `count` workers that take indexes from `range` until it is used up.
    func runWorkers(count: Int, range: Range<Int>, _ work: @escaping @Sendable (Int) async -> Void) async throws {
        let next = Stats.Cursor(range.lowerBound)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    while true {
                        let i = next.value.withLock { n -> Int in
                            defer { n += 1 }
                            return n
                        }
                        if i >= range.upperBound { return }
                        await work(i)
                    }
                }
            }
        }
    }
}

/// Shared counters of the workers.
final class Stats: Sendable {
    let latencies = Mutex<[Double]>([])
    let failures = Mutex<[Int: Int]>([:])
    final class Cursor: Sendable {
        let value: Mutex<Int>
        init(_ start: Int) { value = Mutex(start) }
    }
}

extension Duration {
    var milliseconds: Double {
        let (s, atto) = components
        return Double(s) * 1000 + Double(atto) / 1e15
    }
}

/// A small deterministic PRNG so runs are repeatable.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Crash reports shaped like real ones: 30–60 frames over a few modules, 20 breadcrumbs, 10 custom keys.
enum ReportGenerator {
    static let functions = [
        "main", "AppDelegate.application(_:didFinishLaunchingWithOptions:)", "CheckoutViewModel.pay()",
        "PaymentService.submit(order:)", "JSONDecoder.decode(_:from:)", "URLSession.dataTask(with:)",
        "ImageCache.load(url:)", "Database.write(_:)", "SyncEngine.run()", "Renderer.draw(frame:)",
    ]
    static let modules = [
        ("App", "8f3a1c2d4e5f60718293a4b5c6d7e8f901234567", UInt64(0x5555_5555_0000)),
        ("libswiftCore.so", "aa11bb22cc33dd44ee55ff6677889900aabbccdd", UInt64(0x7f3a_0000_0000)),
        ("libc.so.6", "0123456789abcdef0123456789abcdef01234567", UInt64(0x7f3b_0000_0000)),
        ("libFoundation.so", "fedcba9876543210fedcba9876543210fedcba98", UInt64(0x7f3c_0000_0000)),
    ]

    static func uuid(_ rng: inout SplitMix) -> String {
        let a = rng.next()
        let b = rng.next()
        return String(
            format: "%08x-%04x-4%03x-8%03x-%012llx", UInt32(a >> 32), UInt16(a >> 16 & 0xffff), UInt16(a & 0xfff),
            UInt16(b >> 48 & 0xfff), b & 0xffff_ffff_ffff)
    }

    /// - Parameter issues: when > 0, the crashed thread's frames are one of `issues` stacks (drawn from a generator
    ///   seeded by the stack's number), so reports share issues; the rest of the report stays random.
    static func crash(index: Int, run: UInt64, rng: inout SplitMix, secrets: Bool = false, issues: Int = 0) -> String {
        let id = String(
            format: "%08x%08x%016x", UInt32(truncatingIfNeeded: run), UInt32(truncatingIfNeeded: index), rng.next())
        var stackRNG = issues > 0 ? SplitMix(seed: 0x5EED_0000 &+ rng.next() % UInt64(issues)) : rng
        let frameCount = Int.random(in: 30...60, using: &stackRNG)
        var frames: [String] = []
        for f in 0..<frameCount {
            let (name, _, base) = modules[Int.random(in: 0..<modules.count, using: &stackRNG)]
            let address = base + UInt64.random(in: 0x1000...0xff_ffff, using: &stackRNG)
            if f % 5 == 4 {
                frames.append(
                    #"{"function":"\#(functions[f % functions.count])","file":"Sources/App/File\#(f).swift","line":\#(Int.random(in: 1...900, using: &stackRNG))}"#
                )
            } else {
                frames.append(#"{"address":"0x\#(String(address, radix: 16))","module":"\#(name)"}"#)
            }
        }
        if issues <= 0 { rng = stackRNG }
        // Three more threads, as a crash handler that captures all threads sends them.
        let otherThreads = ["worker", "network", "com.apple.uikit.eventfetch-thread"].map { name in
            let frames = (0..<Int.random(in: 8...15, using: &rng)).map { _ in
                let (module, _, base) = modules[Int.random(in: 0..<modules.count, using: &rng)]
                return
                    #"{"address":"0x\#(String(base + UInt64.random(in: 0x1000...0xff_ffff, using: &rng), radix: 16))","module":"\#(module)"}"#
            }
            return #"{"name":"\#(name)","frames":[\#(frames.joined(separator: ","))]}"#
        }
        var crumbs = (0..<20).map { c in
            #"{"timestamp":\#(1_795_000_000 + index + c),"category":"\#(["ui", "http", "navigation", "state"][c % 4])","level":"info","message":"event \#(c) for screen \#(Int.random(in: 1...50, using: &rng)) request \#(String(rng.next(), radix: 36))","data":{"screen":"screen-\#(c % 7)","latency_ms":"\#(Int.random(in: 1...900, using: &rng))","url":"https://api.example.com/v1/items/\#(String(rng.next(), radix: 36))"}}"#
        }
        var keys = (0..<10).map {
            #""key_\#($0)":"\#(String(rng.next(), radix: 36))-\#(String(rng.next() >> 20, radix: 36))""#
        }
        if secrets {
            keys.append(#""password":"hunter2-\#(index)""#)
            crumbs.append(
                #"{"timestamp":\#(1_795_000_000 + index),"category":"payment","message":"charge card 4111 1111 1111 1111"}"#
            )
        }
        let mods = modules.map {
            #"{"name":"\#($0.0)","build_id":"\#($0.1)","base_address":"0x\#(String($0.2, radix: 16))","size":33554432}"#
        }
        return """
            {"event_id":"\(id)","kind":"crash","timestamp":\(1_795_000_000 + index),"session_id":"\(uuid(&rng))",\
            "install_id":"\(uuid(&rng))","user_id":"user-\(Int.random(in: 1...100_000, using: &rng))","environment":"production",\
            "app":{"id":"com.example.shop","version":"4.\(index % 3).0","build":"\(400 + index % 3)"},\
            "device":{"model":"Pixel \(Int.random(in: 5...9, using: &rng))","os":"Android","os_version":"1\(Int.random(in: 2...5, using: &rng))","arch":"arm64","memory":8589934592,"free_disk":2147483648,"locale":"en_US"},\
            "error":{"type":"SIGSEGV","code":11,"message":"Segmentation fault at 0x\(String(rng.next() & 0xffff_ffff, radix: 16))"},\
            "threads":[{"name":"main","crashed":true,"frames":[\(frames.joined(separator: ","))]},\
            \(otherThreads.joined(separator: ","))],\
            "modules":[\(mods.joined(separator: ","))],"breadcrumbs":[\(crumbs.joined(separator: ","))],\
            "custom_keys":{\(keys.joined(separator: ","))}}
            """
    }
}
