import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Bounds how long `faultline serve` takes to stop once it is told to (SIGTERM or SIGINT).
///
/// A graceful stop finishes the requests in flight, lets each background loop end its step and closes the database.
/// With PostgreSQL cut off or stalled, a step can wait on a connection that never answers, and PostgresNIO does not
/// end a query in flight when its task is cancelled: the process then never stopped, and the orchestrator's SIGKILL
/// ended it. Past `limit` after the first signal the process now logs why and exits itself; a second signal exits at
/// once. Nothing acknowledged is lost by it: every `202` is answered after its commit, as a `kill -9` shows.
///
/// The timer runs on a dispatch queue of its own, not in Swift concurrency, so a stuck task or a cancelled service
/// group cannot hold it. The service group's own signal handling is unchanged: dispatch delivers each signal to every
/// source that watches it.
/// (`@unchecked Sendable`: its sources are set once at init, and dispatch sources may be cancelled from any thread.)
final class ShutdownDeadline: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let state: Signals

    /// Watches SIGTERM and SIGINT from now on.
    init(limit: Duration, logger: Logger) {
        let queue = DispatchQueue(label: "faultline.shutdown-deadline")
        let state = Signals()
        self.state = state
        sources = [SIGTERM, SIGINT].map { number in
            // A watched signal must not also take its default action (ending the process at once).
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                state.count += 1
                guard state.serving.load(ordering: .acquiring) else {
                    // Still opening or migrating (a batched migration resumes where it stopped): nothing to finish.
                    logger.warning("stopping now: a signal came before the server was serving")
                    Self.exitNow(status: 128 + number)
                }
                guard state.count == 1 else {
                    logger.warning("stopping now: a second signal came during the graceful stop")
                    Self.exitNow(status: 0)
                }
                queue.asyncAfter(deadline: .now() + Self.interval(limit)) {
                    logger.error(
                        """
                        stopping now: the graceful stop did not end within \(limit) (the database may not answer); \
                        every acknowledged write is stored
                        """)
                    Self.exitNow(status: 0)
                }
            }
            source.resume()
            return source
        }
    }

    /// From now on a signal starts a graceful stop (the service group handles it) bounded by the limit; before, it ends
    /// the process at once, as the signal's default action did.
    func serving() {
        state.serving.store(true, ordering: .releasing)
    }

    /// Stops watching (the server stopped by itself).
    func cancel() {
        for source in sources { source.cancel() }
    }

    /// `limit` for dispatch, at least a millisecond.
    static func interval(_ limit: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = limit.components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow,
            let whole = Int(exactly: milliseconds.partialValue + attoseconds / 1_000_000_000_000_000)
        else { return .seconds(Int(Int32.max)) }
        return .milliseconds(max(1, whole))
    }

    /// Flushes what was written and ends the process without running exit handlers, which other threads, still
    /// inside the stuck stop, may hold locks of.
    static func exitNow(status: Int32) -> Never {
        fflush(nil)
        _exit(status)
    }

    /// The signals seen (counted on the deadline's queue only), and whether the server serves.
    private final class Signals: @unchecked Sendable {
        var count = 0
        let serving = Atomic<Bool>(false)
    }
}
