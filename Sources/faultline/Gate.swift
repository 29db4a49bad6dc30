import ArgumentParser
import FaultlineApp
import FaultlineCore
import FaultlineHTTP

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline gate --project P --release R`: the release gate for CI (docs/release-gate.md). Exits 0 (pass), 1 (fail)
/// or 2 (not enough data yet), always printing its reasons; 3 when it could not judge (no such project, a server that
/// cannot be reached or refuses the token), so a pipeline never reads a broken gate as a verdict.
///
/// Like the other commands it opens the data folder (or `--database`); with `--server` it asks a running server's
/// `GET /api/v1/releases/{r}/gate` instead, which is what a CI runner without the database does.
struct Gate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Judge a release for CI: exit 0 pass, 1 fail, 2 not enough data yet (3: could not judge).",
        discussion: """
            A release fails when even the optimistic end of the Wilson interval of its crash-free users or sessions is \
            below the project's target, when it brings new fatal issues or hits regressed crashes (more than allowed), \
            or when its crash-free sessions are wholly below the baseline release's over the same window since each \
            one's start. Otherwise it has not enough data below --min-sessions, and passes from there.
            """)

    @OptionGroup var dataOptions: DataOptions

    @Option(help: "The project's slug.")
    var project: String

    @Option(help: "The release to judge (as the SDKs send it: 2.4.0, com.example.app@2.4.0+240).")
    var release: String

    @Option(help: "The release to compare with (default: the newest named release before it that has sessions).")
    var baseline: String?

    @Option(help: "Below this many sessions a release that failed nothing has not enough data (default 100).")
    var minSessions: Int = ReleaseGatePolicy.defaultMinSessions

    @Option(help: "Confidence level of the intervals, 0.5–0.9999 (default 0.95).")
    var confidence: Double = ReleaseGatePolicy.defaultConfidence

    @Option(help: "New fatal issues the release may bring (default 0).")
    var maxNewFatal: Int = 0

    @Option(help: "Regressed crashes the release may hit (default 0).")
    var maxRegressed: Int = 0

    @Option(help: "Match the baseline's window by days since its start, or by sessions (days|sessions; default days).")
    var baselineWindow: String = BaselineWindow.days.rawValue

    @Option(
        help:
            "Ask the server at this URL instead of opening the data (env FAULTLINE_SERVER); the token comes from FAULTLINE_TOKEN (the project's upload token, or the admin token)."
    )
    var server: String?

    @Flag(help: "Print the gate as JSON (the API's answer).")
    var json = false

    /// The exit status when the gate could not be judged.
    static let couldNotJudge: Int32 = 3

    var serverURL: String? { server ?? Environment.string("FAULTLINE_SERVER") }

    func validate() throws {
        guard ProjectSlug(project) != nil else { throw ValidationError("--project must be a project's slug") }
        guard ReleaseName.parse(release) != nil else { throw ValidationError("--release must name a release") }
        if let baseline, ReleaseName.parse(baseline) == nil {
            throw ValidationError("--baseline must name a release")
        }
        guard BaselineWindow(rawValue: baselineWindow) != nil else {
            throw ValidationError("--baseline-window must be days or sessions")
        }
        if let problem = policy(targets: CrashFreeTargets()).problem {
            throw ValidationError("--\(problem.field.replacingOccurrences(of: "_", with: "-")) \(problem.message)")
        }
        if let serverURL, !(serverURL.hasPrefix("http://") || serverURL.hasPrefix("https://")) {
            throw ValidationError("--server must be an http:// or https:// URL")
        }
    }

    /// The policy of the options, with the project's targets.
    func policy(targets: CrashFreeTargets) -> ReleaseGatePolicy {
        ReleaseGatePolicy(
            targets: targets, minSessions: minSessions, confidence: confidence, maxNewFatalIssues: maxNewFatal,
            maxRegressedIssues: maxRegressed, baselineWindow: BaselineWindow(rawValue: baselineWindow) ?? .days)
    }

    func run() async throws {
        let answer: ReleaseGateOut
        if let serverURL {
            answer = try await ask(serverURL)
        } else {
            answer = try await dataOptions.withComposition { try await judge(on: $0) }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(answer), as: UTF8.self))
        } else {
            print("release \(answer.release) of \(answer.project): \(answer.reasons.first ?? answer.verdict)")
            for reason in answer.reasons.dropFirst() { print("  - \(reason)") }
        }
        if answer.exitCode != 0 { throw ExitCode(answer.exitCode) }
    }

    /// Judges from the data through the function the API answers with (`InsightsReader.releaseGate`).
    func judge(on root: Composition) async throws -> ReleaseGateOut {
        guard let slug = ProjectSlug(project), let found = try await root.projects.project(slug: slug) else {
            throw Self.failure("no project '\(project)'")
        }
        let gate = try await root.insights.releaseGate(
            project: found.id, release: ReleaseName.release(of: release),
            baseline: baseline.map { ReleaseName.release(of: $0) },
            policy: policy(targets: found.targets), now: root.clock.now())
        return ReleaseGateOut(project: found.slug.rawValue, gate: gate)
    }

    /// Asks the server at `base` for the gate.
    func ask(_ base: String) async throws -> ReleaseGateOut {
        guard let token = Environment.string("FAULTLINE_TOKEN"), !token.isEmpty else {
            throw Self.failure("--server needs the token in FAULTLINE_TOKEN")
        }
        let url = base.hasSuffix("/") ? String(base.dropLast()) : base
        let answer: ServerRead.Answer
        do {
            answer = try await ServerRead.get(
                url + "/api/v1/releases/\(IssueListFilter.percentEncoded(release))/gate?" + query, token: token)
        } catch {
            throw Self.failure("could not reach \(url): \(error)")
        }
        guard answer.status == 200 else {
            throw Self.failure(
                "\(url) answered \(answer.status): \(String(decoding: answer.body.prefix(2000), as: UTF8.self))")
        }
        guard let gate = try? JSONDecoder().decode(ReleaseGateOut.self, from: Data(answer.body)) else {
            throw Self.failure("\(url) did not answer a gate")
        }
        // An upload token reads its own project whatever `?project=` says: a token of another project is refused
        // rather than judged on the wrong project.
        guard gate.project == project else {
            throw Self.failure("the token belongs to project '\(gate.project)', not '\(project)'")
        }
        return gate
    }

    /// The query of the options (the project for an admin token; an upload token's project is its own).
    var query: String {
        var items = [
            "project=\(IssueListFilter.percentEncoded(project))", "min_sessions=\(minSessions)",
            "confidence=\(confidence)", "max_new_fatal=\(maxNewFatal)", "max_regressed=\(maxRegressed)",
            "baseline_window=\(baselineWindow)",
        ]
        if let baseline { items.append("baseline=\(IssueListFilter.percentEncoded(baseline))") }
        return items.joined(separator: "&")
    }

    /// Prints `message` and exits 3: the gate could not be judged.
    static func failure(_ message: String) -> ExitCode {
        Console.write("faultline gate: \(message)\n", fd: 2)
        return ExitCode(couldNotJudge)
    }
}
