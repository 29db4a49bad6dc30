import FaultlineCore
import Foundation
import Testing

/// Alerts and the webhook outbox (AlertStore), on each engine.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct AlertConformanceTests {
    static let at = Date(timeIntervalSince1970: 1_800_000_000)

    static func draft(_ project: ProjectID, _ kind: AlertKind, _ key: String) -> AlertDraft {
        AlertDraft(
            project: project, kind: kind, dedupeKey: key, issue: nil, release: nil, title: key, reason: ["users": 3])
    }

    /// Under a crash storm that fills the disk (issue #15): the operator's storage alert is handed to the outbox and
    /// delivered before a backlog of issue alerts.
    @Test(arguments: Engine.allCases) func storageAlertsAreDispatchedAndDeliveredBeforeABacklogOfIssueAlerts(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { stores in
            let project = try await createProject(stores).id
            let store = stores.alerts
            for n in 0..<150 {
                #expect(try await store.record(Self.draft(project, .newIssue, "new:\(n)"), at: Self.at))
            }
            #expect(
                try await store.record(
                    Self.draft(project, .storageFull, "storage_full:1"), at: Self.at.addingTimeInterval(5)))
            #expect(try await store.record(Self.draft(project, .newIssue, "new:0"), at: Self.at) == false)  // its dedupe key

            // The storage alert is in the first batch handed to the outbox, although it is the newest.
            let first = try await store.alertsToDispatch(limit: 100)
            #expect(first.count == 100)
            #expect(first.first?.kind == .storageFull)
            #expect(first.dropFirst().allSatisfy { $0.kind == .newIssue })
            #expect(first.last?.reason == ["users": 3])
            try await store.enqueue(
                first.map { (alert: $0.id, url: "http://hook/\($0.id)", body: Array("x".utf8)) },
                dispatched: first.map(\.id), at: Self.at)
            let rest = try await store.alertsToDispatch(limit: 100)
            #expect(rest.count == 51)
            try await store.enqueue(
                rest.map { (alert: $0.id, url: "http://hook/\($0.id)", body: Array("x".utf8)) },
                dispatched: rest.map(\.id), at: Self.at)

            // Its delivery is due first, although the issue alerts' deliveries are older and equally due.
            let due = try await store.dueDeliveries(now: Self.at.addingTimeInterval(60), limit: 10)
            #expect(due.count == 10)
            #expect(due.first?.alert == first.first?.id)
            #expect(due.dropFirst().map(\.alert) == first.dropFirst().prefix(9).map(\.id))
            #expect(due.first?.url == "http://hook/\(first.first!.id)")
            #expect(due.first?.body == Array("x".utf8))
        }
    }

    /// The alert service and the storage-alert service (and, on PostgreSQL, every node) dispatch: an alert two of
    /// them read before either queued it is queued once.
    @Test(arguments: Engine.allCases) func anAlertTwoDispatchersTookIsQueuedOnce(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let project = try await createProject(stores).id
            let store = stores.alerts
            #expect(try await store.record(Self.draft(project, .storageFull, "storage_full:1"), at: Self.at))
            let seenByOne = try await store.alertsToDispatch(limit: 100)
            let seenByOther = try await store.alertsToDispatch(limit: 100)
            #expect(seenByOne.map(\.id) == seenByOther.map(\.id))
            for seen in [seenByOne, seenByOther] {
                try await store.enqueue(
                    seen.map { (alert: $0.id, url: "http://hook", body: Array("x".utf8)) }, dispatched: seen.map(\.id),
                    at: Self.at)
            }
            #expect(try await stores.texts("SELECT count(*) FROM webhook_deliveries") == ["1"])
            #expect(try await store.alertsToDispatch(limit: 100).isEmpty)
        }
    }

    /// A delivery's attempts: retried later, then delivered; what the project's delivery list says.
    @Test(arguments: Engine.allCases) func attemptsAreRecordedAndARetryWaitsForItsTime(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let project = try await createProject(stores).id
            let other = try await createProject(stores, "other").id
            let store = stores.alerts
            _ = try await store.record(Self.draft(project, .velocity, "velocity:1"), at: Self.at)
            _ = try await store.record(Self.draft(other, .velocity, "velocity:1"), at: Self.at)  // same key, other project
            let alerts = try await store.alertsToDispatch(limit: 10)
            #expect(alerts.count == 2)
            try await store.enqueue(
                alerts.map { (alert: $0.id, url: "http://hook", body: [1]) }, dispatched: alerts.map(\.id), at: Self.at)
            let mine = try #require(
                try await store.dueDeliveries(now: Self.at, limit: 10).first { d in
                    alerts.first { $0.id == d.alert }?.project == project
                })
            try await store.recordAttempt(
                mine.id, outcome: .retry(next: Self.at.addingTimeInterval(600), status: 503, error: "HTTP 503"),
                at: Self.at)
            #expect(
                try await store.dueDeliveries(now: Self.at.addingTimeInterval(599), limit: 10).map(\.id).contains(
                    mine.id) == false)
            let again = try await store.dueDeliveries(now: Self.at.addingTimeInterval(600), limit: 10)
            #expect(again.first { $0.id == mine.id }?.attempts == 1)
            try await store.recordAttempt(
                mine.id, outcome: .delivered(status: 204), at: Self.at.addingTimeInterval(601))
            let statuses = try await store.deliveries(project: project)
            #expect(statuses.map(\.state) == ["delivered"])
            #expect(statuses.first?.attempts == 2)
            #expect(statuses.first?.lastStatus == 204)
            #expect(statuses.first?.lastError == nil)
            #expect(try await store.deliveries(project: other).map(\.state) == ["pending"])
        }
    }

    @Test(arguments: Engine.allCases) func settingsAndTheDaysHealthAndDroppedEventsReadBack(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            #expect(try await stores.alerts.settings(project: p.id) == AlertSettings())
            var settings = AlertSettings()
            settings.alertOnNewIssue = false
            settings.webhookURL = "https://hooks.example/x"
            try await stores.alerts.saveSettings(settings, project: p.id, at: Self.at)
            #expect(try await stores.alerts.settings(project: p.id) == settings)
            let day = DayNumber(Self.at)
            let updates = (0..<4).map { n in
                SessionUpdate(
                    sessionID: SessionID("s\(n)")!, distinctID: "u\(n % 2)", release: "1.0", started: Self.at,
                    status: n == 0 ? .crashed : .exited)
            }
            _ = try await stores.ingest.commit([
                .sessions(SessionBatch(project: p.id, receivedAt: Self.at, updates: updates)),
                .envelope(
                    EnvelopeWrite(
                        project: p.id, receivedAt: Self.at, event: nil, sessions: [],
                        discarded: [DiscardedEvents(reason: "queue_overflow", category: "error", quantity: 2)],
                        attachments: [], eventID: nil)),
            ])
            let health = try await stores.alerts.dayHealth(project: p.id, day: day)
            #expect(
                health["1.0"]
                    == ReleaseHealth(
                        sessions: 4, crashedSessions: 1, abnormalSessions: 0, erroredSessions: 0, users: 2,
                        crashedUsers: 1))
            #expect(health[""]?.sessions == 4)
            #expect(
                try await stores.clientReports.droppedEvents(project: p.id, from: day)
                    == [DroppedEvents(day: day, reason: "queue_overflow", category: "error", quantity: 2)])
        }
    }
}
