import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Alerts {
    /// `faultline alerts test-email --to ADDR`: one mail through the configured SMTP server, and what failed if not.
    struct TestEmail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test-email",
            abstract: "Send one test mail through the SMTP server `faultline serve` would use; says what failed.")
        @OptionGroup var smtp: SMTPOptions
        @Option(help: "The address to send the test mail to.") var to: String

        func validate() throws {
            guard MailAddress(to) != nil else { throw ValidationError("--to must be an e-mail address, not \"\(to)\"") }
        }

        func run() async throws {
            guard let settings = try smtp.settings(Environment.current), let to = MailAddress(to) else {
                throw ValidationError("no SMTP server: give --smtp-host (or FAULTLINE_SMTP_HOST) and --mail-from")
            }
            let sender = try SMTPSender(settings: settings)
            let now = Date()
            let id = MailMessage.messageID(
                kind: "test", id: Int64(now.timeIntervalSince1970), recipient: to, domain: settings.from.domain)
            let text = "This is a test mail from Faultline, sent through \(settings.host):\(settings.port).\n"
            let message = MailMessage.compose(
                from: settings.from, fromName: settings.fromName, to: to,
                content: MailContent(
                    subject: "Faultline test mail", text: text,
                    html: "<!DOCTYPE html><html><body><p>\(MailMessage.html(text))</p></body></html>\n"),
                messageID: id, date: now)
            let via =
                "\(settings.host):\(settings.port) (\(settings.security.rawValue)\(settings.username == nil ? "" : ", AUTH as \(settings.username ?? "")"))"
            do {
                try await sender.send(to: to, message: message)
                print("sent to \(to) via \(via), Message-ID \(id)")
            } catch let failure as MailFailure {
                Console.write("faultline: mail to \(to) via \(via) failed: \(Self.explain(failure))\n", fd: 2)
                throw ExitCode.failure
            }
        }

        /// What a failure means, in words an operator can act on.
        static func explain(_ failure: MailFailure) -> String {
            let reply = failure.reply.map { " (\($0))" } ?? ""
            switch failure.code {
            case .connectionFailed: return "could not connect or the connection broke\(reply)"
            case .timeout: return "the server did not answer in time\(reply)"
            case .tls: return "the TLS handshake failed: is the certificate trusted (--smtp-ca-file)?\(reply)"
            case .startTLSUnavailable:
                return "the server does not offer STARTTLS (use --smtp-security tls or none)\(reply)"
            case .authFailed: return "authentication failed\(reply)"
            case .refused: return "the server refused the mail\(reply)"
            case .badReply: return "the server's answer was not SMTP\(reply)"
            }
        }
    }

    /// `faultline alerts mail SLUG --person LOGIN --kinds …`: which alerts a person gets by e-mail.
    struct Mail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Choose which of a project's alerts a person gets by e-mail; prints their choices.")
        @OptionGroup var dataOptions: DataOptions
        @Argument(help: "The project's slug.") var project: String
        @Option(help: "The person's login (an e-mail address).") var person: String
        @Option(
            help:
                "Alert kinds, comma-separated: new_issue, regression, velocity, crash_free_target, storage_full, quota_reached; all; '' for none."
        )
        var kinds: String?
        @Option(help: "Digest: none, daily or weekly.") var digest: String?

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let found = try await Alerts.project(project, root)
            guard let login = PersonLogin(person.lowercased()), let who = try await root.people.person(login: login)
            else { throw ValidationError("no person '\(person)'") }
            let mail = root.alertMail
            let before = try await mail.preference(of: who.id, in: found.id)
            var preference = before
            if let kinds {
                let parsed = AlertMailPreference.parseKinds(kinds)
                guard let chosen = parsed.kinds else {
                    throw ValidationError("--kinds: unknown alert kind '\(parsed.unknown ?? kinds)'")
                }
                preference.kinds = chosen
            }
            if let digest {
                guard let cadence = DigestCadence(rawValue: digest) else {
                    throw ValidationError("--digest must be none, daily or weekly")
                }
                preference.digest = cadence
            }
            do {
                // The same rules and audit entry as the account page's form (`AlertMailPreferences`).
                try await mail.set(preference, for: who, by: .cli)
            } catch let error as PeopleError {
                throw ValidationError(
                    error.code == .unknownProject ? "\(person) is not a member of \(project)" : error.message)
            }
            print("\(who.login) \(project): \(preference.shown)")
        }
    }
}
