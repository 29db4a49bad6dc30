import FaultlineCore
import Foundation
import Testing

@testable import PostgresStorage

/// What only PostgreSQL has: several nodes on one database, concurrent start-up, partitions by week.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct PostgresNodeTests {
    /// Two nodes take the same reports at once (a client retrying on the other node): each report is stored once,
    /// and every request's answer says which of its reports were new.
    @Test func twoNodesStoreEachRetriedReportOnce() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first)
            let batches = (0..<20).map { n in
                ReportBatch(
                    project: p.id, receivedAt: Date(), payload: payload, reports: (0..<10).map { report(n * 5 + $0) })
            }
            let outcomes = try await withThrowingTaskGroup(of: [IngestOutcome].self) { group in
                for (index, batch) in batches.enumerated() {
                    let node = index % 2 == 0 ? first : second
                    group.addTask { try await node.ingest.commit([.reports(batch)]) }
                    group.addTask { try await (index % 2 == 0 ? second : first).ingest.commit([.reports(batch)]) }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            var stored: [EventID] = []
            for case .reports(let new, _) in outcomes { stored += new }
            let distinct = Set((0..<20).flatMap { n in (0..<10).map { eventID(n * 5 + $0) } })
            #expect(stored.count == distinct.count)
            #expect(Set(stored) == distinct)
            #expect(try await first.texts("SELECT count(*) FROM reports") == [String(distinct.count)])
            #expect(try await first.texts("SELECT count(*) FROM report_event_ids") == [String(distinct.count)])
            await second.close()
        }
    }

    /// Two nodes update the same sessions at once: each change moves the health rollups once (the advisory lock
    /// per session), so they equal a recount.
    @Test func twoNodesUpdatingOneSessionKeepTheRollupsExact() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first)
            let day0 = 1_795_000_000.0 - 1_795_000_000.0.truncatingRemainder(dividingBy: 86_400)
            var starts: [SessionUpdate] = []
            for n in 0..<30 {
                let started = Date(timeIntervalSince1970: day0 + Double(n % 3) * 86_400 + Double(n))
                let release = n % 2 == 0 ? "1.0" : "2.0"
                starts.append(
                    SessionUpdate(
                        sessionID: SessionID("s\(n)")!, distinctID: "user-\(n % 7)", release: release, started: started,
                        status: .ok))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, start) in starts.enumerated() {
                    var end = start
                    end.status = index % 3 == 0 ? .crashed : .exited
                    end.errors = index % 4 == 0 ? 1 : 0
                    let batch = SessionBatch(project: p.id, receivedAt: Date(), updates: [start, end])
                    // The same session's updates from both nodes, at once.
                    group.addTask { _ = try await first.ingest.commit([.sessions(batch)]) }
                    group.addTask { _ = try await second.ingest.commit([.sessions(batch)]) }
                }
                try await group.waitForAll()
            }
            try await expectHealthRollupsEqualARecount(first, days: 3)
            #expect(try await first.texts("SELECT count(*) FROM sessions WHERE status = 'crashed'") == ["10"])
            await second.close()
        }
    }

    @Test func twoNodesBatchesCrossingTheSameUsersRowsNeitherDeadlockNorMiscount() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first)
            let day0 = 1_795_000_000.0 - 1_795_000_000.0.truncatingRemainder(dividingBy: 86_400)
            func update(_ id: String, user: Int, day: Int, _ status: SessionStatus, errors: Int = 1) -> SessionUpdate {
                SessionUpdate(
                    sessionID: SessionID(id)!, distinctID: "user-\(user)", release: user % 2 == 0 ? "1.0" : "2.0",
                    started: Date(timeIntervalSince1970: day0 + Double(day) * 86_400 + Double(user)), status: status,
                    errors: errors)
            }
            let users = 0..<200
            for round in 0..<6 {
                let stored = users.flatMap { u in
                    [
                        update("d0-\(round)-\(u)", user: u, day: 0, .ok),
                        update("d1-\(round)-\(u)", user: u, day: 1, .ok),
                    ]
                }
                _ = try await first.ingest.commit([
                    .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: stored))
                ])
                // The first node crashes day 0's sessions and starts day 1's; the second the other way round.
                let one = users.flatMap { u in
                    [
                        update("d0-\(round)-\(u)", user: u, day: 0, .crashed),
                        update("n1-\(round)-\(u)", user: u, day: 1, .ok, errors: 0),
                    ]
                }
                let other = users.flatMap { u in
                    [
                        update("d1-\(round)-\(u)", user: u, day: 1, .crashed),
                        update("n0-\(round)-\(u)", user: u, day: 0, .ok, errors: 0),
                    ]
                }
                async let a = first.ingest.commit([
                    .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: one))
                ])
                async let b = second.ingest.commit([
                    .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: other))
                ])
                _ = try await (a, b)
            }
            try await expectEveryHealthTableEqualsARecount(first)
            #expect(try await first.texts("SELECT count(*) FROM sessions WHERE status = 'crashed'") == ["2400"])
            await second.close()
        }
    }

    /// Two nodes asking for work at once get different reports, and between them all of the queue.
    @Test func twoNodesClaimDisjointBatchesOfTheQueue() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first)
            try await GroupingConformanceTests.store(first, p, (1...50).map { ($0, "1.0", "u\($0)", Double($0)) })
            async let a = first.symbolication.pending(limit: 30)
            async let b = second.symbolication.pending(limit: 30)
            let (batchA, batchB) = try await (a, b)
            #expect(Set(batchA.map(\.reportID)).isDisjoint(with: batchB.map(\.reportID)))
            #expect(batchA.count + batchB.count == 50)
            // Everything is claimed: a third ask finds nothing.
            #expect(try await first.symbolication.pending(limit: 30).isEmpty)
            await second.close()
        }
    }

    /// A node that took reports and died: once its lease is over, another node takes them; a saved report's claim goes.
    @Test func aDeadNodesClaimsAreTakenOverAfterTheLease() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first)
            let ids = try await GroupingConformanceTests.store(
                first, p, (1...10).map { ($0, "1.0", "u\($0)", Double($0)) })
            #expect(try await first.symbolication.pending(limit: 10).count == 10)
            #expect(try await second.symbolication.pending(limit: 10).isEmpty)
            // The first node dies; its lease runs out (here: moved into the past).
            try await first.execute("UPDATE reports SET claimed_until = 1")
            let taken = try await second.symbolication.pending(limit: 10)
            #expect(taken.map(\.reportID) == ids)
            // A result saved but left pending (a newer debug file) is free to take again at once.
            try await second.symbolication.saveAll(
                ids.map { GroupingConformanceTests.outcome($0, site: "x") }, at: Date())
            #expect(try await first.texts("SELECT count(*) FROM reports WHERE claimed_until IS NOT NULL") == ["0"])
            await second.close()
        }
    }

    /// Claims given back (a suspect's batch, of which only the suspect is processed) are free at once, for any node;
    /// a report saved meanwhile is not queued again by giving it back, and a claim not given back stays.
    @Test func claimsGivenBackAreFreeForAnyNodeAtOnce() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first)
            let ids = try await GroupingConformanceTests.store(
                first, p, (1...10).map { ($0, "1.0", "u\($0)", Double($0)) })
            #expect(try await first.symbolication.pending(limit: 10).count == 10)
            try await first.symbolication.saveAll([GroupingConformanceTests.outcome(ids[1], site: "x")], at: Date())
            try await first.symbolication.releaseClaims(reportIDs: Array(ids.dropFirst()))
            let taken = try await second.symbolication.pending(limit: 10)
            // The first report stays the first node's; the saved one is done.
            #expect(taken.map(\.reportID) == Array(ids.dropFirst(2)))
            await second.close()
        }
    }

    /// Two nodes filing the reports of one new crash at once make one issue, one alert, and exact counts. (The
    /// fingerprint's advisory lock makes the second node wait and find the issue; without it the issue's unique key
    /// would refuse the second insert and that batch would be redone report by report: the same end, more work.)
    @Test func twoNodesFilingOneNewCrashMakeOneIssue() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first)
            let ids = try await GroupingConformanceTests.store(
                first, p, (1...40).map { ($0, "1.\($0 % 3)", "user-\($0 % 9)", Double($0)) })
            let outcomes = ids.map { GroupingConformanceTests.outcome($0, site: "same") }
            for round in 0..<4 {
                let part = Array(outcomes[(round * 10)..<(round * 10 + 10)])
                async let a: Void = first.symbolication.saveAll(Array(part.prefix(5)), at: Date())
                async let b: Void = second.symbolication.saveAll(Array(part.suffix(5)), at: Date())
                _ = try await (a, b)
            }
            #expect(try await first.texts("SELECT count(*) || ' ' || sum(events) FROM issues") == ["1 40"])
            #expect(try await first.texts("SELECT kind FROM alerts") == ["new_issue"])
            try await GroupingConformanceTests.expectIssueRollupsMatchRecount(first)
            await second.close()
        }
    }

    /// Two nodes filing batches of many new crashes at once, the same crash sites in both: each batch takes every
    /// fingerprint's lock at once, in one order on every node, so neither waits for the other in a circle, and each site
    /// makes one issue and one alert, with exact counts.
    @Test func twoNodesFilingBatchesOfManyNewCrashesMakeEachIssueOnce() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first)
            let ids = try await GroupingConformanceTests.store(
                first, p, (1...240).map { ($0, "1.\($0 % 3)", "user-\($0 % 11)", Double($0 % 5) * 86_400 + Double($0)) }
            )
            let sites = 24
            for round in 0..<3 {
                let part = Array(ids[(round * 80)..<(round * 80 + 80)])
                // Each node saves half of the round's reports; both halves cover every site.
                let outcomes = part.enumerated().map {
                    GroupingConformanceTests.outcome($1, site: "site \($0 % sites)")
                }
                async let a: Void = first.symbolication.saveAll(
                    outcomes.enumerated().filter { $0.offset % 2 == 0 }.map(\.element), at: Date())
                async let b: Void = second.symbolication.saveAll(
                    outcomes.enumerated().filter { $0.offset % 2 == 1 }.map(\.element), at: Date())
                _ = try await (a, b)
            }
            #expect(try await first.texts("SELECT count(*) || ' ' || sum(events) FROM issues") == ["\(sites) 240"])
            #expect(try await first.texts("SELECT count(*) FROM alerts WHERE kind = 'new_issue'") == ["\(sites)"])
            #expect(try await first.texts("SELECT count(*) FROM reports WHERE issue_id IS NULL") == ["0"])
            try await GroupingConformanceTests.expectIssueRollupsMatchRecount(first)
            await second.close()
        }
    }

    /// One node replaces a project's file, releasing its blob, while the other stores the same old bytes for another
    /// project: the blob's advisory lock orders "no row names it, unlink" against "reuse it, name it", so every row's
    /// blob file exists afterwards. Without the lock the unlink can land between the reuse and its commit.
    @Test func aBlobReleasedOnOneNodeWhileAnotherReusesItKeepsItsFile() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let a = try await createProject(first).id
            let b = try await createProject(first, "other").id
            let both = facts([.debuginfo, .executable])
            let rounds = 100
            for round in 0..<rounds {
                let id = BuildID(String(format: "%04x", round + 1))!
                let old = "round \(round): the file a replaces and b uploads"
                _ = try await first.debugFiles.store(
                    try upload(first.debugFiles, old), facts: both, buildID: id, project: a, name: nil,
                    quotaBytes: 1 << 30, at: Date())
                let replacing = try upload(first.debugFiles, "round \(round): a's new file")
                let reusing = try upload(second.debugFiles, old)
                // At once: a's replacement on the first node (which then removes the old blob) and b's upload of the old
                // bytes on the second.
                async let replaced = first.debugFiles.store(
                    replacing, facts: both, buildID: id, project: a, name: nil, quotaBytes: 1 << 30, at: Date())
                async let reused = second.debugFiles.store(
                    reusing, facts: both, buildID: id, project: b, name: nil, quotaBytes: 1 << 30, at: Date())
                _ = try await (replaced, reused)
            }
            let named = try await first.texts("SELECT DISTINCT blob_sha256 FROM debug_files")
            #expect(named.count == 2 * rounds)
            let lost = named.filter { hash in
                !FileManager.default.fileExists(atPath: first.blobRoot + "/blobs/" + hash.prefix(2) + "/" + hash)
            }
            #expect(lost.isEmpty, "\(lost.count) of \(named.count) blobs named by a row are gone")
            // And no blob is left that no row names (a's old files were all removed or reused by b).
            let onDisk = try FileManager.default.subpathsOfDirectory(atPath: first.blobRoot + "/blobs").filter {
                $0.count > 3
            }
            #expect(onDisk.count == named.count)
            await second.close()
        }
    }

    /// Two nodes' webhook dispatchers asking at once attempt different deliveries; one a dead node held is attempted
    /// again once its lease is over.
    @Test func twoNodesAttemptEachWebhookDeliveryOnce() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let project = try await createProject(first).id
            let at = AlertConformanceTests.at
            for n in 0..<20 {
                _ = try await first.alerts.record(AlertConformanceTests.draft(project, .newIssue, "new:\(n)"), at: at)
            }
            let alerts = try await first.alerts.alertsToDispatch(limit: 100)
            try await first.alerts.enqueue(
                alerts.map { (alert: $0.id, url: "http://hook", body: [1]) }, dispatched: alerts.map(\.id), at: at)
            async let a = first.alerts.dueDeliveries(now: at, limit: 12)
            async let b = second.alerts.dueDeliveries(now: at, limit: 12)
            let (dueA, dueB) = try await (a, b)
            #expect(Set(dueA.map(\.id)).isDisjoint(with: dueB.map(\.id)))
            #expect(dueA.count + dueB.count == 20)
            // The first node dies holding its deliveries: after the lease they are due again, for any node.
            #expect(try await second.alerts.dueDeliveries(now: at.addingTimeInterval(60), limit: 100).isEmpty)
            let later = try await second.alerts.dueDeliveries(now: at.addingTimeInterval(301), limit: 100)
            #expect(later.count == 20)
            await second.close()
        }
    }

    /// Two nodes store different files for one project at once, with room for one more: exactly one is stored (the
    /// project's advisory lock); without it both would read the usage before the other's commit and pass the quota.
    @Test func twoNodesUploadingForOneProjectAtOnceStayWithinItsQuota() async throws {
        try await withStores(.postgres) { first in
            let second = try await first.secondNode()
            let p = try await createProject(first).id
            let rounds = 40
            for round in 0..<rounds {
                let files = try (0..<2).map { node in
                    try upload(first.debugFiles, String(format: "r%04d-n%d", round, node))
                }
                // Eight bytes each, and room for exactly one more.
                let quota = UInt64(round + 1) * 8
                async let one = first.debugFiles.store(
                    files[0], facts: facts([.debuginfo]), buildID: BuildID(String(format: "%04x", 2 * round + 1))!,
                    project: p, name: nil,
                    quotaBytes: quota, at: Date())
                async let other = second.debugFiles.store(
                    files[1], facts: facts([.debuginfo]), buildID: BuildID(String(format: "%04x", 2 * round + 2))!,
                    project: p, name: nil,
                    quotaBytes: quota, at: Date())
                let stored = try await [one, other].filter { if case .stored = $0 { true } else { false } }
                #expect(stored.count == 1, "round \(round)")
            }
            #expect(try await first.debugFiles.bytesUsed(project: p, excluding: nil) == UInt64(rounds) * 8)
            await second.close()
        }
    }

    /// Nodes starting together migrate once: the migration lock serialises them and the later ones find nothing
    /// to do.
    @Test func nodesStartingAtOnceMigrateOnce() async throws {
        do {
            // A fresh database, opened by four nodes at once.
            let (fresh, name) = try await PostgresServer.createDatabase()
            let nodes = try await withThrowingTaskGroup(of: PostgresEngine.self) { group in
                for _ in 0..<4 { group.addTask { try await PostgresEngine.open(url: fresh) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for node in nodes {
                #expect(try await node.appliedMigrations() == PostgresMigrations.all.map(\.identifier))
            }
            for node in nodes { await node.close() }
            try await PostgresServer.dropDatabase(name)
        }
    }

    /// Rows go to their week's partition; a time outside every weekly partition goes to the default one and stays
    /// readable.
    @Test func reportsLandInTheirWeeksPartition() async throws {
        try await withStores(.postgres) { stores in
            let p = try await createProject(stores)
            let now = Date()
            let farFuture = now.addingTimeInterval(400 * 86_400)
            _ = try await stores.ingest.commit([
                .reports(ReportBatch(project: p.id, receivedAt: now, payload: payload, reports: [report(1)])),
                .reports(ReportBatch(project: p.id, receivedAt: farFuture, payload: payload, reports: [report(2)])),
            ])
            let week = PostgresPartitions.name("reports", week: PostgresPartitions.weekStart(Millis.from(now)))
            #expect(
                try await stores.texts("SELECT tableoid::regclass::text FROM reports ORDER BY id")
                    == ["reports_default", week].sorted())
            #expect(
                try await stores.reports.rawReport(eventID: eventID(2), project: p.id)?.summary.receivedAt
                    == Date(timeIntervalSince1970: Double(Millis.from(farFuture)) / 1000))
        }
    }

    @Test func weeksStartOnMondayUTC() {
        // 2026-11-23 was a Monday; 2026-11-22 a Sunday.
        let monday: Int64 = 1_795_392_000_000
        #expect(PostgresPartitions.weekStart(monday) == monday)
        #expect(PostgresPartitions.weekStart(monday + 6 * 86_400_000 + 86_399_999) == monday)
        #expect(PostgresPartitions.weekStart(monday - 1) == monday - 7 * 86_400_000)
        #expect(PostgresPartitions.name("reports", week: monday) == "reports_2026_11_23")
        #expect(PostgresPartitions.weekStart(0) == -3 * 86_400_000)  // 1970-01-01 was a Thursday
        #expect(PostgresPartitions.weekStart(-1) == -3 * 86_400_000)
        // No trap at the edges: times are clamped to ±9·10¹⁵ ms, as Millis.from clamps dates.
        #expect(PostgresPartitions.weekStart(Int64.max) == PostgresPartitions.weekStart(9_000_000_000_000_000))
        #expect(PostgresPartitions.weekStart(Int64.min) == PostgresPartitions.weekStart(-9_000_000_000_000_000))
        #expect(PostgresPartitions.weekStart(Int64.max) > 8_999_000_000_000_000)
    }

    @Test func urlsAreReadLikeLibpqAndPasswordsNeverShow() throws {
        let location = try PostgresLocation(url: "postgres://faultline:s3cret@db.internal:6543/crashes?sslmode=require")
        #expect(location.host == "db.internal")
        #expect(location.port == 6543)
        #expect(location.user == "faultline")
        #expect(location.password == "s3cret")
        #expect(location.database == "crashes")
        #expect(location.sslMode == .require)
        let socket = try PostgresLocation(url: "postgresql:///faultline?host=/run/postgresql", password: "from-env")
        #expect(socket.socketFolder == "/run/postgresql")
        #expect(socket.password == "from-env")
        #expect(socket.port == 5432)
        #expect(PostgresLocation.redact("postgres://u:s3cret@h/db").contains("s3cret") == false)
        for bad in [
            "mysql://h/db", "postgres://h", "postgres://h/db?sslmode=sometimes", "postgres://h:99999/db", "not a url",
        ] {
            #expect(throws: StorageError.self) { try PostgresLocation(url: bad) }
        }
    }
}
