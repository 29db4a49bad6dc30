/// One native v1 report (docs/protocol.md §3.4) on its way to JSON, with the server's rules applied on the
/// device so that nothing the server would refuse is sent: ids and build-ids that would not validate are left
/// out, `end_address` only above `base_address`, timestamps only in range, and the rendered report kept under
/// the server's 1 MiB by dropping the least useful parts first.
struct NativeReport {
    struct Frame {
        var address: UInt64
        /// `pc`, `return`, or nil.
        var kind: String?
    }

    struct Thread {
        var name: String?
        var crashed: Bool
        var registers: [(String, UInt64)]
        var frames: [Frame]
    }

    struct Module {
        var name: String
        var path: String?
        var buildID: String?
        var base: UInt64
        var end: UInt64?
    }

    static let maxThreads = 256
    static let maxFrames = 512
    static let maxModules = 2048
    /// The server refuses a report over 1 MiB (1,048,576 bytes); this leaves a margin.
    static let maxBytes = 1_000_000

    var eventID: String
    var kind: String
    var timestamp: Double
    var sessionID: String?
    var userID: String?
    var installID: String?
    var environment: String?
    var appID: String?
    var appVersion: String?
    var appBuild: String?
    var device: DeviceInfo
    var error: ErrorInfo?
    var threads: [Thread] = []
    var modules: [Module] = []
    var breadcrumbs: [Breadcrumb] = []
    var customKeys: [CustomKey] = []
    var faultAddress: UInt64?
    var crashMessage: String?

    init(eventID: String, kind: String, timestamp: Double, device: DeviceInfo) {
        self.eventID = eventID
        self.kind = kind
        self.timestamp = timestamp
        self.device = device
    }

    mutating func apply(_ context: RunContext) {
        sessionID = context.sessionID
        userID = context.userID
        installID = context.installID
        environment = context.environment
        appID = context.appID
        appVersion = context.appVersion
        appBuild = context.appBuild
        breadcrumbs = context.breadcrumbs
        var seen = Set<String>()
        customKeys = []
        for key in context.customKeys.prefix(Limits.customKeys * 4) {
            let name = Self.cut(key.key, Limits.customKeyBytes)
            guard seen.insert(name).inserted else { continue }
            customKeys.append(CustomKey(key: name, value: Self.cut(key.value)))
            if customKeys.count == Limits.customKeys { break }
        }
    }

    /// The JSON, within ``maxBytes``: when too large, registers of other threads go first, then their deeper
    /// frames, modules no frame points into, the other threads, the oldest breadcrumbs, and last the crashed
    /// thread's outermost frames.
    func render() -> [UInt8] {
        var report = self
        report.normalize()
        var bytes = report.write()
        var round = 0
        while bytes.count > Self.maxBytes, round < 40 {
            round += 1
            if report.threads.contains(where: { !$0.crashed && !$0.registers.isEmpty }) {
                for i in report.threads.indices where !report.threads[i].crashed { report.threads[i].registers = [] }
            } else if report.threads.contains(where: { !$0.crashed && $0.frames.count > 16 }) {
                for i in report.threads.indices where !report.threads[i].crashed {
                    report.threads[i].frames = Array(report.threads[i].frames.prefix(16))
                }
            } else if let kept = report.modulesInUse(), kept.count < report.modules.count {
                report.modules = kept
            } else if report.threads.contains(where: { !$0.crashed }) {
                report.threads.removeAll { !$0.crashed }
            } else if report.breadcrumbs.count > 1 {
                report.breadcrumbs.removeFirst(report.breadcrumbs.count / 2 + 1)
            } else if report.threads.contains(where: { $0.frames.count > 64 }) {
                for i in report.threads.indices {
                    report.threads[i].frames = Array(report.threads[i].frames.prefix(64))
                }
            } else if !report.modules.isEmpty {
                report.modules.removeLast(report.modules.count / 2 + 1)
            } else {
                report.breadcrumbs = []
                report.threads = report.threads.prefix(1).map {
                    var t = $0; t.frames = Array(t.frames.prefix(16)); t.registers = []; return t
                }
                report.crashMessage = report.crashMessage.map { Self.cut($0, 4096) }
                if var e = report.error { e.message = e.message.map { Self.cut($0, 4096) }; report.error = e }
            }
            bytes = report.write()
        }
        return bytes
    }

