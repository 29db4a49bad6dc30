import FaultlineCore
import Foundation
import GRDB
import Testing

@testable import SQLiteStorage

/// A database migrated by a newer faultline is refused at open, untouched: this binary does not know its schema.
@Suite struct NewerSchemaTests {
    @Test func aDatabaseWithAnUnknownMigrationIsRefusedAndLeftAsItWas() throws {
        let db = try TempDatabase()
        let path = db.folder + "/faultline.sqlite"
        try db.database.close()
        // What a newer release would have left: one more migration recorded.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v999-from-the-future')")
        }
        let before = try queue.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        try queue.close()

        #expect {
            _ = try SQLiteEngine(path: path, identities: .hmacSHA256)
        } throws: { error in
            let storage = error as? StorageError
            return storage?.code == .newerSchema && storage?.message.contains("v999-from-the-future") == true
        }
        let after = try DatabaseQueue(path: path)
        #expect(
            try after.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") } == before)
        try after.close()
    }
}
