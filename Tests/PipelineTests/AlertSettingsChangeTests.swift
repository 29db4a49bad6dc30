import FaultlineCore
import Foundation
import Pipeline
import Synchronization
import Testing

/// `AlertSettingsChange`, the one path of the API, the CLI and the settings page: bad values and internal webhooks are
/// refused with nothing stored or recorded; a new webhook is checked and recorded masked; a webhook kept as it was is
/// not resolved again.
@Suite struct AlertSettingsChangeTests {
    /// Alert settings in memory; the rest of the port is not used by the change.
    final class Settings: AlertStore {
        let stored = Mutex<AlertSettings>(AlertSettings())
        let saves = Mutex(0)
        func settings(project: ProjectID) async throws -> AlertSettings { stored.withLock { $0 } }
        func saveSettings(_ settings: AlertSettings, project: ProjectID, at date: Date) async throws {
            stored.withLock { $0 = settings }
            saves.withLock { $0 += 1 }
        }
        func velocityCandidates(project: ProjectID, from: Date, through: Date) async throws -> [VelocityCandidate] {
            []
        }
        func dayHealth(project: ProjectID, day: DayNumber) async throws -> [String: ReleaseHealth] { [:] }
        func record(_ draft: AlertDraft, at date: Date) async throws -> Bool { false }
        func alertsToDispatch(limit: Int) async throws -> [Alert] { [] }
        func enqueue(
            _ deliveries: [(alert: Int64, url: String, body: [UInt8])], dispatched alerts: [Int64], at date: Date
        )
            async throws
        {}
        func dueDeliveries(now: Date, limit: Int) async throws -> [WebhookDelivery] { [] }
        func recordAttempt(_ delivery: Int64, outcome: DeliveryOutcome, at date: Date) async throws {}
        func deliveries(project: ProjectID) async throws -> [DeliveryStatus] { [] }
    }

    static let project = Project(
        id: ProjectID(1), slug: ProjectSlug("shop")!, createdAt: FixedClock().now(), rateLimitPerSecond: 100)
    static let ada = AuditOrigin(actor: .person(PersonID(7), name: "Ada"), address: "192.0.2.7")

    func change(_ store: Settings, _ trail: AlertMailPreferencesTests.Trail, resolver: FixedResolver)
        -> AlertSettingsChange
    {
        AlertSettingsChange(
            store: store, targets: WebhookTargetPolicy(resolver: resolver, allowPrivate: false), audit: trail,
            clock: FixedClock())
    }

    @Test func refusalsStoreNothingAndANewWebhookIsCheckedAndRecordedMasked() async throws {
        let (store, trail) = (Settings(), AlertMailPreferencesTests.Trail())
        let change = change(store, trail, resolver: WebhookTargetPolicyTests.resolver)
        var bad = AlertSettings()
        bad.velocityPercent = 0
        await #expect(
            throws: AlertSettingsRefusal(field: "velocity_percent", message: "must be above 0 and at most 100")
        ) {
            try await change.apply(bad, project: Self.project, by: Self.ada)
        }
        for url in ["http://metadata.example.com/latest", "http://127.0.0.1:9/hook", "https://nowhere.example.com/x"] {
            var hook = AlertSettings()
            hook.webhookURL = url
            await #expect(throws: WebhookTargetProblem.self, "\(url)") {
                try await change.apply(hook, project: Self.project, by: Self.ada)
            }
        }
        #expect(store.saves.withLock { $0 } == 0 && trail.recorded.withLock { $0 }.isEmpty)

        var good = AlertSettings()
        good.webhookURL = "https://hooks.example.com/services/T0/B0/secret"
        try await change.apply(good, project: Self.project, by: Self.ada)
        #expect(store.stored.withLock { $0 } == good)
        let entries = trail.recorded.withLock { $0 }
        #expect(entries.map(\.kind) == [.projectWebhook])
        #expect(entries.first?.after == "https://hooks.example.com/…" && entries.first?.origin == Self.ada)
    }

    @Test func aWebhookKeptAsItWasIsNotResolvedAgain() async throws {
        let (store, trail) = (Settings(), AlertMailPreferencesTests.Trail())
        var settings = AlertSettings()
        settings.webhookURL = "https://hooks.example.com/services/x"
        store.stored.withLock { $0 = settings }
        // The host no longer resolves (a resolver that knows nothing), yet a threshold still changes.
        let change = change(store, trail, resolver: FixedResolver(answers: [:]))
        settings.velocityMinUsers = 50
        try await change.apply(settings, project: Self.project, by: Self.ada)
        #expect(store.stored.withLock { $0 }.velocityMinUsers == 50)
        #expect(trail.recorded.withLock { $0 }.map(\.kind) == [.projectAlerts])
        // A different webhook is resolved, and refused when it does not resolve.
        settings.webhookURL = "https://hooks.example.com/services/y"
        await #expect(throws: WebhookTargetProblem.self) {
            try await change.apply(settings, project: Self.project, by: Self.ada)
        }
    }
}
