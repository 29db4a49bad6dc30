import FaultlineCore
import Foundation
import Testing

/// A batch of session updates stored at once (PostgreSQL applies it as a set, SQLite one update after the other) is the
/// same as its updates stored one per batch.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct SessionBatchConformanceTests {
    static let day0 = 1_795_000_000.0 - 1_795_000_000.0.truncatingRemainder(dividingBy: 86_400)

    static func update(
        _ id: String, _ user: String?, release: String = "1.0", day: Int = 0, _ status: SessionStatus, errors: Int = 0,
        seq: Int64? = nil
    ) -> SessionUpdate {
        SessionUpdate(
            sessionID: SessionID(id)!, distinctID: user, release: release,
            started: Date(timeIntervalSince1970: day0 + Double(day) * 86_400 + Double(id.utf8.count * 60)),
            status: status,
            errors: errors, seq: seq)
    }

    /// Sessions an earlier batch stored.
    static let earlier = [
        update("a", "u1", .ok), update("b", nil, .ok), update("c", "u2", release: "2.0", .ok),
        update("f", "u3", .ok, seq: 5),
        update("x", "u5", .ok, errors: 2), update("y", "u5", day: 1, .ok),
    ]

    /// One large mixed batch.
    static var batch: [SessionUpdate] {
        var updates = [
            update("a", "u1", release: "2.0", .crashed),  // stored: crashes; the release a session started with stays
            update("b", "u4", .ok, errors: 1), update("b", "u4", .exited, errors: 1),  // stored without a user: named, errored, ended
            update("e", "u1", day: 1, .ok), update("e", "u1", day: 1, .exited), update("e", "u1", day: 1, .crashed),  // new, ended; then ignored
            update("e2", "u1", day: 1, .ok), update("e2", "u1", day: 1, .crashed),  // new and crashed, beside u1's exited session
            update("f", "u3", .crashed, seq: 4),  // stale: ignored
            update("f", "u3", .abnormal, seq: 6),
            update("c", "u2", release: "2.0", .ok),  // a retry: unchanged
            update("x", "u5", .crashed, errors: 2),  // errored → crashed: one counter down, another up, on the same rows
            update("y", "u5", day: 1, .ok, errors: 1),
            update("g", nil, release: "2.0", day: 1, .ok, errors: 3), update("g2", "", release: "2.0", .crashed),  // no user
            update("n1", "caf\u{E9}", .crashed), update("n2", "cafe\u{301}", .ok),  // two users, one text to Swift's ==
        ]
        for n in 0..<300 {  // one heavy user over two releases and two days, every fifth session crashing
            let (release, day) = (n % 2 == 0 ? "1.0" : "2.0", n % 3 == 0 ? 1 : 0)
            updates.append(update("h\(n)", "heavy", release: release, day: day, .ok))
            updates.append(update("h\(n)", "heavy", release: release, day: day, n % 5 == 0 ? .crashed : .exited))
        }
        for n in 0..<200 {
            updates.append(update("m\(n)", "user-\(n % 50)", release: n % 4 == 0 ? "2.0" : "1.0", day: n % 2, .ok))
        }
        return updates
    }

    /// The tables the updates write, as text (every column but `updated_at`).
    static let tables = [
        """
        SELECT session_id || ' ' || coalesce(distinct_id, '-') || ' ' || release || ' ' || started_at || ' ' || status || ' '
               || errors || ' ' || coalesce(seq, -1) FROM sessions
        """,
        """
        SELECT release || '/' || day || ' ' || sessions || ' ' || crashed || ' ' || abnormal || ' ' || errored || ' ' || users
               || ' ' || crashed_users FROM health_days
        """,
        "SELECT release || '/' || day || '/' || user_key || ' ' || sessions || ' ' || crashed FROM health_day_users",
        """
        SELECT release || ' ' || first_seen || ' ' || last_seen || ' ' || sessions || ' ' || crashed || ' ' || abnormal || ' '
               || errored || ' ' || users || ' ' || crashed_users FROM health_releases
        """,
        "SELECT release || '/' || user_key || ' ' || sessions || ' ' || crashed FROM health_release_users",
    ]

    /// Stores `batches` in a fresh project; the applied and unchanged updates summed, and `tables`.
    static func store(_ batches: [[SessionUpdate]], _ stores: Stores) async throws -> (
        applied: Int, unchanged: Int, tables: [[String]]
    ) {
        let p = try await createProject(stores)
        var (applied, unchanged) = (0, 0)
        for updates in batches {
            let outcomes = try await stores.ingest.commit([
                .sessions(SessionBatch(project: p.id, receivedAt: Date(timeIntervalSince1970: day0), updates: updates))
            ])
            for case .sessions(let a, let u) in outcomes {
                applied += a
                unchanged += u
            }
        }
        var texts: [[String]] = []
        for sql in tables { texts.append(try await stores.unkeyedTexts(sql)) }
        return (applied, unchanged, texts)
    }

    @Test(arguments: Engine.allCases) func aLargeMixedBatchEqualsItsUpdatesOneAtATime(_ engine: Engine) async throws {
        // Given an earlier batch, then one batch of new sessions, several updates of one session, changes of stored
        // ones, retries and stale updates, many sessions of one user, sessions without a user
        var batched: (applied: Int, unchanged: Int, tables: [[String]])?
        try await withStores(engine) { stores in
            batched = try await Self.store([Self.earlier, Self.batch], stores)
            // Then every health table equals a recount of the sessions
            try await expectEveryHealthTableEqualsARecount(stores)
        }
        var single: (applied: Int, unchanged: Int, tables: [[String]])?
        try await withStores(engine) { stores in
            single = try await Self.store((Self.earlier + Self.batch).map { [$0] }, stores)
        }
        let (b, s) = (try #require(batched), try #require(single))
        // And the same updates one per batch count and store the same
        #expect(b.applied == s.applied)
        #expect(b.unchanged == s.unchanged)
        #expect(b.unchanged == 3)  // e's update after its end, f's stale one, c's retry
        #expect(b.applied == Self.earlier.count + Self.batch.count - 3)
        #expect(b.tables == s.tables)
        // The heavy user is one user per release and day; crashed in the slices of its every fifth session.
        let heavyRows = b.tables[2].filter { $0.contains("/heavy ") }
        #expect(heavyRows.count == 6)  // (1.0, 2.0, all) × 2 days
        let day = Int(Self.day0 / 86_400)
        #expect(heavyRows.contains("/\(day + 1)/heavy 100 20"))  // all releases, the day of every third session
        #expect(b.tables[0].contains("a u1 1.0 \(Int64(Self.day0 * 1000) + 60_000) crashed 0 -1"))
    }
}

