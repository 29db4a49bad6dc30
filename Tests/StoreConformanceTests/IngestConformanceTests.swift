import FaultlineCore
import Foundation
import TestSupport
import Testing

func eventID(_ n: Int) -> EventID { StoreRows.eventID(n) }

func report(_ n: Int, kind: ReportKind = .crash, version: String = "1.0", at seconds: Double = 1_795_000_000)
    -> PreparedReport
{
    var r = Report(eventID: eventID(n), kind: kind, timestamp: Date(timeIntervalSince1970: seconds))
    r.app = AppInfo(version: version)
    r.userID = "user-\(n % 3)"
    r.error = ErrorInfo(type: "SIGSEGV", message: "boom \(n)")
    r.trimmed.customKeysDropped = n % 2
    return PreparedReport(report: r, range: (n * 10)..<(n * 10 + 10))
}

let payload = StoreRows.payload

func createProject(_ stores: Stores, _ slug: String = "app") async throws -> Project {
    try await stores.projects.createProject(
        slug: ProjectSlug(slug)!,
        ingestKeyHash: SecretHash(hex: String(repeating: slug == "app" ? "a" : "c", count: 64)),
        uploadTokenHash: SecretHash(hex: String(repeating: slug == "app" ? "b" : "d", count: 64)),
        createdAt: Date(timeIntervalSince1970: 1), rateLimitPerSecond: 50)
}

