import ArgumentParser
import FaultlineApp
import FaultlineCore
import PostgresStorage
import SQLiteStorage

/// The `faultline` command: the server and its admin CLI.
@main
struct Faultline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultline",
        abstract: "A self-hosted crash and error collection server.",
        version: FaultlineVersion.description,
        subcommands: [
            Serve.self, Projects.self, Users.self, Tokens.self, AdminToken.self, Issues.self, Crashes.self, Alerts.self,
            Render.self,
            Gate.self, GroupingCommand.self, Compact.self, Migrate.self, Backup.self, Restore.self,
        ])

    /// Parses and runs a command, as ArgumentParser's own `main` does, except for a `ValidationError` thrown by a
    /// subcommand's `run()`: ArgumentParser no longer knows which subcommand ran and prints the top-level usage
    /// (`faultline <subcommand>`), which tells the user nothing; this prints that subcommand's usage.
    static func main() async {
        let parsed: any ParsableCommand
        do {
            parsed = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            var command = parsed
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ValidationError {
            // `usage` is "faultline alerts configure <project> [--webhook <webhook>] …": the command is its first words.
            let usage = usageString(for: type(of: parsed))
            let path = usage.split(separator: " ").prefix {
                !$0.hasPrefix("[") && !$0.hasPrefix("<") && !$0.hasPrefix("-")
            }
            Console.write(
                "Error: \(error.message)\nUsage: \(usage)\n  See '\(path.joined(separator: " ")) --help' for more information.\n",
                fd: 2)
            exit(withError: ExitCode.validationFailure)
        } catch {
            exit(withError: error)
        }
    }
}

/// Where the data is, shared by every command that opens it: the data folder (SQLite), or a PostgreSQL database and
/// the folder of files every node shares.
struct DataOptions: ParsableArguments {
    @Option(name: .long, help: "Data folder (env FAULTLINE_DATA; default ./data).")
    var data: String?

    @Option(
        name: .long,
        help:
            "A PostgreSQL database instead of SQLite in the data folder: postgres://USER@HOST[:PORT]/DATABASE[?sslmode=…] (env FAULTLINE_DATABASE_URL; the password from FAULTLINE_DATABASE_PASSWORD when the URL has none)."
    )
    var database: String?

    @Option(
        name: .long,
        help:
            "With --database: the folder for debug files, sentry-cli chunks and the rendered dashboard; every node must share it (env FAULTLINE_BLOBS; default: the data folder)."
    )
    var blobs: String?

    var folder: String { data ?? Environment.string("FAULTLINE_DATA") ?? "data" }

    /// The PostgreSQL URL, when one is given (`--database`, else `FAULTLINE_DATABASE_URL`).
    var databaseURL: String? { database ?? Environment.string("FAULTLINE_DATABASE_URL") }

    /// Where the files are: the data folder, or with PostgreSQL the shared folder (`--blobs`, else `FAULTLINE_BLOBS`,
    /// else the data folder).
    var filesFolder: String {
        databaseURL == nil ? folder : blobs ?? Environment.string("FAULTLINE_BLOBS") ?? folder
    }

    func validate() throws {
        if let url = databaseURL {
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw ValidationError(
                    "--database must be a postgres:// URL (without it, SQLite in the data folder is used)")
            }
        } else if blobs != nil {
            throw ValidationError("--blobs goes with --database (with SQLite, every file lives in the data folder)")
        }
    }

    /// The engine these options name.
    func choice(
        durability: SQLiteEngine.Durability, claimLease: Duration,
        requestDeadline: Duration = PostgresEngine.defaultRequestDeadline
    ) -> EngineChoice {
        guard let url = databaseURL else { return .sqlite(durability: durability) }
        return .postgres(
            url: url, password: Environment.string("FAULTLINE_DATABASE_PASSWORD"), claimLease: claimLease,
            requestDeadline: requestDeadline)
    }

    /// Opens the data these options name.
    func open(
        durability: SQLiteEngine.Durability = .full, claimLease: Duration = PostgresEngine.defaultClaimLease,
        requestDeadline: Duration = PostgresEngine.defaultRequestDeadline, clock: any WallClock = SystemClock()
    ) async throws -> Composition {
        try await Composition.open(
            folder: filesFolder,
            choice: choice(durability: durability, claimLease: claimLease, requestDeadline: requestDeadline),
            clock: clock)
    }

    /// Runs `body` with the data open, and closes it afterwards (also when `body` throws). A command that changes what
    /// the dashboard shows says `announcing`: with PostgreSQL the node that renders it then redraws (nodes learn of
    /// changes made elsewhere only so; a failed announcement leaves the change to the next one).
    func withComposition<T>(announcing: Bool = false, _ body: (Composition) async throws -> T) async throws -> T {
        let root = try await open()
        let result: T
        do {
            result = try await body(root)
            if announcing { try? await root.announceChange() }
        } catch {
            try? await root.close()
            throw error
        }
        try await root.close()
        return result
    }
}
