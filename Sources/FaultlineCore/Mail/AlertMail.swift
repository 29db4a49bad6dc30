#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How often a person wants a project's digest mail.
public enum DigestCadence: String, Sendable, CaseIterable, Codable {
    case none, daily, weekly
}

/// One person's mail preferences for one project: the alert kinds they want by e-mail and their digest. No row
/// means no mail: a member opts in (issue #37, "recipients per project are members who opted in").
public struct AlertMailPreference: Sendable, Equatable {
    public var person: PersonID
    public var project: ProjectID
    /// The kinds mailed; `storage_full` brings `storage_ok` with it.
    public var kinds: Set<AlertKind>
    public var digest: DigestCadence
    public init(person: PersonID, project: ProjectID, kinds: Set<AlertKind>, digest: DigestCadence) {
        self.person = person
        self.project = project
        self.kinds = kinds
        self.digest = digest
    }

    /// The kinds a person can choose (`storage_ok` follows `storage_full`).
    public static let choosableKinds: [AlertKind] = [
        .newIssue, .regression, .velocity, .crashFreeTarget, .storageFull, .quotaReached,
    ]

    /// The stored form of `kinds`: choosable kinds in their fixed order, comma-separated.
    public var storedKinds: String {
        Self.choosableKinds.filter { kinds.contains($0) }.map(\.rawValue).joined(separator: ",")
    }

    /// Kinds from their stored form; unknown names are skipped.
    public static func kinds(stored: String) -> Set<AlertKind> {
        Set(stored.split(separator: ",").compactMap { AlertKind(rawValue: String($0)) })
    }

    /// Kinds from a comma-separated list a person typed (`velocity,new_issue`, or `all`); nil and the first unknown
    /// name when one is not a choosable kind.
    public static func parseKinds(_ text: String) -> (kinds: Set<AlertKind>?, unknown: String?) {
        if text == "all" { return (Set(choosableKinds), nil) }
        var kinds: Set<AlertKind> = []
        for name in text.split(separator: ",", omittingEmptySubsequences: true) {
            let name = String(name.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
            guard let kind = AlertKind(rawValue: name), choosableKinds.contains(kind) else { return (nil, name) }
            kinds.insert(kind)
        }
        return (kinds, nil)
    }
}

extension AlertMailPreference {
    /// How the audit trail shows a choice: `kinds new_issue,velocity; digest weekly`.
    public var shown: String { "kinds \(storedKinds.isEmpty ? "none" : storedKinds); digest \(digest.rawValue)" }
}

extension AuditKind {
    /// A person's choice of alert mail and digest for a project (`AlertMailPreference`).
    public static let memberMail = AuditKind(known: "member.mail")
}

/// Someone an alert is mailed to.
public struct MailRecipient: Sendable, Equatable {
    public var person: PersonID
    public var address: MailAddress
    public init(person: PersonID, address: MailAddress) {
        self.person = person
        self.address = address
    }
}

/// Where people's mail preferences are kept (`alert_mail_preferences`, v35 / pg20).
public protocol AlertMailStore: Sendable {
    /// A person's preferences, one per project they chose something for.
    func mailPreferences(person: PersonID) async throws -> [AlertMailPreference]
    /// Stores a preference (no kinds and no digest deletes it); false when the person or the project does not exist.
    @discardableResult
    func setMailPreference(_ preference: AlertMailPreference) async throws -> Bool
    /// Who gets `kind` of `project` by mail: people with an e-mail login who are members of the project (or server
    /// owners) and chose the kind, by person id.
    func mailRecipients(project: ProjectID, kind: AlertKind) async throws -> [MailRecipient]
    /// Who chose `cadence` digests, with the same rule as ``mailRecipients(project:kind:)``, by project then person.
    func digestSubscribers(cadence: DigestCadence) async throws -> [DigestSubscriber]
    /// Whether the digest of `period` for this person and project was made already.
    func digestMade(project: ProjectID, person: PersonID, period: DigestPeriod) async throws -> Bool
    /// Queues a digest mail; false when the period's digest was made already (each is made once).
    @discardableResult
    func queueDigest(
        project: ProjectID, person: PersonID, period: DigestPeriod, recipient: MailAddress, body: [UInt8], at date: Date
    ) async throws -> Bool
    /// Pending digests due at `now`, oldest first (on PostgreSQL claimed for a lease, as webhook deliveries are).
    func dueDigests(now: Date, limit: Int) async throws -> [DigestDelivery]
    /// Records a digest attempt's outcome.
    func recordDigestAttempt(_ id: Int64, outcome: DeliveryOutcome, at date: Date) async throws
    /// The key that signs unsubscribe links: `fresh` (32 random bytes) is stored the first time, and every later call
    /// returns the stored key.
    func mailSecret(fresh: [UInt8]) async throws -> [UInt8]
}

/// A person who chose a project's digest.
public struct DigestSubscriber: Sendable, Equatable {
    public var project: ProjectID
    public var recipient: MailRecipient
    public init(project: ProjectID, recipient: MailRecipient) {
        self.project = project
        self.recipient = recipient
    }
}

/// One digest mail waiting in its outbox.
public struct DigestDelivery: Sendable, Equatable {
    public var id: Int64
    public var recipient: String
    public var body: [UInt8]
    public var attempts: Int
    public init(id: Int64, recipient: String, body: [UInt8], attempts: Int) {
        self.id = id
        self.recipient = recipient
        self.body = body
        self.attempts = attempts
    }
}

/// The mail of one alert: the same words as the webhook's text, a link to the page, and why the person gets it.
public enum AlertMail {
    public static func content(for alert: Alert, projectSlug: String, link: String?, preferencesURL: String?)
        -> MailContent
    {
        // AlertRules.text escapes `&`, `<` and `>` (Slack's rule), which is also what HTML text needs.
        let escaped = AlertRules.text(
            project: projectSlug, kind: alert.kind, title: alert.title, release: alert.release, reason: alert.reason,
            link: nil)
        let plain = unescape(escaped)
        var text = plain + "\n"
        var html = "<!DOCTYPE html><html><body><p>\(escaped.replacing("\"", with: "&quot;"))</p>"
        if let link {
            text += "\n\(link)\n"
            html += "<p><a href=\"\(MailMessage.html(link))\">Open in Faultline</a></p>"
        }
        let why = "You get this mail because you chose \(alert.kind.rawValue) alerts of \(projectSlug) in Faultline."
        text += "\n-- \n\(why)\n"
        html += "<hr><p style=\"color:#555\">\(MailMessage.html(why))"
        if let preferencesURL {
            text += "Change what you get: \(preferencesURL)\n"
            html += " <a href=\"\(MailMessage.html(preferencesURL))\">Change what you get</a>."
        }
        html += "</p></body></html>\n"
        return MailContent(subject: String(plain.prefix(200)), text: text, html: html)
    }

    /// Undoes ``SlackText/escape(_:)``.
    static func unescape(_ text: String) -> String {
        text.replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&amp;", with: "&")
    }
}
