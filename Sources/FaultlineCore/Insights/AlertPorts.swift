#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An issue that crashed recently, with its activity per release in the velocity window.
public struct VelocityCandidate: Sendable, Equatable {
    public var project: ProjectID
    public var title: String
    public var window: VelocityWindow
    public init(project: ProjectID, title: String, window: VelocityWindow) {
        self.project = project
        self.title = title
        self.window = window
    }
}

/// One webhook POST waiting in the outbox.
public struct WebhookDelivery: Sendable, Equatable {
    public var id: Int64
    public var alert: Int64
    public var url: String
    public var body: [UInt8]
    /// Attempts made so far.
    public var attempts: Int
    public init(id: Int64, alert: Int64, url: String, body: [UInt8], attempts: Int) {
        self.id = id
        self.alert = alert
        self.url = url
        self.body = body
        self.attempts = attempts
    }
}

/// What became of one delivery attempt.
public enum DeliveryOutcome: Sendable, Equatable {
    case delivered(status: Int)
    /// Try again at `next`.
    case retry(next: Date, status: Int?, error: String)
    /// Give up (too many attempts).
    case failed(status: Int?, error: String)
}

/// The state of a webhook delivery, as the alerts API reports it.
public struct DeliveryStatus: Sendable, Equatable {
    public var alert: Int64
    public var state: String
    public var attempts: Int
    public var lastStatus: Int?
    public var lastError: String?
    public init(alert: Int64, state: String, attempts: Int, lastStatus: Int?, lastError: String?) {
        self.alert = alert
        self.state = state
        self.attempts = attempts
        self.lastStatus = lastStatus
        self.lastError = lastError
    }
}

/// Alert settings, the numbers the alert rules judge, recorded alerts and the webhook outbox.
public protocol AlertStore: Sendable {
    func settings(project: ProjectID) async throws -> AlertSettings
    func saveSettings(_ settings: AlertSettings, project: ProjectID, at date: Date) async throws
    /// Open crash issues of `project` with events in `[from, through]`, one candidate per issue and release.
    func velocityCandidates(project: ProjectID, from: Date, through: Date) async throws -> [VelocityCandidate]
    /// Health of `project` on `day`, per release (`""` = all releases).
    func dayHealth(project: ProjectID, day: DayNumber) async throws -> [String: ReleaseHealth]
    /// Records an alert unless its dedupe key was used; returns whether it was recorded.
    @discardableResult
    func record(_ draft: AlertDraft, at date: Date) async throws -> Bool
    /// Alerts not yet handed to the outbox, oldest first.
    func alertsToDispatch(limit: Int) async throws -> [Alert]
    /// Queues webhook bodies for alerts and marks `alerts` dispatched, in one transaction.
    func enqueue(_ deliveries: [(alert: Int64, url: String, body: [UInt8])], dispatched alerts: [Int64], at date: Date)
        async throws
    /// Pending deliveries due at `now`, oldest first.
    func dueDeliveries(now: Date, limit: Int) async throws -> [WebhookDelivery]
    /// Records an attempt's outcome.
    func recordAttempt(_ delivery: Int64, outcome: DeliveryOutcome, at date: Date) async throws
    /// Delivery states of a project's alerts.
    func deliveries(project: ProjectID) async throws -> [DeliveryStatus]
}
