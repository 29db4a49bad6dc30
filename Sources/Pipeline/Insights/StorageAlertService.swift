import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Tells the operator when the server's disk is full and when space returned: each change of the storage-pressure
/// state (`DiskGuard.takeNotices`) becomes a `storage_full` / `storage_ok` alert for every project with a webhook
/// (the state is server-wide), handed to the webhook outbox at once.
///
/// One alert per entry and per leave, never per request: the alert's dedupe key names the change. While the disk
/// is so full that even the alert cannot be written (a real SQLITE_FULL), the notice is kept and written as soon
/// as the state is left; it is never retried in a loop against a full disk. Under the floor but above the
/// background writers' reserve the alert is written (and delivered) while ingest is still refused.
public struct StorageAlertService: Service {
    let storage: DiskGuard
    let alerts: AlertService
    let clock: any WallClock
    let logger: Logger
    let poll: Duration

    public init(
        storage: DiskGuard, alerts: AlertService, clock: any WallClock, logger: Logger, poll: Duration = .seconds(1)
    ) {
        self.storage = storage
        self.alerts = alerts
        self.clock = clock
        self.logger = logger
        self.poll = poll
    }

    /// Records the pending notices as alerts and queues their webhook deliveries; returns the alerts recorded. On
    /// failure the notices are kept for the next step.
    @discardableResult
    public func step() async throws -> Int {
        let notices = storage.takeNotices()
        guard !notices.isEmpty else { return 0 }
        do {
            var recorded = 0
            let projects = try await alerts.projects.allProjects()
            for project in projects {
                let settings = try await alerts.store.settings(project: project.id)
                guard let url = settings.webhookURL, !url.isEmpty else { continue }
                for notice in notices {
                    let draft = StorageAlerts.draft(
                        project: project.id, full: notice.full, at: notice.at, availableBytes: notice.availableBytes,
                        floorBytes: notice.floorBytes)
                    if try await alerts.store.record(draft, at: notice.at) { recorded += 1 }
                }
            }
            if recorded > 0 {
                alerts.telemetry?.count(Telemetry.Name.alerts, by: recorded)
                alerts.onChange()
            }
            try await alerts.dispatch(now: clock.now())
            return recorded
        } catch {
            storage.keepNotices(notices)
            throw error
        }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        while !Task.isCancelled {
            do {
                try await step()
            } catch  where Task.isCancelled {
                break
            } catch let error where storage.noteFailure(error) {
                // Not even the alert fits: it is kept, and written once the state is left.
                await storage.waitUntilSpace(poll: poll)
                continue
            } catch {
                logger.error("storage alert step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
                try? await Task.sleep(for: .seconds(30))  // not a log line a second for a lasting fault
            }
            try? await Task.sleep(for: poll)
        }
    }
}
