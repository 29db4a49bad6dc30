import FaultlineCore
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a PostgreSQL database is and how to reach it, read from a libpq-style URL:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-full&sslrootcert=FILE&host=SOCKET_DIR]`.
///
/// `sslmode` follows libpq's names: `prefer` (the default) uses TLS when the server offers it, `require` refuses a
/// connection without TLS, and both check the server's certificate against the system's roots (or `sslrootcert`).
/// `host=/a/folder` in the query connects through the Unix socket in that folder, as libpq does. A password
/// may also be passed apart from the URL (`password:`), so that it stays out of process listings (`faultline` reads
/// it from `FAULTLINE_DATABASE_PASSWORD`).
public struct PostgresLocation: Sendable, Equatable {
    public enum SSLMode: String, Sendable, Equatable {
        case disable, prefer, require
        /// libpq's `verify-ca` and `verify-full` are `require` here: NIOSSL always checks the certificate chain
        /// and the host name.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode
    public var sslRootCertificate: String?
    /// The folder of the server's Unix socket, when connecting through one.
    public var socketFolder: String?

    public init(url: String, password environmentPassword: String? = nil) throws {
        guard let components = URLComponents(string: url),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme.lowercased())
        else { throw StorageError(.openFailed, "not a postgres:// URL: \(Self.redact(url))") }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        socketFolder = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else {
            throw StorageError(.openFailed, "the port in \(Self.redact(url)) is out of range")
        }
        self.port = port
        user = components.user.flatMap { $0.isEmpty ? nil : $0 } ?? "postgres"
        password = components.password ?? environmentPassword
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.isEmpty, !path.contains("/") else {
            throw StorageError(.openFailed, "\(Self.redact(url)) names no database (postgres://user@host/DATABASE)")
        }
        database = path
        let mode = query["sslmode"] ?? "prefer"
        guard let sslMode = SSLMode(rawValue: mode == "verify-ca" ? "verify-full" : mode) else {
            throw StorageError(
                .openFailed, "sslmode=\(mode) is not one of disable, prefer, require, verify-ca, verify-full")
        }
        self.sslMode = sslMode
        sslRootCertificate = query["sslrootcert"]
    }

    /// Where this is, without the password, for logs and messages: `user@host:port/database` (or the socket folder).
    public var displayName: String {
        "\(user)@\(socketFolder ?? "\(host):\(port)")/\(database)"
    }

    /// The URL with its password masked, for logs and messages.
    public static func redact(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "postgres://***"
    }

    /// The TLS this location asks for: nil for none (`sslmode=disable`), else the configuration (the system's roots or
    /// `sslrootcert`) and whether a connection without TLS is refused.
    var tls: (configuration: TLSConfiguration, required: Bool)? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let sslRootCertificate { configuration.trustRoots = .file(sslRootCertificate) }
        switch sslMode {
        case .disable: return nil
        case .prefer: return (configuration, false)
        case .require, .verifyFull: return (configuration, true)
        }
    }

    /// One connection's configuration for this location (the check at open: `PostgresEngine.probe`).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let socketFolder {
            configuration = PostgresConnection.Configuration(
                unixSocketPath: socketFolder + "/.s.PGSQL.\(port)", username: user, password: password,
                database: database)
        } else {
            var tls = PostgresConnection.Configuration.TLS.disable
            if let (tlsConfiguration, required) = self.tls {
                let context = try NIOSSLContext(configuration: tlsConfiguration)
                tls = required ? .require(context) : .prefer(context)
            }
            configuration = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password, database: database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    /// PostgresNIO's configuration for this location.
    func configuration(maximumConnections: Int) throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketFolder {
            configuration = PostgresClient.Configuration(
                unixSocketPath: socketFolder + "/.s.PGSQL.\(port)", username: user, password: password,
                database: database)
        } else {
            var tls = PostgresClient.Configuration.TLS.disable
            if let (tlsConfiguration, required) = self.tls {
                tls = required ? .require(tlsConfiguration) : .prefer(tlsConfiguration)
            }
            configuration = PostgresClient.Configuration(
                host: host, port: port, username: user, password: password, database: database, tls: tls)
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = Self.connectTimeout
        configuration.options.additionalStartupParameters = [
            ("application_name", "faultline"),
            ("idle_in_transaction_session_timeout", String(Self.idleInTransactionTimeoutMilliseconds)),
        ]
        return configuration
    }

    /// How long opening a TCP connection to the server may take before the attempt fails (and the pool tries again
    /// with a growing pause). docs/scaling.md, "Faults and timeouts".
    static let connectTimeout: Duration = .seconds(10)

    /// The server ends a session of ours that sits inside a transaction without sending anything for this long (a
    /// node cut off mid-transaction, or frozen): its transaction rolls back and its row and advisory locks go, so
    /// the other nodes, waiting on them, go on. Faultline's transactions never wait on anything but the database, so
    /// a healthy node never comes near it. Statements themselves have no server-side timeout: a migration's index
    /// build or a week's retention may take minutes, and requests have their own deadline (`serve
    /// --database-timeout-seconds`).
    static let idleInTransactionTimeoutMilliseconds = 60_000
}

