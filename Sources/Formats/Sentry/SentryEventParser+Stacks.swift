import FaultlineCore

/// Exceptions, threads, stack traces and frames of a Sentry event.
extension JSONReader {
    mutating func readSentryException() throws -> SentryException {
        var e = SentryException()
        try readObject { r, key in
            if key.matches("type") {
                e.type = try r.optional("type") { try $0.readString() }
            } else if key.matches("value") {
                e.value = try r.optional("value") { try $0.readLooseString() }
            } else if key.matches("module") {
                e.module = try r.optional("module") { try $0.readString() }
            } else if key.matches("thread_id") {
                e.threadID = try r.optional("thread_id") { try $0.readLooseString() }
            } else if key.matches("mechanism") {
                _ = try r.optional("mechanism") { try $0.readSentryMechanism(into: &e) }
            } else if key.matches("stacktrace") {
                e.stacktrace = try r.optional("stacktrace") { try $0.readSentryStacktrace() }
            } else {
                try r.skipValue()
            }
        }
        return e
    }

    /// `mechanism`: `{type, handled, meta: {signal: {number, name}, errno: {number}, mach_exception: {exception, code,
    /// subcode, name}}, data: {relevant_address}}` (the last two from Apple SDKs: Sentry Cocoa's Mach exceptions).
    mutating func readSentryMechanism(into e: inout SentryException) throws {
        var signal: String?
        var signalName: String?
        var errno: String?
        var mach: MachException?
        try readObject { r, key in
            if key.matches("type") {
                e.mechanismType = try r.optional("type") { try $0.readString() }
            } else if key.matches("handled") {
                e.handled = try r.optional("handled") { try $0.readBool() }
            } else if key.matches("meta") {
                _ = try r.optional("meta") { r in
                    try r.readObject { r, key in
                        if key.matches("signal") {
                            _ = try r.optional("signal") { r in
                                try r.readObject { r, key in
                                    if key.matches("number") {
                                        signal = try r.optional("number") { String(try $0.readInt()) }
                                    } else if key.matches("name") {
                                        signalName = try r.optional("name") { try $0.readString() }
                                    } else {
                                        try r.skipValue()
                                    }
                                }
                            }
                        } else if key.matches("errno") {
                            errno = try r.optional("errno") { try $0.readNumberField("number") } ?? nil
                        } else if key.matches("mach_exception") {
                            mach = try r.optional("mach_exception") { try $0.readMachException() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if key.matches("data") {
                _ = try r.optional("data") { r in
                    try r.readObject { r, key in
                        if key.matches("relevant_address") {
                            e.relevantAddress = try r.optional("relevant_address") { try $0.readAddress() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else {
                try r.skipValue()
            }
        }
        e.code = signal ?? errno
        if var mach {
            mach.signal = signalName.flatMap { $0.isEmpty ? nil : $0 }
            e.mach = mach
        }
    }

    /// `mechanism.meta.mach_exception`: `{exception, code, subcode, name}`. Codes are 64-bit values that SDKs write as
    /// signed or unsigned numbers, or as hex strings; a negative one is kept as its bit pattern.
    mutating func readMachException() throws -> MachException {
        var mach = MachException()
        try readObject { r, key in
            if key.matches("exception") {
                mach.exception = try r.optional("exception") { try $0.readMachCode() }.map { Int64(bitPattern: $0) }
            } else if key.matches("code") {
                mach.code = try r.optional("code") { try $0.readMachCode() }.map { Int64(bitPattern: $0) }
            } else if key.matches("subcode") {
                mach.subcode = try r.optional("subcode") { try $0.readMachCode() }
            } else if key.matches("name") {
                mach.name = try r.optional("name") { try $0.readString() }
            } else {
                try r.skipValue()
            }
        }
        return mach
    }

    /// A 64-bit Mach code: a whole number (negative ones as their bit pattern) or a hex string.
    mutating func readMachCode() throws -> UInt64 {
        guard try peek() == .number else { return try readAddress() }
        let text = String(decoding: try numberToken(), as: UTF8.self)
        if let value = UInt64(text) { return value }
        if let value = Int64(text) { return UInt64(bitPattern: value) }
        throw FormatError(.invalidField, "expected a 64-bit whole number")
    }

    /// The whole-number field `name` of an object, as text (nil when absent).
    mutating func readNumberField(_ name: StaticString) throws -> String? {
        var out: String?
        try readObject { r, key in
            if key.matches(name) {
                out = try r.optional(name.description) { String(try $0.readInt()) }
            } else {
                try r.skipValue()
            }
        }
        return out
    }

    mutating func readSentryStacktrace() throws -> SentryStacktrace {
        var s = SentryStacktrace()
        try readObject { r, key in
            if key.matches("frames") {
                s.frames =
                    try r.optional("frames") { r in
                        var out: [Frame] = []
                        try r.readArray { r, _ in
                            if let frame = try r.readSentryFrame() { out.append(frame) }
                        }
                        return out
                    } ?? []
            } else if key.matches("registers") {
                s.registers = try r.registers("registers")
            } else if key.matches("instruction_addr_adjustment") {
                s.adjustment = try r.optional("instruction_addr_adjustment") { try $0.readString() }
            } else {
                try r.skipValue()
            }
        }
        return s
    }

    /// One frame; nil for a frame that says nothing usable (no address, function, file or module).
    mutating func readSentryFrame() throws -> Frame? {
        var frame = Frame()
        var filename: String?
        var absPath: String?
        var module: String?
        var package: String?
        var symbol: String?
        try readObject { r, key in
            if key.matches("instruction_addr") {
                frame.address = try r.optional("instruction_addr") { try $0.readAddress() }
            } else if key.matches("function") {
                frame.function = try r.optional("function") { try $0.readString() }
            } else if key.matches("symbol") {
                symbol = try r.optional("symbol") { try $0.readString() }
            } else if key.matches("filename") {
                filename = try r.optional("filename") { try $0.readString() }
            } else if key.matches("abs_path") {
                absPath = try r.optional("abs_path") { try $0.readString() }
            } else if key.matches("lineno") {
                frame.line = try r.optional("lineno") { try $0.readInt() }
            } else if key.matches("colno") {
                frame.column = try r.optional("colno") { try $0.readInt() }
            } else if key.matches("module") {
                module = try r.optional("module") { try $0.readString() }
            } else if key.matches("package") {
                package = try r.optional("package") { try $0.readString() }
            } else {
                try r.skipValue()
            }
        }
        frame.function = frame.function ?? symbol
        // `filename` is what Sentry shows and groups by (relative for Python); `abs_path` is the fallback.
        frame.file = filename ?? absPath
        // Native frames name their image in `package`; Python, Java and JS frames their module in `module`.
        frame.module = package ?? module
        guard frame.address != nil || frame.function != nil || frame.file != nil || frame.module != nil else {
            return nil
        }
        return frame
    }

    mutating func readSentryThread() throws -> SentryThread {
        var t = SentryThread()
        try readObject { r, key in
            if key.matches("id") {
                t.id = try r.optional("id") { try $0.readLooseString() }
            } else if key.matches("name") {
                t.name = try r.optional("name") { try $0.readString() }
            } else if key.matches("crashed") {
                t.crashed = try r.optional("crashed") { try $0.readBool() }
            } else if key.matches("current") {
                t.current = try r.optional("current") { try $0.readBool() }
            } else if key.matches("stacktrace") {
                t.stacktrace = try r.optional("stacktrace") { try $0.readSentryStacktrace() }
            } else {
                try r.skipValue()
            }
        }
        return t
    }
}

extension SentryStacktrace {
    /// The frames innermost first (Faultline's order), each address marked as a program counter or a return
    /// address following `instruction_addr_adjustment`: `none` = every frame is a program counter (the
    /// unwinder already adjusted), `all` = every frame is a return address, anything else (`auto`,
    /// `all_but_first`, absent) = the crashing frame is the program counter and its callers return addresses.
    var faultlineFrames: [Frame] {
        var frames = Array(frames.reversed())
        for i in frames.indices where frames[i].address != nil {
            switch adjustment {
            case "none": frames[i].instructionKind = .programCounter
            case "all": frames[i].instructionKind = .returnAddress
            default: frames[i].instructionKind = i == 0 ? .programCounter : .returnAddress
            }
        }
        return frames
    }
}
