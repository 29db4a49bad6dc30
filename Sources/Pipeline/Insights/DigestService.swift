import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes the weekly (and daily) digests of every project for the people who chose them, and sends them.
///
/// Each digest is made once (`mail_digests` is unique per project, person, cadence and period) from the numbers the
/// API shows at that moment: `/api/v1/health?days=7` (this week and the week before), the top 3 crashes of
/// `/api/v1/top-issues?window=7d&kind=crash`, the regression alerts and new issues and releases of the window. The
/// mail is stored whole, so every attempt sends the same bytes with the same `Message-ID`; delivery retries with the
/// webhooks' backoff until `maxAttempts` (at least once).
public struct DigestService: Service {
    let store: any AlertMailStore
    let insights: any InsightsReader
    let projects: any ProjectStore
    let mailer: any MailSending
    let clock: any WallClock
    let logger: Logger
    /// The hour (UTC) from which a period's digest is made.
    let hour: Int
    let publicURL: @Sendable () -> String?
    /// The signed unsubscribe link for a person and project (nil: none).
    let unsubscribeLink: @Sendable (PersonID, ProjectID) async throws -> String?
    let fromName: String
    let interval: Duration
    let baseBackoff: TimeInterval
    let maxAttempts: Int

    public init(
        store: any AlertMailStore, insights: any InsightsReader, projects: any ProjectStore, mailer: any MailSending,
        clock: any WallClock, logger: Logger, hour: Int = 8, publicURL: @escaping @Sendable () -> String?,
        unsubscribeLink: @escaping @Sendable (PersonID, ProjectID) async throws -> String?,
        fromName: String = "Faultline", interval: Duration = .seconds(60), baseBackoff: TimeInterval = 5,
        maxAttempts: Int = 12
    ) {
        self.store = store
        self.insights = insights
        self.projects = projects
        self.mailer = mailer
        self.clock = clock
        self.logger = logger
        self.hour = hour
        self.publicURL = publicURL
        self.unsubscribeLink = unsubscribeLink
        self.fromName = fromName
        self.interval = interval
        self.baseBackoff = baseBackoff
        self.maxAttempts = max(1, maxAttempts)
    }

    /// Makes the digests due at `now`, then attempts the ones waiting; returns (made, attempted).
    @discardableResult
    public func step(now: Date) async throws -> (made: Int, attempted: Int) {
        var made = 0
        for cadence in [DigestCadence.weekly, .daily] {
            guard let period = DigestPeriod.due(cadence, now: now, hour: hour) else { continue }
            var facts: [ProjectID: DigestFacts] = [:]
            for subscriber in try await store.digestSubscribers(cadence: cadence) {
                let project = subscriber.project, person = subscriber.recipient.person
                guard !(try await store.digestMade(project: project, person: person, period: period)) else { continue }
                if facts[project] == nil {
                    guard let found = try await self.facts(project: project, period: period, now: now) else { continue }
                    facts[project] = found
                }
                guard let projectFacts = facts[project] else { continue }
                let content = DigestMail.content(
                    projectFacts, publicURL: publicURL(),
                    unsubscribeURL: try await unsubscribeLink(person, project))
                let address = subscriber.recipient.address
                let id = MailMessage.messageID(
                    kind: "digest.\(cadence.rawValue).\(project)", id: Int64(period.start.rawValue), recipient: address,
                    domain: mailer.from.domain)
                var headers: [(String, String)] = []
                if let link = try await unsubscribeLink(person, project) {
                    headers = [
                        ("List-Unsubscribe", "<\(link)>"), ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
                    ]
                }
                let message = MailMessage.compose(
                    from: mailer.from, fromName: fromName, to: address, content: content, messageID: id, date: now,
                    headers: headers)
                if try await store.queueDigest(
                    project: project, person: person, period: period, recipient: address, body: message, at: now)
                {
                    made += 1
                }
            }
        }
        return (made, try await send(now: now))
    }

    /// The digest's numbers for one project, read as the API reads them; nil when the project is gone.
    public func facts(project id: ProjectID, period: DigestPeriod, now: Date) async throws -> DigestFacts? {
        guard let project = try await projects.project(id: id) else { return nil }
        let today = DayNumber(now)
        let series = try await insights.health(
            project: id, release: nil, from: today.adding(-(2 * period.days - 1)), through: today)
        let trend = HealthTrend.make(series: series, last: today, length: period.days)
        let top = try await insights.topIssues(
            project: id, window: period.topWindow, category: .crash, now: now, limit: 3)
        let windowStart = now.addingTimeInterval(-Double(period.days) * 86_400)
        let recent = try await insights.issues(matching: IssueQuery(project: id, limit: 100), now: now)
        let newIssues = recent.filter { $0.firstSeen >= windowStart }.sorted {
            ($0.users, $1.id.rawValue) > ($1.users, $0.id.rawValue)
        }
        let regressions = try await insights.alerts(project: id, limit: 200).filter {
            $0.kind == .regression && $0.createdAt >= windowStart
        }
        let releases = try await insights.releases(project: id, now: now, limit: 50).filter {
            $0.firstSeen >= windowStart
        }
        return DigestFacts(
            projectSlug: project.slug.rawValue, period: period, trend: trend, targets: project.targets, topCrashes: top,
            newIssues: Array(newIssues.prefix(10)), regressions: Array(regressions.prefix(10)),
            newReleases: Array(releases.prefix(10)))
    }

    /// Attempts the digests waiting at `now`.
    func send(now: Date) async throws -> Int {
        let due = try await store.dueDigests(now: now, limit: 16)
        for digest in due {
            let attempts = digest.attempts + 1
            let outcome: DeliveryOutcome
            do {
                guard let address = MailAddress(digest.recipient) else {
                    throw MailFailure(.refused, transient: false, reply: "not an address")
                }
                try await mailer.send(to: address, message: digest.body)
                outcome = .delivered(status: 250)
            } catch {
                let failure = error as? MailFailure ?? MailFailure(.connectionFailed, transient: true)
                let wait = min(600, baseBackoff * Double(1 << min(20, max(0, attempts - 1))))
                outcome =
                    !failure.transient || attempts >= maxAttempts
                    ? .failed(status: nil, error: failure.code.rawValue)
                    : .retry(next: clock.now().addingTimeInterval(wait), status: nil, error: failure.code.rawValue)
                logger.warning("digest not delivered", metadata: [Telemetry.LogKey.error: "\(failure.code.rawValue)"])
            }
            try await store.recordDigestAttempt(digest.id, outcome: outcome, at: clock.now())
        }
        return due.count
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        while !Task.isCancelled {
            do {
                try await step(now: clock.now())
            } catch  where Task.isCancelled {
                break
            } catch {
                logger.error("digest step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
