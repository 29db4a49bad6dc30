/// What one run of an app knows about itself, as it is kept in the run's state file.
///
/// The SDK writes it piece by piece while the app runs (``StateFile``); whoever reports the run afterwards
/// (the SDK at its next start, or `faultline-run` the moment the child dies) reads it back as one snapshot and
/// builds the crash report and the session update from it. Every string here came from the app or from a
/// file another process wrote: readers treat it as untrusted and the server re-validates it.
package struct RunContext: Sendable, Equatable {
    /// The run's session id: 32 lowercase hex digits, made when the run started.
    package var sessionID: String
    /// The installation's id (kept in the state folder), the user when no user id is set.
    package var installID: String
    package var userID: String?
    package var appID: String?
    package var appVersion: String?
    package var appBuild: String?
    package var environment: String?
    /// When the run started, unix seconds.
    package var startedAt: Double
    /// The process id of the app (of the child, under the launcher).
    package var pid: Int32
    /// Handled errors recorded in this run (a running total, as sessions count them).
    package var errors: Int
    /// Set by the SDK when the process exits normally (its `atexit` hook).
    package var exitedNormally: Bool
    /// Oldest first; at most ``Limits/breadcrumbBytes`` by the server's size estimate.
    package var breadcrumbs: [Breadcrumb]
    /// At most ``Limits/customKeys`` keys, keys and string values cut at ``Limits/customKeyBytes``; in the
    /// order they were first set.
    package var customKeys: [CustomKey]

    package init(
        sessionID: String, installID: String, userID: String? = nil, appID: String? = nil,
        appVersion: String? = nil, appBuild: String? = nil, environment: String? = nil,
        startedAt: Double, pid: Int32, errors: Int = 0, exitedNormally: Bool = false,
        breadcrumbs: [Breadcrumb] = [], customKeys: [CustomKey] = []
    ) {
        self.sessionID = sessionID
        self.installID = installID
        self.userID = userID
        self.appID = appID
        self.appVersion = appVersion
        self.appBuild = appBuild
        self.environment = environment
        self.startedAt = startedAt
        self.pid = pid
        self.errors = errors
        self.exitedNormally = exitedNormally
        self.breadcrumbs = breadcrumbs
        self.customKeys = customKeys
    }
}

/// One line of the rolling log that leads up to a report.
package struct Breadcrumb: Sendable, Equatable {
    /// Unix seconds.
    package var timestamp: Double
    package var message: String
    /// `nil` for `Faultline.log`; `"stderr"` for the lines the launcher kept from a child's standard error.
    package var category: String?

    package init(timestamp: Double, message: String, category: String? = nil) {
        self.timestamp = timestamp
        self.message = message
        self.category = category
    }
}

/// A custom key's value, typed as the native report's `custom_keys` takes it.
public enum CustomValue: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
}

package struct CustomKey: Sendable, Equatable {
    package var key: String
    package var value: CustomValue

    package init(key: String, value: CustomValue) {
        self.key = key
        self.value = value
    }
}

/// The Crashlytics limits the SDK applies on the device (the server applies the same ones again).
package enum Limits {
    /// Breadcrumbs kept per run, by the server's size estimate (docs/protocol.md 3.7).
    package static let breadcrumbBytes = 64 * 1024
    package static let customKeys = 64
    /// Custom keys and string values, and the user id, are cut at a character boundary at this many bytes.
    package static let customKeyBytes = 1024
    /// Unsent non-fatal reports kept on disk; the oldest go first.
    package static let unsentNonFatals = 8
}
