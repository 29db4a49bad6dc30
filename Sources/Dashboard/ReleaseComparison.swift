import FaultlineCore

/// The releases page's comparison: the latest releases side by side, each with its adoption, its crash-free users
/// and sessions against the project's targets, the issues it brought and its top crash. What a team asks of a new
/// release ("is it within target, and what broke") answered for several releases at once.
///
/// The cards are a list (`release-compare` in the stylesheet): columns side by side on a wide screen, stacked on a
/// phone, each card's figures in the same order so they line up.
struct ReleaseComparison {
    /// One release's card.
    struct Card {
        var release: ReleaseLink
        var adoptionText: String
        /// The release's share of the project's user-days in the last 7 days.
        var usersAdoptionText: String
        var crashFreeUsersText: String
        var usersTarget: TargetMarkView
        var crashFreeSessionsText: String
        var sessionsTarget: TargetMarkView
        var newIssues: Int
        /// The release's crash that affected the most users; nil when none of its ranked issues is a crash.
        var topCrash: TopCrash?
        /// What the card says when there is no top crash.
        var noTopCrash: String
        /// `release-card`, with ` release-card-below` when a rate is below its target (the marks say it in words).
        var cardClass: String
    }

    /// A release's top crash, linked to its issue page.
    struct TopCrash {
        var crashTitle: String
        var crashHref: String
        /// `72 users, 140 events in this release`.
        var crashCounts: String
    }

    /// How many releases are compared unless a page asks for another number.
    static let defaultCount = 5

    var comparisonHeading: String
    var cards: [Card]

    /// The first `count` of `releases` (newest first) as cards.
    ///
    /// - Parameters:
    ///   - top: each release's issues ranked by users affected (`TopIssueWindow.release`); the first crash among them
    ///     is the release's top crash. A release missing here shows no top crash.
    ///   - rendered: releases that have a page (their names link to it).
    ///   - userDays: each release's user-days in the last 7 days (a user counts once a day), of the project's
    ///     `totalUserDays`: its users' adoption beside its sessions'.
    init(
        releases: [ReleaseRow], top: [String: [TopIssue]], targets: CrashFreeTargets, slug: ProjectSlug,
        from path: String, rendered: Set<String>, userDays: [String: Int] = [:], totalUserDays: Int = 0,
        count: Int = Self.defaultCount
    ) {
        let compared = Array(releases.prefix(max(0, count)))
        comparisonHeading =
            compared.count == 1 ? "The latest release" : "The latest \(compared.count) releases side by side"
        cards = compared.map { row in
            let (users, sessions) = TargetMarkView.pair(row.health, targets: targets)
            let ranked = top[row.release] ?? []
            let crash = ranked.first { $0.issue.category == .crash }
            return Card(
                release: ReleaseLink(row.release, slug: slug, from: path, rendered: rendered),
                adoptionText: Format.adoption(row),
                usersAdoptionText: Self.usersAdoption(userDays[row.release] ?? 0, of: totalUserDays),
                crashFreeUsersText: Format.crashFreeUsers(row.health), usersTarget: users,
                crashFreeSessionsText: Format.crashFreeSessions(row.health), sessionsTarget: sessions,
                newIssues: row.newIssues,
                topCrash: crash.map { crash in
                    TopCrash(
                        crashTitle: IssueTitle.row(crash.issue),
                        crashHref: SitePaths.relative(from: path, to: SitePaths.issue(slug, crash.issue.id)),
                        crashCounts:
                            "\(Format.count(crash.users, "user")), \(Format.count(crash.events, "event")) in this release"
                    )
                },
                noTopCrash: ranked.isEmpty ? "No issues" : "No crash among its top \(ranked.count) issues",
                cardClass: users.isBelow || sessions.isBelow ? "release-card release-card-below" : "release-card")
        }
    }

    /// `18.20 % (182 of 1000 user-days in the last 7 days)`, or `no data (no users in the last 7 days)`.
    static func usersAdoption(_ userDays: Int, of total: Int) -> String {
        guard total > 0 else { return "no data (no users in the last 7 days)" }
        let share = Double(min(userDays, total)) / Double(total)
        return "\(formatRate(share)) (\(userDays) of \(Format.count(total, "user-day")) in the last 7 days)"
    }
}
