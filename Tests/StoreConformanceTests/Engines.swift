import FaultlineCore
import FaultlineHTTP
import Foundation
import GRDB
import Logging
import PostgresNIO
import TestSupport
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// The storage engines every conformance test runs on.
enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// One engine's stores on a new, empty, migrated database, and a way to read its tables for assertions: the two
/// schemas share table and column names, so one SQL text (portable SQL only) checks both.
final class Stores: Sendable {
    let engine: Engine
    let projects: any ProjectStore
    let ingest: any IngestStore
    let reports: any ReportReader & SessionReader
    let adminSessions: any AdminSessionStore
    let people: any PeopleStore & PersonalTokenStore & AccountStore
    let retention: any RetentionStore
    let symbolication: any SymbolicationStore
    let alerts: any AlertStore & AlertMailStore
    let clientReports: any ClientReportReader
    let insights: any InsightsReader & IssueStateStore
    let search: any SearchReader
    let debugFiles: any DebugFileStore
    let difUploads: any DifUploadStore
    /// The debug-file blob folder (`blobs/`, `tmp/`): in the SQLite test folder, or a temporary folder that a second
    /// PostgreSQL node shares, as nodes share `--blobs`.
    let blobRoot: String
    let sqlite: SQLiteEngine?
    /// What `close` removes: the SQLite test folder, or the PostgreSQL run's blob folder (not a second node's).
    private let ownedFolder: String?
    let postgres: PostgresEngine?
    private let postgresName: String?

    private init(
        engine: Engine, sqlite: SQLiteEngine?, postgres: PostgresEngine?, name: String?, blobRoot: String,
        ownedFolder: String?
    ) throws {
        self.engine = engine
        self.sqlite = sqlite
        self.postgres = postgres
        postgresName = name
        self.blobRoot = blobRoot
        self.ownedFolder = ownedFolder
        // The same list of stores the server builds (`EngineStores`).
        let stores = try sqlite?.stores(blobRoot: blobRoot) ?? postgres!.stores(blobRoot: blobRoot)
        projects = stores.projects
        ingest = stores.ingest
        reports = stores.reports
        adminSessions = stores.adminSessions
        people = stores.people
        retention = stores.retention
        symbolication = stores.symbolication
        alerts = stores.alerts
        clientReports = stores.insights
        insights = stores.insights
        search = stores.search
        debugFiles = stores.debugFiles
        difUploads = stores.difUploads
    }

    /// A fresh database of `engine`: a SQLite file in a temporary folder, or a new PostgreSQL database on the test
    /// server (`PostgresServer`).
    static func make(_ engine: Engine) async throws -> Stores {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "faultline-conformance-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        switch engine {
        case .sqlite:
            return try Stores(
                engine: engine, sqlite: try SQLiteEngine(path: folder + "/faultline.sqlite", identities: .hmacSHA256),
                postgres: nil, name: nil,
                blobRoot: folder + "/debug-files", ownedFolder: folder)
        case .postgres:
            let (url, name) = try await PostgresServer.createDatabase()
            return try Stores(
                engine: engine, sqlite: nil, postgres: try await PostgresEngine.open(url: url, identities: .hmacSHA256),
                name: name, blobRoot: folder + "/debug-files",
                ownedFolder: folder)
        }
    }

    /// A second set of stores on the same database and the same blob folder: another node of a PostgreSQL installation.
    func secondNode() async throws -> Stores {
        guard let postgres else { throw StorageError(.openFailed, "only PostgreSQL has nodes") }
        // No name and no folder: closing the second node leaves the database and the blobs to the first.
        return try Stores(
            engine: engine, sqlite: nil,
            postgres: try await PostgresEngine.open(url: postgres.urlForTests, identities: .hmacSHA256), name: nil,
            blobRoot: blobRoot,
            ownedFolder: nil)
    }

    /// Closes the database and removes it, and the test's folder.
    func close() async {
        if let sqlite { try? sqlite.close() }
        if let postgres {
            await postgres.close()
            if let postgresName { try? await PostgresServer.dropDatabase(postgresName) }
        }
        if let ownedFolder { try? FileManager.default.removeItem(atPath: ownedFolder) }
    }

    /// Runs `sql` (portable SQL that changes rows) in one transaction.
    func execute(_ sql: String) async throws {
        if let sqlite {
            try await sqlite.pool.write { db in try db.execute(sql: sql) }
            return
        }
        let postgres = postgres!
        try await postgres.write { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: postgres.logger)
        }
    }

    /// The first (only) column of every row of `sql`, as text (NULL as "∅"), sorted: portable SQL that selects one
    /// column, compared as a set.
    func texts(_ sql: String) async throws -> [String] {
        if let sqlite {
            return try await sqlite.pool.read { db in
                try Row.fetchAll(db, sql: sql).map { row -> String in
                    switch (row[0] as DatabaseValue).storage {
                    case .null: "∅"
                    case .int64(let value): String(value)
                    case .double(let value): String(value)
                    case .string(let value): value
                    case .blob(let value): value.base64EncodedString()
                    }
                }
            }.sorted()
        }
        let postgres = postgres!
        return try await postgres.read { connection in
            var texts: [String] = []
            let query = PostgresQuery(unsafeSQL: "SELECT c::text FROM (\(sql)) AS q(c)")
            for try await value in try await connection.query(query, logger: postgres.logger).decode(String?.self) {
                texts.append(value ?? "∅")
            }
            return texts
        }.sorted()
    }
}

