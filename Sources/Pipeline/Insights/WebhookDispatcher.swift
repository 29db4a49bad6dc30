import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends one webhook POST; returns the HTTP status, throws when no answer came (refused, timed out).
public protocol WebhookSending: Sendable {
    func post(url: String, body: [UInt8]) async throws -> Int
}

/// Delivers the webhook outbox: each pending delivery is POSTed; a 2xx marks it delivered, anything else
/// retries with exponential backoff (`baseBackoff` × 2ⁿ, at most `maxBackoff`) until `maxAttempts`.
///
/// The outbox is a table, so deliveries survive restarts; a delivery is marked only after its attempt, so a
/// crash mid-POST means one more attempt (at-least-once; receivers can dedupe by `alert.id`).
public struct WebhookDispatcher: Service {
    let store: any AlertStore
    let sender: any WebhookSending
    let clock: any WallClock
    let logger: Logger
    let telemetry: Telemetry?
    let baseBackoff: TimeInterval
    let maxBackoff: TimeInterval
    let maxAttempts: Int
    let idleDelay: Duration

    public init(store: any AlertStore, sender: any WebhookSending, clock: any WallClock, logger: Logger, telemetry: Telemetry? = nil,
                baseBackoff: TimeInterval = 5, maxBackoff: TimeInterval = 600, maxAttempts: Int = 12,
                idleDelay: Duration = .seconds(1)) {
        self.store = store
        self.sender = sender
        self.clock = clock
        self.logger = logger
        self.telemetry = telemetry
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.maxAttempts = max(1, maxAttempts)
        self.idleDelay = idleDelay
    }

    /// The wait before attempt `attempts + 1`.
    public func backoff(afterAttempts attempts: Int) -> TimeInterval {
        min(maxBackoff, baseBackoff * Double(1 << min(20, max(0, attempts - 1))))
    }

    /// Attempts every delivery due at `now`; returns how many were attempted.
    @discardableResult
    public func step(now: Date) async throws -> Int {
        let due = try await store.dueDeliveries(now: now, limit: 50)
        for delivery in due {
            let outcome: DeliveryOutcome
            let attempts = delivery.attempts + 1
            do {
                let status = try await sender.post(url: delivery.url, body: delivery.body)
                if (200..<300).contains(status) {
                    outcome = .delivered(status: status)
                } else if attempts >= maxAttempts {
                    outcome = .failed(status: status, error: "HTTP \(status)")
                } else {
                    outcome = .retry(next: clock.now().addingTimeInterval(backoff(afterAttempts: attempts)), status: status, error: "HTTP \(status)")
                }
            } catch {
                let message = String(describing: error).prefix(300)
                outcome = attempts >= maxAttempts
                    ? .failed(status: nil, error: String(message))
                    : .retry(next: clock.now().addingTimeInterval(backoff(afterAttempts: attempts)), status: nil, error: String(message))
            }
            try await store.recordAttempt(delivery.id, outcome: outcome, at: clock.now())
            let label: String
            switch outcome {
            case .delivered: label = "delivered"
            case .retry: label = "retry"
            case .failed: label = "failed"
            }
            telemetry?.count(Telemetry.Name.webhookDeliveries, [("outcome", label)])
            if label != "delivered" {
                logger.warning("webhook not delivered", metadata: [
                    Telemetry.LogKey.alert: "\(delivery.alert)", Telemetry.LogKey.status: "\(label)",
                ])
            }
        }
        return due.count
    }

    public func run() async throws {
        // Cancelled at graceful shutdown, so a long sleep between steps never delays SIGTERM.
        try await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        while !Task.isCancelled {
            let attempted: Int
            do {
                attempted = try await step(now: clock.now())
            } catch where Task.isCancelled {
                break  // graceful shutdown cancelled the step: not a failure
            } catch {
                logger.error("webhook step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
                attempted = 0
            }
            if attempted == 0 { try? await Task.sleep(for: idleDelay) }
        }
    }
}
