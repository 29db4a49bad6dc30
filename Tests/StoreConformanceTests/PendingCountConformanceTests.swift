import FaultlineCore
import Foundation
import Testing

/// Issue #35 (6): the dashboard's "N reports are still being processed" reads the backlog from either engine, bounded.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct PendingCountConformanceTests {
    @Test(arguments: Engine.allCases) func pendingReportsAreCountedUpToTheLimit(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            #expect(try await stores.symbolication.pendingCount(atMost: 100) == 0)
            let batch = ReportBatch(
                project: p.id, receivedAt: Date(timeIntervalSince1970: 2), payload: payload,
                reports: [report(1), report(2), report(3)])
            _ = try await stores.ingest.commit([.reports(batch)])
            // Three reports wait; a limit below that answers the limit.
            #expect(try await stores.symbolication.pendingCount(atMost: 100) == 3)
            #expect(try await stores.symbolication.pendingCount(atMost: 2) == 2)
            // One leaves the queue (processed): two still wait.
            try await stores.execute(
                "UPDATE reports SET symbolication = 'complete' WHERE id = \(try await stores.reportID(eventID(1)))")
            #expect(try await stores.symbolication.pendingCount(atMost: 100) == 2)
        }
    }
}