    /// Applies the counts and validity rules.
    private mutating func normalize() {
        timestamp = Self.validTimestamp(timestamp) ?? 0
        if let s = sessionID, !Self.isSessionID(s) { sessionID = nil }
        userID = userID.map { Self.cut($0, Limits.customKeyBytes) }
        installID = installID.map { Self.cut($0, Limits.customKeyBytes) }
        if threads.count > Self.maxThreads {
            // Keep the crashed thread, as the server would.
            if let crashed = threads.firstIndex(where: \.crashed), crashed >= Self.maxThreads {
                threads.swapAt(0, crashed)
            }
            threads = Array(threads.prefix(Self.maxThreads))
        }
        for i in threads.indices {
            threads[i].frames = Array(threads[i].frames.prefix(Self.maxFrames))
            threads[i].name = threads[i].name.map { Self.cut($0, 1024) }
        }
        modules = Array(modules.prefix(Self.maxModules)).map { m in
            var m = m
            m.name = Self.cut(m.name.isEmpty ? (m.path ?? "?") : m.name, 1024)
            if m.name.isEmpty { m.name = "?" }
            m.path = m.path.map { Self.cut($0, 4096) }
            if let id = m.buildID, !Self.isBuildID(id) { m.buildID = nil }
            if let end = m.end, end <= m.base { m.end = nil }
            return m
        }
        // The server's breadcrumb size estimate (§3.7): keep the newest that fit in 64 KiB.
        var budget = Limits.breadcrumbBytes
        var keep = 0
        for crumb in breadcrumbs.reversed() {
            let size = 32 &+ crumb.message.utf8.count &+ (crumb.category?.utf8.count ?? 0)
            guard size <= budget else { break }
            budget -= size
            keep += 1
        }
        breadcrumbs = breadcrumbs.suffix(keep).map { c in
            var c = c
            if Self.validTimestamp(c.timestamp) == nil { c.timestamp = timestamp }
            c.message = Self.cut(c.message, 8192)
            c.category = c.category.map { Self.cut($0, 1024) }
            return c
        }
        crashMessage = crashMessage.map { Self.cut($0, 4096) }
        if var e = error {
            e.type = Self.cut(e.type, 1024)
            e.code = e.code.map { Self.cut($0, 1024) }
            e.message = e.message.map { Self.cut($0, 8192) }
            error = e
        }
    }

    /// The modules some frame's address lies in, or nil when module ends are unknown.
    private func modulesInUse() -> [Module]? {
        let addresses = threads.flatMap { $0.frames.map(\.address) }
        return modules.filter { m in
            guard let end = m.end else { return true }
            return addresses.contains { $0 >= m.base && $0 < end }
        }
    }

    private func write() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("event_id"); w.string(eventID)
        w.key("kind"); w.string(kind)
        w.key("timestamp"); w.double(timestamp)
        w.field("session_id", sessionID)
        w.field("user_id", userID)
        w.field("install_id", installID.flatMap { $0.isEmpty ? nil : $0 })
        w.field("environment", environment.map { Self.cut($0, 1024) })
        if appID != nil || appVersion != nil || appBuild != nil {
            w.key("app"); w.beginObject()
            w.field("id", appID.map { Self.cut($0, 1024) })
            w.field("version", appVersion.map { Self.cut($0, 1024) })
            w.field("build", appBuild.map { Self.cut($0, 1024) })
            w.endObject()
        }
        w.key("device"); w.beginObject()
        w.field("os", Self.cut(device.os, 1024))
        w.field("os_version", device.osVersion.map { Self.cut($0, 1024) })
        w.field("arch", device.arch.map { Self.cut($0, 1024) })
        w.field("model", device.model.map { Self.cut($0, 1024) })
        if let memory = device.memory { w.key("memory"); w.uint(memory) }
        w.endObject()
        if let error {
            w.key("error"); w.beginObject()
            w.field("type", error.type)
            w.field("code", error.code)
            w.field("message", error.message)
            w.endObject()
        }
        if let faultAddress { w.key("fault_address"); w.address(faultAddress) }
        w.field("crash_message", crashMessage)
        w.key("threads"); w.beginArray()
        for t in threads {
            w.beginObject()
            w.field("name", t.name)
            w.key("crashed"); w.bool(t.crashed)
            if !t.registers.isEmpty {
                w.key("registers"); w.beginObject()
                var seen = Set<String>()
                for (name, value) in t.registers where seen.insert(name).inserted { w.key(name); w.address(value) }
                w.endObject()
            }
            w.key("frames"); w.beginArray()
            for f in t.frames {
                w.beginObject()
                w.key("address"); w.address(f.address)
                w.field("kind", f.kind)
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key("modules"); w.beginArray()
        for m in modules {
            w.beginObject()
            w.key("name"); w.string(m.name)
            w.field("path", m.path)
            w.field("build_id", m.buildID?.lowercased())
            w.key("base_address"); w.address(m.base)
            if let end = m.end { w.key("end_address"); w.address(end) }
            w.endObject()
        }
        w.endArray()
        w.key("breadcrumbs"); w.beginArray()
        for c in breadcrumbs {
            w.beginObject()
            w.key("timestamp"); w.double(c.timestamp)
            w.field("category", c.category)
            w.key("message"); w.string(c.message)
            w.endObject()
        }
        w.endArray()
        w.key("custom_keys"); w.beginObject()
        for k in customKeys {
            w.key(k.key)
            switch k.value {
            case .string(let s): w.string(s)
            case .int(let i): w.int(i)
            case .double(let d): w.double(d)
            case .bool(let b): w.bool(b)
            }
        }
        w.endObject()
        w.endObject()
        return w.bytes
    }

    // MARK: - Rules shared with the server

    /// Unix seconds the server takes (finite, |t| < 10^11), or nil.
    static func validTimestamp(_ t: Double) -> Double? { t.isFinite && abs(t) < 1e11 ? t : nil }

    /// 1–128 printable ASCII characters (docs/protocol.md 2.4).
    static func isSessionID(_ s: String) -> Bool {
        (1...128).contains(s.utf8.count) && s.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7e }
    }

