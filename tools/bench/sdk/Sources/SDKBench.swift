// The SDK's cost on the caller's thread (docs/sdk.md "Measured"): nanoseconds per call of Faultline.log,
// setCustomValue and record(error:), in the calling process, with the real state file and queue (no DSN, so
// nothing is sent and the network plays no part). Run with tools/bench/sdk/run (a release build).
import FaultlineSDK
import Foundation

enum BenchError: Error {
    case declined(code: Int)
}

/// This thread's CPU time in nanoseconds: unlike the wall clock, it does not count time the thread waited for
/// a core, so the figure holds on a busy machine.
func threadCPU() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
}

@inline(never) func measure(_ name: String, iterations: Int, _ body: (Int) -> Void) {
    for i in 0..<min(iterations, 1000) { body(i) }  // warm up
    let clock = ContinuousClock()
    let cpuStart = threadCPU()
    let elapsed = clock.measure { for i in 0..<iterations { body(i) } }
    let cpu = threadCPU() - cpuStart
    let wall = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    let perCall = { (total: Double) in String(format: "%.0f", total / Double(iterations)) }
    print("\(name): \(perCall(cpu)) ns/call CPU, \(perCall(wall)) ns/call wall (\(iterations) calls)")
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-bench-\(getpid())").path
defer { try? FileManager.default.removeItem(atPath: folder) }
var options = FaultlineOptions()
options.stateDirectory = folder
options.crashDirectory = folder + "/crashes"
options.flushOnExit = 0
Faultline.start(release: "1.0", options: options)

let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 1_000_000
// A report carries the breadcrumbs: once with none, and at the end with a full 64 KB log.
measure("record(error:), no breadcrumbs", iterations: max(1, iterations / 500)) {
    Faultline.record(error: BenchError.declined(code: $0), userInfo: ["attempt": $0])
}
let messages = (0..<64).map { "checkout step \($0) for cart 9f2c" }
let keys = (0..<64).map { "key_\($0)" }
measure("log (48-byte message)", iterations: iterations) { Faultline.log(messages[$0 & 63]) }
measure("log (interpolated)", iterations: iterations) { Faultline.log("request \($0) done") }
measure("setCustomValue (Int)", iterations: iterations) { Faultline.setCustomValue($0, forKey: keys[$0 & 63]) }
measure("setCustomValue (String)", iterations: iterations) {
    Faultline.setCustomValue(messages[$0 & 63], forKey: keys[$0 & 63])
}
measure("record(error:), 64 KB of breadcrumbs and 64 keys", iterations: max(1, iterations / 500)) {
    Faultline.record(error: BenchError.declined(code: $0), userInfo: ["attempt": $0])
}

// Contention: four threads logging at once.
let threads = 4
let perThread = iterations / threads
let start = ContinuousClock.now
DispatchQueue.concurrentPerform(iterations: threads) { t in
    for i in 0..<perThread { Faultline.log(messages[(i &+ t) & 63]) }
}
let elapsed = ContinuousClock.now - start
let total = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
print(
    "log, \(threads) threads at once: \(String(format: "%.0f", total / Double(perThread))) ns per call per thread (wall)"
)
