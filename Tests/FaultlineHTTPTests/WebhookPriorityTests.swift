import FaultlineCore
import Foundation
import Logging
import SQLiteStorage
import Synchronization
import Testing

@testable import Pipeline

/// The webhook dispatcher and the real SQLite outbox: the operator's `storage_full` alert, queued while a step is
/// working through a backlog of issue alerts, goes out within that step after at most one fetch's worth of them.
@Suite struct WebhookPriorityTests {
    /// Posts nothing; remembers the order of the URLs and, on its first post, lets the test queue an alert.
    final class RecordingSender: WebhookSending {
        let posted = Mutex<[String]>([])
        let onFirstPost: @Sendable () async throws -> Void
        init(onFirstPost: @escaping @Sendable () async throws -> Void) { self.onFirstPost = onFirstPost }

        func post(url: String, body: [UInt8]) async throws -> Int {
            let first = posted.withLock { posted in
                posted.append(url)
                return posted.count == 1
            }
            if first { try await onFirstPost() }
            return 200
        }
    }

    struct NoResolver: HostResolving {
        func addresses(of host: String) async throws -> [[UInt8]] { [[127, 0, 0, 1]] }
    }

    @Test func aStorageAlertQueuedDuringAStepIsDeliveredWithinItAfterAtMostOneFetch() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "faultline-hooks-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = try SQLiteEngine(path: folder + "/faultline.sqlite")
        defer { try? database.close() }
        let project = try await SQLiteProjectStore(database: database).createProject(
            slug: ProjectSlug("app")!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 64)),
            createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50
        ).id
        let store = SQLiteAlertStore(database: database)
        let clock = SteppingClock()
        let start = clock.now()

        @Sendable func queue(_ kind: AlertKind, _ key: String, at date: Date) async throws {
            let draft = AlertDraft(
                project: project, kind: kind, dedupeKey: key, issue: nil, release: nil, title: key, reason: [:])
            #expect(try await store.record(draft, at: date))
            let alerts = try await store.alertsToDispatch(limit: 100)
            try await store.enqueue(
                alerts.map { (alert: $0.id, url: "http://hook/\($0.kind.rawValue)/\($0.id)", body: Array("x".utf8)) },
                dispatched: alerts.map(\.id), at: date)
        }
        // A backlog of issue alerts, all due now: more than one step attempts.
        for n in 0..<60 { try await queue(.newIssue, "new:\(n)", at: start) }

        // While the step posts its first delivery, time passes and the disk fills: the storage alert is queued,
        // due at the moment it was queued, which is after the step began.
        let sender = RecordingSender {
            clock.advance(5)
            try await queue(.storageFull, "storage_full:1", at: clock.now())
        }
        let dispatcher = WebhookDispatcher(
            store: store, sender: sender, targets: WebhookTargetPolicy(resolver: NoResolver(), allowPrivate: true),
            clock: clock,
            logger: Logger(label: "test"))
        let attempted = try await dispatcher.step(now: start)

        let posted = sender.posted.withLock { $0 }
        #expect(attempted == posted.count)
        let storage = posted.firstIndex { $0.contains("/storage_full/") }
        #expect(storage != nil, "the storage alert waited for the next step; posted \(posted.count)")
        // The first fetch was taken before it was queued; it goes first in the next one.
        #expect(storage == WebhookDispatcher.fetchSize, "posted before it: \(storage.map(String.init) ?? "all")")
    }
}