/// The behaviour of ProjectStore, IngestStore, ReportReader and SessionReader, on each engine.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct IngestConformanceTests {
    @Test(arguments: Engine.allCases) func projectsAndCredentialsRoundTrip(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let store = stores.projects
            let created = try await createProject(stores)
            #expect(
                try await store.project(
                    credential: SecretHash(hex: String(repeating: "a", count: 64)), kind: .ingest, at: Date())
                    == created)
            #expect(
                try await store.project(
                    credential: SecretHash(hex: String(repeating: "a", count: 64)), kind: .upload, at: Date())
                    == nil)
            #expect(
                try await store.project(
                    credential: SecretHash(hex: String(repeating: "b", count: 64)), kind: .upload, at: Date())
                    == created)
            #expect(try await store.project(slug: ProjectSlug("app")!) == created)
            #expect(try await store.project(id: created.id) == created)
            await #expect(throws: StorageError.self) { _ = try await createProject(stores) }  // slug taken
            #expect(try await store.allProjects().count == 1)

            let admin = SecretHash(hex: String(repeating: "e", count: 64))
            #expect(try await store.isAdminTokenHash(admin) == false)
            try await store.setAdminTokenHash(admin, at: Date())
            #expect(try await store.isAdminTokenHash(admin))
            try await store.setAdminTokenHash(SecretHash(hex: String(repeating: "f", count: 64)), at: Date())
            #expect(try await store.isAdminTokenHash(admin) == false)  // rotated away
        }
    }

    @Test(arguments: Engine.allCases) func privacySettingsAndInAppRulesRoundTripPerProject(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let app = try await createProject(stores)
            let other = try await createProject(stores, "other")
            let privacy = PrivacySettings(
                scrubbing: false, safeFields: ["build"], sensitiveFields: ["pin", "ssn"], keepIPAddresses: true,
                maskEmailsAndPhones: false)
            #expect(try await stores.projects.setPrivacy(privacy, for: app.id))
            let rules = InAppRules(include: ["MyApp"], exclude: ["Vendor*"])
            #expect(try await stores.projects.setInAppRules(rules, for: app.id))
            #expect(try await stores.projects.setPrivacy(privacy, for: ProjectID(other.id.rawValue + 100)) == false)
            let read = try #require(try await stores.projects.project(id: app.id))
            #expect(read.privacy == privacy)
            #expect(read.inApp == rules)
            #expect(try await stores.projects.project(id: other.id)?.privacy == PrivacySettings())  // untouched
            // Each project has its own random identity key (pseudonymous user ids), the same when it is read again.
            #expect(app.identityKey.count == 32 && other.identityKey.count == 32)
            #expect(app.identityKey != other.identityKey)
            #expect(read.identityKey == app.identityKey)
        }
    }

    @Test(arguments: Engine.allCases) func storesReportsOnceAndRecognisesRetries(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let batch = ReportBatch(
                project: p.id, receivedAt: Date(timeIntervalSince1970: 2), payload: payload,
                reports: [report(1), report(2)])
            let first = try await stores.ingest.commit([.reports(batch)])
            #expect(first == [.reports(stored: [eventID(1), eventID(2)], duplicates: [])])
            let retry = ReportBatch(
                project: p.id, receivedAt: Date(timeIntervalSince1970: 3), payload: payload,
                reports: [report(2), report(3)])
            let second = try await stores.ingest.commit([.reports(retry), .reports(batch)])
            #expect(
                second == [
                    .reports(stored: [eventID(3)], duplicates: [eventID(2)]),
                    .reports(stored: [], duplicates: [eventID(1), eventID(2)]),
                ])
            #expect(try await stores.texts("SELECT count(*) FROM reports") == ["3"])
            #expect(try await stores.texts("SELECT count(*) FROM payloads") == ["2"])  // the all-duplicates batch stored no payload
            // The same event id in another project is another report.
            let other = try await createProject(stores, "other")
            let elsewhere = try await stores.ingest.commit([
                .reports(ReportBatch(project: other.id, receivedAt: Date(), payload: payload, reports: [report(1)]))
            ])
            #expect(elsewhere == [.reports(stored: [eventID(1)], duplicates: [])])
            // The same event id twice in one request: its first report is stored, the second is a duplicate.
            let twice = try await stores.ingest.commit([
                .reports(
                    ReportBatch(
                        project: p.id, receivedAt: Date(), payload: payload, reports: [report(4), report(5), report(4)])
                )
            ])
            #expect(twice == [.reports(stored: [eventID(4), eventID(5)], duplicates: [eventID(4)])])
            #expect(
                try await stores.texts("SELECT count(*) FROM reports WHERE event_id = '\(eventID(4).rawValue)'") == [
                    "1"
                ])
        }
    }

    @Test(arguments: Engine.allCases) func oneFailingWriteDoesNotSinkItsGroup(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let good = ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: [report(1)])
            let orphan = ReportBatch(
                project: ProjectID(999), receivedAt: Date(), payload: payload, reports: [report(2)])
            let later = ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: [report(3)])
            // The group is first tried in one go; the orphan's refusal sends it through one savepoint per write.
            let outcomes = try await stores.ingest.commit([.reports(good), .reports(orphan), .reports(later)])
            guard case .failed = outcomes[1] else { Issue.record("expected the orphan write to fail"); return }
            #expect(outcomes[0] == .reports(stored: [eventID(1)], duplicates: []))
            #expect(outcomes[2] == .reports(stored: [eventID(3)], duplicates: []))
            #expect(try await stores.texts("SELECT count(*) FROM reports") == ["2"])
            #expect(try await stores.texts("SELECT count(*) FROM payloads") == ["2"])  // the orphan's payload went with it
        }
    }

    @Test(arguments: Engine.allCases) func listsWithFiltersAndKeysetPaging(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let other = try await createProject(stores, "other")
            let reports = (1...25).map {
                report(
                    $0, kind: $0 % 5 == 0 ? .nonfatal : .crash, version: $0 <= 10 ? "1.0" : "2.0",
                    at: 1_795_000_000 + Double($0))
            }
            _ = try await stores.ingest.commit([
                .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: reports)),
                .reports(ReportBatch(project: other.id, receivedAt: Date(), payload: payload, reports: [report(100)])),
            ])
            let reader = stores.reports
            var seen: [EventID] = []
            var cursor: Int64?
            repeat {
                let page = try await reader.reports(matching: ReportQuery(project: p.id, before: cursor, limit: 10))
                seen += page.map(\.eventID)
                cursor = page.count == 10 ? page.last?.cursor : nil
            } while cursor != nil
            #expect(seen == (1...25).reversed().map(eventID))  // newest first, every report exactly once
            // The other way (`after`, an event page's "newer" and "oldest"): oldest first, every report exactly once.
            var forward: [EventID] = []
            var after: Int64 = 0
            while true {
                let page = try await reader.reports(matching: ReportQuery(project: p.id, after: after, limit: 10))
                forward += page.map(\.eventID)
                guard page.count == 10, let last = page.last?.cursor else { break }
                after = last
            }
            #expect(forward == (1...25).map(eventID))

            #expect(try await reader.reports(matching: ReportQuery(project: p.id, kind: .nonfatal)).count == 5)
            #expect(try await reader.reports(matching: ReportQuery(project: p.id, release: "1.0")).count == 10)
            let since = try await reader.reports(
                matching: ReportQuery(project: p.id, since: Date(timeIntervalSince1970: 1_795_000_021)))
            #expect(since.map(\.eventID) == [25, 24, 23, 22, 21].map(eventID))
            #expect(try await reader.reports(matching: ReportQuery(project: nil)).count == 26)
            #expect(try await reader.reports(matching: ReportQuery(project: other.id)).map(\.eventID) == [eventID(100)])

            let summary = try #require(try await reader.reports(matching: ReportQuery(project: p.id, limit: 1)).first)
            #expect(summary.errorType == "SIGSEGV")
            #expect(summary.errorMessage == "boom 25")
            #expect(summary.userKey == "user-1")
            #expect(summary.release == "2.0")
            #expect(summary.timestamp == Date(timeIntervalSince1970: 1_795_000_025))
            #expect(summary.trimmed.customKeysDropped == 1)
            #expect(summary.issue == nil)
        }
    }

    @Test(arguments: Engine.allCases) func rawReportsPointIntoTheirPayloadOfTheirProject(_ engine: Engine) async throws
    {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            _ = try await stores.ingest.commit([
                .reports(
                    ReportBatch(
                        project: p.id, receivedAt: Date(timeIntervalSince1970: 5), payload: payload,
                        reports: [report(7)]))
            ])
            let raw = try #require(try await stores.reports.rawReport(eventID: eventID(7), project: p.id))
            #expect(raw.payload == payload)
            #expect(raw.range == 70..<80)
            #expect(raw.summary.receivedAt == Date(timeIntervalSince1970: 5))
            #expect(
                try await stores.reports.rawReport(eventID: eventID(7), project: nil)?.summary.eventID == eventID(7))
            #expect(
                try await stores.reports.rawReport(eventID: eventID(7), project: ProjectID(p.id.rawValue + 1)) == nil)
            #expect(try await stores.reports.rawReport(eventID: eventID(8), project: p.id) == nil)
            #expect(try await stores.reports.project(ofIssue: IssueID(1)) == nil)
        }
    }

    @Test(arguments: Engine.allCases) func sessionUpdatesMergeInStorage(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let id = SessionID("s-1")!
            func update(_ status: SessionStatus, errors: Int) -> SessionUpdate {
                SessionUpdate(
                    sessionID: id, distinctID: "u", release: "1.0", started: Date(timeIntervalSince1970: 100),
                    status: status, errors: errors)
            }
            let outcomes = try await stores.ingest.commit([
                .sessions(
                    SessionBatch(
                        project: p.id, receivedAt: Date(),
                        updates: [update(.ok, errors: 1), update(.ok, errors: 1), update(.crashed, errors: 1)])),
                .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: [update(.exited, errors: 0)])),
            ])
            #expect(outcomes == [.sessions(applied: 2, unchanged: 1), .sessions(applied: 0, unchanged: 1)])
            let state = try #require(try await stores.reports.session(project: p.id, id: id))
            #expect(state.status == .crashed)
            #expect(state.errors == 1)
            #expect(state.distinctID == "u")
            #expect(state.started == Date(timeIntervalSince1970: 100))
            #expect(try await stores.reports.session(project: ProjectID(p.id.rawValue + 1), id: id) == nil)
        }
    }

    @Test(arguments: Engine.allCases) func anEnvelopeStoresItsPartsTogetherAndARetryAddsNothing(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let event = ReportBatch(
                project: p.id, receivedAt: Date(timeIntervalSince1970: 50), payload: payload, reports: [report(9)])
            let session = SessionUpdate(
                sessionID: SessionID("env-s")!, distinctID: "u1", release: "1.0",
                started: Date(timeIntervalSince1970: 40), status: .crashed, errors: 1)
            let envelope = EnvelopeWrite(
                project: p.id, receivedAt: Date(timeIntervalSince1970: 50), event: event, sessions: [session],
                discarded: [DiscardedEvents(reason: "ratelimit_backoff", category: "error", quantity: 3)],
                attachments: [
                    Attachment(
                        filename: "log.txt", contentType: "text/plain", attachmentType: "event.attachment",
                        bytes: Array("hello".utf8))
                ],
                eventID: eventID(9))
            #expect(
                try await stores.ingest.commit([.envelope(envelope)]) == [
                    .envelope(stored: [eventID(9)], duplicates: [], sessionsApplied: 1, attachments: 1)
                ])
            #expect(
                try await stores.ingest.commit([.envelope(envelope)]) == [
                    .envelope(stored: [], duplicates: [eventID(9)], sessionsApplied: 0, attachments: 0)
                ])
            #expect(try await stores.texts("SELECT count(*) FROM attachments") == ["1"])
            #expect(try await stores.texts("SELECT filename || ':' || size FROM attachments") == ["log.txt:5"])
            // Client reports add up, also from a retry (they are counts, not events).
            #expect(
                try await stores.texts("SELECT quantity FROM client_reports WHERE reason = 'ratelimit_backoff'") == [
                    "6"
                ])
            #expect(try await stores.reports.session(project: p.id, id: SessionID("env-s")!)?.status == .crashed)
        }
    }

    /// Text holding U+0000 is stored whole as U+FFFD, never refused or cut: the parsers replace it (docs/protocol.md
    /// §2.6), and both stores do too for any other caller (SQLite cut bound text at U+0000; PostgreSQL's text refuses it).
    @Test(arguments: Engine.allCases) func textWithTheNullCharacterIsStored(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            var hostile = report(1)
            hostile.report.error = ErrorInfo(type: "T\u{0}", message: "cut\u{0}here")
            hostile.report.app = AppInfo(version: "1\u{0}")
            hostile.report.environment = "prod\u{0}"
            let session = SessionUpdate(
                sessionID: SessionID("s-nul")!, distinctID: "u\u{0}", release: "1\u{0}",
                started: Date(timeIntervalSince1970: 100), status: .ok)
            let outcomes = try await stores.ingest.commit([
                .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: [hostile])),
                .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: [session])),
                .envelope(
                    EnvelopeWrite(
                        project: p.id, receivedAt: Date(), event: nil, sessions: [],
                        discarded: [DiscardedEvents(reason: "r\u{0}", category: "c\u{0}", quantity: 1)],
                        attachments: [
                            Attachment(
                                filename: "f\u{0}.txt", contentType: "text/\u{0}", attachmentType: nil, bytes: [1])
                        ],
                        eventID: eventID(99))),
            ])
            #expect(
                outcomes == [
                    .reports(stored: [eventID(1)], duplicates: []), .sessions(applied: 1, unchanged: 0),
                    .envelope(stored: [], duplicates: [], sessionsApplied: 0, attachments: 1),
                ])
            let stored = try #require(try await stores.reports.reports(matching: ReportQuery(project: p.id)).first)
            #expect(stored.errorMessage == "cut\u{FFFD}here")
            #expect(stored.errorType == "T\u{FFFD}")
            #expect(stored.environment == "prod\u{FFFD}")
            #expect(stored.release == "1\u{FFFD}")
            #expect(try await stores.reports.session(project: p.id, id: SessionID("s-nul")!)?.distinctID == "u\u{FFFD}")
            #expect(try await stores.texts("SELECT filename FROM attachments") == ["f\u{FFFD}.txt"])
            #expect(
                try await stores.clientReports.droppedEvents(project: p.id, from: DayNumber(rawValue: 0)).map(\.reason)
                    == ["r\u{FFFD}"])
        }
    }

    /// Sessions of 12 users over 2 releases and 3 days, crashing, errored, retried and updated after their end: the
    /// health rollups equal a recount of the stored sessions.
    @Test(arguments: Engine.allCases) func healthRollupsEqualARecountOfSessions(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let day0 = 1_795_000_000.0 - 1_795_000_000.0.truncatingRemainder(dividingBy: 86_400)
            try await Self.storeSessions(stores, try await createProject(stores), day0: day0)
            try await expectHealthRollupsEqualARecount(stores, days: 3)
        }
    }

    /// A group commit of many session updates at once (PostgreSQL applies them as a set) leaves the sessions and every
    /// health table as the same updates applied one per commit: several updates of one session in one batch, a stale
    /// `seq`, a retry, a user named after the session started, many sessions of one user over two releases and days.
    @Test(arguments: Engine.allCases) func aBatchOfSessionUpdatesEqualsTheSameUpdatesOneAtATime(_ engine: Engine)
        async throws
    {
        let day0 = 1_795_000_000.0 - 1_795_000_000.0.truncatingRemainder(dividingBy: 86_400)
        func update(
            _ id: String, user: String?, release: String = "1.0", day: Int = 0, _ status: SessionStatus,
            errors: Int = 0,
            seq: Int64? = nil
        ) -> SessionUpdate {
            SessionUpdate(
                sessionID: SessionID(id)!, distinctID: user, release: release,
                started: Date(timeIntervalSince1970: day0 + Double(day) * 86_400 + 60), status: status, errors: errors,
                seq: seq)
        }
        let first = [
            update("a", user: "u1", .ok), update("b", user: nil, .ok), update("c", user: "u2", release: "2.0", .ok),
            update("f", user: "u3", .ok, seq: 5),
        ]
        var second = [
            update("a", user: "u1", .crashed),  // a stored session crashes
            update("b", user: "u4", .ok, errors: 1), update("b", user: "u4", .exited, errors: 1),  // named, errored, ended
            update("e", user: "u1", day: 1, .ok), update("e", user: "u1", day: 1, .crashed),  // started and crashed in one batch
            update("f", user: "u3", .crashed, seq: 4),  // stale: ignored
            update("f", user: "u3", .abnormal, seq: 6),
            update("c", user: "u2", release: "2.0", .ok),  // a retry: unchanged
            update("g", user: nil, release: "2.0", day: 1, .ok, errors: 3),
        ]
        for n in 0..<40 {  // one heavy user over two releases and two days, every fifth session crashing
            second.append(
                update("h\(n)", user: "heavy", release: n % 2 == 0 ? "1.0" : "2.0", day: n % 3 == 0 ? 1 : 0, .ok))
            second.append(
                update(
                    "h\(n)", user: "heavy", release: n % 2 == 0 ? "1.0" : "2.0", day: n % 3 == 0 ? 1 : 0,
                    n % 5 == 0 ? .crashed : .exited))
        }
        let tables = [
            "SELECT session_id || ' ' || coalesce(distinct_id, '-') || ' ' || status || ' ' || errors FROM sessions",
            "SELECT release || '/' || day || ' ' || sessions || ' ' || crashed || ' ' || abnormal || ' ' || errored || ' ' || users || ' ' || crashed_users FROM health_days",
            "SELECT release || '/' || day || '/' || user_key || ' ' || sessions || ' ' || crashed FROM health_day_users",
            "SELECT release || ' ' || first_seen || ' ' || last_seen || ' ' || sessions || ' ' || crashed || ' ' || abnormal || ' ' || errored || ' ' || users || ' ' || crashed_users FROM health_releases",
            "SELECT release || '/' || user_key || ' ' || sessions || ' ' || crashed FROM health_release_users",
        ]
        var batched: [[String]] = []
        var batchedCounts = (applied: 0, unchanged: 0)
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            for updates in [first, second] {
                for case .sessions(let applied, let unchanged) in try await stores.ingest.commit(
                    [
                        .sessions(
                            SessionBatch(project: p.id, receivedAt: Date(timeIntervalSince1970: day0), updates: updates)
                        )
                    ])
                {
                    batchedCounts.applied += applied
                    batchedCounts.unchanged += unchanged
                }
            }
            for sql in tables { batched.append(try await stores.unkeyedTexts(sql)) }
            try await expectHealthRollupsEqualARecount(stores, days: 2)
        }
        var single: [[String]] = []
        var singleOutcomes: [IngestOutcome] = []
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            for update in first + second {
                singleOutcomes += try await stores.ingest.commit(
                    [
                        .sessions(
                            SessionBatch(
                                project: p.id, receivedAt: Date(timeIntervalSince1970: day0), updates: [update]))
                    ])
            }
            for sql in tables { single.append(try await stores.unkeyedTexts(sql)) }
        }
        // And as a group commit gathers them: one request per update, all of a list in one commit.
        var grouped: [[String]] = []
        var groupedOutcomes: [IngestOutcome] = []
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            for updates in [first, second] {
                groupedOutcomes += try await stores.ingest.commit(
                    updates.map {
                        .sessions(
                            SessionBatch(project: p.id, receivedAt: Date(timeIntervalSince1970: day0), updates: [$0]))
                    })
            }
            for sql in tables { grouped.append(try await stores.unkeyedTexts(sql)) }
        }
        let singleApplied = singleOutcomes.reduce(0) { if case .sessions(let a, _) = $1 { $0 + a } else { $0 } }
        #expect(
            batchedCounts.applied == singleApplied
                && batchedCounts.applied + batchedCounts.unchanged == singleOutcomes.count)
        #expect(batchedCounts.unchanged == 2)  // the stale seq and the retry
        #expect(groupedOutcomes == singleOutcomes)
        #expect(batched == single)
        #expect(grouped == single)
        // The heavy user: counted once per release and day, crashed in the slices where a fifth of its sessions crashed.
        #expect(batched[2].contains("1.0/\(Int(day0 / 86_400))/heavy 13 2"))
    }

    /// 60 sessions of 12 users (every ninth without one) over releases 1.0 and 2.0 and the 3 days from `day0`: started,
    /// then ended crashed, abnormal or exited (some errored), with retries and updates after the end.
    static func storeSessions(_ stores: Stores, _ p: Project, day0: Double) async throws {
        var updates: [SessionUpdate] = []
        for n in 0..<60 {
            let started = Date(timeIntervalSince1970: day0 + Double(n % 3) * 86_400 + Double(n))
            let user = n % 9 == 0 ? nil : "user-\(n % 12)"
            updates.append(
                SessionUpdate(
                    sessionID: SessionID("s\(n)")!, distinctID: user, release: n % 2 == 0 ? "1.0" : "2.0",
                    started: started, status: .ok))
        }
        _ = try await stores.ingest.commit([
            .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: updates))
        ])
        var ends: [SessionUpdate] = []
        for n in 0..<60 {
            var end = updates[n]
            end.status = n % 7 == 0 ? .crashed : n % 11 == 0 ? .abnormal : .exited
            end.errors = n % 5 == 0 ? 2 : 0
            ends.append(end)
            if n % 4 == 0 { ends.append(end) }  // a retry
            if n % 6 == 0 {
                var late = end
                late.status = .exited
                ends.append(late)  // after the end: ignored
            }
        }
        _ = try await stores.ingest.commit([.sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: ends))])
    }
}

