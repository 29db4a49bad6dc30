import GRDB
import TestSupport
import Testing

@testable import SQLiteStorage

/// `CountedRow`, the per-user rows under every "distinct users" counter: what it returns is what the counters above
/// move by, so before and after must be the row's real values whichever statement wrote it (a new row is inserted
/// without `RETURNING`; a row already there is read and updated).
@Suite struct CountedRowTests {
    static let shape = CountedRow.Shape(
        table: "counted", keys: ["owner", "user_key"], counters: ["sessions", "crashed"])

    func database() throws -> TempDatabase {
        let db = try TempDatabase()
        try db.database.pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE owners (id INTEGER PRIMARY KEY);
                    INSERT INTO owners (id) VALUES (1);
                    CREATE TABLE counted (
                        owner INTEGER NOT NULL REFERENCES owners(id),
                        user_key TEXT NOT NULL,
                        sessions INTEGER NOT NULL CHECK (sessions > 0),
                        crashed INTEGER NOT NULL CHECK (crashed >= 0),
                        PRIMARY KEY (owner, user_key)
                    ) WITHOUT ROWID;
                    """)
        }
        return db
    }

    func row(_ db: TempDatabase, _ user: String) throws -> [Int]? {
        try db.database.pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT sessions, crashed FROM counted WHERE owner = 1 AND user_key = ?", arguments: [user]
            )
            .map { [$0[0], $0[1]] }
        }
    }

    @Test func eachBumpReturnsTheRowBeforeAndAfterWhateverStatementWroteIt() throws {
        let db = try database()
        func bump(_ user: String, _ by: [Int]) throws -> (before: [Int], after: [Int]) {
            try db.database.pool.write { db in try CountedRow.bumpValues(Self.shape, values: [1, user], by: by, db) }
        }
        // A new row: inserted, from nothing.
        var change = try bump("u1", [1, 0])
        #expect(change.before == [0, 0] && change.after == [1, 0])
        #expect(try row(db, "u1") == [1, 0])
        // The same key again: read and updated (the insert was ignored, not counted twice).
        change = try bump("u1", [1, 1])
        #expect(change.before == [1, 0] && change.after == [2, 1])
        #expect(try row(db, "u1") == [2, 1])
        // Another key is a row of its own.
        change = try bump("u2", [1, 1])
        #expect(change.before == [0, 0] && change.after == [1, 1])
        // Taking back part, then all: the row stays, then goes.
        change = try bump("u1", [-1, -1])
        #expect(change.before == [2, 1] && change.after == [1, 0])
        change = try bump("u1", [-1, 0])
        #expect(change.before == [1, 0] && change.after == [0, 0])
        #expect(try row(db, "u1") == nil)
        #expect(try row(db, "u2") == [1, 1])
        // Deltas for the counters above: a user appears, repeats nothing new, then a crashed user appears.
        let deltas = try db.database.pool.write { db in
            [
                try CountedRow.bump(Self.shape, values: [1, "u3"], by: [1, 0], db),
                try CountedRow.bump(Self.shape, values: [1, "u3"], by: [1, 0], db),
                try CountedRow.bump(Self.shape, values: [1, "u3"], by: [1, 1], db),
            ]
        }
        #expect(deltas.map(\.0) == [1, 0, 0])
        #expect(deltas.map(\.1) == [0, 0, 1])
    }

    @Test func aRowTheSchemaRefusesIsAnErrorNotIgnored() throws {
        let db = try database()
        // `OR IGNORE` must not swallow what is not the key's conflict: a missing parent, a NULL key.
        #expect(throws: DatabaseError.self) {
            try db.database.pool.write { db in
                _ = try CountedRow.bumpValues(Self.shape, values: [2, "u1"], by: [1, 0], db)
            }
        }
        #expect(throws: DatabaseError.self) {
            try db.database.pool.write { db in
                _ = try CountedRow.bumpValues(Self.shape, values: [1, DatabaseValue.null], by: [1, 0], db)
            }
        }
        #expect(try row(db, "u1") == nil)
    }
}