/// A PostgreSQL database the stores share: a pool of connections (`PostgresClient`), run by a task of its own
/// from `open` to `close`, and a schema brought up to date on open (`PostgresMigrations`).
public final class PostgresEngine: Sendable {
    public let location: PostgresLocation
    /// How results are compressed (`StoredOutcome`); the same codec as the SQLite engine's, so the bytes are the same.
    public let codec: StoredBlobCodec
    /// How long a node holds the queued reports it took to symbolicate (ms). Far above a batch's work (seconds):
    /// another node takes a dead node's reports once this has passed.
    public let claimLease: Int64
    /// How long a request waits for the database before it is answered `503` with `Retry-After` (ingest's commit,
    /// an ingest key's lookup): a stopped, restarting, cut-off or stalled server never holds a request longer.
    public let requestDeadline: Duration
    /// Keys the per-user rollups with a project's identity key (`PostgresRollupUsers`; the server passes HMAC-SHA-256).
    /// Without it, writing a report or session that has a user fails, and so does upgrading rollups that hold user ids.
    public let identities: IdentityHashers?
    let client: PostgresClient
    let logger: Logger
    private let runner: Task<Void, Never>

    /// Connects (lazily: the first query opens the first connection) and runs the pool until `close`.
    public init(
        location: PostgresLocation, maximumConnections: Int = 20, codec: StoredBlobCodec = .none,
        claimLease: Duration = defaultClaimLease, requestDeadline: Duration = defaultRequestDeadline,
        identities: IdentityHashers? = nil, logger: Logger = Logger(label: "faultline.postgres")
    ) throws {
        self.location = location
        self.requestDeadline = requestDeadline
        self.identities = identities
        self.codec = codec
        let (seconds, attoseconds) = claimLease.components
        // A day at most (a longer lease only delays the takeover), a millisecond at least.
        self.claimLease = max(1, min(max(seconds, 0), 86_400) * 1000 + max(attoseconds, 0) / 1_000_000_000_000_000)
        self.logger = logger
        let client = PostgresClient(
            configuration: try location.configuration(maximumConnections: maximumConnections), backgroundLogger: logger)
        self.client = client
        let started = self.started
        runner = Task {
            started.set()
            await client.run()
        }
    }

    /// The claim lease unless configured (`serve --claim-lease-seconds`): five minutes.
    public static let defaultClaimLease: Duration = .seconds(300)

    /// The request deadline unless configured (`serve --database-timeout-seconds`): ten seconds, far above a commit's
    /// usual milliseconds and below the 30 s or more an SDK waits for an answer.
    public static let defaultRequestDeadline: Duration = .seconds(10)

    /// Set by the runner task just before it runs the pool (`waitUntilRunning`).
    private let started = StartedFlag()

    final class StartedFlag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    /// Returns once the runner task has started the pool, so the first query does not find it idle (PostgresNIO
    /// waits then, but logs a warning at every start).
    func waitUntilRunning() async {
        while !started.isSet { await Task.yield() }
        await Task.yield()
    }

