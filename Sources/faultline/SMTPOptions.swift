import ArgumentParser
import FaultlineApp
import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The SMTP server alert mail goes through: `faultline serve` and `faultline alerts test-email` take the same flags and
/// `FAULTLINE_*` variables. The password is never a flag (it would show in `ps` and shell history): it comes from
/// `FAULTLINE_SMTP_PASSWORD` or from the file `--smtp-password-file` names.
struct SMTPOptions: ParsableArguments {
    @Option(help: "SMTP server for alert mail (env FAULTLINE_SMTP_HOST); without one, no mail is sent.")
    var smtpHost: String?
    @Option(help: "SMTP port (env FAULTLINE_SMTP_PORT; default 587, 465 with --smtp-security tls, 25 with none).")
    var smtpPort: Int?
    @Option(help: "starttls, tls (implicit, port 465) or none (env FAULTLINE_SMTP_SECURITY; default starttls).")
    var smtpSecurity: String?
    @Option(
        help:
            "User name for SMTP AUTH (env FAULTLINE_SMTP_USER); the password comes from FAULTLINE_SMTP_PASSWORD or --smtp-password-file."
    )
    var smtpUser: String?
    @Option(
        help: "A file holding the SMTP password (env FAULTLINE_SMTP_PASSWORD_FILE); one trailing newline is dropped.")
    var smtpPasswordFile: String?
    @Option(help: "The address mail comes from (env FAULTLINE_MAIL_FROM); needed with --smtp-host.")
    var mailFrom: String?
    @Option(help: "The name mail comes from (env FAULTLINE_MAIL_FROM_NAME; default Faultline).")
    var mailFromName: String?
    @Option(help: "A PEM file of CA certificates trusted besides the system's (env FAULTLINE_SMTP_CA_FILE).")
    var smtpCaFile: String?
    @Option(
        help: "Seconds to wait for the connection and for each reply (env FAULTLINE_SMTP_TIMEOUT_SECONDS; default 30).")
    var smtpTimeoutSeconds: Double?

    /// The settings, nil when no SMTP host is given; a bad value is a `ValidationError` naming the flag or variable.
    func settings(_ env: Environment) throws -> SMTPSettings? {
        guard let host = smtpHost ?? env.string("FAULTLINE_SMTP_HOST") else { return nil }
        guard !host.isEmpty, host.utf8.count <= 253, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" })
        else { throw ValidationError("--smtp-host must be a host name or address") }
        let securityName =
            try smtpSecurity ?? env.choice("FAULTLINE_SMTP_SECURITY", SMTPSettings.Security.allCases.map(\.rawValue))
            ?? "starttls"
        guard let security = SMTPSettings.Security(rawValue: securityName) else {
            throw ValidationError("--smtp-security must be starttls, tls or none")
        }
        let defaultPort = security == .tls ? 465 : security == .none ? 25 : 587
        let port: Int
        if let smtpPort {
            guard (1...65535).contains(smtpPort) else { throw ValidationError("--smtp-port must be 1–65535") }
            port = smtpPort
        } else {
            port = try env.int("FAULTLINE_SMTP_PORT", in: 1...65535) ?? defaultPort
        }
        guard let fromText = mailFrom ?? env.string("FAULTLINE_MAIL_FROM") else {
            throw ValidationError("--mail-from (or FAULTLINE_MAIL_FROM) is needed with --smtp-host")
        }
        guard let from = MailAddress(fromText) else {
            throw ValidationError(
                "--mail-from must be an e-mail address like faultline@example.com, not \"\(fromText)\"")
        }
        let user = smtpUser ?? env.string("FAULTLINE_SMTP_USER")
        var password = env.values["FAULTLINE_SMTP_PASSWORD"]
        if let file = smtpPasswordFile ?? env.string("FAULTLINE_SMTP_PASSWORD_FILE") {
            let bytes: Data
            do {
                bytes = try Data(contentsOf: URL(filePath: file))
            } catch {
                throw ValidationError("--smtp-password-file: cannot read \(file)")
            }
            var text = String(decoding: bytes, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            password = text
        }
        if user != nil && password == nil {
            throw ValidationError("--smtp-user needs a password: FAULTLINE_SMTP_PASSWORD or --smtp-password-file")
        }
        if user != nil && security == .none && !(host == "localhost" || host.hasPrefix("127.") || host == "::1") {
            throw ValidationError("--smtp-user with --smtp-security none would send the password in clear text")
        }
        let seconds: Double
        if let smtpTimeoutSeconds {
            guard smtpTimeoutSeconds.isFinite, (0.1...600).contains(smtpTimeoutSeconds) else {
                throw ValidationError("--smtp-timeout-seconds must be 0.1–600")
            }
            seconds = smtpTimeoutSeconds
        } else {
            seconds = try env.double("FAULTLINE_SMTP_TIMEOUT_SECONDS", in: 0.1...600) ?? 30
        }
        let name = mailFromName ?? env.string("FAULTLINE_MAIL_FROM_NAME") ?? "Faultline"
        return SMTPSettings(
            host: host, port: port, security: security, username: user, password: password, from: from,
            fromName: name, caFile: smtpCaFile ?? env.string("FAULTLINE_SMTP_CA_FILE"),
            timeout: .milliseconds(Int64((seconds * 1000).rounded())))
    }
}
