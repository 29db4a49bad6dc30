import Logging
import PostgresNIO
import Synchronization

/// A lease on work that one node of several does at a time (rendering the dashboard into the folder they share): a
/// session-level advisory lock, held on a connection of its own for as long as this node holds the lease.
///
/// `run` tries to take the lock every `retry`; once it has it, it keeps the connection and checks it every `retry`.
/// A node that dies (even `kill -9`) loses its connection and the server releases the lock with it: another node takes
/// the lease at its next try, within about `retry`. A node that loses its connection without dying stops holding
/// at its next check; until then two nodes may both believe they hold it, for at most `retry`, so the work under a
/// lease must be harmless to do twice (a page rendered twice is written twice, whole each time).
public final class PostgresLease: Sendable {
    let database: PostgresEngine
    /// The lease's name (the lock key is its hash; see `PostgresGrouper.lock` for the key space it shares).
    public let name: String
    let retry: Duration
    private let held = Atomic<Bool>(false)
    private let taken = Atomic<UInt64>(0)

    public init(database: PostgresEngine, name: String, retry: Duration = .seconds(2)) {
        self.database = database
        self.name = name
        self.retry = retry
    }

    /// Whether this node holds the lease now.
    public var isHeld: Bool { held.load(ordering: .acquiring) }

    /// How many times this node has taken the lease: a holder that sees it move knows it lost the lease in between
    /// (another node may have done the work since).
    public var timesTaken: UInt64 { taken.load(ordering: .acquiring) }

    /// Takes and holds the lease until the task is cancelled; `onTaken` is called each time it is taken, `onLost` each
    /// time it is given up or lost.
    public func run(onTaken: @escaping @Sendable () -> Void = {}, onLost: @escaping @Sendable () -> Void = {}) async {
        let logger = database.logger
        await database.waitUntilRunning()
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    guard try await Self.tryLock(name, connection, logger) else { return }
                    held.store(true, ordering: .releasing)
                    taken.add(1, ordering: .acquiringAndReleasing)
                    logger.info("took the lease", metadata: ["lease": "\(name)"])
                    onTaken()
                    defer {
                        held.store(false, ordering: .releasing)
                        onLost()
                    }
                    do {
                        while true {
                            try await Task.sleep(for: retry)
                            try await connection.query("SELECT 1", logger: logger)
                        }
                    } catch {
                        // Shutting down, or the check failed: the lock is given back before the connection returns to
                        // the pool (a pooled connection must not hold it for whoever uses it next). On a dead
                        // connection this fails too, and the server has released the lock already.
                        _ = try? await connection.query(
                            "SELECT pg_advisory_unlock(hashtextextended(\(name), 3))", logger: logger)
                        if !Task.isCancelled { throw error }
                    }
                }
            } catch {
                if Task.isCancelled { break }
                logger.warning(
                    "lost or could not take the lease",
                    metadata: ["lease": "\(name)", "error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: retry)
        }
    }

    static func tryLock(_ name: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> Bool {
        for try await locked in try await connection.query(
            "SELECT pg_try_advisory_lock(hashtextextended(\(name), 3))", logger: logger
        )
        .decode(Bool.self) {
            return locked
        }
        return false
    }
}
