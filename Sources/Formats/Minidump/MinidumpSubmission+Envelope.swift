import FaultlineCore

extension MinidumpSubmission {
    /// The submission as the Sentry envelope the ingest path stores, converted once here so that everything after
    /// (scrubbing, rate limits, exactly-once, attachments, re-reading) is the envelope path's:
    /// - the event, with what the dump says in Sentry's own shape: `exception` (the signal, its code and fault
    ///   address, mechanism `minidump`), `threads` (each thread's registers and its context frame: the worker walks
    ///   the rest, `Report.walksMinidump`), `debug_meta.images` (the modules at their bases with their GNU
    ///   build-ids), and the OS and CPU when the event does not say;
    /// - the dump as an `event.minidump` attachment, with its environment dropped and its command line passed
    ///   through `scrub` (`Minidump.redacted`);
    /// - the request's other files as attachments.
    ///
    /// The event id is the request's, else Crashpad's report UUID (a retried upload is the same event), else the one
    /// the envelope reader derives from the event's bytes.
    /// - Throws: `FormatError(.invalidField)` naming `upload_file_minidump` when the dump cannot be read or is of a
    ///   platform or CPU that is not walked.
    public func sentryEnvelope(
        scrubbingCommandLine scrub: (String) -> String, maxThreads: Int = IngestLimits().maxThreads
    ) throws -> [UInt8] {
        let minidump: Minidump
        let snapshot: ProcessSnapshot
        do {
            minidump = try Minidump(bytes: dump)
            snapshot = try minidump.snapshot()
        } catch {
            throw FormatError(.invalidField, "the minidump cannot be read: \(error.message)", field: Names.dump)
        }
        var body = try JSONValue.parse(event)
        let eventID = eventID ?? minidump.crashpad.flatMap { Self.uuidEventID($0.reportID) }
        if let eventID { body.set("event_id", .string(eventID.rawValue)) }
        Self.describe(snapshot, minidump: minidump, in: &body, maxThreads: maxThreads)

        var out: [UInt8] = []
        var header = JSONValue.object([])
        if let eventID { header.set("event_id", .string(eventID.rawValue)) }
        Self.appendItem(to: &out, header: header, payload: nil)
        let eventBytes = body.serialized
        Self.appendItem(
            to: &out, header: .object([("type", .string("event")), ("length", .int(Int64(eventBytes.count)))]),
            payload: eventBytes)
        let stored = Attachment(
            filename: filename ?? "minidump.dmp", contentType: "application/x-dmp",
            attachmentType: Self.attachmentType, bytes: minidump.redacted(scrubbingCommandLine: scrub))
        for attachment in [stored] + attachments {
            var itemHeader = JSONValue.object([
                ("type", .string("attachment")), ("length", .int(Int64(attachment.bytes.count))),
                ("filename", .string(attachment.filename)),
            ])
            if let type = attachment.contentType { itemHeader.set("content_type", .string(type)) }
            if let type = attachment.attachmentType { itemHeader.set("attachment_type", .string(type)) }
            Self.appendItem(to: &out, header: itemHeader, payload: attachment.bytes)
        }
        return out
    }

    /// One envelope line (the header) and, when given, its payload and newline.
    static func appendItem(to out: inout [UInt8], header: JSONValue, payload: [UInt8]?) {
        header.write(to: &out)
        out.append(0x0A)
        if let payload {
            out += payload
            out.append(0x0A)
        }
    }

    /// Crashpad's report UUID as an event id (32 hex digits in the UUID's text order); nil for none or all zeros.
    static func uuidEventID(_ bytes: [UInt8]) -> EventID? {
        guard bytes.count == 16, bytes.contains(where: { $0 != 0 }) else { return nil }
        // The first three fields are little-endian in the file.
        let ordered = Array(bytes[0..<4].reversed()) + bytes[4..<6].reversed() + bytes[6..<8].reversed() + bytes[8...]
        return EventID(Hex.encode(ordered))
    }

