import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Judges the alert rules that need a time window (velocity, crash-free target) and hands every recorded alert
/// (including new-issue and regression alerts, recorded by grouping) to the webhook outbox.
///
/// `run()` loops over `step(now:)` every `interval`. Both halves catch up from the database: an alert recorded
/// just before a crash is dispatched after the restart.
public struct AlertService: Service {
    let store: any AlertStore
    let projects: any ProjectStore
    let clock: any WallClock
    let logger: Logger
    let telemetry: Telemetry?
    let interval: Duration
    /// The dashboard's public address, for links in alert messages (nil: no links).
    let publicURL: @Sendable () -> String?
    let onChange: @Sendable () -> Void
    /// Mails alerts to the people who chose their kind (nil: no SMTP server configured).
    let mail: AlertMailer?

    public init(
        store: any AlertStore, projects: any ProjectStore, clock: any WallClock, logger: Logger,
        telemetry: Telemetry? = nil,
        interval: Duration = .seconds(30), publicURL: @escaping @Sendable () -> String? = { nil },
        onChange: @escaping @Sendable () -> Void = {},
        storage: DiskGuard? = nil, mail: AlertMailer? = nil
    ) {
        self.mail = mail
        self.storage = storage
        self.store = store
        self.projects = projects
        self.clock = clock
        self.logger = logger
        self.telemetry = telemetry
        self.interval = interval
        self.publicURL = publicURL
        self.onChange = onChange
    }

    /// Evaluates the rules for every project at `now`, then dispatches; returns the alerts recorded.
    @discardableResult
    public func step(now: Date) async throws -> Int {
        var recorded = 0
        for project in try await projects.allProjects() {
            let settings = try await store.settings(project: project.id)
            let window = TimeInterval(settings.velocityWindowMinutes * 60)
            for candidate in try await store.velocityCandidates(
                project: project.id, from: now.addingTimeInterval(-window), through: now)
            {
                guard let reason = AlertRules.velocity(candidate.window, settings: settings) else { continue }
                let draft = AlertDraft(
                    project: project.id, kind: .velocity,
                    dedupeKey: "velocity:\(candidate.window.issue):\(candidate.window.release)",
                    issue: candidate.window.issue,
                    release: candidate.window.release, title: candidate.title, reason: reason)
                if try await store.record(draft, at: now) { recorded += 1 }
            }
            if settings.crashFreeTarget != nil {
                let day = DayNumber(now)
                for (release, health) in try await store.dayHealth(project: project.id, day: day).sorted(by: {
                    $0.key < $1.key
                }) {
                    guard var reason = AlertRules.belowTarget(health, settings: settings) else { continue }
                    reason["day"] = Double(day.rawValue)
                    let draft = AlertDraft(
                        project: project.id, kind: .crashFreeTarget, dedupeKey: "crash_free:\(release):\(day)",
                        issue: nil,
                        release: release.isEmpty ? nil : release,
                        title: "Crash-free sessions below \(formatTarget(settings.crashFreeTarget)) on \(day)",
                        reason: reason)
                    if try await store.record(draft, at: now) { recorded += 1 }
                }
            }
        }
        if recorded > 0 {
            telemetry?.count(Telemetry.Name.alerts, by: recorded)
            onChange()
        }
        try await dispatch(now: now)
        return recorded
    }

