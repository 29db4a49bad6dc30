import FaultlineCore
import Foundation
import TestSupport
import Testing

/// Spike protection's storage on each engine: a project's event quotas (`ProjectStore.setEventQuotas`), the quota
/// counts added by each flush (`QuotaCountStore`) and the `quota_reached` alert, recorded once per window.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct EventQuotaConformanceTests {
    /// The engine's quota-count store, from the same list of stores the server builds.
    func quotas(_ db: Stores) throws -> any QuotaCountStore {
        if let sqlite = db.sqlite { return try sqlite.stores(blobRoot: db.blobRoot).quotas }
        return try #require(db.postgres).stores(blobRoot: db.blobRoot).quotas
    }

    @Test(arguments: Engine.allCases) func quotasAreSetPerProjectAndCleared(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let app = try await createProject(db)
            let other = try await createProject(db, "other")
            // A new project has no quota.
            #expect(try await db.projects.project(id: app.id)?.quotas == EventQuotas())

            let own = EventQuotas(perMinute: 1000, perHour: 20_000, perMonth: EventQuotas.maxValue)
            #expect(try await db.projects.setEventQuotas(own, for: app.id))
            #expect(try await db.projects.project(id: app.id)?.quotas == own)
            #expect(try await db.projects.project(slug: app.slug)?.quotas == own)
            #expect(try await db.projects.allProjects().first { $0.id == app.id }?.quotas == own)
            #expect(try await db.projects.project(id: other.id)?.quotas == EventQuotas())
            #expect(try await db.projects.project(id: app.id)?.targets == CrashFreeTargets())

            // One window cleared, the others kept.
            let hourOnly = EventQuotas(perHour: 20_000)
            #expect(try await db.projects.setEventQuotas(hourOnly, for: app.id))
            #expect(try await db.projects.project(id: app.id)?.quotas == hourOnly)

            // Below 1 the database refuses; nothing changes. No such project: false.
            await #expect(throws: (any Error).self) {
                try await db.projects.setEventQuotas(EventQuotas(perMinute: 0), for: app.id)
            }
            #expect(try await db.projects.project(id: app.id)?.quotas == hourOnly)
            #expect(try await db.projects.setEventQuotas(own, for: ProjectID(9_999)) == false)
        }
    }

    @Test(arguments: Engine.allCases) func countsAddUpPerDayReleaseAndFingerprint(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let store = try quotas(db)
            let app = try await createProject(db)
            let other = try await createProject(db, "other")
            let day = DayNumber(rawValue: 20_000)
            let print = Grouping.fingerprint(kind: .crash, source: .client, components: ["spike"])
            // Given two flushes (two nodes, or one node twice) that count the same keys
            for _ in 0..<2 {
                try await store.addQuotaCounts([
                    QuotaCount(project: app.id, day: day, release: "2.0", accepted: 1000, dropped: 40),
                    QuotaCount(project: app.id, day: day, release: "2.0", fingerprint: print, dropped: 9),
                    QuotaCount(project: app.id, day: day.adding(-40), release: "1.0", accepted: 5),
                    QuotaCount(project: other.id, day: day, release: "", dropped: 3),
                    // Counted for a project deleted since: no row, and no error for the rest.
                    QuotaCount(project: ProjectID(9_999), day: day, release: "2.0", dropped: 1),
                    // Nothing to add: no row.
                    QuotaCount(project: app.id, day: day, release: "3.0"),
                ])
            }
            // Then each key holds the sum, the fingerprint reads back as the issue's, days before `from` are left out
            let rows = try await store.quotaCounts(project: app.id, from: day.adding(-29))
            #expect(
                Set(rows) == [
                    QuotaCount(project: app.id, day: day, release: "2.0", accepted: 2000, dropped: 80),
                    QuotaCount(project: app.id, day: day, release: "2.0", fingerprint: print, dropped: 18),
                ])
            #expect(try await store.quotaCounts(project: app.id, from: day.adding(-40)).count == 3)
            #expect(
                try await store.quotaCounts(project: other.id, from: day) == [
                    QuotaCount(project: other.id, day: day, release: "", dropped: 6)
                ])
            #expect(try await db.texts("SELECT count(*) FROM quota_counts") == ["4"])
            // and a project's counts go with it.
            try await db.execute("DELETE FROM projects WHERE id = \(other.id.rawValue)")
            #expect(try await db.texts("SELECT count(*) FROM quota_counts") == ["3"])
        }
    }

    @Test(arguments: Engine.allCases) func theQuotaAlertIsRecordedOncePerWindow(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let app = try await createProject(db)
            let at = Date(timeIntervalSince1970: 1_800_000_000)
            let start = QuotaWindow.minute.start(of: 1_800_000_000)
            let first = QuotaAlerts.draft(
                project: app.id, window: .minute, windowStart: start, quota: 1000, retryAfter: 40, server: false)
            // The same window again (another node, a retried flush) with another wait: recorded once.
            var again = QuotaAlerts.draft(
                project: app.id, window: .minute, windowStart: start, quota: 1000, retryAfter: 12, server: false)
            again.reason["retry_after_seconds"] = 12
            #expect(try await db.alerts.record(first, at: at))
            #expect(try await db.alerts.record(again, at: at) == false)
            // The next window is a new alert.
            let next = QuotaAlerts.draft(
                project: app.id, window: .minute, windowStart: start + 60, quota: 1000, retryAfter: 60, server: false)
            #expect(try await db.alerts.record(next, at: at.addingTimeInterval(60)))
            let alerts = try await db.insights.alerts(project: app.id, limit: 10)
            #expect(alerts.count == 2)
            #expect(alerts.allSatisfy { $0.kind == .quotaReached && $0.reason["quota"] == 1000 })
        }
    }
}
