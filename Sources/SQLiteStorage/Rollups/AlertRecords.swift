import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Alert rows and per-project alert settings, shared by the grouping transaction and the alert store.
enum AlertRecords {
    /// Records `draft` unless an alert with its dedupe key exists; returns whether it was recorded.
    @discardableResult
    static func insert(_ draft: AlertDraft, at now: Int64, _ db: Database) throws -> Bool {
        let reason = StoredJSON.encode(reason: draft.reason)
        try db.cachedStatement(
            sql: """
                INSERT INTO alerts (project_id, kind, dedupe_key, issue_id, release, title, reason, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, dedupe_key) DO NOTHING
                """
        ).execute(arguments: [
            draft.project.rawValue, draft.kind.rawValue, draft.dedupeKey, draft.issue?.rawValue, draft.release,
            draft.title,
            reason, now,
        ])
        return db.changesCount == 1
    }

    /// The project's settings, or the defaults when none were saved.
    static func settings(project: ProjectID, _ db: Database) throws -> AlertSettings {
        guard
            let json = try String.fetchOne(
                db.cachedStatement(sql: "SELECT settings FROM alert_settings WHERE project_id = ?"),
                arguments: [project.rawValue])
        else { return AlertSettings() }
        return (try? JSONDecoder().decode(AlertSettings.self, from: Data(json.utf8))) ?? AlertSettings()
    }

    static func alert(_ row: Row) -> Alert? {
        guard let kind = AlertKind(rawValue: row["kind"]) else { return nil }
        let reasonText: String = row["reason"]
        let reason = (try? JSONDecoder().decode([String: Double].self, from: Data(reasonText.utf8))) ?? [:]
        return Alert(
            id: row["id"], project: ProjectID(row["project_id"] as Int64), kind: kind,
            issue: (row["issue_id"] as Int64?).map { IssueID($0) }, release: row["release"], title: row["title"],
            reason: reason,
            createdAt: Millis.date(row["created_at"]))
    }
}
