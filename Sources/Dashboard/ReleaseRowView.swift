import FaultlineCore

/// One release in a table: adoption, sessions and crash-free rates, each percentage with its counts and each rate
/// against the project's target.
struct ReleaseRowView {
    var release: ReleaseLink
    var firstSeen: TimeView
    var lastSeen: TimeView
    var adoptionText: String
    var sessionsTotal: Int
    var crashFreeUsersText: String
    var crashFreeSessionsText: String
    var usersTarget: TargetMarkView
    var sessionsTarget: TargetMarkView
    var abnormalSessions: Int
    var erroredSessions: Int
    var newIssues: Int

    init(_ row: ReleaseRow, slug: ProjectSlug, from path: String, rendered: Set<String>, targets: CrashFreeTargets) {
        release = ReleaseLink(row.release, slug: slug, from: path, rendered: rendered)
        firstSeen = TimeView(row.firstSeen)
        lastSeen = TimeView(row.lastSeen)
        adoptionText = Format.adoption(row)
        sessionsTotal = row.health.sessions
        // A release with events but no sessions at all (an SDK that tracks none) has no rate to show, and says so.
        let noSessions = row.health.sessions == 0
        crashFreeUsersText = noSessions ? Self.noSessionData : Format.crashFreeUsers(row.health)
        crashFreeSessionsText = noSessions ? Self.noSessionData : Format.crashFreeSessions(row.health)
        (usersTarget, sessionsTarget) = TargetMarkView.pair(row.health, targets: targets)
        abnormalSessions = row.health.abnormalSessions
        erroredSessions = row.health.erroredSessions
        newIssues = row.newIssues
    }

    /// What a release without any sessions shows instead of a rate.
    static let noSessionData = "no session data"
}
