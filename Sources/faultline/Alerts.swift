import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline alerts show|configure|mail SLUG`, `faultline alerts test-email`.
struct Alerts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or change a project's alert settings (thresholds, stability target, webhook, e-mail).",
        subcommands: [Show.self, Configure.self, Mail.self, TestEmail.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a project's alert settings as JSON.")
        @OptionGroup var dataOptions: DataOptions
        @Argument(help: "The project's slug.") var project: String

        func run() async throws {
            try await dataOptions.withComposition { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let found = try await Alerts.project(project, root)
            print(try Alerts.json(try await root.alertStore.settings(project: found.id)))
        }
    }

    struct Configure: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change some of a project's alert settings; prints them all.")
        @OptionGroup var dataOptions: DataOptions
        @Argument(help: "The project's slug.") var project: String

        @Option(help: "Webhook URL alerts are POSTed to (Slack-compatible JSON); '' removes it.")
        var webhook: String?
        @Option(help: "Velocity: share of the release's sessions in the window, in percent (default 1).")
        var velocityPercent: Double?
        @Option(help: "Velocity: users affected in the window (default 25).")
        var velocityMinUsers: Int?
        @Option(help: "Velocity: users on the release in the window (default 10).")
        var velocityMinReleaseUsers: Int?
        @Option(help: "Velocity: window in minutes (default 30).")
        var velocityWindowMinutes: Int?
        @Option(help: "Stability target for crash-free sessions in percent, e.g. 99.5; 0 turns it off.")
        var crashFreeTarget: Double?
        @Option(help: "Judge the target only on days with at least this many sessions (default 100).")
        var crashFreeMinSessions: Int?
        @Option(help: "Alert on new issues: true or false.")
        var newIssues: Bool?
        @Option(help: "Alert on regressions: true or false.")
        var regressions: Bool?
        @Option(help: "At most this many new issues per window; the rest are held in one overflow issue (default 100).")
        var newIssueCap: Int?
        @Option(help: "The new-issue cap's window in minutes (default 60).")
        var newIssueWindowMinutes: Int?
        @Flag(
            help:
                "Accept a webhook on a loopback, private or link-local address (env FAULTLINE_ALLOW_PRIVATE_WEBHOOKS=1); the server must allow it too."
        )
        var allowPrivateWebhooks = false

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let found = try await Alerts.project(project, root)
            let before = try await root.alertStore.settings(project: found.id)
            var settings = before
            if let webhook { settings.webhookURL = webhook.isEmpty ? nil : webhook }
            if let velocityPercent { settings.velocityPercent = velocityPercent }
            if let velocityMinUsers { settings.velocityMinUsers = velocityMinUsers }
            if let velocityMinReleaseUsers { settings.velocityMinReleaseUsers = velocityMinReleaseUsers }
            if let velocityWindowMinutes { settings.velocityWindowMinutes = velocityWindowMinutes }
            if let crashFreeTarget { settings.crashFreeTarget = crashFreeTarget == 0 ? nil : crashFreeTarget }
            if let crashFreeMinSessions { settings.crashFreeMinSessions = crashFreeMinSessions }
            if let newIssues { settings.alertOnNewIssue = newIssues }
            if let regressions { settings.alertOnRegression = regressions }
            if let newIssueCap { settings.newIssueCap = newIssueCap }
            if let newIssueWindowMinutes { settings.newIssueWindowMinutes = newIssueWindowMinutes }
            let allow =
                try allowPrivateWebhooks || (Environment.current.bool("FAULTLINE_ALLOW_PRIVATE_WEBHOOKS") ?? false)
            let change = AlertSettingsChange(
                store: root.alertStore, targets: root.webhookTargetPolicy(allowPrivate: allow), audit: root.audit,
                clock: root.clock)
            do {
                try await change.apply(settings, project: found, by: .cli)
            } catch let refusal as AlertSettingsRefusal {
                throw ValidationError(refusal.description)
            } catch let problem as WebhookTargetProblem {
                throw ValidationError("webhook_url: \(problem.message)")
            }
            print(try Alerts.json(settings))
        }
    }

    static func project(_ slug: String, _ root: Composition) async throws -> Project {
        guard let parsed = ProjectSlug(slug), let found = try await root.projects.project(slug: parsed) else {
            throw ValidationError("no project '\(slug)'")
        }
        return found
    }

    static func json(_ settings: AlertSettings) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(settings), as: UTF8.self)
    }
}
