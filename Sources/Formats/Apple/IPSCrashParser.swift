import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads an `.ips` crash report (iOS 15+, macOS 12+): a one-line JSON header (`bug_type` `309` for a crash
/// report), a newline, then the JSON body Apple's "Interpreting the JSON format of a crash report" describes:
/// `incident`, `captureTime`, `modelCode`, `osVersion {train, build}`, `cpuType`, `procName`, `procPath`,
/// `bundleInfo {CFBundleIdentifier, CFBundleShortVersionString, CFBundleVersion}`, `crashReporterKey`,
/// `exception {type, signal, subtype, codes, message}`, `exceptionReason {name, composed_message}`,
/// `termination {namespace, code, indicator, reasons}`,
/// `asi`, `faultingThread`, `threads [{triggered, name, queue, frames [{imageIndex, imageOffset, symbol,
/// symbolLocation, sourceFile, sourceLine}], threadState}]`, `lastExceptionBacktrace`, `usedImages [{base, size,
/// uuid, path, name, arch}]`.
///
/// Older `.ips` files whose body is the classic text report (a JSON header, then `Incident Identifier: …`) are
/// read by `CrashTextParser`, with the header's facts as fallbacks. Errors name the field (`threads[1].frames[0]`).
enum IPSCrashParser {
    static func parse(_ bytes: [UInt8]) throws -> AppleCrash {
        guard let newline = bytes.firstIndex(of: 0x0a) else {
            throw FormatError(
                .malformedJSON,
                "an .ips file is a one-line JSON header, a newline, then the report; there is no newline")
        }
        var crash = AppleCrash()
        var bugType: String?
        do {
            try JSONReader.with(bytes, range: 0..<newline) { r in
                guard try r.peek() == .object else {
                    throw FormatError(.malformedJSON, "the header must be a JSON object")
                }
                try r.readObject { r, key in
                    if key.matches("bug_type") {
                        bugType = try r.optional("bug_type") { try $0.readLooseString() }
                    } else if key.matches("incident_id") {
                        crash.incident = try r.optional("incident_id") { try $0.readString() }
                    } else if key.matches("timestamp") {
                        crash.timestamp = try r.optional("timestamp") { try $0.readAppleDate() }
                    } else if key.matches("app_version") {
                        crash.appVersion = try r.optional("app_version") { try $0.readLooseString() }
                    } else if key.matches("build_version") {
                        crash.appBuild = try r.optional("build_version") { try $0.readLooseString() }
                    } else if key.matches("bundleID") {
                        crash.bundleID = try r.optional("bundleID") { try $0.readString() }
                    } else if key.matches("os_version") {
                        crash.osTrain = try r.optional("os_version") { try $0.readString() }
                    } else if key.matches("app_name") || key.matches("name") {
                        crash.process = try r.optional("name") { try $0.readString() } ?? crash.process
                    } else {
                        try r.skipValue()
                    }
                }
                try r.expectEnd()
            }
        } catch let error as FormatError {
            throw error.prefixed("header")
        }
        var start = newline + 1
        while start < bytes.count,
            bytes[start] == 0x20 || bytes[start] == 0x0a || bytes[start] == 0x0d || bytes[start] == 0x09
        {
            start += 1
        }
        guard start < bytes.count else {
            throw FormatError(.invalidField, "the .ips file ends after its header", field: "body")
        }
        if bytes[start] != UInt8(ascii: "{") {
            // A pre-iOS 15 .ips: the body is the text report.
            var text = try CrashTextParser.parse(Array(bytes[start...]), firstLine: 2)
            text.incident = text.incident ?? crash.incident
            text.timestamp = text.timestamp ?? crash.timestamp
            text.bundleID = text.bundleID ?? crash.bundleID
            text.appVersion = text.appVersion ?? crash.appVersion
            text.appBuild = text.appBuild ?? crash.appBuild
            text.osTrain = text.osTrain ?? crash.osTrain
            return text
        }
        guard bugType == "309" else {
            let found = bugType.map { "bug_type \($0)" } ?? "no bug_type"
            throw FormatError(
                .invalidField, "\(found): only crash reports (bug_type 309) are read", field: "header.bug_type")
        }
        try JSONReader.with(bytes, range: start..<bytes.count) { r in
            guard try r.peek() == .object else {
                throw FormatError(.malformedJSON, "the report body must be a JSON object")
            }
            try r.readIPSBody(into: &crash)
            try r.expectEnd()
        }
        return crash
    }
}

extension JSONReader {
    mutating func readAppleDate() throws -> Date {
        let text = try readString()
        guard let date = AppleText.date(text) else {
            throw FormatError(.invalidField, "expected a date like \"2023-01-12 10:33:51.3486 -0800\"")
        }
        return date
    }

    mutating func readIPSBody(into crash: inout AppleCrash) throws {
        try readObject { r, key in
            if key.matches("incident") {
                crash.incident = try r.optional("incident") { try $0.readString() } ?? crash.incident
            } else if key.matches("captureTime") {
                crash.timestamp = try r.optional("captureTime") { try $0.readAppleDate() } ?? crash.timestamp
            } else if key.matches("modelCode") {
                crash.model = try r.optional("modelCode") { try $0.readString() }
            } else if key.matches("cpuType") {
                crash.codeType = try r.optional("cpuType") { try $0.readString() }
            } else if key.matches("procName") {
                crash.process = try r.optional("procName") { try $0.readString() } ?? crash.process
            } else if key.matches("procPath") {
                crash.processPath = try r.optional("procPath") { try $0.readString() }
            } else if key.matches("crashReporterKey") {
                crash.crashReporterKey = try r.optional("crashReporterKey") { try $0.readLooseString() }
            } else if key.matches("faultingThread") {
                crash.faultingThread = try r.optional("faultingThread") { try $0.readInt() }
            } else if key.matches("osVersion") {
                _ = try r.optional("osVersion") { r in
                    try r.readObject { r, key in
                        if key.matches("train") {
                            crash.osTrain = try r.optional("train") { try $0.readString() } ?? crash.osTrain
                        } else if key.matches("build") {
                            crash.osBuild = try r.optional("build") { try $0.readLooseString() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if key.matches("bundleInfo") {
                _ = try r.optional("bundleInfo") { r in
                    try r.readObject { r, key in
                        if key.matches("CFBundleIdentifier") {
                            crash.bundleID =
                                try r.optional("CFBundleIdentifier") { try $0.readString() } ?? crash.bundleID
                        } else if key.matches("CFBundleShortVersionString") {
                            crash.appVersion =
                                try r.optional("CFBundleShortVersionString") { try $0.readLooseString() }
                                ?? crash.appVersion
                        } else if key.matches("CFBundleVersion") {
                            crash.appBuild =
                                try r.optional("CFBundleVersion") { try $0.readLooseString() } ?? crash.appBuild
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if key.matches("exception") {
                _ = try r.optional("exception") { r in
                    try r.readObject { r, key in
                        if key.matches("type") {
                            crash.exceptionType = try r.optional("type") { try $0.readString() }
                        } else if key.matches("signal") {
                            crash.exceptionSignal = try r.optional("signal") { try $0.readString() }
                        } else if key.matches("subtype") {
                            crash.exceptionSubtype = try r.optional("subtype") { try $0.readString() }
                        } else if key.matches("codes") {
                            crash.exceptionCodes = try r.optional("codes") { try $0.readLooseString() }
                        } else if key.matches("message") {
                            crash.exceptionMessage = try r.optional("message") { try $0.readString() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if key.matches("exceptionReason") {
                _ = try r.optional("exceptionReason") { r in
                    try r.readObject { r, key in
                        if key.matches("name") {
                            crash.exceptionReasonName = try r.optional("name") { try $0.readString() }
                        } else if key.matches("composed_message") {
                            crash.exceptionReasonMessage = try r.optional("composed_message") { try $0.readString() }
                        } else {
                            try r.skipValue()  // type (objc-exception), class, format_string, arguments
                        }
                    }
                }
            } else if key.matches("termination") {
                crash.termination = try r.optional("termination") { try $0.readIPSTermination() } ?? nil
            } else if key.matches("asi") {
                crash.applicationSpecific = try r.optional("asi") { try $0.readIPSApplicationSpecific() } ?? []
            } else if key.matches("threads") {
                crash.threads = try r.list("threads") { try $0.readIPSThread() }
                for i in crash.threads.indices {
                    for f in crash.threads[i].frames.indices {
                        crash.threads[i].frames[f].origin = "threads[\(i)].frames[\(f)]"
                    }
                }
            } else if key.matches("lastExceptionBacktrace") {
                crash.lastExceptionBacktrace = try r.list("lastExceptionBacktrace") { try $0.readIPSFrame() }
                for f in crash.lastExceptionBacktrace.indices {
                    crash.lastExceptionBacktrace[f].origin = "lastExceptionBacktrace[\(f)]"
                }
            } else if key.matches("usedImages") {
                crash.images = try r.list("usedImages") { try $0.readIPSImage() }
            } else {
                try r.skipValue()
            }
        }
    }

    /// `{namespace: "SIGNAL", code: 6, indicator: "Abort trap: 6", reasons: […]}` → `SIGNAL 6 Abort trap: 6`, as
    /// the text report's "Termination Reason" line writes it (with the reasons after).
    mutating func readIPSTermination() throws -> String? {
        var namespace: String?
        var code: String?
        var indicator: String?
        var reasons: [String] = []
        try readObject { r, key in
            if key.matches("namespace") {
                namespace = try r.optional("namespace") { try $0.readString() }
            } else if key.matches("code") {
                code = try r.optional("code") { r -> String in
                    if try r.peek() == .number {
                        let value = try r.readUInt64()
                        return value > 255 ? "0x" + String(value, radix: 16) : String(value)
                    }
                    return try r.readString()
                }
            } else if key.matches("indicator") {
                indicator = try r.optional("indicator") { try $0.readString() }
            } else if key.matches("reasons") {
                reasons = try r.list("reasons") { try $0.readLooseString() }
            } else {
                try r.skipValue()
            }
        }
        let text = ([namespace, code, indicator].compactMap { $0 } + reasons).joined(separator: " ")
        return text.isEmpty ? nil : text
    }

    /// `{"libsystem_c.dylib": ["abort() called"]}` (also a bare string or list) → its lines (lists nested deeper than
    /// two are skipped, not walked: the input decides the depth).
    mutating func readIPSApplicationSpecific() throws -> [String] {
        var lines: [String] = []
        func strings(_ r: inout JSONReader, depth: Int = 0) throws {
            switch try r.peek() {
            case .string: lines.append(try r.readString())
            case .array where depth < 2: try r.readArray { r, _ in try strings(&r, depth: depth + 1) }
            default: try r.skipValue()
            }
        }
        switch try peek() {
        case .object: try readObject { r, _ in try strings(&r) }
        default: try strings(&self)
        }
        return lines
    }

    mutating func readIPSThread() throws -> AppleCrash.Thread {
        var thread = AppleCrash.Thread()
        try readObject { r, key in
            if key.matches("triggered") {
                thread.triggered = try r.optional("triggered") { try $0.readBool() } ?? false
            } else if key.matches("name") {
                thread.name = try r.optional("name") { try $0.readString() }
            } else if key.matches("queue") {
                thread.queue = try r.optional("queue") { try $0.readString() }
            } else if key.matches("frames") {
                thread.frames = try r.list("frames") { try $0.readIPSFrame() }
            } else if key.matches("threadState") {
                thread.registers = try r.optional("threadState") { try $0.readIPSThreadState() } ?? []
            } else {
                try r.skipValue()
            }
        }
        return thread
    }

    mutating func readIPSFrame() throws -> AppleCrash.Frame {
        var frame = AppleCrash.Frame(origin: "")
        try readObject { r, key in
            if key.matches("imageIndex") {
                frame.imageIndex = try r.optional("imageIndex") { try $0.readInt() }
            } else if key.matches("imageOffset") {
                frame.imageOffset = try r.optional("imageOffset") { try $0.readUInt64() }
            } else if key.matches("symbol") {
                frame.symbol = try r.optional("symbol") { try $0.readString() }
            } else if key.matches("sourceFile") {
                frame.file = try r.optional("sourceFile") { try $0.readString() }
            } else if key.matches("sourceLine") {
                frame.line = try r.optional("sourceLine") { try $0.readInt() }
            } else if key.matches("inline") {
                frame.inlined = try r.optional("inline") { try $0.readLooseString() } == "true"
            } else {
                try r.skipValue()  // symbolLocation (the offset into `symbol`), region…
            }
        }
        guard frame.imageIndex != nil, frame.imageOffset != nil else {
            throw FormatError(.invalidField, "a frame needs imageIndex and imageOffset")
        }
        return frame
    }

    /// `{"x": [{"value": …}, …], "fp": {"value": …}, "pc": {"value": …}, "flavor": "ARM_THREAD_STATE64"}` →
    /// registers in order (`x0`…, then the named ones).
    mutating func readIPSThreadState() throws -> [Register] {
        var out: [Register] = []
        func value(_ r: inout JSONReader) throws -> UInt64? {
            switch try r.peek() {
            case .number: return try r.readUInt64()
            case .object:
                var v: UInt64?
                try r.readObject { r, key in
                    if key.matches("value") {
                        v = try r.optional("value") { try $0.readUInt64() }
                    } else {
                        try r.skipValue()
                    }
                }
                return v
            default:
                try r.skipValue()
                return nil
            }
        }
        try readObject { r, key in
            if key.matches("x"), try r.peek() == .array {
                try r.readArray { r, i in
                    if let v = try value(&r) { out.append(Register(name: "x\(i)", value: v)) }
                }
            } else {
                let name = key.string
                if let v = try r.optional(name, { try value(&$0) }) ?? nil {
                    out.append(Register(name: name, value: v))
                }
            }
        }
        return Array(out.prefix(AppleCrash.maxRegisters))
    }

    mutating func readIPSImage() throws -> AppleCrash.Image {
        var base: UInt64?
        var image = AppleCrash.Image(base: 0)
        try readObject { r, key in
            if key.matches("base") {
                base = try r.optional("base") { try $0.readUInt64() }
            } else if key.matches("size") {
                image.size = try r.optional("size") { try $0.readUInt64() }
            } else if key.matches("uuid") {
                guard let raw = try r.optional("uuid", { try $0.readString() }) else { return }
                image.uuid = try AppleText.uuid(
                    raw.filter { $0 != "-" },
                    invalid: FormatError(.invalidField, "must be a UUID (32 hex digits)", field: "uuid"))
            } else if key.matches("name") {
                image.name = try r.optional("name") { try $0.readString() }
            } else if key.matches("path") {
                image.path = try r.optional("path") { try $0.readString() }
            } else if key.matches("arch") {
                image.arch = try r.optional("arch") { try $0.readString() }
            } else {
                try r.skipValue()  // source ("P": in the process, "S": the shared cache, "A": absolute), CFBundle…
            }
        }
        guard let base else { throw FormatError(.invalidField, "is required", field: "base") }
        image.base = base
        return image
    }
}
