#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension InsightsReader {
    /// The gate of `release` of `project` under `policy` (which carries the project's targets): what
    /// `faultline gate` and `GET /api/v1/releases/{r}/gate` answer and the release page shows, through this one read
    /// and ``ReleaseGate/decide(_:policy:)``. The parameters are those of
    /// ``gateEvidence(project:release:baseline:now:releases:)``.
    public func releaseGate(
        project: ProjectID, release: String, baseline: String?, policy: ReleaseGatePolicy, now: Date,
        releases: [ReleaseRow]? = nil
    ) async throws -> ReleaseGate {
        let evidence = try await gateEvidence(
            project: project, release: release, baseline: baseline, now: now, releases: releases)
        return ReleaseGate.decide(evidence, policy: policy)
    }

    /// Reads what ``ReleaseGate/decide(_:policy:)`` judges `release` of `project` on, through the reads every engine
    /// already has: the release's lifetime counts (the releases list, which counts users distinctly), its crash
    /// issues (an issue list filtered by release) and the baseline's daily sessions (the health rollups).
    ///
    /// - Parameters:
    ///   - release: the release, as ``ReleaseName/parse(_:build:)`` reads it.
    ///   - baseline: the release to compare with; nil picks the newest named release that came out before `release`
    ///     and has sessions. A baseline that is `release` itself, or that has no sessions, is no baseline.
    ///   - releases: the project's releases, newest first, when the caller has read them anyway (a render that lists
    ///     them); nil reads the newest ``ReleaseGateEvidence/releasesRead``. The release and its baseline are looked
    ///     for among them.
    /// - Returns: evidence with no sessions when the release is not among those releases (the gate then answers
    ///   "not enough data").
    public func gateEvidence(
        project: ProjectID, release: String, baseline: String?, now: Date, releases: [ReleaseRow]? = nil
    ) async throws -> ReleaseGateEvidence {
        let rows: [ReleaseRow]
        if let releases {
            rows = releases
        } else {
            rows = try await self.releases(project: project, now: now, limit: ReleaseGateEvidence.releasesRead)
        }
        let today = DayNumber(now)
        guard let index = rows.firstIndex(where: { $0.release == release }) else {
            return ReleaseGateEvidence(release: release, health: ReleaseHealth(), daysOut: 1)
        }
        let row = rows[index]
        let firstDay = DayNumber(row.firstSeen)
        let daysOut = max(1, today.rawValue - firstDay.rawValue + 1)

        let crashes = try await issues(
            matching: IssueQuery(
                project: project, release: release, kind: .crash, order: .users, limit: PageRequest.maxIssues),
            now: now)
        let counted = crashes.filter { $0.status != .muted }
        let newFatal = counted.filter { $0.firstRelease == release }.map(GateIssue.init)
        let regressed = counted.filter { $0.signals.regressed && $0.firstRelease != release }.map(GateIssue.init)

        let baselineRow: ReleaseRow?
        if let baseline {
            baselineRow = rows.first { $0.release == baseline && $0.release != release }
        } else {
            baselineRow = rows[(index + 1)...].first { ReleaseName.isNamed($0.release) && $0.health.sessions > 0 }
        }
        var baselineEvidence: ReleaseGateEvidence.Baseline?
        if let baselineRow {
            let start = DayNumber(baselineRow.firstSeen)
            let through = min(today, start.adding(ReleaseGateEvidence.baselineDaysRead - 1))
            let days = try await health(project: project, release: baselineRow.release, from: start, through: through)
            baselineEvidence = .init(release: baselineRow.release, firstDay: start, days: days)
        } else if let baseline {
            // A named baseline that is not among the releases read: compared as one without sessions.
            baselineEvidence = .init(release: baseline, firstDay: today, days: [])
        }
        return ReleaseGateEvidence(
            release: release, health: row.health, daysOut: daysOut, newFatalIssues: newFatal,
            regressedIssues: regressed, baseline: baselineEvidence)
    }
}

extension ReleaseGateEvidence {
    /// How many of a project's newest releases the gate looks for the release and its baseline in.
    public static let releasesRead = 500
    /// How many days of the baseline's health the gate reads, from its first day.
    public static let baselineDaysRead = 365
}

extension GateIssue {
    /// The issue as the gate lists it; within a release-filtered listing its events and users are the release's.
    public init(_ summary: IssueSummary) {
        self.init(id: summary.id, title: summary.title, events: summary.events, users: summary.users)
    }
}
