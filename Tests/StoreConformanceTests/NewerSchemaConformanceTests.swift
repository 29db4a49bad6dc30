import FaultlineCore
import Foundation
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// Both engines refuse, at open, a database that a newer faultline migrated, and leave it as it was: a server never
/// starts on a schema it does not know.
@Suite(.tags(.postgres), .provisioned) struct NewerSchemaConformanceTests {
    @Test(arguments: Engine.allCases) func anUnknownMigrationIsRefusedAtOpen(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let future = "v999-from-a-newer-faultline"
            switch engine {
            case .sqlite:
                try await stores.execute("INSERT INTO grdb_migrations (identifier) VALUES ('\(future)')")
            case .postgres:
                try await stores.execute(
                    "INSERT INTO faultline_migrations (identifier, seq, applied_at) VALUES ('\(future)', 9999, 0)")
            }
            let reopen: () async throws -> Void = {
                switch engine {
                case .sqlite:
                    let path = stores.blobRoot.replacingOccurrences(of: "/debug-files", with: "/faultline.sqlite")
                    _ = try SQLiteEngine(path: path, identities: .hmacSHA256)
                case .postgres:
                    let other = try await PostgresEngine.open(
                        url: stores.postgres!.urlForTests, identities: .hmacSHA256)
                    await other.close()
                }
            }
            await #expect {
                try await reopen()
            } throws: { error in
                let storage = error as? StorageError
                return storage?.code == .newerSchema && storage?.message.contains(future) == true
            }
            #expect(try await stores.texts("SELECT count(*) FROM projects") == ["0"])
        }
    }
}
