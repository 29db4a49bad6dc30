import Logging
import PostgresNIO
import Synchronization

/// How many nodes share the database now, for what is divided between them (each project's rate limit).
///
/// Each node holds an advisory lock of its own — `(namespace, a random number)`, session level — on a connection it
/// keeps, and counts the granted locks of the namespace in `pg_locks` every `interval`. A node that stops, or dies,
/// loses its connection and with it its lock, so the count follows the live nodes within about `interval`, with no
/// table to clean up. Until the first count, and whenever counting fails, the count is 1 (each node then allows a
/// project its whole limit: the error is on the side of accepting).
public final class PostgresNodes: Sendable {
    /// The first key of every node's lock (the ASCII of "FLND"); the second is the node's own number.
    static let namespace: Int32 = 0x464C_4E44
    let database: PostgresEngine
    let interval: Duration
    private let counted = Atomic<Int>(1)

    public init(database: PostgresEngine, interval: Duration = .seconds(5)) {
        self.database = database
        self.interval = interval
    }

    /// The live nodes as last counted, this one included (1 at least).
    public var count: Int { max(1, counted.load(ordering: .acquiring)) }

    /// Holds this node's presence and counts the nodes until the task is cancelled; `onCount` gets each count.
    public func run(onCount: @escaping @Sendable (Int) -> Void = { _ in }) async {
        let logger = database.logger
        await database.waitUntilRunning()
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    var number = Int32.random(in: .min ... .max)
                    // Two nodes that drew the same number: this one draws again.
                    while try await !Self.take(number, connection, logger) { number = Int32.random(in: .min ... .max) }
                    do {
                        while true {
                            let count = try await Self.count(connection, logger)
                            counted.store(count, ordering: .releasing)
                            onCount(count)
                            try await Task.sleep(for: interval)
                        }
                    } catch {
                        // The lock goes back before the connection returns to the pool (as `PostgresLease` does).
                        _ = try? await connection.query(
                            "SELECT pg_advisory_unlock(\(Self.namespace), \(number))", logger: logger)
                        if !Task.isCancelled { throw error }
                    }
                }
            } catch {
                if Task.isCancelled { break }
                counted.store(1, ordering: .releasing)
                logger.warning("could not count the nodes", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    static func take(_ number: Int32, _ connection: PostgresConnection, _ logger: Logger) async throws -> Bool {
        for try await taken in try await connection.query(
            "SELECT pg_try_advisory_lock(\(namespace), \(number))", logger: logger
        )
        .decode(Bool.self) {
            return taken
        }
        return false
    }

    static func count(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int {
        // The two-key form of an advisory lock shows its keys as classid and objid, with objsubid 2.
        let rows = try await connection.query(
            """
            SELECT count(*)::bigint FROM pg_locks
            WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND classid = \(Int64(UInt32(bitPattern: namespace)))::oid
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """, logger: logger)
        for try await count in rows.decode(Int64.self) {
            return Int(clamping: count)
        }
        return 1
    }
}
