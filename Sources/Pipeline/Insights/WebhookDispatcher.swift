import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends one webhook POST; returns the HTTP status, throws when no answer came (refused, timed out), preferably a
/// ``WebhookFailure``.
public protocol WebhookSending: Sendable {
    func post(url: String, body: [UInt8]) async throws -> Int
}

/// Why a webhook POST got no usable answer, as a fixed class. Only the class (or the answer's status code) is
/// stored and shown: never the target's answer nor an error's text, which would make the alerts page a way to
/// learn what answers at an address.
public enum WebhookFailure: String, Error, Sendable, CaseIterable {
    /// The target is not allowed (``WebhookTargetPolicy``); not retried.
    case refusedTarget = "refused_target"
    /// The URL could not be used.
    case invalidURL = "invalid_url"
    /// The host name did not resolve.
    case unresolvable = "unresolvable_host"
    /// No connection could be made.
    case connectionFailed = "connection_failed"
    /// The connection or the answer took too long.
    case timeout
    /// The TLS handshake failed.
    case tls = "tls_failed"
    /// The answer could not be read.
    case badResponse = "bad_response"
}

/// Delivers the webhook outbox: each pending delivery is POSTed; a 2xx marks it delivered, anything else
/// retries with exponential backoff (`baseBackoff` × 2ⁿ, at most `maxBackoff`) until `maxAttempts`.
///
/// The outbox is a table, so deliveries survive restarts; a delivery is marked only after its attempt, so a
/// crash mid-POST means one more attempt (at-least-once; receivers can dedupe by `alert.id`).
public struct WebhookDispatcher: Service {
    let store: any AlertStore
    let sender: any WebhookSending
    let targets: WebhookTargetPolicy
    let clock: any WallClock
    let logger: Logger
    let telemetry: Telemetry?
    let baseBackoff: TimeInterval
    let maxBackoff: TimeInterval
    let maxAttempts: Int
    let idleDelay: Duration
    /// Sends the outbox's `mailto:` deliveries (nil: they wait until a server is configured again).
    let mailer: (any MailSending)?

    /// - Parameter targets: checked before every attempt; a refused target fails the delivery at once.
    public init(
        store: any AlertStore, sender: any WebhookSending, targets: WebhookTargetPolicy, clock: any WallClock,
        logger: Logger,
        telemetry: Telemetry? = nil, baseBackoff: TimeInterval = 5, maxBackoff: TimeInterval = 600,
        maxAttempts: Int = 12,
        idleDelay: Duration = .seconds(1), storage: DiskGuard? = nil, mailer: (any MailSending)? = nil
    ) {
        self.mailer = mailer
        self.storage = storage
        self.store = store
        self.sender = sender
        self.targets = targets
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

    /// Deliveries fetched at a time: small, so that a delivery of higher priority queued meanwhile (the
    /// operator's `storage_full`) waits behind at most this many, not behind a whole backlog.
    static let fetchSize = 8
    /// Deliveries attempted per step at most.
    static let stepSize = 48

    /// Attempts the deliveries due at `now`, highest priority first, at most `stepSize`; returns how many were
    /// attempted. Each fetch asks for what is due by then (the clock read again): a delivery queued during the step
    /// (the operator's `storage_full`) is due at once and waits behind at most `fetchSize`, not behind the step.
    @discardableResult
    public func step(now: Date) async throws -> Int {
        var attempted = 0
        while attempted < Self.stepSize {
            let due = try await store.dueDeliveries(now: max(now, clock.now()), limit: Self.fetchSize)
            try await attempt(due)
            attempted += due.count
            if due.count < Self.fetchSize { break }
        }
        return attempted
    }

    func attempt(_ due: [WebhookDelivery]) async throws {
        for delivery in due {
            let outcome: DeliveryOutcome
            if let address = AlertMailer.address(outboxURL: delivery.url) {
                outcome = await mail(delivery, to: address)
            } else {
                outcome = await post(delivery)
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
                logger.warning(
                    delivery.url.hasPrefix("mailto:") ? "mail not delivered" : "webhook not delivered",
                    metadata: [
                        Telemetry.LogKey.alert: "\(delivery.alert)", Telemetry.LogKey.status: "\(label)",
                    ])
            }
        }
    }

    /// POSTs one webhook: a 2xx is delivered; another status or no answer is tried again with backoff until
    /// `maxAttempts`; a refused target or a URL that cannot be used fails at once.
    func post(_ delivery: WebhookDelivery) async -> DeliveryOutcome {
        let attempts = delivery.attempts + 1
        do {
            do throws(WebhookTargetProblem) {
                try await targets.check(delivery.url)
            } catch {
                throw error.code == .unresolvable ? WebhookFailure.unresolvable : WebhookFailure.refusedTarget
            }
            let status = try await sender.post(url: delivery.url, body: delivery.body)
            if (200..<300).contains(status) { return .delivered(status: status) }
            if attempts >= maxAttempts { return .failed(status: status, error: "HTTP \(status)") }
            return .retry(
                next: clock.now().addingTimeInterval(backoff(afterAttempts: attempts)), status: status,
                error: "HTTP \(status)")
        } catch {
            let failure = error as? WebhookFailure ?? .connectionFailed
            return attempts >= maxAttempts || failure == .refusedTarget || failure == .invalidURL
                ? .failed(status: nil, error: failure.rawValue)
                : .retry(
                    next: clock.now().addingTimeInterval(backoff(afterAttempts: attempts)), status: nil,
                    error: failure.rawValue)
        }
    }

    /// Hands one outbox mail to the SMTP server: 250 is delivered; a 5xx reply fails at once; anything else (4xx, no
    /// connection, a timeout, no server configured) is tried again with the webhooks' backoff until `maxAttempts`.
    func mail(_ delivery: WebhookDelivery, to address: MailAddress) async -> DeliveryOutcome {
        let attempts = delivery.attempts + 1
        let failure: MailFailure
        if let mailer {
            do {
                try await mailer.send(to: address, message: delivery.body)
                return .delivered(status: 250)
            } catch let error as MailFailure {
                failure = error
            } catch {
                failure = MailFailure(.connectionFailed, transient: true)
            }
        } else {
            failure = MailFailure(.connectionFailed, transient: true, reply: "no SMTP server configured")
        }
        let status = failure.reply.flatMap { Int($0.prefix(3)) }
        if !failure.transient || attempts >= maxAttempts {
            return .failed(status: status, error: failure.code.rawValue)
        }
        return .retry(
            next: clock.now().addingTimeInterval(backoff(afterAttempts: attempts)), status: status,
            error: failure.code.rawValue)
    }

    /// The storage-pressure state: after a real disk-full error steps pause (`DiskGuard.waitWhileWritesFail`); a
    /// disk-full error enters it (logged once there, not per step). Nil: never paused.
    public let storage: DiskGuard?

    public func run() async throws {
        // Cancelled at graceful shutdown, so a long sleep between steps never delays SIGTERM.
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        while !Task.isCancelled {
            // Deliveries only update their rows: they go on under pressure (the operator's storage alert first) and
            // pause only while writes fail.
            await storage?.waitWhileWritesFail()
            let attempted: Int
            do {
                attempted = try await step(now: clock.now())
            } catch  where Task.isCancelled {
                break  // graceful shutdown cancelled the step: not a failure
            } catch let error where storage?.noteFailure(error) == true {
                attempted = 0  // the disk is full: logged once by the state; the next step waits for space
            } catch {
                logger.error("webhook step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
                attempted = 0
            }
            if attempted == 0 { try? await Task.sleep(for: idleDelay) }
        }
    }
}
