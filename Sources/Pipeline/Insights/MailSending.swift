import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends one mail through the configured SMTP server; throws a ``MailFailure``.
public protocol MailSending: Sendable {
    /// The envelope sender (`MAIL FROM`) and the address the `From:` header shows.
    var from: MailAddress { get }
    /// Hands `message` (RFC 5322 bytes, CRLF line ends) for `to` to the server; returns when it accepted it (250
    /// after the message's end).
    func send(to: MailAddress, message: [UInt8]) async throws
}

/// Why a mail was not handed over, as a fixed class, whether trying again may help, and the server's reply (code and
/// first line, printable ASCII) when one was the reason. The outbox stores only the class and the code, like a
/// webhook's; `faultline alerts test-email` prints the reply too.
public struct MailFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        /// No TCP connection could be made (refused, unreachable, unresolvable).
        case connectionFailed = "connection_failed"
        /// The server did not answer within the timeout.
        case timeout
        /// The TLS handshake failed (certificate not trusted, name mismatch, protocol).
        case tls = "tls_failed"
        /// STARTTLS was required but the server did not offer it (never sent in clear text instead).
        case startTLSUnavailable = "starttls_unavailable"
        /// The server refused the user name and password, or offers no mechanism we speak.
        case authFailed = "auth_failed"
        /// The server refused the sender, the recipient or the message.
        case refused
        /// The server's bytes were not SMTP replies (``SMTPReplyProblem``), or a reply came out of turn.
        case badReply = "bad_reply"
    }
    public var code: Code
    /// 4xx replies and connection problems may pass later; 5xx replies will not.
    public var transient: Bool
    /// The reply that made it fail (``SMTPReply/summary``).
    public var reply: String?
    public init(_ code: Code, transient: Bool, reply: String? = nil) {
        self.code = code
        self.transient = transient
        self.reply = reply
    }
    public var description: String { reply.map { "\(code.rawValue): \($0)" } ?? code.rawValue }
}

/// What the alert outbox needs to mail alerts: who wants which kind, and the sender.
public struct AlertMailer: Sendable {
    let recipients: any AlertMailStore
    let sender: any MailSending
    /// The name the `From:` header shows.
    let fromName: String

    public init(recipients: any AlertMailStore, sender: any MailSending, fromName: String = "Faultline") {
        self.recipients = recipients
        self.sender = sender
        self.fromName = fromName
    }

    /// The outbox URL of a mail delivery: `mailto:` and the address.
    public static func outboxURL(_ address: MailAddress) -> String { "mailto:\(address)" }

    /// The address of a `mailto:` outbox URL, nil for a webhook's.
    public static func address(outboxURL url: String) -> MailAddress? {
        guard url.hasPrefix("mailto:") else { return nil }
        return MailAddress(String(url.dropFirst("mailto:".count)))
    }

    /// The outbox rows that mail `alert` to everyone who chose its kind; each message carries a `Message-ID` made
    /// of the alert's id and the recipient, so a retry (or a second node's attempt) is recognisably the same mail.
    func deliveries(for alert: Alert, projectSlug: String, publicURL: String?, now: Date) async throws
        -> [(alert: Int64, url: String, body: [UInt8])]
    {
        let kind = alert.kind == .storageOK ? AlertKind.storageFull : alert.kind
        let people = try await recipients.mailRecipients(project: alert.project, kind: kind)
        guard !people.isEmpty else { return [] }
        let link = WebhookMessage.link(for: alert, projectSlug: projectSlug, publicURL: publicURL)
        let preferences = publicURL.map { ($0.hasSuffix("/") ? String($0.dropLast()) : $0) + "/account#alerts" }
        let content = AlertMail.content(
            for: alert, projectSlug: projectSlug, link: link, preferencesURL: preferences)
        return people.map { person in
            let id = MailMessage.messageID(
                kind: "alert", id: alert.id, recipient: person.address, domain: sender.from.domain)
            let message = MailMessage.compose(
                from: sender.from, fromName: fromName, to: person.address, content: content, messageID: id,
                date: now)
            return (alert.id, Self.outboxURL(person.address), message)
        }
    }
}
