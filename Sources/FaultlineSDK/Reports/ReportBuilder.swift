/// Builds the JSON bodies the SDK and the launcher send: native v1 reports (docs/protocol.md §3) and session
/// updates (§4).
///
/// Pure: bytes in, bytes out; no clock, no randomness (ids and times
/// are passed in). Output is what `POST /api/v1/reports` / `POST /api/v1/sessions` accept unchanged.
package enum ReportBuilder {
    /// A non-fatal report (`kind: nonfatal`) of `error`, with the calling thread's stack as one crashed thread
    /// of raw addresses and the loaded images as modules; `userInfo` is merged into the custom keys (it wins
    /// over a context key of the same name).
    package static func nonFatal(
        eventID: String, timestamp: Double, error: ErrorInfo, userInfo: [String: CustomValue],
        stack: CapturedStack, context: RunContext, device: DeviceInfo
    ) -> [UInt8] {
        var report = NativeReport(eventID: eventID, kind: "nonfatal", timestamp: timestamp, device: device)
        report.apply(context)
        var keys = report.customKeys
        for (key, value) in userInfo.sorted(by: { $0.key < $1.key }).prefix(Limits.customKeys) {
            let name = NativeReport.cut(key, Limits.customKeyBytes)
            keys.removeAll { $0.key == name }
            keys.append(CustomKey(key: name, value: NativeReport.cut(value)))
        }
        // userInfo wins: when over the limit, the context's oldest keys give way.
        if keys.count > Limits.customKeys { keys.removeFirst(keys.count - Limits.customKeys) }
        report.customKeys = keys
        report.error = error
        report.threads = [
            NativeReport.Thread(
                name: stack.threadName, crashed: true, registers: [],
                frames: stack.frames.map { .init(address: $0.address, kind: $0.isProgramCounter ? "pc" : "return") })
        ]
        report.modules = stack.modules.map {
            .init(name: $0.name, path: $0.path, buildID: $0.buildID, base: $0.baseAddress, end: $0.endAddress)
        }
        return report.render()
    }

    /// A crash report from a Swift runtime crash file (the JSON `SWIFT_BACKTRACE=format=json` writes), with the
    /// run's context when there is one and what the program printed as it died (`crash_message`).
    /// Throws `corruptCrashFile` when `crashFile` is not such a file.
    ///
    /// Mapped as the server's own `POST /api/v1/crashes/swift` maps it: `description` is the error's message
    /// and, up to its first colon, its type (`Fatal error: Index out of range` → `Fatal error`); `faultAddress`
    /// is `fault_address`; threads keep name, crashed, registers and frames (`programCounter` and
    /// `asyncResumePoint` → `pc`, `returnAddress` → `return`; `truncated`/`omittedFrames` markers skipped);
    /// images are modules (`endOfText` is `end_address`). `capturedMemory` is not sent (it can hold user data).
    package static func swiftCrash(
        eventID: String, crashFile: [UInt8], context: RunContext?, crashMessage: String?, device: DeviceInfo
    ) throws -> [UInt8] {
        guard crashFile.count <= maxCrashFileBytes else {
            throw SDKError(.corruptCrashFile, "the crash file is larger than \(maxCrashFileBytes) bytes")
        }
        let root: JSONValue
        do {
            root = try BoundedJSONReader.parse(crashFile)
        } catch let failure as BoundedJSONReader.Failure {
            throw SDKError(.corruptCrashFile, "the crash file is not JSON: \(failure.message)")
        }
        guard case .object = root else { throw SDKError(.corruptCrashFile, "the crash file is not a JSON object") }
        guard root["kind"]?.stringValue == "crashReport" else {
            throw SDKError(
                .corruptCrashFile, "the crash file's kind is not \"crashReport\" (is this a Swift runtime crash file?)")
        }
        guard
            let stamp = root["timestamp"]?.stringValue.flatMap(ISO8601.parse) ?? root["timestamp"].flatMap(Self.number)
        else {
            throw SDKError(.corruptCrashFile, "the crash file has no valid timestamp")
        }
        guard let rawThreads = root["threads"]?.arrayValue, !rawThreads.isEmpty else {
            throw SDKError(.corruptCrashFile, "the crash file has no threads")
        }
        var dev = device
        if dev.arch == nil { dev.arch = root["architecture"]?.stringValue }
        if dev.osVersion == nil { dev.osVersion = root["platform"]?.stringValue }  // "Linux (Debian GNU/Linux 12 (bookworm))"
        var report = NativeReport(eventID: eventID, kind: "crash", timestamp: stamp, device: dev)
        if let context { report.apply(context) }
        if let description = root["description"]?.stringValue {
            let type = description.firstIndex(of: ":").map { String(description[..<$0]) } ?? description
            report.error = ErrorInfo(type: type, code: nil, message: description)
        }
        report.faultAddress = root["faultAddress"]?.addressValue
        report.crashMessage = crashMessage
        for raw in rawThreads.prefix(NativeReport.maxThreads * 4) {
            guard case .object = raw else { continue }
            var thread = NativeReport.Thread(
                name: raw["name"]?.stringValue, crashed: raw["crashed"]?.boolValue ?? false, registers: [], frames: [])
            if case .object(let registers)? = raw["registers"] {
                for (name, value) in registers.prefix(256) {
                    if let v = value.addressValue { thread.registers.append((name, v)) }
                }
            }
            for frame in (raw["frames"]?.arrayValue ?? []).prefix(NativeReport.maxFrames * 2) {
                guard let address = frame["address"]?.addressValue else { continue }  // truncated, omittedFrames
                let kind: String?
                switch frame["kind"]?.stringValue {
                case "programCounter", "asyncResumePoint": kind = "pc"
                case "returnAddress": kind = "return"
                default: kind = nil
                }
                thread.frames.append(.init(address: address, kind: kind))
            }
            report.threads.append(thread)
        }
        for image in (root["images"]?.arrayValue ?? []).prefix(NativeReport.maxModules * 2) {
            guard let base = image["baseAddress"]?.addressValue else { continue }
            let name = image["name"]?.stringValue
            let path = image["path"]?.stringValue
            report.modules.append(
                .init(
                    name: name ?? path ?? "?", path: path, buildID: image["buildId"]?.stringValue, base: base,
                    end: image["endOfText"]?.addressValue))
        }
        return report.render()
    }

    /// A crash report for a program that died of `signal` without a crash file (a C program, a Swift program
    /// whose backtracer was off): error type `SIGSEGV` etc., the exit status, and the last lines of its standard
    /// error as breadcrumbs after the context's own.
    package static func signalCrash(
        eventID: String, timestamp: Double, signal: Int32, stderrTail: [String], crashMessage: String?,
        context: RunContext?, device: DeviceInfo
    ) -> [UInt8] {
        var report = NativeReport(eventID: eventID, kind: "crash", timestamp: timestamp, device: device)
        if let context { report.apply(context) }
        let name = Signals.name(signal)
        let what = Signals.description(signal).map { ", \($0)" } ?? ""
        report.error = ErrorInfo(
            type: name, code: String(signal),
            message:
                "\(name) (signal \(signal)\(what)): the process was killed by the signal; exit status \(128 &+ Int(signal))"
        )
        report.crashMessage = crashMessage
        let crumbTime = NativeReport.validTimestamp(timestamp) ?? 0
        report.breadcrumbs += stderrTail.map { Breadcrumb(timestamp: crumbTime, message: $0, category: "stderr") }
        return report.render()
    }

    /// One session update. A session needs a release: without an app version it is sent as release `unknown`
    /// (the server refuses a session with neither).
    package static func session(_ update: SessionUpdate) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("session_id"); w.string(update.sessionID)
        w.field(
            "install_id", update.installID.isEmpty ? nil : NativeReport.cut(update.installID, Limits.customKeyBytes))
        w.field("user_id", update.userID.map { NativeReport.cut($0, Limits.customKeyBytes) })
        if let version = update.appVersion, !version.isEmpty {
            w.key("app"); w.beginObject()
            w.field("version", NativeReport.cut(version, 1024))
            w.field("build", update.appBuild.map { NativeReport.cut($0, 1024) })
            w.endObject()
        } else {
            w.field("release", "unknown")
        }
        w.field("environment", update.environment.map { NativeReport.cut($0, 1024) })
        w.key("started"); w.double(NativeReport.validTimestamp(update.started) ?? 0)
        w.key("status"); w.string(update.status.rawValue)
        w.key("errors"); w.int(Int64(max(0, update.errors)))
        if let d = update.duration, d.isFinite, d >= 0, d < 1e11 { w.key("duration"); w.double(d) }
        w.key("seq"); w.int(update.seq)
        w.endObject()
        return w.bytes
    }

    /// Crash files past this size are refused unread (real ones are tens of kilobytes).
    package static let maxCrashFileBytes = 16 << 20

    private static func number(_ value: JSONValue) -> Double? {
        guard case .number(let text) = value, let d = Double(text) else { return nil }
        return NativeReport.validTimestamp(d)
    }
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
