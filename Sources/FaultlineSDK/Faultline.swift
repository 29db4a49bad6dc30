import Foundation
import Synchronization

/// Crash and error reporting for Swift programs on Linux, with the Crashlytics API (docs/sdk.md).
///
/// ```swift
/// Faultline.start(dsn: "http://KEY@faultline.internal:8080/3", release: "2.4.1")
/// Faultline.log("checkout started")
/// Faultline.setCustomValue(3, forKey: "cart_items")
/// Faultline.setUserID("user-42")
/// Faultline.record(error: error, userInfo: ["order": "A-17"])
/// ```
/// Every function is thread-safe and callable from sync and async code; none blocks on the network.
public enum Faultline {
    /// The one client of this process. The API is static, as Crashlytics' is (an app calls
    /// `Faultline.log` from anywhere without passing a handle around), so this is the SDK's only process-wide
    /// state: a `Mutex`, set once by ``start(dsn:release:environment:options:)`` and never replaced. Everything
    /// it holds is built from explicit parts (``FaultlineClient``), which is how the tests make their own.
    private static let shared = Mutex<FaultlineClient?>(nil)

    static var client: FaultlineClient? { shared.withLock { $0 } }

    /// Starts reporting for this process: reports what earlier runs left (crash files, sessions), starts this
    /// run's session, and sends in the background. `dsn` defaults to `FAULTLINE_DSN`, `release` to
    /// `FAULTLINE_RELEASE`; without a DSN nothing is sent (reports are kept). Calling it again does nothing.
    public static func start(
        dsn: String? = nil, release: String? = nil, environment: String? = nil,
        options: FaultlineOptions = FaultlineOptions()
    ) {
        shared.withLock { current in
            guard current == nil else { return }
            let env = ProcessInfo.processInfo.environment
            func given(_ value: String?, _ name: String) -> String? {
                if let value, !value.isEmpty { return value }
                if let value = env[name], !value.isEmpty { return value }
                return nil
            }
            var parsedDSN: DSN?
            if let text = given(dsn, "FAULTLINE_DSN") {
                do { parsedDSN = try DSN(text) } catch { warn("faultline: not sending: \(error)") }
            }
            let program = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? ""
            let launcherFile = env["FAULTLINE_RUN_STATE"].flatMap { $0.isEmpty ? nil : $0 }
            let folder = StateFolder(
                path: options.stateDirectory ?? StateFolder.defaultPath(program: program, environment: env))
            let crashDirectory = options.crashDirectory ?? BacktraceSetting.jsonCrashDirectory(env["SWIFT_BACKTRACE"])
            let configuration = FaultlineClient.Configuration(
                dsn: parsedDSN, release: given(release, "FAULTLINE_RELEASE"),
                environment: given(environment, "FAULTLINE_ENVIRONMENT"), options: options, folder: folder,
                program: program, launcherStateFile: launcherFile, crashDirectory: crashDirectory)
            do {
                let client = try FaultlineClient(configuration: configuration)
                current = client
                if crashDirectory == nil, launcherFile == nil {
                    // Said once the state folder is accepted, so the folder suggested is one that can be used.
                    let suggested = BacktraceSetting.value(crashDirectory: client.configuration.folder.crashes)
                    warn(
                        "faultline: crashes of this program are not reported: start it with SWIFT_BACKTRACE=\(suggested) (docs/sdk.md)"
                    )
                }
                atexit { Faultline.client?.processExiting() }
                client.startSending()
            } catch {
                warn("faultline: not started: \(error)")
            }
        }
    }

    /// Adds a timestamped line to the rolling log (64 KB, oldest dropped) that every report carries.
    public static func log(_ message: String) {
        client?.log(message)
    }

    /// Sets (or, with `nil`, removes) a custom key shown on every report: at most 64 keys, keys and string
    /// values cut at 1 KB; a key set after the 64th is dropped.
    public static func setCustomValue(_ value: (any CustomValueConvertible)?, forKey key: String) {
        client?.setCustomValue(value?.faultlineCustomValue, forKey: key)
    }

    /// Sets several custom keys at once.
    public static func setCustomKeysAndValues(_ keysAndValues: [String: any CustomValueConvertible]) {
        guard let client else { return }
        for (key, value) in keysAndValues.sorted(by: { $0.key < $1.key }) {
            client.setCustomValue(value.faultlineCustomValue, forKey: key)
        }
    }

