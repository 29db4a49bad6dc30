import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// People's alert mail preferences on PostgreSQL (`alert_mail_preferences`, pg20), the twin of
/// `SQLiteAlertStore+Mail.swift`: part of the alert store, whose outbox carries the mails.
extension PostgresAlertStore: AlertMailStore {

    public func mailPreferences(person: PersonID) async throws -> [AlertMailPreference] {
        let logger = database.logger
        return try await database.read { connection in
            var preferences: [AlertMailPreference] = []
            for try await (project, kinds, digest) in try await connection.query(
                """
                SELECT project_id, kinds, digest FROM alert_mail_preferences WHERE person_id = \(person.rawValue)
                ORDER BY project_id
                """, logger: logger
            ).decode((Int64, String, String).self) {
                preferences.append(
                    AlertMailPreference(
                        person: person, project: ProjectID(project), kinds: AlertMailPreference.kinds(stored: kinds),
                        digest: DigestCadence(rawValue: digest) ?? .none))
            }
            return preferences
        }
    }

    @discardableResult
    public func setMailPreference(_ preference: AlertMailPreference) async throws -> Bool {
        let logger = database.logger
        let person = preference.person.rawValue
        let project = preference.project.rawValue
        return try await database.write { connection in
            var exists = false
            for try await found in try await connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM people WHERE id = \(person)) AND EXISTS (SELECT 1 FROM projects WHERE id = \(project))
                """, logger: logger
            ).decode(Bool.self) {
                exists = found
            }
            guard exists else { return false }
            if preference.kinds.isEmpty && preference.digest == .none {
                try await connection.query(
                    "DELETE FROM alert_mail_preferences WHERE person_id = \(person) AND project_id = \(project)",
                    logger: logger)
            } else {
                try await connection.query(
                    """
                    INSERT INTO alert_mail_preferences (person_id, project_id, kinds, digest)
                    VALUES (\(person), \(project), \(preference.storedKinds), \(preference.digest.rawValue))
                    ON CONFLICT (person_id, project_id) DO UPDATE SET kinds = excluded.kinds, digest = excluded.digest
                    """, logger: logger)
            }
            return true
        }
    }

    public func mailRecipients(project: ProjectID, kind: AlertKind) async throws -> [MailRecipient] {
        let logger = database.logger
        return try await database.read { connection in
            var recipients: [MailRecipient] = []
            for try await (id, login) in try await connection.query(
                """
                SELECT p.id, p.login FROM alert_mail_preferences a
                JOIN people p ON p.id = a.person_id
                LEFT JOIN memberships m ON m.person_id = a.person_id AND m.project_id = a.project_id
                WHERE a.project_id = \(project.rawValue) AND (m.person_id IS NOT NULL OR p.owner)
                  AND \(kind.rawValue) = ANY (string_to_array(a.kinds, ','))
                ORDER BY p.id
                """, logger: logger
            ).decode((Int64, String).self) {
                if let address = MailAddress(login) {
                    recipients.append(MailRecipient(person: PersonID(id), address: address))
                }
            }
            return recipients
        }
    }

    public func digestSubscribers(cadence: DigestCadence) async throws -> [DigestSubscriber] {
        let logger = database.logger
        return try await database.read { connection in
            var subscribers: [DigestSubscriber] = []
            for try await (project, id, login) in try await connection.query(
                """
                SELECT a.project_id, p.id, p.login FROM alert_mail_preferences a
                JOIN people p ON p.id = a.person_id
                LEFT JOIN memberships m ON m.person_id = a.person_id AND m.project_id = a.project_id
                WHERE a.digest = \(cadence.rawValue) AND (m.person_id IS NOT NULL OR p.owner)
                ORDER BY a.project_id, p.id
                """, logger: logger
            ).decode((Int64, Int64, String).self) {
                if let address = MailAddress(login) {
                    subscribers.append(
                        DigestSubscriber(
                            project: ProjectID(project),
                            recipient: MailRecipient(person: PersonID(id), address: address)))
                }
            }
            return subscribers
        }
    }

    public func digestMade(project: ProjectID, person: PersonID, period: DigestPeriod) async throws -> Bool {
        let logger = database.logger
        return try await database.read { connection in
            var made = false
            for try await found in try await connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM mail_digests WHERE project_id = \(project.rawValue)
                    AND person_id = \(person.rawValue) AND cadence = \(period.cadence.rawValue)
                    AND period_start = \(Int64(period.start.rawValue)))
                """, logger: logger
            ).decode(Bool.self) {
                made = found
            }
            return made
        }
    }

    @discardableResult
    public func queueDigest(
        project: ProjectID, person: PersonID, period: DigestPeriod, recipient: MailAddress, body: [UInt8], at date: Date
    ) async throws -> Bool {
        let now = Millis.from(date)
        let logger = database.logger
        return try await database.write { connection in
            var queued = false
            for try await _ in try await connection.query(
                """
                INSERT INTO mail_digests (project_id, person_id, cadence, period_start, recipient, body,
                                          next_attempt_at, created_at)
                VALUES (\(project.rawValue), \(person.rawValue), \(period.cadence.rawValue), \(Int64(period.start.rawValue)),
                        \(recipient.rawValue), \(Data(body)), \(now), \(now))
                ON CONFLICT DO NOTHING RETURNING id
                """, logger: logger
            ).decode(Int64.self) {
                queued = true
            }
            return queued
        }
    }

    public func dueDigests(now: Date, limit: Int) async throws -> [DigestDelivery] {
        let at = Millis.from(now)
        let logger = database.logger
        return try await database.write { connection in
            var due: [(order: (Int64, Int64), delivery: DigestDelivery)] = []
            for try await (id, recipient, body, attempts, dueAt) in try await connection.query(
                """
                WITH taken AS (
                    SELECT id, next_attempt_at FROM mail_digests WHERE state = 'pending' AND next_attempt_at <= \(at)
                    ORDER BY next_attempt_at, id LIMIT \(Int64(max(1, limit))) FOR UPDATE SKIP LOCKED)
                UPDATE mail_digests d SET next_attempt_at = \(at &+ Self.deliveryLease) FROM taken t WHERE d.id = t.id
                RETURNING d.id, d.recipient, d.body, d.attempts, t.next_attempt_at
                """, logger: logger
            ).decode((Int64, String, Data, Int, Int64).self) {
                due.append(
                    ((dueAt, id), DigestDelivery(id: id, recipient: recipient, body: Array(body), attempts: attempts)))
            }
            return due.sorted { $0.order < $1.order }.map(\.delivery)
        }
    }

    public func recordDigestAttempt(_ id: Int64, outcome: DeliveryOutcome, at date: Date) async throws {
        let logger = database.logger
        try await database.write { connection in
            switch outcome {
            case .delivered:
                try await connection.query(
                    "UPDATE mail_digests SET state = 'delivered', attempts = attempts + 1, last_error = NULL WHERE id = \(id)",
                    logger: logger)
            case .retry(let next, _, let error):
                try await connection.query(
                    """
                    UPDATE mail_digests SET attempts = attempts + 1, last_error = \(error),
                        next_attempt_at = \(Millis.from(next)) WHERE id = \(id)
                    """, logger: logger)
            case .failed(_, let error):
                try await connection.query(
                    "UPDATE mail_digests SET state = 'failed', attempts = attempts + 1, last_error = \(error) WHERE id = \(id)",
                    logger: logger)
            }
        }
    }

    public func mailSecret(fresh: [UInt8]) async throws -> [UInt8] {
        let logger = database.logger
        return try await database.write { connection in
            try await connection.query(
                "INSERT INTO mail_secrets (id, secret) VALUES (1, \(Data(fresh))) ON CONFLICT DO NOTHING",
                logger: logger)
            var secret = fresh
            for try await stored in try await connection.query(
                "SELECT secret FROM mail_secrets WHERE id = 1", logger: logger
            ).decode(Data.self) {
                secret = Array(stored)
            }
            return secret
        }
    }
}