    /// Opens the database at `url` and migrates it (several nodes may do this at once: see `PostgresMigrations`).
    public static func open(
        url: String, password: String? = nil, codec: StoredBlobCodec = .none,
        claimLease: Duration = defaultClaimLease, requestDeadline: Duration = defaultRequestDeadline,
        identities: IdentityHashers? = nil, logger: Logger = Logger(label: "faultline.postgres")
    ) async throws -> PostgresEngine {
        let location = try PostgresLocation(url: url, password: password)
        try await probe(location, logger: logger)
        let database = try PostgresEngine(
            location: location, codec: codec, claimLease: claimLease, requestDeadline: requestDeadline,
            identities: identities, logger: logger)
        await database.waitUntilRunning()
        do {
            try await database.migrate()
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    /// Connects once, alone, and says why when that fails: the pool retries a failing connection for about a minute
    /// and then reports only that it gave up, while one connection fails within seconds with the server's reason (no
    /// server listening, no such database, password refused, TLS refused).
    static func probe(_ location: PostgresLocation, logger: Logger) async throws {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 0, logger: logger)
        } catch {
            throw StorageError(
                .openFailed, "cannot connect to PostgreSQL at \(location.displayName): \(PostgresErrors.reason(error))")
        }
        try? await connection.close()
    }

    /// Stops the pool; queries fail afterwards.
    public func close() async {
        runner.cancel()
        await runner.value
    }

    /// Applies the migrations this database lacks, then makes sure the time partitions around now exist.
    public func migrate(now: Date = Date()) async throws {
        do {
            // A batched rewrite (none has shipped yet) logs its progress at each tenth.
            let logger = logger
            try await PostgresBatchedRewrites.migrate(
                self,
                progress: { progress in
                    guard progress.crossesATenth else { return }
                    logger.info("\(progress.line)")
                })
        } catch let error as PostgresTransactionError {
            // A refusal the migrations made themselves (a newer schema) is theirs to name, not the transaction's.
            if let own = error.closureError as? StorageError { throw own }
            throw error
        }
        try await PostgresPartitions.ensure(around: Millis.from(now), self)
    }

    /// The identifiers of the applied migrations, in order.
    public func appliedMigrations() async throws -> [String] {
        try await read { connection in
            var names: [String] = []
            for try await name in try await connection.query(
                "SELECT identifier FROM faultline_migrations ORDER BY seq", logger: logger
            )
            .decode(String.self) {
                names.append(name)
            }
            return names
        }
    }

    /// Says that this node changed data the dashboard shows, for the node that renders it (`changeMark`). Called by
    /// a node that does not hold the render lease after its changes committed (debounced: at most once per render
    /// cycle); a command that changes data calls it once when it is done.
    public func announceChange() async throws {
        try await read { connection in
            try await connection.query("SELECT nextval('faultline_changes')", logger: logger)
        }
    }

    /// A mark that moves once some node announced a change (`announceChange`) since it was read. A sequence's last
    /// value is read outside any transaction's snapshot: a number taken is seen at once by every connection, so
    /// another node's change is drawn within one interval of the holder's loop. Only announcements move it: a quiet
    /// database, or the holder's own rendering, never does (the row-change counts of `pg_stat_database`, read by an
    /// earlier design, arrive up to ~10 s after a backend's last transaction, which PostgreSQL flushes on an idle
    /// timer).
    public func changeMark() async throws -> String {
        try await read { connection in
            for try await (value, called) in try await connection.query(
                "SELECT last_value, is_called FROM faultline_changes", logger: logger
            ).decode((Int64, Bool).self) {
                return "\(value)/\(called)"
            }
            return ""
        }
    }

    /// The bytes the database takes on disk (`pg_database_size`).
    public func databaseSize() async throws -> Int64 {
        try await read { connection in
            for try await size in try await connection.query(
                "SELECT pg_database_size(current_database())", logger: logger
            )
            .decode(Int64.self) {
                return size
            }
            return 0
        }
    }