extension Stores {
    /// The row id of the report with event id `eventID` (the id the symbolication store takes).
    func reportID(_ eventID: EventID) async throws -> Int64 {
        guard let text = try await texts("SELECT id FROM reports WHERE event_id = '\(eventID.rawValue)'").first,
            let id = Int64(text)
        else {
            throw StorageError(.conflict, "no report \(eventID)")
        }
        return id
    }
}

/// The PostgreSQL server of the test run: `tools/test` starts a throwaway cluster and exports its URL as
/// `FAULTLINE_TEST_POSTGRES_URL` (a database to connect to for administration); each test gets a database of its own.
enum PostgresServer {
    static var adminURL: String {
        get throws {
            guard let url = TestEnvironment.value("FAULTLINE_TEST_POSTGRES_URL"), !url.isEmpty else {
                throw StorageError(
                    .openFailed,
                    "FAULTLINE_TEST_POSTGRES_URL is not set: run the tests with tools/test, which starts a throwaway PostgreSQL server"
                )
            }
            return url
        }
    }

    /// A new, empty database; its URL and name.
    static func createDatabase() async throws -> (url: String, name: String) {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await admin("CREATE DATABASE \(name)")
        var components = URLComponents(string: try adminURL)!
        components.path = "/" + name
        return (components.string!, name)
    }

    static func dropDatabase(_ name: String) async throws {
        try await admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    private static func admin(_ statement: String) async throws {
        let database = try PostgresEngine(location: PostgresLocation(url: try adminURL), maximumConnections: 1)
        await database.waitUntilRunning()
        do {
            try await database.read { connection in
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: database.logger)
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}

extension PostgresEngine {
    /// This database's URL (tests connect a second node with it).
    var urlForTests: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = location.user
        components.password = location.password
        components.host = location.host
        components.port = location.port
        components.path = "/" + location.database
        components.queryItems =
            [URLQueryItem(name: "sslmode", value: location.sslMode.rawValue)]
            + (location.socketFolder.map { [URLQueryItem(name: "host", value: $0)] } ?? [])
        return components.string!
    }
}

/// Runs `body` with fresh stores of `engine`, closing them whatever happens.
func withStores(_ engine: Engine, _ body: (Stores) async throws -> Void) async throws {
    let stores = try await Stores.make(engine)
    do {
        try await body(stores)
    } catch {
        await stores.close()
        throw error
    }
    await stores.close()
}

extension Stores {
    /// `texts(sql)` with every per-user rollup key (`RollupUser.key`) put back to the id it hashes, for the ids the
    /// reports and sessions hold: the rollups never store an id, and a recount from the reports (or a second database,
    /// whose projects have other keys) compares by id.
    func unkeyedTexts(_ sql: String) async throws -> [String] {
        var ids: [String: String] = [:]
        for project in try await projects.allProjects() {
            let hasher = IdentityHashers.hmacSHA256.hasher(key: project.identityKey)
            let users = try await texts(
                """
                SELECT user_key FROM reports WHERE project_id = \(project.id.rawValue) AND user_key IS NOT NULL
                UNION SELECT distinct_id FROM sessions WHERE project_id = \(project.id.rawValue) AND distinct_id IS NOT NULL
                """)
            for user in users { ids[RollupUser.key(of: user, hasher: hasher)] = user }
        }
        return try await texts(sql).map { text in
            guard let range = text.range(of: RollupUser.prefix), text[range.lowerBound...].count >= 35 else {
                return text
            }
            let key = String(text[range.lowerBound...].prefix(35))
            return text.replacingOccurrences(of: key, with: ids[key] ?? key)
        }.sorted()
    }
}
