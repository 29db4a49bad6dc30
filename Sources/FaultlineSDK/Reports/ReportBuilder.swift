/// Builds the JSON bodies the SDK and the launcher send: native v1 reports (docs/protocol.md §3) and session
/// updates (§4).
///
/// CONTRACT (owner: sdk-delivery helper). Pure: bytes in, bytes out; no clock, no randomness (ids and times
/// are passed in). Output is what `POST /api/v1/reports` / `POST /api/v1/sessions` accept unchanged.
package enum ReportBuilder {
    /// A non-fatal report (`kind: nonfatal`) of `error`, with the calling thread's stack as one crashed thread
    /// of raw addresses and the loaded images as modules; `userInfo` is merged into the custom keys (it wins
    /// over a context key of the same name).
    package static func nonFatal(
        eventID: String, timestamp: Double, error: ErrorInfo, userInfo: [String: CustomValue],
        stack: CapturedStack, context: RunContext, device: DeviceInfo
    ) -> [UInt8] {
        []
    }

    /// A crash report from a Swift runtime crash file (the JSON `SWIFT_BACKTRACE=format=json` writes), with the
    /// run's context when there is one and what the program printed as it died (`crash_message`).
    /// Throws `corruptCrashFile` when `crashFile` is not such a file.
    package static func swiftCrash(
        eventID: String, crashFile: [UInt8], context: RunContext?, crashMessage: String?, device: DeviceInfo
    ) throws -> [UInt8] {
        throw SDKError(.unimplemented, "ReportBuilder.swiftCrash")
    }

    /// A crash report for a program that died of `signal` without a crash file (a C program, a Swift program
    /// whose backtracer was off): error type `SIGSEGV` etc., the exit status, and the last lines of its standard
    /// error as breadcrumbs after the context's own.
    package static func signalCrash(
        eventID: String, timestamp: Double, signal: Int32, stderrTail: [String], crashMessage: String?,
        context: RunContext?, device: DeviceInfo
    ) -> [UInt8] {
        []
    }

    /// One session update.
    package static func session(_ update: SessionUpdate) -> [UInt8] { [] }
}

/// A handled error as a report shows it.
package struct ErrorInfo: Sendable, Equatable {
    /// The error's type or domain, e.g. `MyApp.CheckoutError` or `NSURLErrorDomain`.
    package var type: String
    package var code: String?
    package var message: String?

    package init(type: String, code: String?, message: String?) {
        self.type = type
        self.code = code
        self.message = message
    }
}

/// A stack captured in this process: frames innermost first, and the images they lie in.
package struct CapturedStack: Sendable, Equatable {
    package struct Frame: Sendable, Equatable {
        package var address: UInt64
        /// `true` for the program counter of the innermost frame, `false` for return addresses.
        package var isProgramCounter: Bool
        package init(address: UInt64, isProgramCounter: Bool) {
            self.address = address
            self.isProgramCounter = isProgramCounter
        }
    }

    package struct Module: Sendable, Equatable {
        package var name: String
        package var path: String?
        /// Lowercase hex GNU build-id, when the image has one.
        package var buildID: String?
        package var baseAddress: UInt64
        package var endAddress: UInt64
        package init(name: String, path: String?, buildID: String?, baseAddress: UInt64, endAddress: UInt64) {
            self.name = name
            self.path = path
            self.buildID = buildID
            self.baseAddress = baseAddress
            self.endAddress = endAddress
        }
    }

    package var threadName: String?
    package var frames: [Frame]
    package var modules: [Module]

    package init(threadName: String?, frames: [Frame], modules: [Module]) {
        self.threadName = threadName
        self.frames = frames
        self.modules = modules
    }
}

/// The machine a report comes from (`device` in a native report).
package struct DeviceInfo: Sendable, Equatable {
    package var os: String
    package var osVersion: String?
    package var arch: String?
    package var model: String?
    package var memory: UInt64?

    package init(os: String = "Linux", osVersion: String?, arch: String?, model: String?, memory: UInt64?) {
        self.os = os
        self.osVersion = osVersion
        self.arch = arch
        self.model = model
        self.memory = memory
    }
}

/// One session update (docs/protocol.md §4.2).
package struct SessionUpdate: Sendable, Equatable {
    package enum Status: String, Sendable {
        case ok, exited, crashed, abnormal
    }

    package var sessionID: String
    package var installID: String
    package var userID: String?
    package var appVersion: String?
    package var appBuild: String?
    package var environment: String?
    package var started: Double
    package var status: Status
    package var errors: Int
    package var duration: Double?
    package var seq: Int64

    package init(
        sessionID: String, installID: String, userID: String?, appVersion: String?, appBuild: String?,
        environment: String?, started: Double, status: Status, errors: Int, duration: Double?, seq: Int64
    ) {
        self.sessionID = sessionID
        self.installID = installID
        self.userID = userID
        self.appVersion = appVersion
        self.appBuild = appBuild
        self.environment = environment
        self.started = started
        self.status = status
        self.errors = errors
        self.duration = duration
        self.seq = seq
    }

    /// The update for `context`'s session.
    package init(context: RunContext, status: Status, duration: Double?, seq: Int64) {
        self.init(
            sessionID: context.sessionID, installID: context.installID, userID: context.userID,
            appVersion: context.appVersion, appBuild: context.appBuild, environment: context.environment,
            started: context.startedAt, status: status, errors: context.errors, duration: duration, seq: seq)
    }
}