    /// An even number (2–128) of hex digits.
    static func isBuildID(_ s: String) -> Bool {
        let n = s.utf8.count
        return n >= 2 && n <= 128 && n % 2 == 0
            && s.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46)
            }
    }

    /// `s` cut to at most `bytes` UTF-8 bytes at a character boundary.
    static func cut(_ s: String, _ bytes: Int) -> String {
        guard s.utf8.count > bytes else { return s }
        var out = ""
        var used = 0
        for ch in s {
            let n = ch.utf8.count
            guard used + n <= bytes else { break }
            out.append(ch)
            used += n
        }
        return out
    }

    static func cut(_ value: CustomValue) -> CustomValue {
        if case .string(let s) = value { return .string(cut(s, Limits.customKeyBytes)) }
        return value
    }
}

/// RFC 3339 timestamps as the Swift runtime writes them (`2026-11-23T05:16:21.460981Z`).
enum ISO8601 {
    /// Unix seconds, or nil when `text` is not `YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|±HH:MM|±HHMM]`.
    static func parse(_ text: String) -> Double? {
        let b = Array(text.utf8)
        guard b.count >= 19, b.count <= 64 else { return nil }
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard let year = num(0, 4), b[4] == UInt8(ascii: "-"), let month = num(5, 2), b[7] == UInt8(ascii: "-"),
            let day = num(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
            let hour = num(11, 2), b[13] == UInt8(ascii: ":"), let minute = num(14, 2), b[16] == UInt8(ascii: ":"),
            let second = num(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                fraction += Double(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        if i < b.count {
            switch b[i] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                i += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                guard let h = num(i + 1, 2) else { return nil }
                var m: Int?
                if i + 3 < b.count, b[i + 3] == UInt8(ascii: ":") {
                    m = num(i + 4, 2); i += 6
                } else {
                    m = num(i + 3, 2); i += 5
                }
                guard let m, h < 24, m < 60 else { return nil }
                offset = sign * (h * 3600 + m * 60)
            default:
                return nil
            }
        }
        guard i == b.count else { return nil }
        let days = CivilTime.days(year: year, month: month, day: day)
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }
}

/// Linux signal names (the generic numbering x86-64 and arm64 share).
enum Signals {
    static let names: [Int32: (String, String)] = [
        1: ("SIGHUP", "hangup"), 2: ("SIGINT", "interrupt"), 3: ("SIGQUIT", "quit"),
        4: ("SIGILL", "illegal instruction"),
        5: ("SIGTRAP", "trace/breakpoint trap"), 6: ("SIGABRT", "aborted"), 7: ("SIGBUS", "bus error"),
        8: ("SIGFPE", "floating-point exception"), 9: ("SIGKILL", "killed"), 10: ("SIGUSR1", "user signal 1"),
        11: ("SIGSEGV", "segmentation fault"), 12: ("SIGUSR2", "user signal 2"), 13: ("SIGPIPE", "broken pipe"),
        14: ("SIGALRM", "alarm clock"), 15: ("SIGTERM", "terminated"), 16: ("SIGSTKFLT", "stack fault"),
        17: ("SIGCHLD", "child exited"), 18: ("SIGCONT", "continued"), 19: ("SIGSTOP", "stopped"),
        20: ("SIGTSTP", "stopped"),
        21: ("SIGTTIN", "stopped (tty input)"), 22: ("SIGTTOU", "stopped (tty output)"),
        23: ("SIGURG", "urgent I/O condition"),
        24: ("SIGXCPU", "CPU time limit exceeded"), 25: ("SIGXFSZ", "file size limit exceeded"),
        26: ("SIGVTALRM", "virtual timer expired"), 27: ("SIGPROF", "profiling timer expired"),
        28: ("SIGWINCH", "window changed"),
        29: ("SIGIO", "I/O possible"), 30: ("SIGPWR", "power failure"), 31: ("SIGSYS", "bad system call"),
    ]

    static func name(_ signal: Int32) -> String {
        if let known = names[signal] { return known.0 }
        if signal >= 34, signal <= 64 { return "SIGRTMIN+\(signal - 34)" }
        return "SIG\(signal)"
    }

    static func description(_ signal: Int32) -> String? { names[signal]?.1 }
}
