import ArgumentParser

/// `symupload`: uploads ELF debug files to a Faultline server from CI.
///
/// Only the command line exists so far; the upload itself arrives with the symbols work (debug-file
/// store, symbolicator). Running it says so and exits with status 2 rather than pretending to upload.
@main
struct Symupload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "symupload",
        abstract: "Upload ELF debug files (executables, shared libraries, split debug files) to Faultline.",
        discussion: "Not implemented yet: the debug-file store and upload arrive with the symbols work.")

    @Option(help: "Faultline server URL (env FAULTLINE_URL).") var server: String?
    @Option(help: "The project's upload token (env FAULTLINE_UPLOAD_TOKEN).") var token: String?
    @Flag(help: "List what would be uploaded, upload nothing.") var dryRun = false
    @Argument(help: "Files or folders to scan for ELF files.") var paths: [String] = []

    func run() throws {
        print("symupload: uploading is not implemented yet (see the symbols issue); nothing was uploaded.")
        throw ExitCode(2)
    }
}
