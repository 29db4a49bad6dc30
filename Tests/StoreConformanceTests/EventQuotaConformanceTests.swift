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
                try await store.addQuotaCounts(
                    [
                        QuotaCount(project: app.id, day: day, release: "2.0", accepted: 1000, dropped: 40),
                        QuotaCount(project: app.id, day: day, release: "2.0", fingerprint: print, dropped: 9),
                        QuotaCount(project: app.id, day: day.adding(-40), release: "1.0", accepted: 5),
                        QuotaCount(project: other.id, day: day, release: "", dropped: 3),
                        // Counted for a project deleted since: no row, and no error for the rest.
                        QuotaCount(project: ProjectID(9_999), day: day, release: "2.0", dropped: 1),
                        // Nothing to add: no row.
                        QuotaCount(project: app.id, day: day, release: "3.0"),
                    ], at: Date(timeIntervalSince1970: 1_800_000_000))
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

    @Test(arguments: Engine.allCases) func anIssuesDroppedEventsAreReadByItsFingerprintsAndMarkItChanged(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { db in
            let store = try quotas(db)
            let app = try await createProject(db)
            // Given two issues, the second's fingerprint merged into the first
            try await IssueMergeConformanceTests.file(db, app, [(1, "cart", "2.0", "u1"), (2, "login", "2.0", "u2")])
            let cart = IssueMergeConformanceTests.fingerprint("cart")
            let login = IssueMergeConformanceTests.fingerprint("login")
            let survivor = try #require(try await IssueMergeConformanceTests.issue(db, cart))
            let other = try #require(try await IssueMergeConformanceTests.issue(db, login))
            try await db.execute(
                """
                INSERT INTO issue_aliases (project_id, fingerprint, issue_id, created_at)
                VALUES (\(app.id.rawValue), 'v9:00000000000000aa', \(survivor), 1)
                """)
            let changed = { (id: Int64) in try await db.texts("SELECT updated_at FROM issues WHERE id = \(id)") }
            let before = try await changed(other)
            // When a flush adds drops under the survivor's fingerprint and the merged one, and only accepted events
            let day = DayNumber(rawValue: 20_000)
            let at = Date(timeIntervalSince1970: 4_000_000_000)
            try await store.addQuotaCounts(
                [
                    QuotaCount(project: app.id, day: day, release: "2.0", fingerprint: Fingerprint(cart), dropped: 5),
                    QuotaCount(
                        project: app.id, day: day.adding(-1), release: "1.0", fingerprint: Fingerprint(cart), dropped: 2
                    ),
                    QuotaCount(
                        project: app.id, day: day, release: "2.0", fingerprint: Fingerprint("v9:00000000000000aa"),
                        dropped: 4),
                    QuotaCount(project: app.id, day: day, release: "2.0", accepted: 30, dropped: 11),
                ], at: at)
            // Then the issue's drops are the sum over its fingerprints, days and releases; the release-only row is no
            // issue's
            let prints = [Fingerprint(cart), Fingerprint("v9:00000000000000aa")].compactMap { $0 }
            #expect(try await store.droppedEvents(project: app.id, fingerprints: prints) == 11)
            #expect(try await store.droppedEvents(project: app.id, fingerprints: [Fingerprint(login)!]) == 0)
            #expect(try await store.droppedEvents(project: app.id, fingerprints: []) == 0)
            #expect(try await store.droppedEvents(project: ProjectID(9_999), fingerprints: prints) == 0)
            // and the survivor is marked changed at the flush (its page shows them); the other issue is not
            #expect(try await changed(survivor) == ["4000000000000"])
            #expect(try await changed(other) == before)
        }
    }

    @Test(arguments: Engine.allCases) func foldingKeepsTheTotalsAndDropsFingerprintRowsPastTheKeep(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { db in
            let store = try quotas(db)
            let app = try await createProject(db)
            let day = DayNumber(rawValue: 20_000)
            let print = Grouping.fingerprint(kind: .crash, source: .client, components: ["spike"])
            let other = Grouping.fingerprint(kind: .crash, source: .client, components: ["other"])
            let at = Date(timeIntervalSince1970: 1_800_000_000)
            // Given old days with a total and fingerprint rows, one old day with fingerprint rows only, and a recent day
            try await store.addQuotaCounts(
                [
                    QuotaCount(project: app.id, day: day.adding(-100), release: "1.0", accepted: 50, dropped: 7),
                    QuotaCount(project: app.id, day: day.adding(-100), release: "1.0", fingerprint: print, dropped: 3),
                    QuotaCount(project: app.id, day: day.adding(-100), release: "1.0", fingerprint: other, dropped: 2),
                    QuotaCount(project: app.id, day: day.adding(-95), release: "1.1", fingerprint: print, dropped: 6),
                    QuotaCount(project: app.id, day: day.adding(-5), release: "2.0", fingerprint: print, dropped: 9),
                    QuotaCount(project: app.id, day: day.adding(-5), release: "2.0", accepted: 1, dropped: 1),
                ], at: at)
            let sums =
                "SELECT day, release, sum(accepted), sum(dropped) FROM quota_counts GROUP BY day, release ORDER BY day"
            let before = try await db.texts(sums)
            // When retention folds what is older than 90 days
            #expect(try await db.retention.foldQuotaCounts(before: day.adding(-90)) == 3)
            // Then every day and release keeps its sums, the old fingerprint rows are gone, the recent one stays
            #expect(try await db.texts(sums) == before)
            #expect(
                try await db.texts("SELECT day FROM quota_counts WHERE fingerprint <> ''") == [
                    "\(day.adding(-5).rawValue)"
                ])
            #expect(try await store.droppedEvents(project: app.id, fingerprints: [print]) == 9)
            let old = try await store.quotaCounts(project: app.id, from: day.adding(-100))
            #expect(
                old.contains(
                    QuotaCount(project: app.id, day: day.adding(-100), release: "1.0", accepted: 50, dropped: 12)))
            #expect(old.contains(QuotaCount(project: app.id, day: day.adding(-95), release: "1.1", dropped: 6)))
            // and a second fold finds nothing.
            #expect(try await db.retention.foldQuotaCounts(before: day.adding(-90)) == 0)
        }
    }

    @Test(arguments: Engine.allCases) func theMonthsAcceptedEventsAreSummedPerProject(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let store = try quotas(db)
            let app = try await createProject(db)
            let other = try await createProject(db, "other")
            let first = QuotaWindow.firstDayOfMonth(Date(timeIntervalSince1970: 1_795_860_005))  // 2026-11-29
            #expect(first.description == "2026-11-01")
            try await store.addQuotaCounts(
                [
                    QuotaCount(project: app.id, day: first, release: "2.0", accepted: 400, dropped: 9),
                    QuotaCount(project: app.id, day: first.adding(20), release: "2.1", accepted: 100),
                    QuotaCount(project: app.id, day: first.adding(-1), release: "2.0", accepted: 7000),
                    QuotaCount(project: other.id, day: first.adding(3), release: "", accepted: 5),
                ], at: Date(timeIntervalSince1970: 1_795_860_005))
            #expect(try await store.acceptedEvents(from: first) == [app.id: 500, other.id: 5])
            #expect(try await store.acceptedEvents(from: first.adding(40)) == [:])
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
