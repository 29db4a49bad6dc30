import FaultlineCore
import Foundation
import Testing

@testable import PostgresStorage

/// Retention (RetentionStore), on each engine: what is older than the cutoff goes, in passes of a bounded size,
/// and nothing newer does.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct RetentionConformanceTests {
    @Test(arguments: Engine.allCases) func prunesEverythingPastTheCutoffInBoundedPassesAndNothingElse(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let now = Date()
            let old = now.addingTimeInterval(-100 * 86_400)
            let cutoff = now.addingTimeInterval(-90 * 86_400)
            let edge = cutoff.addingTimeInterval(-60)
            if let postgres = stores.postgres {
                // As if the server had been running then: those weeks have their partitions.
                try await PostgresPartitions.ensure(around: Millis.from(old), postgres)
                try await PostgresPartitions.ensure(around: Millis.from(cutoff), postgres)
            }
            let p = try await createProject(stores)
            func envelope(_ n: Int, at date: Date) -> IngestWrite {
                .envelope(
                    EnvelopeWrite(
                        project: p.id, receivedAt: date,
                        event: ReportBatch(project: p.id, receivedAt: date, payload: payload, reports: [report(n)]),
                        sessions: [], discarded: [],
                        attachments: [
                            Attachment(
                                filename: "log-\(n).txt", contentType: nil, attachmentType: nil, bytes: [1, 2, 3])
                        ],
                        eventID: eventID(n)))
            }
            func session(_ id: String, at date: Date) -> IngestWrite {
                .sessions(
                    SessionBatch(
                        project: p.id, receivedAt: date,
                        updates: [
                            SessionUpdate(
                                sessionID: SessionID(id)!, distinctID: "u", release: "1.0", started: date,
                                status: .exited)
                        ]))
            }
            _ = try await stores.ingest.commit([
                .reports(
                    ReportBatch(project: p.id, receivedAt: old, payload: payload, reports: [report(1), report(2)])),
                .reports(ReportBatch(project: p.id, receivedAt: old, payload: payload, reports: [report(3)])),
                .reports(ReportBatch(project: p.id, receivedAt: edge, payload: payload, reports: [report(4)])),
                .reports(
                    ReportBatch(project: p.id, receivedAt: now, payload: payload, reports: [report(5), report(6)])),
                envelope(10, at: old), envelope(11, at: now),
                session("s-old", at: old), session("s-new", at: now),
            ])
            // Results and module rows of an old, an edge and a recent report: they go with their reports.
            let symbolicated = [eventID(1), eventID(4), eventID(5)]
            var outcomes: [SymbolicationOutcome] = []
            for id in symbolicated {
                outcomes.append(GroupingConformanceTests.outcome(try await stores.reportID(id), site: "s"))
            }
            try await stores.symbolication.saveAll(outcomes, at: now)
            #expect(try await stores.texts("SELECT count(*) FROM report_symbols") == ["3"])
            var total = PruneResult()
            var passes = 0
            while true {
                let pass = try await stores.retention.prune(
                    before: cutoff, limit: 1, now: Date(timeIntervalSince1970: 1_800_000_000))
                if pass.isEmpty { break }
                total.reports += pass.reports
                total.sessions += pass.sessions
                total.attachments += pass.attachments
                passes += 1
                #expect(passes < 20, "retention does not come to an end")
                if passes >= 20 { break }
            }
            #expect(total == PruneResult(reports: 5, sessions: 1, attachments: 1))
            #expect(try await stores.texts("SELECT event_id FROM reports") == [5, 6, 11].map { eventID($0).rawValue })
            #expect(try await stores.texts("SELECT count(*) FROM payloads") == ["2"])
            #expect(try await stores.texts("SELECT count(*) FROM report_symbols") == ["1"])
            #expect(try await stores.texts("SELECT count(*) FROM report_modules") == ["2"])
            #expect(try await stores.texts("SELECT filename FROM attachments") == ["log-11.txt"])
            #expect(try await stores.texts("SELECT session_id FROM sessions") == ["s-new"])
            #expect(try await stores.reports.rawReport(eventID: eventID(1), project: p.id) == nil)
            // A pruned report's event id is free again: a very late retry is stored as new.
            #expect(
                try await stores.ingest.commit([
                    .reports(ReportBatch(project: p.id, receivedAt: now, payload: payload, reports: [report(1)]))
                ])
                    == [.reports(stored: [eventID(1)], duplicates: [])])
            if stores.engine == .postgres {
                // The old week went as whole partitions, not as deleted rows.
                let week = PostgresPartitions.weekStart(Millis.from(old))
                for table in PostgresPartitions.tables {
                    #expect(
                        try await stores.texts(
                            "SELECT count(*) FROM pg_class WHERE relname = '\(PostgresPartitions.name(table, week: week))'"
                        ) == ["0"])
                }
                // The weeks around now are still there (and made again by each pass).
                let current = PostgresPartitions.name("reports", week: PostgresPartitions.weekStart(Millis.from(now)))
                #expect(try await stores.texts("SELECT count(*) FROM pg_class WHERE relname = '\(current)'") == ["1"])
            }
        }
    }
}
