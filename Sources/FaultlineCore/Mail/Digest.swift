#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which digest a mail is: its cadence and the first day of its period (a week starts on Monday, UTC).
public struct DigestPeriod: Sendable, Equatable, Hashable {
    public var cadence: DigestCadence
    public var start: DayNumber
    public init(cadence: DigestCadence, start: DayNumber) {
        self.cadence = cadence
        self.start = start
    }

    /// Days the digest looks back over, ending with the day it is made (the API's `?days=`).
    public var days: Int { cadence == .weekly ? 7 : 1 }
    /// The top-issues window of the same length (the API's `?window=7d` or `24h`).
    public var topWindow: TopIssueWindow { cadence == .weekly ? .last7Days : .last24Hours }

    /// The period `now` is in, when its digest is due: from `hour` o'clock UTC on its first day (a week's Monday, a
    /// day's own). Nil for `.none` and before that hour.
    public static func due(_ cadence: DigestCadence, now: Date, hour: Int) -> DigestPeriod? {
        let today = DayNumber(now)
        let start: DayNumber
        switch cadence {
        case .none: return nil
        case .daily: start = today
        // Day 0 (1970-01-01) was a Thursday: Monday is 3 days after a multiple of 7.
        case .weekly: start = today.adding(-(((today.rawValue - 4) % 7 + 7) % 7))
        }
        guard now >= start.start.addingTimeInterval(TimeInterval(hour * 3600)) else { return nil }
        return DigestPeriod(cadence: cadence, start: start)
    }
}

/// What a digest says about a project, read with the same readers as the API (`/api/v1/health?days=N`,
/// `/api/v1/top-issues?window=…&kind=crash&limit=3`, `/api/v1/alerts`, `/api/v1/releases`).
public struct DigestFacts: Sendable, Equatable {
    public var projectSlug: String
    public var period: DigestPeriod
    /// The window's crash-free numbers and the window before (`HealthTrend.make(…, length: period.days)`).
    public var trend: HealthTrend
    public var targets: CrashFreeTargets
    /// The top crashes by users affected in the window, at most 3.
    public var topCrashes: [TopIssue]
    /// Issues first seen in the window.
    public var newIssues: [IssueSummary]
    /// Regression alerts of the window.
    public var regressions: [Alert]
    /// Releases first seen in the window, with their numbers.
    public var newReleases: [ReleaseRow]
    public init(
        projectSlug: String, period: DigestPeriod, trend: HealthTrend, targets: CrashFreeTargets,
        topCrashes: [TopIssue], newIssues: [IssueSummary], regressions: [Alert], newReleases: [ReleaseRow]
    ) {
        self.projectSlug = projectSlug
        self.period = period
        self.trend = trend
        self.targets = targets
        self.topCrashes = topCrashes
        self.newIssues = newIssues
        self.regressions = regressions
        self.newReleases = newReleases
    }
}

/// The digest mail: plain text and HTML with the same words, no images, tables only for layout of numbers.
public enum DigestMail {
    /// A rate in percent with two decimals (`99.52 %`), or `no data`.
    public static func percent(_ rate: Double?) -> String {
        guard let rate, rate.isFinite else { return "no data" }
        let hundredths = Int((rate * 10_000).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) %"
    }

    /// The change between two rates in percentage points (`+0.12 pt`), or nil when either is missing.
    public static func change(_ now: Double?, _ before: Double?) -> String? {
        guard let now, let before, now.isFinite, before.isFinite else { return nil }
        let hundredths = Int(((now - before) * 10_000).rounded())
        let sign = hundredths > 0 ? "+" : hundredths < 0 ? "−" : "±"
        let size = abs(hundredths)
        return "\(sign)\(size / 100).\(size % 100 < 10 ? "0" : "")\(size % 100) pt"
    }

