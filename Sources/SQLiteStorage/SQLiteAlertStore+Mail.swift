import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// People's alert mail preferences on SQLite (`alert_mail_preferences`, v35): part of the alert store, whose outbox
/// carries the mails.
extension SQLiteAlertStore: AlertMailStore {

    public func mailPreferences(person: PersonID) async throws -> [AlertMailPreference] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT project_id, kinds, digest FROM alert_mail_preferences WHERE person_id = ? ORDER BY project_id
                    """,
                arguments: [person.rawValue]
            ).map {
                AlertMailPreference(
                    person: person, project: ProjectID($0["project_id"] as Int64),
                    kinds: AlertMailPreference.kinds(stored: $0["kinds"]),
                    digest: DigestCadence(rawValue: $0["digest"]) ?? .none)
            }
        }
    }

    @discardableResult
    public func setMailPreference(_ preference: AlertMailPreference) async throws -> Bool {
        try await database.pool.write { db in
            let exists =
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM people WHERE id = ?) AND EXISTS (SELECT 1 FROM projects WHERE id = ?)
                        """,
                    arguments: [preference.person.rawValue, preference.project.rawValue]) ?? false
            guard exists else { return false }
            if preference.kinds.isEmpty && preference.digest == .none {
                try db.execute(
                    sql: "DELETE FROM alert_mail_preferences WHERE person_id = ? AND project_id = ?",
                    arguments: [preference.person.rawValue, preference.project.rawValue])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO alert_mail_preferences (person_id, project_id, kinds, digest) VALUES (?, ?, ?, ?)
                        ON CONFLICT (person_id, project_id) DO UPDATE SET kinds = excluded.kinds, digest = excluded.digest
                        """,
                    arguments: [
                        preference.person.rawValue, preference.project.rawValue, preference.storedKinds,
                        preference.digest.rawValue,
                    ])
            }
            return true
        }
    }

    public func mailRecipients(project: ProjectID, kind: AlertKind) async throws -> [MailRecipient] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT p.id, p.login FROM alert_mail_preferences a
                    JOIN people p ON p.id = a.person_id
                    LEFT JOIN memberships m ON m.person_id = a.person_id AND m.project_id = a.project_id
                    WHERE a.project_id = ? AND (m.person_id IS NOT NULL OR p.owner = 1)
                      AND instr(',' || a.kinds || ',', ',' || ? || ',') > 0
                    ORDER BY p.id
                    """,
                arguments: [project.rawValue, kind.rawValue]
            ).compactMap { row in
                MailAddress(row["login"] as String).map {
                    MailRecipient(person: PersonID(row["id"] as Int64), address: $0)
                }
            }
        }
    }

    public func digestSubscribers(cadence: DigestCadence) async throws -> [DigestSubscriber] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT a.project_id, p.id, p.login FROM alert_mail_preferences a
                    JOIN people p ON p.id = a.person_id
                    LEFT JOIN memberships m ON m.person_id = a.person_id AND m.project_id = a.project_id
                    WHERE a.digest = ? AND (m.person_id IS NOT NULL OR p.owner = 1)
                    ORDER BY a.project_id, p.id
                    """,
                arguments: [cadence.rawValue]
            ).compactMap { row in
                MailAddress(row["login"] as String).map {
                    DigestSubscriber(
                        project: ProjectID(row["project_id"] as Int64),
                        recipient: MailRecipient(person: PersonID(row["id"] as Int64), address: $0))
                }
            }
        }
    }

    public func digestMade(project: ProjectID, person: PersonID, period: DigestPeriod) async throws -> Bool {
        try await database.pool.read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM mail_digests WHERE project_id = ? AND person_id = ? AND cadence = ?
                                   AND period_start = ?)
                    """,
                arguments: [project.rawValue, person.rawValue, period.cadence.rawValue, period.start.rawValue]) ?? false
        }
    }

    @discardableResult
    public func queueDigest(
        project: ProjectID, person: PersonID, period: DigestPeriod, recipient: MailAddress, body: [UInt8], at date: Date
    ) async throws -> Bool {
        let now = Millis.from(date)
        return try await database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO mail_digests (project_id, person_id, cadence, period_start, recipient, body,
                                              next_attempt_at, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """,
                arguments: [
                    project.rawValue, person.rawValue, period.cadence.rawValue, period.start.rawValue,
                    recipient.rawValue, Data(body), now, now,
                ])
            return db.changesCount > 0
        }
    }

    public func dueDigests(now: Date, limit: Int) async throws -> [DigestDelivery] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, recipient, body, attempts FROM mail_digests
                    WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
                    """,
                arguments: [Millis.from(now), limit]
            ).map {
                DigestDelivery(
                    id: $0["id"], recipient: $0["recipient"], body: [UInt8]($0["body"] as Data),
                    attempts: $0["attempts"])
            }
        }
    }

    public func recordDigestAttempt(_ id: Int64, outcome: DeliveryOutcome, at date: Date) async throws {
        try await database.pool.write { db in
            switch outcome {
            case .delivered:
                try db.execute(
                    sql:
                        "UPDATE mail_digests SET state = 'delivered', attempts = attempts + 1, last_error = NULL WHERE id = ?",
                    arguments: [id])
            case .retry(let next, _, let error):
                try db.execute(
                    sql:
                        "UPDATE mail_digests SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?",
                    arguments: [error, Millis.from(next), id])
            case .failed(_, let error):
                try db.execute(
                    sql:
                        "UPDATE mail_digests SET state = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?",
                    arguments: [error, id])
            }
        }
    }

    public func mailSecret(fresh: [UInt8]) async throws -> [UInt8] {
        try await database.pool.write { db in
            try db.execute(
                sql: "INSERT INTO mail_secrets (id, secret) VALUES (1, ?) ON CONFLICT DO NOTHING",
                arguments: [Data(fresh)])
            return [UInt8](try Data.fetchOne(db, sql: "SELECT secret FROM mail_secrets WHERE id = 1") ?? Data(fresh))
        }
    }
}
