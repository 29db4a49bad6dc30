import FaultlineCore
import Foundation
import Testing

@testable import PostgresStorage

/// Smart retention (RetentionStore with a `RetentionSamplePolicy`), on each engine: after a pass over data stored
/// "100 days ago", every issue keeps its first, its latest and one report a release, with their payloads, results and
/// attachments; everything else goes; issue and health rollups are what they were before the pass.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct RetentionSamplesConformanceTests {
    /// The rollups that must not move when reports go, one text a row.
    static func rollups(_ stores: Stores) async throws -> [String] {
        let queries = [
            "SELECT 'issue ' || id || ' ' || events || ' ' || users || ' ' || repeat_users || ' ' || first_seen || ' ' || last_seen FROM issues",
            "SELECT 'release ' || issue_id || '/' || release || ' ' || events || ' ' || users FROM issue_releases",
            "SELECT 'day ' || issue_id || '/' || day || ' ' || events || ' ' || users FROM issue_days",
            "SELECT 'health ' || day || '/' || release || ' ' || sessions || ' ' || crashed || ' ' || users || ' ' || crashed_users FROM health_days",
        ]
        var rows: [String] = []
        for query in queries { rows += try await stores.texts(query) }
        return rows
    }

    @Test(arguments: Engine.allCases) func everyIssueKeepsItsSamplesAndItsCounts(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            // Given reports, sessions and attachments stored 100 days ago (and one issue seen again today)
            let now = Date()
            let old = now.addingTimeInterval(-100 * 86_400)
            let cutoff = now.addingTimeInterval(-90 * 86_400)
            if let postgres = stores.postgres {
                // As if the server had been running then: those weeks have their partitions.
                try await PostgresPartitions.ensure(around: Millis.from(old), postgres)
            }
            let p = try await createProject(stores)
            func batch(_ reports: [PreparedReport], at date: Date) -> IngestWrite {
                .reports(ReportBatch(project: p.id, receivedAt: date, payload: payload, reports: reports))
            }
            func envelope(_ prepared: PreparedReport, at date: Date) -> IngestWrite {
                let n = prepared.report.eventID.rawValue
                return .envelope(
                    EnvelopeWrite(
                        project: p.id, receivedAt: date,
                        event: ReportBatch(project: p.id, receivedAt: date, payload: payload, reports: [prepared]),
                        sessions: [], discarded: [],
                        attachments: [
                            Attachment(filename: "log-\(n).txt", contentType: nil, attachmentType: nil, bytes: [1, 2])
                        ],
                        eventID: prepared.report.eventID))
            }
            let session = IngestWrite.sessions(
                SessionBatch(
                    project: p.id, receivedAt: old,
                    updates: [
                        SessionUpdate(
                            sessionID: SessionID("s-old")!, distinctID: "u", release: "1.0", started: old,
                            status: .crashed)
                    ]))
            // Issue A: 1.0 (1, 2, 3), 1.1 (4, 5), 2.0 (6). Issue B: 1.0 (7, 8), and 9 today. Report 2 and 7 share
            // a payload; 1 and 3 came with an attachment each.
            _ = try await stores.ingest.commit([
                envelope(report(1), at: old), batch([report(2), report(7)], at: old), envelope(report(3), at: old),
                batch([report(4, version: "1.1"), report(5, version: "1.1")], at: old),
                batch([report(6, version: "2.0")], at: old), batch([report(8)], at: old),
                batch([report(9)], at: now), session,
            ])
            var outcomes: [SymbolicationOutcome] = []
            for n in 1...9 {
                outcomes.append(
                    GroupingConformanceTests.outcome(try await stores.reportID(eventID(n)), site: n < 7 ? "a" : "b"))
            }
            try await stores.symbolication.saveAll(outcomes, at: old)
            let before = try await Self.rollups(stores)
            #expect(try await stores.texts("SELECT count(*) FROM issues") == ["2"])

            // When retention runs, one payload a pass
            var total = PruneResult()
            for _ in 0..<40 {
                let pass = try await stores.retention.prune(
                    before: cutoff, limit: 1, now: now, samples: RetentionSamplePolicy())
                if pass.isEmpty { break }
                total.reports += pass.reports
                total.kept += pass.kept
                total.attachments += pass.attachments
            }

            // Then A keeps 1 (first, and 1.0's), 6 (latest, and 2.0's) and 4 (1.1's); B keeps 7 (first) and 9
            #expect(total.reports == 4)  // 2, 3, 5 and 8
            #expect(total.attachments == 1)
            let kept = [1, 4, 6, 7, 9].map { eventID($0).rawValue }
            #expect(try await stores.texts("SELECT event_id FROM reports") == kept)
            #expect(
                try await stores.texts("SELECT event_id || ' ' || sample FROM reports WHERE sample IS NOT NULL")
                    == [
                        "\(eventID(1).rawValue) 1", "\(eventID(4).rawValue) 2", "\(eventID(6).rawValue) 1",
                        "\(eventID(7).rawValue) 1", "\(eventID(9).rawValue) 1",
                    ])
            // Each sample is still whole: its raw payload, its result and its attachment
            for n in [1, 4, 6, 7] {
                #expect(try await stores.reports.rawReport(eventID: eventID(n), project: p.id) != nil, "report \(n)")
            }
            for n in [2, 3, 5, 8] {
                #expect(try await stores.reports.rawReport(eventID: eventID(n), project: p.id) == nil, "report \(n)")
            }
            #expect(try await stores.texts("SELECT count(*) FROM report_symbols") == ["5"])
            #expect(try await stores.texts("SELECT filename FROM attachments") == ["log-\(eventID(1).rawValue).txt"])
            // The payload 2 and 7 shared stays for 7 alone; the others of old samples stay; the rest went
            #expect(try await stores.texts("SELECT count(*) FROM payloads") == ["5"])
            #expect(try await stores.texts("SELECT count(*) FROM sessions") == ["0"])
            // And every rollup is what it was
            #expect(try await Self.rollups(stores) == before)

            // A second run changes nothing: the samples are stable
            let again = try await stores.retention.prune(
                before: cutoff, limit: 10, now: now, samples: RetentionSamplePolicy())
            #expect(again.isEmpty)
            if stores.engine == .postgres {
                // The old week's partitions went; its samples live on in the DEFAULT partitions.
                let week = PostgresPartitions.weekStart(Millis.from(old))
                let name = PostgresPartitions.name("reports", week: week)
                #expect(try await stores.texts("SELECT count(*) FROM pg_class WHERE relname = '\(name)'") == ["0"])
                #expect(try await stores.texts("SELECT count(*) FROM reports_default") == ["4"])
            }
        }
    }

    @Test(arguments: Engine.allCases) func aProjectKeepsNoMoreSamplesThanItsCap(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let now = Date()
            let old = now.addingTimeInterval(-100 * 86_400)
            if let postgres = stores.postgres {
                try await PostgresPartitions.ensure(around: Millis.from(old), postgres)
            }
            let p = try await createProject(stores)
            // Three issues of three releases each, all 100 days old
            var writes: [IngestWrite] = []
            for n in 1...9 {
                writes.append(
                    .reports(
                        ReportBatch(
                            project: p.id, receivedAt: old, payload: payload,
                            reports: [report(n, version: "1.\(n % 3)")])))
            }
            _ = try await stores.ingest.commit(writes)
            var outcomes: [SymbolicationOutcome] = []
            for n in 1...9 {
                outcomes.append(
                    GroupingConformanceTests.outcome(try await stores.reportID(eventID(n)), site: "site-\((n - 1) / 3)")
                )
            }
            try await stores.symbolication.saveAll(outcomes, at: old)
            let policy = RetentionSamplePolicy(perIssue: 8, perProject: 4)
            for _ in 0..<40 {
                let pass = try await stores.retention.prune(
                    before: now.addingTimeInterval(-90 * 86_400), limit: 2, now: now, samples: policy)
                if pass.isEmpty { break }
            }
            // At most 4 reports stay, all of them anchors (first or latest of their issue)
            let kept = try await stores.texts("SELECT sample FROM reports")
            #expect(kept.count == 4)
            #expect(kept.allSatisfy { $0 == "1" })
        }
    }
}
