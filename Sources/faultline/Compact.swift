import ArgumentParser
import FaultlineApp
import Formats
import SQLiteStorage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline compact --data DIR`: gives the space of deleted rows back to the file system once, and converts a
/// database made before incremental auto-vacuum, so that retention gives space back from then on. Offline.
struct Compact: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Compact the database of a data folder and let retention give space back from then on (server stopped).",
        discussion: """
            Databases made since the storage-pressure work (migration v19) give the space retention frees back to \
            the file system by themselves (SQLite incremental auto-vacuum). Older ones keep it for new reports; this \
            command converts them, once. \
            It rewrites the whole database: stop the server first and have free space about the size of \
            faultline.sqlite.
            """)
    @OptionGroup var dataOptions: DataOptions

    func validate() throws {
        if dataOptions.databaseURL != nil {
            throw ValidationError(
                "compact is for the SQLite database of a data folder; on PostgreSQL, retention drops whole weekly partitions and autovacuum does the rest"
            )
        }
    }

    func run() async throws {
        let database = try SQLiteEngine(
            path: dataOptions.folder + "/faultline.sqlite", durability: .full, codec: .zlib, identities: .hmacSHA256)
        defer { try? database.close() }
        let path = dataOptions.folder + "/faultline.sqlite"
        let before = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        try database.compact()
        let after = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print(
            "compacted \(path): \(before / 1024) KiB → \(after / 1024) KiB; auto-vacuum: \(try await database.autoVacuum())"
        )
    }
}