    /// - Parameters:
    ///   - publicURL: the dashboard's address for links (nil: no links).
    ///   - unsubscribeURL: the signed link that ends this person's mail from the project.
    public static func content(_ facts: DigestFacts, publicURL: String?, unsubscribeURL: String?) -> MailContent {
        let base = publicURL.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        let slug = facts.projectSlug
        let label = facts.period.cadence == .weekly ? "Weekly" : "Daily"
        let span = facts.period.days == 7 ? "the last 7 days" : "the last day"
        let total = facts.trend.total, previous = facts.trend.previous
        var text =
            "\(label) digest of \(slug): \(span) to \(DayNumber(rawValue: facts.trend.days.last?.day.rawValue ?? facts.period.start.rawValue))\n\n"
        var html =
            "<!DOCTYPE html><html><body style=\"font-family:sans-serif\"><h1>\(MailMessage.html("\(label) digest of \(slug)"))</h1>"
        html += "<p>\(MailMessage.html(span.prefix(1).uppercased() + span.dropFirst())).</p>"

        func rateLine(_ name: String, _ rate: Double?, _ before: Double?, _ target: Double, _ crashed: Int, _ of: Int)
            -> (String, String)
        {
            let change = change(rate, before).map { ", \($0) from the period before" } ?? ""
            let verdict = rate.map { $0 * 100 >= target ? "meets" : "below" } ?? "no data against"
            let line =
                "\(name): \(percent(rate)) (\(crashed) crashed of \(of)) — \(verdict) the target \(percent(target / 100))\(change)"
            return (line, "<li>\(MailMessage.html(line))</li>")
        }
        let users = rateLine(
            "Crash-free users", total.crashFreeUsers, previous.crashFreeUsers, facts.targets.users, total.crashedUsers,
            total.users)
        let sessions = rateLine(
            "Crash-free sessions", total.crashFreeSessions, previous.crashFreeSessions, facts.targets.sessions,
            total.crashedSessions, total.sessions)
        text += "\(users.0)\n\(sessions.0)\n"
        html += "<h2>Stability</h2><ul>\(users.1)\(sessions.1)</ul>"

        text += "\nTop crashes by users affected:\n"
        html += "<h2>Top crashes by users affected</h2>"
        if facts.topCrashes.isEmpty {
            text += "  none\n"
            html += "<p>None.</p>"
        } else {
            html += "<ol>"
            for top in facts.topCrashes {
                let link = base.map { "\($0)\(slug)/issues/\(top.issue.id).html" }
                let line = "\(top.issue.title) — \(top.users) users, \(top.events) events"
                text += "  #\(top.issue.id) \(line)\(link.map { "\n    \($0)" } ?? "")\n"
                let title = MailMessage.html(top.issue.title)
                html +=
                    "<li>\(link.map { "<a href=\"\(MailMessage.html($0))\">\(title)</a>" } ?? title) — \(top.users) users, \(top.events) events</li>"
            }
            html += "</ol>"
        }
        func list(_ heading: String, _ lines: [(String, String?)]) {
            text += "\n\(heading):\n"
            html += "<h2>\(MailMessage.html(heading))</h2>"
            if lines.isEmpty {
                text += "  none\n"
                html += "<p>None.</p>"
                return
            }
            html += "<ul>"
            for (line, link) in lines {
                text += "  \(line)\(link.map { "\n    \($0)" } ?? "")\n"
                let shown = MailMessage.html(line)
                html += "<li>\(link.map { "<a href=\"\(MailMessage.html($0))\">\(shown)</a>" } ?? shown)</li>"
            }
            html += "</ul>"
        }
        list(
            "New issues",
            facts.newIssues.map { issue in
                (
                    "#\(issue.id) \(issue.title) — \(issue.users) users",
                    base.map { "\($0)\(slug)/issues/\(issue.id).html" }
                )
            })
        list(
            "Regressed issues",
            facts.regressions.map { alert in
                (
                    "#\(alert.issue.map { "\($0)" } ?? "?") \(alert.title) — in \(alert.release ?? "?")",
                    base.flatMap { b in alert.issue.map { "\(b)\(slug)/issues/\($0).html" } }
                )
            })
        list(
            "New releases",
            facts.newReleases.map { row in
                (
                    "\(row.release): crash-free users \(percent(row.health.crashFreeUsers)), sessions \(percent(row.health.crashFreeSessions)) (\(row.health.sessions) sessions)",
                    nil
                )
            })
        if let unsubscribeURL {
            text += "\n-- \nYou get this digest because you chose it for \(slug) in Faultline.\n"
            text += "Stop all mail from \(slug): \(unsubscribeURL)\n"
            html +=
                "<hr><p style=\"color:#555\">You get this digest because you chose it for \(MailMessage.html(slug)) in Faultline. "
                + "<a href=\"\(MailMessage.html(unsubscribeURL))\">Stop all mail from \(MailMessage.html(slug))</a>.</p>"
        }
        html += "</body></html>\n"
        let subject =
            "\(label) digest of \(slug): crash-free users \(percent(total.crashFreeUsers)), sessions \(percent(total.crashFreeSessions))"
        return MailContent(subject: subject, text: text, html: html)
    }
}
