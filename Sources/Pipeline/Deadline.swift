import FaultlineCore
import Synchronization

/// Bounds how long a request waits for a database read that may never answer (PostgreSQL stopped, cut off, stalled).
///
/// The read runs in a task of its own; the caller gets its result, or `StorageError(.unavailable)` once `timeout`
/// has passed, whichever comes first. A read that loses the race is cancelled and left to finish or fail on its own:
/// only reads with no effect go through here (a write's deadline is `GroupCommitter`'s, which knows whether the write
/// was still queued).
enum Deadline {
    /// `operation`'s result, or `StorageError(.unavailable)` after `timeout`; without a timeout, `operation` as is.
    static func read<T: Sendable>(
        within timeout: Duration?, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let timeout else { return try await operation() }
        let waiting = Waiting<T>()
        return try await withCheckedThrowingContinuation { continuation in
            waiting.slot.withLock { $0 = continuation }
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                waiting.take()?.resume(with: result)
            }
            Task {
                guard (try? await Task.sleep(for: timeout)) != nil, let late = waiting.take() else { return }
                work.cancel()
                late.resume(throwing: StorageError(.unavailable, "the database did not answer within \(timeout)"))
            }
        }
    }

    /// The caller's continuation, resumed once: by the result or by the deadline, whichever takes it first.
    final class Waiting<T: Sendable>: Sendable {
        let slot = Mutex<CheckedContinuation<T, any Error>?>(nil)
        func take() -> CheckedContinuation<T, any Error>? { slot.withLock { $0.take() } }
    }
}