    /// Queues a webhook delivery for every undispatched alert of a project with a webhook URL, and a mail for each
    /// person who chose the alert's kind (the storage alerts first; under storage pressure one batch per call once the background share of the floor is used).
    public func dispatch(now: Date) async throws {
        while true {
            let alerts = try await store.alertsToDispatch(limit: 100)
            guard !alerts.isEmpty else { return }
            var deliveries: [(alert: Int64, url: String, body: [UInt8])] = []
            var slugs: [ProjectID: String] = [:]
            var settingsByProject: [ProjectID: AlertSettings] = [:]
            for alert in alerts {
                // One settings read per project of the batch, not per alert.
                let settings: AlertSettings
                if let known = settingsByProject[alert.project] {
                    settings = known
                } else {
                    settings = try await store.settings(project: alert.project)
                    settingsByProject[alert.project] = settings
                }
                let url = settings.webhookURL.flatMap { $0.isEmpty ? nil : $0 }
                guard url != nil || mail != nil else { continue }
                if slugs[alert.project] == nil {
                    slugs[alert.project] =
                        try await projects.project(id: alert.project)?.slug.rawValue ?? "project \(alert.project)"
                }
                let slug = slugs[alert.project] ?? "project \(alert.project)"
                if let url {
                    let body = try WebhookMessage.body(for: alert, projectSlug: slug, publicURL: publicURL())
                    deliveries.append((alert.id, url, body))
                }
                if let mail {
                    deliveries += try await mail.deliveries(
                        for: alert, projectSlug: slug, publicURL: publicURL(), now: now)
                }
                logger.info(
                    "alert",
                    metadata: [
                        Telemetry.LogKey.alert: "\(alert.kind.rawValue)", Telemetry.LogKey.project: "\(alert.project)",
                    ])
            }
            try await store.enqueue(deliveries, dispatched: alerts.map(\.id), at: now)
            // Under pressure, past the background writers' share of the floor: the rest waits for space (the
            // operator's storage alerts come first, so they are in the batch just queued).
            if storage?.backgroundPaused == true { return }
        }
    }

    func formatTarget(_ target: Double?) -> String {
        guard let target else { return "target" }
        return target == target.rounded() ? "\(Int(target)) %" : "\(target) %"
    }

    /// The storage-pressure state: while the disk is full, steps pause; a disk-full error enters it (logged once
    /// there, not per step). Nil: never paused.
    public let storage: DiskGuard?

    public func run() async throws {
        // Cancelled at graceful shutdown, so a long sleep between steps never delays SIGTERM.
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        while !Task.isCancelled {
            await storage?.waitWhileFull()
            do {
                try await step(now: clock.now())
            } catch  where Task.isCancelled {
                break  // graceful shutdown cancelled the step: not a failure
            } catch let error where storage?.noteFailure(error) == true {
                // The disk is full: logged once by the state; the next step waits for space.
            } catch {
                logger.error("alert step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}

/// The JSON a webhook receives: Slack's `text` (values from reports escaped for Slack) plus the alert's facts, as
/// recorded, for other receivers (Slack reads only `text`).
public enum WebhookMessage {
    struct Body: Encodable {
        struct AlertFacts: Encodable {
            var id: Int64
            var kind: String
            var project: String
            var title: String
            var release: String?
            var issueID: Int64?
            var reason: [String: Double]
            var createdAt: String
            var url: String?
            enum CodingKeys: String, CodingKey {
                case id, kind, project, title, release, issueID = "issue_id", reason, createdAt = "created_at", url
            }
        }
        var text: String
        var alert: AlertFacts
    }

    /// The link to the alert's page on the dashboard, when the public address is known.
    public static func link(for alert: Alert, projectSlug: String, publicURL: String?) -> String? {
        guard var base = publicURL, !base.isEmpty else { return nil }
        if !base.hasSuffix("/") { base += "/" }
        if let issue = alert.issue { return "\(base)\(projectSlug)/issues/\(issue).html" }
        return "\(base)\(projectSlug)/alerts.html"
    }

    public static func body(for alert: Alert, projectSlug: String, publicURL: String?) throws -> [UInt8] {
        let link = link(for: alert, projectSlug: projectSlug, publicURL: publicURL)
        let text = AlertRules.text(
            project: projectSlug, kind: alert.kind, title: alert.title, release: alert.release, reason: alert.reason,
            link: link)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = Body(
            text: text,
            alert: .init(
                id: alert.id, kind: alert.kind.rawValue, project: projectSlug, title: alert.title,
                release: alert.release,
                issueID: alert.issue?.rawValue, reason: alert.reason,
                createdAt: alert.createdAt.formatted(.iso8601), url: link))
        return jsonHTMLSafe(Array(try encoder.encode(body)))
    }

    /// Writes `<`, `>` and `&` as `\u003c`, `\u003e` and `\u0026`: the same JSON values, but the raw body holds
    /// no markup from reports, for receivers that look at the bytes rather than parse them. (The three characters
    /// appear only inside strings in JSON, so the swap is always valid.)
    static func jsonHTMLSafe(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "<"): out += Array("\\u003c".utf8)
            case UInt8(ascii: ">"): out += Array("\\u003e".utf8)
            case UInt8(ascii: "&"): out += Array("\\u0026".utf8)
            default: out.append(byte)
            }
        }
        return out
    }
}
