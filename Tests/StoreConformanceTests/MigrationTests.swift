import FaultlineCore
import Foundation
import GRDB
import StoreMigration
import TestSupport
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// `faultline migrate` (StoreMigrator): a SQLite installation filled through the real SQLite stores, copied into a
/// fresh PostgreSQL database, then asked the same questions through both engines' readers.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct MigrationTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    /// Weeks far from the test server's clock: their partitions exist only if the migrate makes them.
    static let longAgo = Date(timeIntervalSince1970: 1_705_000_000)
    static let ingestKey = SecretHash(hex: String(repeating: "a", count: 64))
    static let uploadToken = SecretHash(hex: String(repeating: "b", count: 64))
    static let adminToken = SecretHash(hex: String(repeating: "e", count: 64))
    static let login = SecretHash(hex: String(repeating: "7", count: 64))
    static let buildID = BuildID("aabbccdd")!
    static let debugFileText = "the debug file's bytes\n\0\u{1}\t\\ and more"

    /// What `fill` made, for the questions.
    struct Filled {
        var app: Project
        var other: Project
        var issues: [IssueID]
    }

    /// An installation with a bit of everything, made through the SQLite stores.
    static func fill(_ db: Stores) async throws -> Filled {
        let app = try await createProject(db)
        let other = try await createProject(db, "other")
        #expect(
            try await db.projects.setPrivacy(
                PrivacySettings(
                    scrubbing: false, safeFields: ["build"], sensitiveFields: ["pin"], keepIPAddresses: true),
                for: app.id))
        #expect(try await db.projects.setInAppRules(InAppRules(include: ["MyApp"], exclude: ["Vendor*"]), for: app.id))
        try await db.projects.setAdminTokenHash(adminToken, at: now)

        // Native reports in a week long ago and in this one, another project's, and a Sentry envelope (event, session,
        // client report, attachment).
        let old = (1...6).map { report($0, version: "1.0", at: longAgo.timeIntervalSince1970 - Double($0)) }
        let recent = (7...12).map {
            report(
                $0, kind: $0 % 4 == 0 ? .nonfatal : .crash, version: "2.0", at: now.timeIntervalSince1970 - Double($0))
        }
        var tabbed = report(13, version: "2.0", at: now.timeIntervalSince1970 - 13)
        tabbed.report.error = ErrorInfo(
            type: "Fatal\terror", message: "line one\nline two \\ with \"quotes\" and 'ticks' — ünïcödé")
        let event = ReportBatch(
            project: app.id, receivedAt: now.addingTimeInterval(-3_600), payload: payload,
            reports: [report(20, version: "2.0")])
        _ = try await db.ingest.commit([
            .reports(ReportBatch(project: app.id, receivedAt: longAgo, payload: payload, reports: old)),
            .reports(
                ReportBatch(
                    project: app.id, receivedAt: now.addingTimeInterval(-86_400), payload: payload,
                    reports: recent + [tabbed])),
            .reports(
                ReportBatch(
                    project: other.id, receivedAt: now.addingTimeInterval(-60), payload: payload, reports: [report(100)]
                )),
            .envelope(
                EnvelopeWrite(
                    project: app.id, receivedAt: now.addingTimeInterval(-3_600), event: event,
                    sessions: [
                        SessionUpdate(
                            sessionID: SessionID("env-s")!, distinctID: "u1", release: "2.0",
                            started: now.addingTimeInterval(-4_000),
                            status: .crashed, errors: 1, duration: 12.5)
                    ],
                    discarded: [DiscardedEvents(reason: "ratelimit_backoff", category: "error", quantity: 3)],
                    attachments: [
                        Attachment(
                            filename: "log.txt", contentType: "text/plain", attachmentType: "event.attachment",
                            bytes: [0, 1, 2, 255, 9, 10])
                    ],
                    eventID: eventID(20))),
        ])
        let day0 =
            now.timeIntervalSince1970 - now.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400) - 3 * 86_400
        try await IngestConformanceTests.storeSessions(db, app, day0: day0)

        // Symbolication results with grouping, modules and search entries; one report left pending.
        var outcomes: [SymbolicationOutcome] = []
        for n in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 20, 100] {
            let id = try await db.reportID(eventID(n))
            var outcome = GroupingConformanceTests.outcome(id, site: n % 3 == 0 ? "parse()" : "render()")
            // The parse() issue is a hang (`issues.hang`, a flag the copy turns into a boolean).
            outcome.grouping?.hang = n % 3 == 0
            outcome.search = SearchDocument(
                event: eventID(n).rawValue, user: "user-\(n % 3)", release: n <= 6 ? "1.0" : "2.0",
                error: "SIGSEGV boom \(n)",
                functions: n % 3 == 0 ? "Parser.parse()" : "Renderer.render(frame:)", keys: "plan gold\(n)")
            outcomes.append(outcome)
        }
        try await db.symbolication.saveAll(outcomes, at: now.addingTimeInterval(-30))
        let issues = try await db.insights.issues(matching: IssueQuery(project: app.id), now: now).map(\.id)
        #expect(issues.count == 2)
        #expect(
            try await db.insights.issues(matching: IssueQuery(project: app.id, category: .hang), now: now).count == 1)
        _ = try await db.insights.setStatus(
            .closed, issue: issues[0], project: app.id, by: "the CLI", at: now.addingTimeInterval(-20))
        #expect(
            try await db.insights.setNote(
                "seen on Pixels only", issue: issues[0], project: app.id, at: now.addingTimeInterval(-19)))
        _ = try await db.insights.setStatus(
            .muted, issue: issues[1], project: app.id, by: "the dashboard (session 1)", at: now.addingTimeInterval(-18))

        // Alerts: settings, the grouping's new-issue alerts handed to the outbox, one delivery retried.
        var settings = AlertSettings()
        settings.webhookURL = "https://hooks.example/x"
        settings.alertOnNewIssue = true
        try await db.alerts.saveSettings(settings, project: app.id, at: now)
        #expect(try await db.alerts.record(AlertConformanceTests.draft(app.id, .velocity, "velocity:7"), at: now))
        let toDispatch = try await db.alerts.alertsToDispatch(limit: 10)
        #expect(!toDispatch.isEmpty)
        try await db.alerts.enqueue(
            toDispatch.map {
                (alert: $0.id, url: "https://hooks.example/x", body: Array("{\"text\":\"\($0.title)\"}".utf8))
            },
            dispatched: toDispatch.map(\.id), at: now)
        let due = try #require(try await db.alerts.dueDeliveries(now: now, limit: 1).first)
        try await db.alerts.recordAttempt(
            due.id, outcome: .retry(next: now.addingTimeInterval(600), status: 503, error: "HTTP 503"), at: now)

        // A debug file with its blob, a dashboard login, a sentry-cli upload.
        let files = db.debugFiles
        guard
            case .stored = try await files.store(
                try upload(files, debugFileText), facts: facts([.debuginfo, .executable]), buildID: buildID,
                project: app.id, name: "app.debug",
                quotaBytes: 1 << 20, at: now)
        else { throw StorageError(.conflict, "the debug file was not stored") }
        _ = try await db.adminSessions.createSession(
            tokenHash: login, adminTokenHash: adminToken, secret: String(repeating: "5", count: 64), createdAt: now,
            expiresAt: now.addingTimeInterval(3_600))
        try await db.difUploads.save(
            DifUploadRecord(
                project: app.id, checksum: ChunkChecksum(String(repeating: "c", count: 40))!, name: "app.debug",
                debugID: nil, buildID: buildID,
                state: .ok, detail: nil, dif: nil, updatedAt: now))
        return Filled(app: app, other: other, issues: issues)
    }

    /// Migrates `sqlite` into `postgres` (its database and blob folder).
    @discardableResult
    static func migrate(_ sqlite: Stores, into postgres: Stores, at date: Date = now) async throws -> MigrationSummary {
        try await StoreMigrator(
            source: try #require(sqlite.sqlite), sourceName: "test data", debugFiles: sqlite.blobRoot,
            target: try #require(postgres.postgres), blobs: String(postgres.blobRoot.dropLast("/debug-files".count)),
            hasher: CoreutilsSHA256()
        ).run(now: date)
    }

    /// The same questions through both engines' readers, the same answers (and answers that are not empty).
    static func expectSameAnswers(
        _ a: Stores, _ b: Stores, _ filled: Filled, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        func same<T: Equatable>(_ what: String, _ read: (Stores) async throws -> T) async throws {
            let (left, right) = (try await read(a), try await read(b))
            #expect(left == right, "\(what) differs", sourceLocation: sourceLocation)
        }
        let app = filled.app.id
        // Projects and credentials.
        try await same("projects") { try await $0.projects.allProjects() }
        try await same("the ingest key's project") {
            try await $0.projects.project(credential: ingestKey, kind: .ingest, at: now)
        }
        try await same("the upload token's project") {
            try await $0.projects.project(credential: uploadToken, kind: .upload, at: now)
        }
        #expect(try await b.projects.project(credential: ingestKey, kind: .ingest, at: now)?.privacy.scrubbing == false)
        #expect(try await b.projects.isAdminTokenHash(adminToken))
        try await same("the login") { try await $0.adminSessions.session(tokenHash: login, now: now) }
        #expect(try await b.adminSessions.session(tokenHash: login, now: now) != nil)
        // Issues: lists, details with counts, states.
        for project in [app, filled.other.id] {
            try await same("the issue list") {
                try await $0.insights.issues(matching: IssueQuery(project: project), now: now)
            }
            try await same("the closed issues") {
                try await $0.insights.issues(matching: IssueQuery(project: project, status: .closed), now: now)
            }
            try await same("the issue counts") { try await $0.insights.issueCounts(project: project) }
        }
        for issue in filled.issues {
            try await same("issue \(issue)") { try await $0.insights.issue(issue, project: app, now: now) }
        }
        #expect(try await b.insights.issue(filled.issues[0], project: app, now: now)?.summary.events ?? 0 > 0)
        try await same("the top issues") {
            try await $0.insights.topIssues(project: app, window: .last7Days, now: now, limit: 10)
        }
        // Release health and sessions.
        try await same("release health") {
            try await $0.insights.health(
                project: app, release: nil, from: DayNumber(now.addingTimeInterval(-5 * 86_400)),
                through: DayNumber(now))
        }
        try await same("releases") { try await $0.insights.releases(project: app, now: now, limit: 10) }
        #expect(try await b.insights.releases(project: app, now: now, limit: 10).isEmpty == false)
        for session in ["s0", "s7", "s59", "env-s"] {
            try await same("session \(session)") { try await $0.reports.session(project: app, id: SessionID(session)!) }
        }
        // Reports: listings by keyset, raw reports.
        try await same("the report listing") {
            try await $0.reports.reports(matching: ReportQuery(project: app, limit: 100))
        }
        let page = try await a.reports.reports(matching: ReportQuery(project: app, limit: 5))
        try await same("the second page") {
            try await $0.reports.reports(matching: ReportQuery(project: app, before: page.last?.cursor, limit: 5))
        }
        for n in [1, 13, 20, 100] {
            try await same("raw report \(n)") { try await $0.reports.rawReport(eventID: eventID(n), project: nil) }
        }
        // Search.
        for text in ["boom", "gold7", "Parser.parse", "render", "user-2", eventID(3).rawValue] {
            try await same("search \(text)") {
                try await $0.search.search(try SearchText.parse(text), project: app, page: 1, pageSize: 25, now: now)
            }
        }
        #expect(
            try await b.search.search(try SearchText.parse("boom"), project: app, page: 1, pageSize: 25, now: now)
                .reportCount == 13)
        // Symbolication results and modules.
        let reportID = try await a.reportID(eventID(3))
        try await same("a result") { stores in
            let (state, report) = try await stores.symbolication.result(reportID: reportID)
            return [String(describing: state), String(describing: report)]
        }
        try await same("missing debug files") {
            try await $0.symbolication.missingDebugFiles(project: app, release: nil)
        }
        // Alerts and the outbox.
        try await same("alerts") { try await $0.insights.alerts(project: app, limit: 50) }
        try await same("alert settings") { try await $0.alerts.settings(project: app) }
        try await same("deliveries") { try await $0.alerts.deliveries(project: app) }
        try await same("due deliveries") {
            try await $0.alerts.dueDeliveries(now: now.addingTimeInterval(3_600), limit: 50)
        }
        #expect(try await b.alerts.deliveries(project: app).count > 1)
        try await same("dropped events") {
            try await $0.clientReports.droppedEvents(project: app, from: DayNumber(rawValue: 0))
        }
        try await same("attachments") {
            try await $0.texts("SELECT filename || ':' || size || ':' || event_id FROM attachments")
        }
        // Debug files: the rows, and a readable file with the same bytes.
        try await same("debug files") { try await $0.debugFiles.list(project: app, limit: 10) }
        try await same("debug file kinds") { try await $0.debugFiles.kinds(of: buildID, project: app) }
        try await same("debug file bytes used") { try await $0.debugFiles.bytesUsed(project: app, excluding: nil) }
        let path = try #require(try await b.debugFiles.path(of: buildID, kind: .debuginfo, project: app))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(debugFileText.utf8))
        try await same("the dif upload") {
            try await $0.difUploads.record(project: app, checksum: ChunkChecksum(String(repeating: "c", count: 40))!)
        }
        #expect(
            try await b.difUploads.record(project: app, checksum: ChunkChecksum(String(repeating: "c", count: 40))!)
                != nil)
    }

    @Test func aMigratedInstallationAnswersAsTheSQLiteOneDid() async throws {
        try await withStores(.sqlite) { sqlite in
            let filled = try await Self.fill(sqlite)
            try await withStores(.postgres) { postgres in
                let summary = try await Self.migrate(sqlite, into: postgres)
                #expect(summary.counts.allSatisfy { $0.matches })
                #expect(summary.counts.first { $0.table == "reports" }?.postgres == 15)
                #expect(summary.counts.first { $0.table == "report_event_ids" }?.postgres == 15)
                #expect(summary.counts.first { $0.table == "search_documents" }?.postgres == 14)
                #expect(summary.blobsCopied == 1)
                #expect(summary.replaced == nil)
                try await Self.expectSameAnswers(sqlite, postgres, filled)
                // Users per device and OS (`issue_tag_users`, `issue_tags.users`) copied row for row.
                let tagUsers =
                    "SELECT issue_id || ' ' || key || ' ' || value || ' ' || user_key || ' ' || events FROM issue_tag_users"
                let tagCounts =
                    "SELECT issue_id || ' ' || key || ' ' || value || ' ' || events || ' ' || users FROM issue_tags"
                #expect(try await sqlite.texts(tagUsers).count > 0)
                #expect(try await postgres.texts(tagUsers) == (try await sqlite.texts(tagUsers)))
                #expect(try await postgres.texts(tagCounts) == (try await sqlite.texts(tagCounts)))
                let copied = try await postgres.insights.issue(filled.issues[0], project: nil, now: Self.now)
                #expect(copied?.breakdowns["device"]?.first?.users ?? 0 > 0)
                // The issues' states as the team left them.
                let closed = try #require(
                    try await postgres.insights.issue(filled.issues[0], project: nil, now: Self.now))
                #expect(closed.summary.status == .closed)
                #expect(closed.note == "seen on Pixels only")
                #expect(closed.statusChange != nil)
                #expect(
                    try await postgres.insights.issue(filled.issues[1], project: nil, now: Self.now)?.summary.status
                        == .muted)

                // The copied rows sit in their weeks' partitions, also the weeks far from the server's clock.
                #expect(try await postgres.texts("SELECT count(*) FROM reports_default") == ["0"])
                #expect(try await postgres.texts("SELECT count(*) FROM payloads_default") == ["0"])
                let oldWeek = PostgresPartitions.name(
                    "reports", week: PostgresPartitions.weekStart(Millis.from(Self.longAgo)))
                #expect(try await postgres.texts("SELECT count(*) FROM \(oldWeek)") == ["6"])

                // The moved installation goes on: a retried report is a duplicate, a new one and a new project get ids past the
                // copied ones, the pending report is still queued.
                let maxReport = try await sqlite.texts("SELECT max(id) FROM reports")
                let outcome = try await postgres.ingest.commit([
                    .reports(
                        ReportBatch(
                            project: filled.app.id, receivedAt: Self.now, payload: payload,
                            reports: [report(1), report(500)]))
                ])
                #expect(outcome == [.reports(stored: [eventID(500)], duplicates: [eventID(1)])])
                #expect(
                    try await postgres.reportID(eventID(500))
                        > Int64(try #require(maxReport.first.flatMap { Int64($0) })))
                let third = try await postgres.projects.createProject(
                    slug: ProjectSlug("third")!, ingestKeyHash: SecretHash(hex: String(repeating: "1", count: 64)),
                    uploadTokenHash: SecretHash(hex: String(repeating: "2", count: 64)), createdAt: Self.now,
                    rateLimitPerSecond: 5)
                #expect(third.id.rawValue == 3)
                #expect(
                    try await postgres.symbolication.pending(limit: 10).map(\.raw.summary.eventID) == [
                        eventID(12), eventID(500),
                    ])
            }
        }
    }

    @Test func aSecondMigrateReplacesTheCopyOfTheFirst() async throws {
        try await withStores(.sqlite) { sqlite in
            var filled = try await Self.fill(sqlite)
            try await withStores(.postgres) { postgres in
                try await Self.migrate(sqlite, into: postgres)
                // The SQLite installation goes on meanwhile: a report, a session, an issue reopened, another project.
                _ = try await sqlite.ingest.commit([
                    .reports(
                        ReportBatch(
                            project: filled.app.id, receivedAt: Self.now, payload: payload,
                            reports: [report(600, version: "3.0")])),
                    .sessions(
                        SessionBatch(
                            project: filled.app.id, receivedAt: Self.now,
                            updates: [
                                SessionUpdate(
                                    sessionID: SessionID("later")!, distinctID: "u9", release: "3.0", started: Self.now,
                                    status: .exited)
                            ])),
                ])
                _ = try await sqlite.insights.setStatus(
                    .open, issue: filled.issues[0], project: nil, by: "the CLI", at: Self.now)
                filled.other = try await sqlite.projects.createProject(
                    slug: ProjectSlug("third")!, ingestKeyHash: SecretHash(hex: String(repeating: "1", count: 64)),
                    uploadTokenHash: SecretHash(hex: String(repeating: "2", count: 64)), createdAt: Self.now,
                    rateLimitPerSecond: 0.5)

                let again = try await Self.migrate(sqlite, into: postgres, at: Self.now.addingTimeInterval(60))
                #expect(again.replaced?.source == "test data")
                #expect(again.replaced?.at == Self.now)
                #expect(again.counts.allSatisfy { $0.matches })
                #expect(again.blobsCopied == 0 && again.blobsPresent == 1)  // the first run's blob is in place
                try await Self.expectSameAnswers(sqlite, postgres, filled)
                #expect(
                    try await postgres.insights.issue(filled.issues[0], project: nil, now: Self.now)?.summary.status
                        == .open)
                #expect(try await postgres.texts("SELECT count(*) FROM reports") == ["16"])
            }
        }
    }

    /// A node's rows: `faultline migrate` refuses the database, before writing anything.
    @Test func aDatabaseThatNodesWroteToIsRefusedAndLeftAsItWas() async throws {
        try await withStores(.sqlite) { sqlite in
            let filled = try await Self.fill(sqlite)
            // A database a node has ingested into.
            try await withStores(.postgres) { postgres in
                let node = try await createProject(postgres, "node")
                _ = try await postgres.ingest.commit([
                    .reports(
                        ReportBatch(project: node.id, receivedAt: Self.now, payload: payload, reports: [report(1)]))
                ])
                let error = await #expect(throws: MigrationError.self) {
                    try await Self.migrate(sqlite, into: postgres)
                }
                #expect(error?.message.contains("did not write") == true)
                #expect(error?.message.contains("reports") == true)
                #expect(try await postgres.projects.allProjects() == [node])
                #expect(try await postgres.texts("SELECT count(*) FROM reports") == ["1"])
                #expect(try await postgres.texts("SELECT count(*) FROM faultline_migrate") == ["0"])
                #expect(
                    try FileManager.default.subpathsOfDirectory(atPath: postgres.blobRoot + "/blobs").filter {
                        $0.count > 3
                    }.isEmpty)
            }
            // A database a migrate filled, where a node changed one issue since.
            try await withStores(.postgres) { postgres in
                try await Self.migrate(sqlite, into: postgres)
                _ = try await postgres.insights.setStatus(
                    .open, issue: filled.issues[1], project: nil, by: "the dashboard (session 2)", at: Self.now)
                let error = await #expect(throws: MigrationError.self) {
                    try await Self.migrate(sqlite, into: postgres, at: Self.now.addingTimeInterval(60))
                }
                #expect(error?.message.contains("issues") == true)
                #expect(
                    try await postgres.insights.issue(filled.issues[1], project: nil, now: Self.now)?.summary.status
                        == .open)
                #expect(
                    try await postgres.texts("SELECT migrated_at FROM faultline_migrate") == [
                        String(Millis.from(Self.now))
                    ])
            }
        }
    }

    /// A damaged SQLite database (foreign keys were off when a result was written for a report that is gone): the
    /// result cannot be placed in its report's week, so the copy lacks it, the counts say so, and nothing is committed.
    @Test func aCopyThatLacksRowsOfTheSourceIsReportedAndNotCommitted() async throws {
        try await withStores(.sqlite) { sqlite in
            _ = try await Self.fill(sqlite)
            try await sqlite.sqlite!.pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA foreign_keys = OFF")
                try db.execute(
                    sql: "INSERT INTO report_symbols (report_id, result, updated_at) VALUES (99999, x'7b7d', 1)")
                try db.execute(sql: "PRAGMA foreign_keys = ON")
            }
            try await withStores(.postgres) { postgres in
                let error = await #expect(throws: MigrationError.self) {
                    try await Self.migrate(sqlite, into: postgres)
                }
                let counts = try #require(error?.counts)
                #expect(counts.filter { !$0.matches }.map(\.table) == ["report_symbols"])
                let symbols = try #require(counts.first { $0.table == "report_symbols" })
                #expect(symbols.sqlite == symbols.postgres + 1)
                #expect(error?.message.contains("report_symbols") == true)
                #expect(counts.rendered.contains("differs"))
                for table in ["projects", "reports", "report_symbols", "faultline_migrate"] {
                    #expect(try await postgres.texts("SELECT count(*) FROM \(table)") == ["0"], "\(table)")
                }
            }
        }
    }

    /// What stops a migrate before anything is committed, and what its message names: a stored value the PostgreSQL
    /// column cannot hold (refused by table and column, never cut or wrapped), and a table the migrate has no rule for
    /// (a newer faultline's).
    @Test(arguments: [
        (
            "UPDATE issue_days SET day = 1099511627776 WHERE (issue_id, day) = (SELECT issue_id, day FROM issue_days LIMIT 1)",
            "issue_days.day"
        ),
        ("UPDATE issues SET regressed = 2 WHERE id = (SELECT min(id) FROM issues)", "issues.regressed"),
        ("CREATE TABLE node_leases (name TEXT PRIMARY KEY)", "node_leases"),
    ])
    func aSourceTheMigrateCannotCopyStopsIt(_ change: String, named: String) async throws {
        try await withStores(.sqlite) { sqlite in
            _ = try await Self.fill(sqlite)
            try await sqlite.sqlite!.pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA ignore_check_constraints = ON")  // a damaged or hand-edited file
                try db.execute(sql: change)
                try db.execute(sql: "PRAGMA ignore_check_constraints = OFF")
            }
            try await withStores(.postgres) { postgres in
                let error = await #expect(throws: MigrationError.self) {
                    try await Self.migrate(sqlite, into: postgres)
                }
                #expect(error?.message.contains(named) == true, "\(error?.message ?? "")")
                let projects = try await postgres.texts("SELECT count(*) FROM projects")
                #expect(projects == ["0"])
            }
        }
    }
}