    /// `body` in one transaction (committed when it returns, rolled back when it throws); errors mapped to
    /// `StorageError` where they have a meaning above the store.
    @discardableResult
    func write<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch {
            throw PostgresErrors.mapped(error)
        }
    }

    /// `body` on one connection, outside a transaction (each statement its own).
    @discardableResult
    func read<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withConnection { connection in try await body(connection) }
        } catch {
            throw PostgresErrors.mapped(error)
        }
    }
}

/// PostgreSQL's error codes (SQLSTATE) that mean something to the stores.
enum PostgresErrors {
    static let uniqueViolation = "23505"
    static let foreignKeyViolation = "23503"
    static let diskFull = "53100"

    /// The SQLSTATE of a server error, also inside the error of a transaction (`withTransaction` wraps what failed).
    static func sqlState(_ error: any Error) -> String? {
        if let transaction = error as? PostgresTransactionError {
            return [transaction.closureError, transaction.beginError, transaction.commitError].lazy.compactMap { $0 }
                .compactMap(sqlState).first
        }
        return (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// The server's refusal of a statement (a constraint, a bad value, a value past a limit such as a `tsvector` over
    /// 1 MiB), as opposed to a lost connection or a full disk, which concern every write alike.
    static func isRefusal(_ error: any Error) -> Bool {
        guard let state = sqlState(error) else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("54")
    }

    /// A deadlock or serialization failure with another transaction (another node's): the whole transaction may be
    /// tried again.
    static func isConflictWithAnotherTransaction(_ error: any Error) -> Bool {
        guard let state = sqlState(error) else { return false }
        return state == "40P01" || state == "40001"
    }

    /// A full disk as `StorageError(.diskFull)`, so the storage-pressure state recognises it; anything else unchanged.
    /// What went wrong, in words: the server's message when it sent one, else the connection's error.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if error.code == .sslUnsupported {
                return "the server does not offer TLS (sslmode=require or verify-full asks for it)"
            }
            if let underlying = error.underlying { return String(describing: underlying) }
            return String(describing: error.code)
        }
        return String(describing: error)
    }

    static func mapped(_ error: any Error) -> any Error {
        if sqlState(error) == diskFull {
            return StorageError(.diskFull, "the database server's disk is full", underlying: error)
        }
        if isUnavailable(error) {
            return StorageError(
                .unavailable, "the database cannot be reached: \(reason(error))", underlying: error)
        }
        return error
    }

    /// SQLSTATEs of a server that is going away, starting or refusing connections, and of a statement stopped by
    /// `statement_timeout` (`PostgresLocation.statementTimeout`).
    static let unavailableStates: Set<String> = ["57P01", "57P02", "57P03", "53300", "57014"]

    /// The connection is gone or the server does not take work now (a restart, a cut link, too many connections, a
    /// statement past its timeout), as opposed to a statement the server refused: the same work may succeed later,
    /// on another connection.
    static func isUnavailable(_ error: any Error) -> Bool {
        if let transaction = error as? PostgresTransactionError {
            return [transaction.beginError, transaction.closureError, transaction.commitError].lazy.compactMap { $0 }
                .contains(where: isUnavailable)
        }
        if let state = sqlState(error) { return state.hasPrefix("08") || unavailableStates.contains(state) }
        guard let error = error as? PSQLError else { return false }
        return [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed]
            .contains(error.code)
    }
}

/// Client-sent labels for `text` columns.
enum PostgresText {
    /// `text` with U+0000 replaced by U+FFFD: PostgreSQL refuses the zero character in `text` (SQLite keeps it), and a
    /// label a client sent (a file name, a source bundle's architecture) must not fail the write it belongs to.
    static func storable(_ text: String) -> String {
        StoredText.clean(text)
    }
}

/// Bind values collected while a statement is written: `bind` returns the value's placeholder (`$1`, `$2`, …).
struct PostgresArguments {
    var binds = PostgresBindings()

    mutating func bind<Value: PostgresNonThrowingEncodable>(_ value: Value) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    func query(_ sql: String) -> PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }
}

extension PostgresBindings {
    /// `values` bound in order (`$1`, `$2`, …): for a statement written as text whose values are known together.
    init(values: [any PostgresNonThrowingEncodable]) {
        self.init(capacity: values.count)
        for value in values { append(value) }
    }
}
