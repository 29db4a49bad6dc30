#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the audit trail writes a setting's value before and after a change: one line a person reads on the settings
/// page (`scrubbing on, keep IP addresses off, …`), the same on both engines and in the API.
public enum AuditText {
    static func onOff(_ flag: Bool) -> String { flag ? "on" : "off" }
    static func list(_ items: [String]) -> String { items.isEmpty ? "(none)" : items.joined(separator: ", ") }

    public static func privacy(_ settings: PrivacySettings) -> String {
        "scrubbing \(onOff(settings.scrubbing)); safe fields \(list(settings.safeFields)); sensitive fields "
            + "\(list(settings.sensitiveFields)); keep IP addresses \(onOff(settings.keepIPAddresses)); "
            + "mask e-mails and phones \(onOff(settings.maskEmailsAndPhones))"
    }

    public static func inApp(_ rules: InAppRules) -> String {
        "include \(list(rules.include)); exclude \(list(rules.exclude))"
    }

    public static func targets(_ targets: CrashFreeTargets) -> String {
        "crash-free users \(percent(targets.users)); crash-free sessions \(percent(targets.sessions))"
    }

    public static func quotas(_ quotas: EventQuotas) -> String {
        let parts = QuotaWindow.allCases.compactMap { window in quotas[window].map { "\($0)/\(window.rawValue)" } }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }

    public static func tracker(_ tracker: IssueTracker?) -> String {
        tracker.map { "\($0.kind.rawValue) \($0.url)" } ?? "(none)"
    }

    /// `99.5 %`, `100 %`: Swift's shortest form, without a trailing `.0`.
    public static func percent(_ value: Double) -> String {
        let text = value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        return text + " %"
    }
}

extension AuditText {
    /// Alert settings without the webhook URL, as sorted JSON (every setting, those added later too); the webhook has
    /// an entry of its own (``webhook(_:)``).
    public static func alerts(_ settings: AlertSettings) -> String {
        var shown = settings
        shown.webhookURL = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(shown)).map { String(decoding: $0, as: UTF8.self) } ?? "(unreadable)"
    }

    /// A webhook URL as the trail shows it: scheme, host and port, with the path and query left out (a Slack or
    /// Discord webhook's path is its secret).
    public static func webhook(_ url: String?) -> String {
        guard let url, !url.isEmpty else { return "(none)" }
        guard let scheme = url.firstRange(of: "://") else { return "(set)" }
        let rest = url[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@").last.map(String.init) ?? ""
        let hidden = rest.count > authority.count ? "/…" : ""
        return String(url[..<scheme.upperBound]) + host + hidden
    }
}

extension AuditTrail {
    /// Records a change of a project's alert settings: one entry for the settings (`project.alerts`) and one for the
    /// webhook target (`project.webhook`), each only when it changed.
    public func recordAlertSettings(
        from before: AlertSettings, to after: AlertSettings, project: Project, origin: AuditOrigin, at date: Date
    ) async throws {
        let (was, now) = (AuditText.alerts(before), AuditText.alerts(after))
        if was != now {
            try await record(
                AuditEntry(
                    project: project.id, at: date, origin: origin, kind: .projectAlerts, subject: project.slug.rawValue,
                    before: was, after: now))
        }
        if (before.webhookURL ?? "") != (after.webhookURL ?? "") {
            try await record(
                AuditEntry(
                    project: project.id, at: date, origin: origin, kind: .projectWebhook,
                    subject: project.slug.rawValue,
                    before: AuditText.webhook(before.webhookURL), after: AuditText.webhook(after.webhookURL)))
        }
    }
}