/// Compares `health_days` and `health_releases` with a recount of `sessions`, in SQL both engines run.
func expectHealthRollupsEqualARecount(_ stores: Stores, days: Int) async throws {
    let recount = try await stores.texts(
        """
        WITH s AS (SELECT release, started_at / 86400000 AS day, distinct_id, status,
                          CASE WHEN status IN ('ok', 'exited') AND errors > 0 THEN 1 ELSE 0 END AS errored FROM sessions),
             slices AS (SELECT release, day, distinct_id, status, errored FROM s
                        UNION ALL SELECT '', day, distinct_id, status, errored FROM s)
        SELECT release || '/' || day || ': ' || count(*) || ' ' || sum(CASE WHEN status = 'crashed' THEN 1 ELSE 0 END) || ' '
               || sum(CASE WHEN status = 'abnormal' THEN 1 ELSE 0 END) || ' ' || sum(errored) || ' ' || count(DISTINCT distinct_id)
               || ' ' || count(DISTINCT CASE WHEN status = 'crashed' THEN distinct_id END)
        FROM slices GROUP BY release, day
        """)
    let rollup = try await stores.texts(
        """
        SELECT release || '/' || day || ': ' || sessions || ' ' || crashed || ' ' || abnormal || ' ' || errored || ' ' || users
               || ' ' || crashed_users
        FROM health_days WHERE sessions > 0
        """)
    #expect(recount == rollup)
    #expect(recount.count == 3 * days)  // 2 releases + all, × the days
    let releases = try await stores.texts(
        """
        SELECT release || ': ' || count(*) || ' ' || sum(CASE WHEN status = 'crashed' THEN 1 ELSE 0 END) || ' '
               || count(DISTINCT distinct_id) || ' ' || count(DISTINCT CASE WHEN status = 'crashed' THEN distinct_id END)
        FROM sessions GROUP BY release
        """)
    let stored = try await stores.texts(
        """
        SELECT release || ': ' || sessions || ' ' || crashed || ' ' || users || ' ' || crashed_users FROM health_releases
        WHERE release != ''
        """)
    #expect(releases == stored)
}
