import FaultlineCore
import GRDB

/// What a worker batch's transaction asks the database once instead of once per report: the rank of the best
/// debug file per (project, build-id), whether a file was stored after the batch was read, a project's alert
/// settings.
///
/// Valid for one write transaction only (made inside it, dropped with it): saving results never changes debug files
/// or alert settings, and no other writer runs inside the transaction, so every answer stays true until it ends —
/// also across a report's savepoint rolled back. Before it, each report asked these again (about 10 of the ~30
/// statements a report cost in the worker's transaction, issue #13).
final class BatchReads {
    struct BuildKey: Hashable {
        var project: Int64
        var buildID: String
    }

    struct SeenKey: Hashable {
        var seen: Int64
        var project: Int64
        var buildID: String
    }

    private var ranks: [BuildKey: DebugDataRank] = [:]
    private var storedAfter: [SeenKey: Bool] = [:]
    private var settings: [Int64: AlertSettings] = [:]

    /// `SQLiteSymbolicationStore.bestRank`, once per (project, build-id).
    func bestRank(project: ProjectID, buildID: String, _ db: Database) throws -> DebugDataRank {
        let key = BuildKey(project: project.rawValue, buildID: buildID)
        if let known = ranks[key] { return known }
        let rank = try SQLiteSymbolicationStore.bestRank(project: project, buildID: buildID, db)
        ranks[key] = rank
        return rank
    }

    /// `SQLiteSymbolicationStore.storedAfter`, each (sequence, project, build-id) asked once.
    func storedAfter(_ seen: Int64, project: ProjectID, buildIDs: [String], _ db: Database) throws -> Bool {
        for buildID in buildIDs {
            let key = SeenKey(seen: seen, project: project.rawValue, buildID: buildID)
            let stored: Bool
            if let known = storedAfter[key] {
                stored = known
            } else {
                stored = try SQLiteSymbolicationStore.storedAfter(seen, project: project, buildIDs: [buildID], db)
                storedAfter[key] = stored
            }
            if stored { return true }
        }
        return false
    }

    /// `AlertRecords.settings`, once per project.
    func alertSettings(project: ProjectID, _ db: Database) throws -> AlertSettings {
        if let known = settings[project.rawValue] { return known }
        let read = try AlertRecords.settings(project: project, db)
        settings[project.rawValue] = read
        return read
    }
}
