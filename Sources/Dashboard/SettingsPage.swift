import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A project's settings page (`<slug>/settings`, rendered live for each request): its people and roles, alert
/// settings, crash-free targets, privacy and in-app rules, and its audit trail. A reader who may change settings gets
/// the forms, each with the session's CSRF token; every other reader the same values without a control.
///
/// Forms post to paths relative to the page (`settings/alerts` from `<slug>/settings`), so the page works under any
/// base path as the site's files do.
struct SettingsPage {
    struct MemberRow {
        var id: Int64
        var login: String
        /// Nil when the person has no name (the page shows the login alone).
        var name: String?
        var role: String
        var pending: Bool
        var roles: [RoleChoice]
    }
    struct RoleChoice {
        var value: String
        var selected: Bool
    }
    struct Toggle {
        var name: String
        var id: String
        var label: String
        var on: Bool
    }
    struct TrailRow {
        var when: TimeView
        var who: String
        var address: String
        var kind: String
        var subject: String
        var before: String
        var after: String
    }

    var chrome: PageChrome
    var slug: String
    var canChange: Bool
    /// The session's CSRF token for the forms; nil (never an empty string, which Mustache takes as present) for a
    /// reader without them.
    var csrf: String?
    var notice: String?
    var errorMessage: String?
    var invite: Invite?
    /// A project secret just replaced, shown this once.
    var rotated: Rotated?
    struct Rotated {
        var ingest: Bool
        var secret: String
        var dsn: String?
        var oldUntil: TimeView?
    }
    var maxKeepOldDays: Int
    struct Invite {
        var login: String
        var link: String
        var expires: TimeView
    }
    var members: [MemberRow]
    var hasMembers: Bool
    var roleChoices: [RoleChoice]
    var webhookShown: String
    var alertToggles: [Toggle]
    var velocityPercent: String
    var velocityMinUsers: Int
    var velocityMinReleaseUsers: Int
    var velocityWindowMinutes: Int
    var alertTarget: String
    var alertMinSessions: Int
    var usersTarget: String
    var sessionsTarget: String
    var privacyToggles: [Toggle]
    var safeFields: String
    var sensitiveFields: String
    var inAppInclude: String
    var inAppExclude: String
    /// The same lists one entry a line, for the forms' text areas.
    var safeFieldLines: String
    var sensitiveFieldLines: String
    var inAppIncludeLines: String
    var inAppExcludeLines: String
    var maxPatterns: Int
    var maxPatternLength: Int
    var minidumps: String
    var showTrail: Bool
    var trail: [TrailRow]
    var hasTrail: Bool
    var olderHref: String?
    var newestHref: String?
    /// The grouping-rules page, one level below this one.
    var groupingHref: String

    init(_ overview: ProjectSettingsOverview) {
        let project = overview.project
        let path = SitePaths.settings(project.slug)
        chrome = PageChrome(path: path, title: "Settings", project: project.slug, now: nil)
        slug = project.slug.rawValue
        canChange = overview.csrf != nil
        csrf = overview.csrf
        notice = overview.notice
        errorMessage = overview.error
        invite = overview.invite.map { Invite(login: $0.login, link: $0.link, expires: TimeView($0.expiresAt)) }
        rotated = overview.rotated.map {
            Rotated(
                ingest: $0.kind == .ingest, secret: $0.secret, dsn: $0.dsn,
                oldUntil: $0.oldAcceptedUntil.map(TimeView.init))
        }
        maxKeepOldDays = KeyRotation.maxKeepOldDays
        members = overview.members.map { member in
            MemberRow(
                id: member.id.rawValue, login: member.login, name: member.name.isEmpty ? nil : member.name,
                role: member.role.rawValue,
                pending: !member.active, roles: Self.roles(selected: member.role))
        }
        hasMembers = !members.isEmpty
        roleChoices = Self.roles(selected: .viewer)
        let alerts = overview.alerts
        webhookShown = AuditText.webhook(alerts.webhookURL)
        alertToggles = [
            Toggle(
                name: "alert_on_new_issue", id: "alert-new", label: "A new issue", on: alerts.alertOnNewIssue),
            Toggle(
                name: "alert_on_regression", id: "alert-regression", label: "A closed issue that regressed",
                on: alerts.alertOnRegression),
        ]
        velocityPercent = Self.number(alerts.velocityPercent)
        velocityMinUsers = alerts.velocityMinUsers
        velocityMinReleaseUsers = alerts.velocityMinReleaseUsers
        velocityWindowMinutes = alerts.velocityWindowMinutes
        alertTarget = alerts.crashFreeTarget.map(Self.number) ?? ""
        alertMinSessions = alerts.crashFreeMinSessions
        usersTarget = Self.number(project.targets.users)
        sessionsTarget = Self.number(project.targets.sessions)
        let privacy = project.privacy
        privacyToggles = [
            Toggle(
                name: "scrubbing", id: "privacy-scrubbing",
                label: "Scrub sensitive keys' values, card numbers, IBANs, keys, tokens and user paths",
                on: privacy.scrubbing),
            Toggle(
                name: "mask_emails_and_phones", id: "privacy-mask",
                label: "Mask e-mail addresses and phone numbers", on: privacy.maskEmailsAndPhones),
            Toggle(
                name: "keep_ip_addresses", id: "privacy-ip", label: "Keep the reporting device's IP address",
                on: privacy.keepIPAddresses),
        ]
        safeFields = Self.list(privacy.safeFields)
        sensitiveFields = Self.list(privacy.sensitiveFields)
        inAppInclude = Self.list(project.inApp.include)
        inAppExclude = Self.list(project.inApp.exclude)
        safeFieldLines = privacy.safeFields.joined(separator: "\n")
        sensitiveFieldLines = privacy.sensitiveFields.joined(separator: "\n")
        inAppIncludeLines = project.inApp.include.joined(separator: "\n")
        inAppExcludeLines = project.inApp.exclude.joined(separator: "\n")
        maxPatterns = InAppRules.maxPatterns
        maxPatternLength = InAppRules.maxPatternLength
        minidumps =
            project.minidumps == .untilProcessed
            ? "until their reports are processed" : "for the retention period"
        showTrail = overview.trail != nil
        trail = (overview.trail?.records ?? []).map { record in
            let entry = record.entry
            return TrailRow(
                when: TimeView(entry.at), who: entry.origin.actor.shown, address: entry.origin.address ?? "—",
                kind: entry.kind.rawValue, subject: entry.subject ?? "", before: entry.before ?? "—",
                after: entry.after ?? "—")
        }
        hasTrail = !trail.isEmpty
        olderHref = overview.trail?.nextBefore.map { "settings?before=\($0)#trail-heading" }
        newestHref = overview.trail?.older == true ? "settings#trail-heading" : nil
        groupingHref = "settings/grouping"
    }

    static func roles(selected: ProjectRole) -> [RoleChoice] {
        ProjectRole.allCases.map { RoleChoice(value: $0.rawValue, selected: $0 == selected) }
    }

    /// A percentage or threshold as a form shows it: no trailing `.0`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    static func list(_ values: [String]) -> String { values.isEmpty ? "(none)" : values.joined(separator: ", ") }
}

extension SiteRenderer {
    /// The settings page of `overview`'s project, for its reader.
    /// - Throws: `DashboardError` when the template fails.
    public func settingsPage(_ overview: ProjectSettingsOverview) throws -> String {
        try templates.render(SettingsPage(overview), as: "settings")
    }
}
