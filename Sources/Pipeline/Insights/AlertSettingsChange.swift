import FaultlineCore

/// Why new alert settings were refused: the snake_case setting (`velocity_percent`, `webhook_url`) and what is wrong
/// with it. Nothing was stored.
public typealias AlertSettingsRefusal = FieldRefusal

/// The one way a project's alert settings change, for `PUT /api/v1/alert-settings`, `faultline alerts configure` and
/// the dashboard's settings page alike: the values are checked (``AlertSettings/problem``), a new webhook URL is checked
/// against the target policy (an internal address is refused unless the operator allows it), then the settings are
/// stored and the change is recorded in the audit trail as made by `origin` (the webhook with its path masked).
///
/// A webhook that stays as it was is not resolved again (the dispatcher checks every target before each delivery):
/// changing a threshold must not fail because the hook's host does not resolve at that moment.
///
/// Two callers with two copies of this sequence could drift: a page that skipped the target check would let an admin
/// point the server's requests at its own network.
public struct AlertSettingsChange: Sendable {
    let store: any AlertStore
    let targets: WebhookTargetPolicy
    let audit: (any AuditTrail)?
    let clock: any WallClock

    public init(store: any AlertStore, targets: WebhookTargetPolicy, audit: (any AuditTrail)?, clock: any WallClock) {
        self.store = store
        self.targets = targets
        self.audit = audit
        self.clock = clock
    }

    /// Replaces `project`'s alert settings with `settings`, recorded as made by `origin`.
    ///
    /// - Throws: ``AlertSettingsRefusal`` naming the first unusable setting; `WebhookTargetProblem` for a webhook
    ///   target the policy refuses (the setting is `webhook_url`); storage errors. Nothing is stored when it throws
    ///   before the save.
    public func apply(_ settings: AlertSettings, project: Project, by origin: AuditOrigin) async throws {
        if let problem = settings.problem { throw AlertSettingsRefusal(field: problem.field, message: problem.message) }
        let before = try await store.settings(project: project.id)
        if let url = settings.webhookURL, !url.isEmpty, url != before.webhookURL {
            try await targets.check(url)
        }
        try await store.saveSettings(settings, project: project.id, at: clock.now())
        try await audit?.recordAlertSettings(
            from: before, to: settings, project: project, origin: origin, at: clock.now())
    }
}
