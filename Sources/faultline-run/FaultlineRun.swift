import ArgumentParser
import FaultlineSDK
import Foundation

/// `faultline-run [options] -- PROGRAM ARGS…`: runs a program with crash reporting and sessions.
struct FaultlineRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultline-run",
        abstract: "Runs a program with crash reporting and sessions, without changing it.",
        discussion: """
            The program runs with SWIFT_BACKTRACE set so that the Swift runtime writes a JSON crash file, and \
            traced, so that a native crash is written as a minidump the server walks; when it dies, the crash (with the context an SDK inside left, the last lines of its standard error) and the \
            run's session are sent at once. Signals are passed through and the exit status is the program's. \
            Reporting never stops the program from running: without a DSN, or when the server is down, reports \
            wait in the state folder's queue for the next run.
            """)

    @Option(help: "Where to send: http(s)://KEY@HOST[:PORT]/PROJECT (env: FAULTLINE_DSN).")
    var dsn: String?

    @Option(help: "The program's version (env: FAULTLINE_RELEASE).")
    var release: String?

    @Option(help: "The build number, kept beneath the release.")
    var build: String?

    @Option(help: "The environment, e.g. production (env: FAULTLINE_ENVIRONMENT).")
    var environment: String?

    @Option(name: .customLong("app-id"), help: "The package or bundle id.")
    var appID: String?

    @Option(
        name: .customLong("state-dir"),
        help: """
            The state folder, yours alone: one another user could change turns reporting off (env: \
            FAULTLINE_STATE_DIR; default ~/.local/state/faultline/<program>).
            """)
    var stateDirectory: String?

    @Option(name: .customLong("send-timeout"), help: "Seconds to spend sending once the program has ended.")
    var sendTimeout: Double = 10

    @Flag(
        name: .customLong("no-trace"),
        help: """
            Do not trace the program: a native crash is then reported as its signal, without a minidump and \
            its stack (env: FAULTLINE_NO_TRACE=1). For programs that take many signals or start threads by the \
            thousand, where tracing costs time, or when another tool must trace the program.
            """)
    var noTrace = false

    @Argument(parsing: .postTerminator, help: "The program and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        guard let program = command.first, !program.isEmpty else {
            throw ValidationError("Missing the program to run: faultline-run [options] -- PROGRAM [ARGS…]")
        }
        guard sendTimeout.isFinite, sendTimeout >= 0, sendTimeout <= 3600 else {
            throw ValidationError("--send-timeout must be between 0 and 3600 seconds")
        }
    }

    func run() throws {
        // Before anything can start a thread: every thread inherits the blocked signals.
        let ignored = ChildProcess.takeOverSignals()
        let env = ProcessInfo.processInfo.environment
        func pick(_ option: String?, _ name: String) -> String? {
            (option ?? env[name]).flatMap { $0.isEmpty ? nil : $0 }
        }
        let settings = Launcher.Settings(
            dsn: pick(dsn, "FAULTLINE_DSN"), release: pick(release, "FAULTLINE_RELEASE"), build: build,
            environment: pick(environment, "FAULTLINE_ENVIRONMENT"), appID: appID,
            stateDirectory: pick(stateDirectory, "FAULTLINE_STATE_DIR")
                ?? StateFolder.defaultPath(
                    program: Launcher.programName(command[0]), environment: env),
            sendTimeout: sendTimeout,
            trace: !(noTrace || ["1", "yes", "true"].contains(env["FAULTLINE_NO_TRACE"]?.lowercased() ?? "")))
        let launcher = Launcher(settings: settings, command: command, environment: env, inheritedIgnored: ignored)
        exitLikeChild(launcher.run())
    }
}
