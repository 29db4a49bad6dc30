import ArgumentParser
import FaultlineApp

/// `faultline backup --to DIR`: a consistent copy of a SQLite data folder, taken while its server runs.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a data folder's database and debug files into a new folder, while the server runs.",
        discussion: """
            The database is copied from one snapshot (SQLite's VACUUM INTO: the server keeps ingesting), then the \
            debug files and source bundles it refers to; the copy is checked by opening it (integrity, foreign \
            keys, schema, every debug file present). --without-events leaves out the reports (payloads, results, \
            attachments, search entries) and keeps projects, settings, issues with their rollups, sessions, alerts \
            and debug files: small enough to keep every night. Restore with `faultline restore`. \
            For PostgreSQL use pg_dump and copy the files folder: docs/operations.md.
            """)

    @OptionGroup var dataOptions: DataOptions

    @Option(help: "The folder to write the backup to: new or empty.")
    var to: String

    @Flag(help: "Leave the reports out (keep projects, settings, issues with their rollups and debug files).")
    var withoutEvents = false

    func validate() throws {
        if dataOptions.databaseURL != nil {
            throw ValidationError(
                "backup copies the SQLite database of a data folder; for PostgreSQL use pg_dump and copy the files folder (docs/operations.md)"
            )
        }
    }

    func run() async throws {
        let outcome = try DataFolderBackup.backup(
            from: dataOptions.folder, to: to, options: DataFolderBackup.Options(withoutEvents: withoutEvents))
        let summary = outcome.summary
        print(
            "backed up \(dataOptions.folder) to \(to): \(summary.projects) projects, \(summary.issues) issues, "
                + "\(summary.reports) reports, \(summary.debugFiles) debug files; database \(outcome.databaseBytes / 1024) KiB, "
                + "debug files \(outcome.blobBytes / 1024) KiB; schema \(summary.schema); checked")
    }
}

/// `faultline restore --from DIR --data NEW`: a backup into a new data folder.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup made by `faultline backup` into a new, empty data folder.",
        discussion: """
            The backup is checked first, then copied. Start a server on the new folder with \
            `faultline serve --data NEW`: it applies any newer migration and renders the dashboard.
            """)

    @Option(help: "The backup folder.")
    var from: String

    @OptionGroup var dataOptions: DataOptions

    func validate() throws {
        if dataOptions.databaseURL != nil {
            throw ValidationError(
                "restore writes a SQLite data folder; for PostgreSQL use pg_restore (docs/operations.md)")
        }
        if dataOptions.data == nil {
            throw ValidationError("name the new data folder with --data (it must be new or empty)")
        }
    }

    func run() async throws {
        let summary = try DataFolderBackup.restore(from: from, to: dataOptions.folder)
        // Opened once as the server opens it: migrations, file permissions, the debug-file store.
        let root = try await dataOptions.open()
        try await root.close()
        print(
            "restored \(from) into \(dataOptions.folder): \(summary.projects) projects, \(summary.issues) issues, "
                + "\(summary.reports) reports, \(summary.debugFiles) debug files; start it with faultline serve --data \(dataOptions.folder)"
        )
    }
}