    /// The user id reports and sessions are counted by (else the installation); cut at 1 KB; `nil` clears it.
    public static func setUserID(_ userID: String?) {
        client?.setUserID(userID)
    }

    /// Records a handled error as a non-fatal report with the calling thread's stack. At most 8 unsent
    /// non-fatals are kept; the oldest go first.
    @inline(never)
    public static func record(error: any Error, userInfo: [String: any CustomValueConvertible] = [:]) {
        guard let client else { return }
        client.record(error: error, userInfo: userInfo.mapValues(\.faultlineCustomValue), skipping: 1)
    }

    /// Turns sending on or off; the choice is kept across runs. While off nothing leaves the machine: reports
    /// and sessions are kept until ``sendUnsentReports()`` or ``deleteUnsentReports()``.
    public static func setCollectionEnabled(_ enabled: Bool) {
        client?.setCollectionEnabled(enabled)
    }

    /// Whether sending is on (the default until ``setCollectionEnabled(_:)`` says otherwise).
    public static var isCollectionEnabled: Bool { client?.isCollectionEnabled ?? true }

    /// Whether reports are waiting to be sent (held while collection is off, or not yet delivered).
    public static func checkForUnsentReports() -> Bool { !(client?.unsentReports().isEmpty ?? true) }

    /// Sends the reports that are waiting, even while collection is off (the user agreed to these).
    public static func sendUnsentReports() { client?.sendUnsent() }

    /// Deletes the reports that are waiting without sending them.
    public static func deleteUnsentReports() { client?.deleteUnsent() }

    /// Whether the previous run of this app ended in a crash.
    public static func didCrashOnPreviousExecution() -> Bool { client?.previousRun == .crashed }

    /// Waits until everything queued is sent, or `timeout` seconds; answers whether the queue is empty.
    @discardableResult
    public static func flush(timeout: Double = 5) async -> Bool {
        guard let client else { return false }
        return await client.flush(timeout: timeout)
    }

    /// One line to standard error (no `stderr` global: it is not concurrency-safe).
    static func warn(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

/// Settings for ``Faultline/start(dsn:release:environment:options:)``; every one has a default.
public struct FaultlineOptions: Sendable {
    /// The build number (`app.build`), kept beneath the release (the release is the version alone).
    public var build: String?
    /// The bundle or package id (`app.id`).
    public var appID: String?
    /// Where the SDK keeps its state, queue and identity; default `FAULTLINE_STATE_DIR`, else
    /// `$XDG_STATE_HOME/faultline/<program>`, else `~/.local/state/faultline/<program>`. It must be this user's
    /// alone (not a link, not writable by others, in folders no other user can swap); otherwise `start` turns
    /// reporting off with one line on standard error (docs/sdk.md, "The state folder").
    public var stateDirectory: String?
    /// Where the Swift runtime writes crash files; default: the `output-to=` folder of `SWIFT_BACKTRACE`. Made
    /// (0700) when missing; one another user could change turns crash reports off.
    public var crashDirectory: String?
    /// Bounds of the on-disk queue.
    public var maxQueuedItems: Int = 200
    public var maxQueuedBytes: Int = 16 << 20
    /// How long the process waits at exit to send its session's end and what is queued (seconds; 0: don't wait).
    public var flushOnExit: Double = 2

    public init() {}
}

/// A value a custom key can hold: strings, integers, floating-point numbers and booleans.
public protocol CustomValueConvertible: Sendable {
    var faultlineCustomValue: CustomValue { get }
}

extension String: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .string(self) }
}
extension Substring: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .string(String(self)) }
}
extension Bool: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .bool(self) }
}
extension Int: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .int(Int64(self)) }
}
extension Int32: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .int(Int64(self)) }
}
extension Int64: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .int(self) }
}
extension UInt32: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .int(Int64(self)) }
}
extension UInt64: CustomValueConvertible {
    /// Above `Int64.max` the value is kept as a string, so it is never changed.
    public var faultlineCustomValue: CustomValue { Int64(exactly: self).map { .int($0) } ?? .string(String(self)) }
}
extension UInt: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { Int64(exactly: self).map { .int($0) } ?? .string(String(self)) }
}
extension Double: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .double(self) }
}
extension Float: CustomValueConvertible {
    public var faultlineCustomValue: CustomValue { .double(Double(self)) }
}