    /// Sets the event's `exception`, `threads` and `debug_meta` from the dump (replacing what the client sent, as
    /// Sentry does: the dump is the crash), and `contexts.os`/`contexts.device.arch` where the event has none.
    static func describe(_ snapshot: ProcessSnapshot, minidump: Minidump, in event: inout JSONValue, maxThreads: Int) {
        let names = RegisterNames(snapshot.architecture)
        var exception = JSONValue.object([])
        var mechanism = JSONValue.object([
            ("type", .string("minidump")), ("handled", .bool(false)), ("synthetic", .bool(true)),
        ])
        if let crash = snapshot.exception {
            let signal = LinuxSignals.name(crash.signal)
            exception.set("type", .string(signal ?? "signal \(crash.signal)"))
            if let message = abortMessage(minidump) { exception.set("value", .string(message)) }
            exception.set("thread_id", .uint(crash.threadID))
            var meta = JSONValue.object([("number", .int(Int64(crash.signal))), ("code", .int(Int64(crash.code)))])
            if let signal { meta.set("name", .string(signal)) }
            mechanism.set(path: ["meta", "signal"], meta)
            if LinuxSignals.hasFaultAddress(crash.signal) {
                mechanism.set(path: ["data", "relevant_address"], .string(hex(crash.faultAddress)))
            }
        } else {
            exception.set("type", .string("Minidump"))
            exception.set("value", .string("the dump names no exception (written on request, not by a crash)"))
        }
        exception.set("mechanism", mechanism)
        event.set("exception", .object([("values", .array([exception]))]))

        let threads = snapshot.threads.prefix(maxThreads).map { thread -> JSONValue in
            var value = JSONValue.object([("id", .uint(thread.id)), ("crashed", .bool(thread.crashed))])
            if let name = thread.name { value.set("name", .string(name)) }
            var registers: [(String, JSONValue)] = []
            for number in thread.registers.keys.sorted() {
                if let name = names.name(number), let register = thread.registers[number] {
                    registers.append((name, .string(hex(register))))
                }
            }
            registers.append((names.pc, .string(hex(thread.pc))))
            value.set(
                "stacktrace",
                .object([
                    ("frames", .array([.object([("instruction_addr", .string(hex(thread.pc)))])])),
                    ("registers", .object(registers)),
                    ("instruction_addr_adjustment", .string("none")),
                ]))
            return value
        }
        event.set("threads", .object([("values", .array(Array(threads)))]))

        let images = snapshot.modules.map { module -> JSONValue in
            var image = JSONValue.object([
                ("type", .string("elf")), ("code_file", .string(module.path)),
                ("image_addr", .string(hex(module.base))),
                ("image_size", .uint(module.size)),
            ])
            if let id = module.buildID { image.set("code_id", .string(id.rawValue)) }
            return image
        }
        event.set("debug_meta", .object([("images", .array(images))]))

        if event["contexts"]?["os"] == nil, let system = minidump.systemInfo {
            var os = JSONValue.object([("name", .string(system.platformID == 0x8203 ? "Android" : "Linux"))])
            // Breakpad's and Crashpad's CSD version: `6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC … x86_64`.
            let words = (system.osVersion ?? "").split(separator: " ", maxSplits: 1).map(String.init)
            if let version = words.first { os.set("kernel_version", .string(version)) }
            if words.count > 1 { os.set("build", .string(words[1])) }
            event.set(path: ["contexts", "os"], os)
        }
        if event["contexts"]?["device"]?["arch"] == nil {
            event.set(path: ["contexts", "device", "arch"], .string(snapshot.architecture.rawValue))
        }
    }

    /// An abort's own words, when the process left them in its Crashpad annotations (Android's `abort_message`,
    /// a client's `abort_message`/`crash_message` annotation).
    static func abortMessage(_ minidump: Minidump) -> String? {
        guard let crashpad = minidump.crashpad else { return nil }
        let keys = ["abort_message", "crash_message", "sentry:message"]
        for key in keys {
            if let value = crashpad.annotations[key], !value.isEmpty { return String(value.prefix(1024)) }
            for module in crashpad.modules {
                if let value = module.simple[key] ?? module.objects[key], !value.isEmpty {
                    return String(value.prefix(1024))
                }
            }
        }
        return nil
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

    /// Sentry's register names by DWARF number.
    struct RegisterNames {
        let architecture: ProcessSnapshot.Architecture
        init(_ architecture: ProcessSnapshot.Architecture) { self.architecture = architecture }

        static let x86_64 = [
            "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
            "r15",
        ]

        var pc: String { architecture == .x86_64 ? "rip" : "pc" }

        func name(_ number: Int) -> String? {
            switch architecture {
            case .x86_64: return number >= 0 && number < Self.x86_64.count ? Self.x86_64[number] : nil
            case .arm64:
                if number >= 0 && number <= 28 { return "x\(number)" }
                return [29: "fp", 30: "lr", 31: "sp"][number]
            }
        }
    }
}

/// Linux's signal numbers (the same on x86-64 and arm64) and names.
enum LinuxSignals {
    static let names: [Int32: String] = [
        1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
        9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
        16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU",
        23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO",
        30: "SIGPWR", 31: "SIGSYS",
    ]

    static func name(_ signal: Int32) -> String? { names[signal] }

    /// Signals whose `si_addr` is the faulting address.
    static func hasFaultAddress(_ signal: Int32) -> Bool { [4, 7, 8, 11].contains(signal) }
}
