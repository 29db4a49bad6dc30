import Foundation
import Synchronization

/// Runs CPU-heavy work over hostile files (checking a source bundle inflates and CRCs every file it holds) on
/// threads of its own, never on the cooperative pool that answers requests.
///
/// Why: Swift's cooperative pool has one thread per core. Two uploads whose checks each take seconds held both
/// threads of a 2-core server, and an unrelated `/healthz` waited 3–6 s behind them. Here each job runs on a new
/// thread (created per job: no idle threads, nothing to shut down; a thread costs microseconds, a job
/// milliseconds or more), at most `threads` at once; later jobs wait in order (FIFO), suspended, holding no
/// thread. The default leaves one core to everything else, so hostile uploads queue behind one another instead of
/// starving the server. Jobs are not cancelled: each must be bounded by its own limits (`SourceBundle.Limits`).
public final class BlockingWorkPool: Sendable {
    /// Most jobs running at once.
    public let threads: Int

    struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    let state = Mutex(State())

    /// - Parameter threads: most jobs at once (at least 1); by default one fewer than the processors, at least 1.
    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount - 1) {
        self.threads = max(1, threads)
    }

    /// Runs `work` on a thread of the pool once one is free, and returns what it returned or threw.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result(catching: work)) }
            // Inflating and JSON decoding need no deep stack, but the platform default differs; make it explicit.
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// Jobs running now and jobs waiting for a thread.
    public var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count) } }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let start = state.withLock { state -> Bool in
                guard state.running < threads else {
                    state.waiting.append(continuation)
                    return false
                }
                state.running += 1
                return true
            }
            if start { continuation.resume() }
        }
    }

    /// Hands the slot to the longest-waiting job, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