/// Compares every health table (`health_days`, `health_day_users`, `health_releases` with its first and last session,
/// `health_release_users`) with a recount of `sessions`, in SQL both engines run. An empty `distinct_id` is no user.
func expectEveryHealthTableEqualsARecount(_ stores: Stores) async throws {
    let slices = """
        WITH s AS (SELECT release, started_at, started_at / 86400000 AS day, NULLIF(distinct_id, '') AS user_key, status,
                          CASE WHEN status = 'crashed' THEN 1 ELSE 0 END AS crashed,
                          CASE WHEN status = 'abnormal' THEN 1 ELSE 0 END AS abnormal,
                          CASE WHEN status IN ('ok', 'exited') AND errors > 0 THEN 1 ELSE 0 END AS errored FROM sessions),
             slices AS (SELECT * FROM s UNION ALL SELECT '', started_at, day, user_key, status, crashed, abnormal, errored FROM s)
        """
    let days = try await stores.texts(
        """
        \(slices)
        SELECT release || '/' || day || ' ' || count(*) || ' ' || sum(crashed) || ' ' || sum(abnormal) || ' ' || sum(errored) || ' '
               || count(DISTINCT user_key) || ' ' || count(DISTINCT CASE WHEN crashed = 1 THEN user_key END)
        FROM slices GROUP BY release, day
        """)
    #expect(days == (try await stores.texts(SessionBatchConformanceTests.tables[1])))
    let dayUsers = try await stores.texts(
        """
        \(slices)
        SELECT release || '/' || day || '/' || user_key || ' ' || count(*) || ' ' || sum(crashed) FROM slices
        WHERE user_key IS NOT NULL GROUP BY release, day, user_key
        """)
    #expect(dayUsers == (try await stores.unkeyedTexts(SessionBatchConformanceTests.tables[2])))
    let releases = try await stores.texts(
        """
        \(slices)
        SELECT release || ' ' || min(started_at) || ' ' || max(started_at) || ' ' || count(*) || ' ' || sum(crashed) || ' '
               || sum(abnormal) || ' ' || sum(errored) || ' ' || count(DISTINCT user_key) || ' '
               || count(DISTINCT CASE WHEN crashed = 1 THEN user_key END)
        FROM s GROUP BY release
        """)
    #expect(releases == (try await stores.texts(SessionBatchConformanceTests.tables[3])))
    let releaseUsers = try await stores.texts(
        """
        \(slices)
        SELECT release || '/' || user_key || ' ' || count(*) || ' ' || sum(crashed) FROM s
        WHERE user_key IS NOT NULL GROUP BY release, user_key
        """)
    #expect(releaseUsers == (try await stores.unkeyedTexts(SessionBatchConformanceTests.tables[4])))
}
