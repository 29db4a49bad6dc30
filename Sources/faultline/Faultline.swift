import ArgumentParser

/// The `faultline` command: the server and its admin CLI.
@main
struct Faultline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultline",
        abstract: "A self-hosted crash and error collection server.",
        subcommands: [Serve.self, Projects.self, AdminToken.self, Issues.self, Alerts.self, Render.self, Compact.self, Migrate.self])
}

/// The data folder, shared by every command that opens it.
struct DataOptions: ParsableArguments {
    @Option(name: .long, help: "Data folder (env FAULTLINE_DATA; default ./data).")
    var data: String?

    var folder: String { data ?? Environment.string("FAULTLINE_DATA") ?? "data" }
}
