import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Messages, breadcrumbs, tags, extras, contexts, the SDK and debug images of a Sentry event.
extension JSONReader {
    /// `message` (a string, or `{message, formatted, params}`) or `logentry` (`{message, formatted, params}`):
    /// `formatted` when sent, else `message` with positional `params` put in its `%s`-style placeholders.
    mutating func readSentryMessage() throws -> String? {
        if try peek() == .string { return try readString() }
        var message: String?
        var formatted: String?
        var params: [String]?
        try readObject { r, key in
            if key.matches("message") {
                message = try r.optional("message") { try $0.readString() }
            } else if key.matches("formatted") {
                formatted = try r.optional("formatted") { try $0.readString() }
            } else if key.matches("params") {
                // Named params (an object) are not substituted; positional ones are.
                guard try r.peek() == .array else { return try r.skipValue() }
                var out: [String] = []
                try r.readArray { r, _ in
                    out.append(try r.peek() == .string ? try r.readString() : try r.readRawJSON())
                }
                params = out
            } else {
                try r.skipValue()
            }
        }
        if let formatted { return formatted }
        guard let message else { return nil }
        guard let params, !params.isEmpty else { return message }
        return SentryMessageFormat.format(message, params: params)
    }

    /// `{type, category, level, message, data, timestamp}`; `data` values become strings (nested values
    /// as their JSON text), each cut to the key/value limit.
    mutating func readSentryBreadcrumb(limits: IngestLimits) throws -> SentryBreadcrumb {
        var timestamp: Date?
        var crumb = Breadcrumb(timestamp: Date(timeIntervalSince1970: 0))
        try readObject { r, key in
            if key.matches("timestamp") {
                timestamp = try r.optional("timestamp") { try $0.readTimestamp() }
            } else if key.matches("category") {
                crumb.category = try r.optional("category") { try $0.readString() }
            } else if key.matches("level") {
                crumb.level = try r.optional("level") { try $0.readString() }
            } else if key.matches("message") {
                crumb.message = try r.optional("message") { try $0.readLooseString() }
            } else if key.matches("data") {
                crumb.data =
                    try r.optional("data") { r in
                        var out: [BreadcrumbData.Element] = []
                        try r.readObject { r, key in
                            let name = IngestLimits.truncate(key.string, toBytes: limits.maxKeyValueBytes)
                            let value: String
                            switch try r.peek() {
                            case .null: return try r.literal("null")
                            case .object, .array: value = try r.readRawJSON()
                            default: value = try r.readLooseString()
                            }
                            out.append((name, IngestLimits.truncate(value, toBytes: limits.maxKeyValueBytes)))
                        }
                        return BreadcrumbData(out)
                    } ?? [:]
            } else {
                try r.skipValue()
            }
        }
        return SentryBreadcrumb(timestamp: timestamp, crumb: crumb)
    }

    /// `tags`: `{"key": "value"}` or `[["key", "value"], …]`; numbers and bools become strings, nulls are
    /// dropped, and a repeated key keeps its last value.
    mutating func readSentryTags() throws -> [(key: String, value: String)] {
        var out: [(key: String, value: String)] = []
        switch try peek() {
        case .object:
            try readObject { r, key in
                let name = key.string
                if let value = try r.optional(name, { try $0.readLooseString() }) { out.append((name, value)) }
            }
        case .array:
            try readArray { r, _ in
                var pair: [String?] = []
                try r.readArray { r, i in
                    guard i < 2 else { throw FormatError(.invalidField, "a tag is a [key, value] pair") }
                    pair.append(try r.consumeNull() ? nil : try r.readLooseString())
                }
                guard pair.count == 2 else { throw FormatError(.invalidField, "a tag is a [key, value] pair") }
                if let key = pair[0], let value = pair[1] { out.append((key, value)) }
            }
        default:
            throw FormatError(.invalidField, "expected an object or an array of [key, value] pairs")
        }
        return out
    }

    /// `extra`: scalar values only (strings, numbers, bools). Objects and arrays are skipped: they are where
    /// SDKs put bulk (`sys.argv`, and `sentry-cli send-event`'s whole process environment). The JSON must
    /// still be well-formed.
    mutating func readSentryExtras() throws -> [(key: String, value: CustomValue)] {
        var out: [(key: String, value: CustomValue)] = []
        try readObject { r, key in
            switch try r.peek() {
            case .string: out.append((key.string, .string(try r.readString())))
            case .number:
                // A number beyond Double's range is dropped, not an error: extras are free-form.
                let token = try r.numberToken()
                if let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite {
                    out.append((key.string, .number(value)))
                }
            case .bool: out.append((key.string, .bool(try r.readBool())))
            default: try r.skipValue()
            }
        }
        return out
    }

    /// `contexts`: `device` (`model`, `arch`, `memory_size`, `free_storage`, `simulator`), `os` (`name`, `version`,
    /// `build`), `app` (`app_identifier`, `app_version`, `app_build`) and `culture` (`locale`) are read into the device
    /// and app; every other context that is an object becomes a `ReportContext` (`readSentryContext`), and one that
    /// is not (Sentry requires objects) is skipped. A repeated name keeps its last block.
    mutating func readSentryContexts(into e: inout SentryEventFields) throws {
        try readObject { r, key in
            if key.matches("device") {
                _ = try r.optional("device") { r in
                    try r.readObject { r, key in
                        if key.matches("model") {
                            e.device.model = try r.optional("model") { try $0.readString() }
                        } else if key.matches("arch") {
                            e.device.arch = try r.optional("arch") { try $0.readString() }
                        } else if key.matches("memory_size") {
                            e.device.memoryBytes = try r.optional("memory_size") { try $0.readByteCount() }
                        } else if key.matches("free_storage") {
                            e.device.freeDiskBytes = try r.optional("free_storage") { try $0.readByteCount() }
                        } else if key.matches("simulator") {
                            e.device.simulator = try r.optional("simulator") { try $0.readBool() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if key.matches("os") {
                _ = try r.optional("os") { r in
                    try r.readObject { r, key in
                        if key.matches("name") {
                            e.device.os = try r.optional("name") { try $0.readString() }
                        } else if key.matches("version") {
                            e.device.osVersion = try r.optional("version") { try $0.readLooseString() }
                        } else if key.matches("build") {
                            e.device.osBuild = try r.optional("build") { try $0.readLooseString() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if key.matches("app") {
                _ = try r.optional("app") { r in
                    try r.readObject { r, key in
                        if key.matches("app_identifier") {
                            e.appContext.id = try r.optional("app_identifier") { try $0.readString() }
                        } else if key.matches("app_version") {
                            e.appContext.version = try r.optional("app_version") { try $0.readLooseString() }
                        } else if key.matches("app_build") {
                            e.appContext.build = try r.optional("app_build") { try $0.readLooseString() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if key.matches("culture") {
                _ = try r.optional("culture") { r in
                    try r.readObject { r, key in
                        if key.matches("locale") {
                            e.device.locale = try r.optional("locale") { try $0.readString() }
                        } else {
                            try r.skipValue()
                        }
                    }
                }
            } else if try r.peek() == .object {
                let context = try r.readSentryContext(name: key.string)
                e.contexts.removeAll { $0.name == context.name }
                e.contexts.append(context)
            } else {
                try r.skipValue()
            }
        }
    }

    /// One context block: its `type` (when it is a string other than the block's name), and every other value as
    /// text: strings as sent, numbers and booleans as written, objects and arrays as their JSON text; nulls are
    /// dropped and a repeated key keeps its last value. Limits are applied later (`IngestLimits.apply`).
    mutating func readSentryContext(name: String) throws -> ReportContext {
        var context = ReportContext(name: name)
        var values: [String: String] = [:]
        var order: [String] = []
        try readObject { r, key in
            let value: String
            switch try r.peek() {
            case .null: return try r.literal("null")
            case .object, .array: value = try r.readRawJSON()
            default: value = try r.readLooseString()
            }
            if key.matches("type") {
                context.type = value == name || value.isEmpty ? nil : value
                return
            }
            if values.updateValue(value, forKey: key.string) == nil { order.append(key.string) }
        }
        context.values = order.map { ($0, values[$0] ?? "") }
        return context
    }

    /// A size in bytes: a non-negative number (SDKs send integers, some as floats).
    mutating func readByteCount() throws -> UInt64 {
        let value = try readDouble()
        guard value >= 0, value < 1.8e19 else {
            throw FormatError(.invalidField, "expected a non-negative number of bytes")
        }
        return UInt64(value)
    }

    /// `sdk`: `name`, `version`, `integrations` (names) and `packages` (`{name, version}`); nil without a name.
    /// Integrations that are not strings and packages without a name are skipped, not refused: they only describe.
    mutating func readSentrySDK() throws -> SDKInfo? {
        var name: String?
        var version: String?
        var integrations: [String] = []
        var packages: [SDKInfo.Package] = []
        try readObject { r, key in
            if key.matches("name") {
                name = try r.optional("name") { try $0.readString() }
            } else if key.matches("version") {
                version = try r.optional("version") { try $0.readLooseString() }
            } else if key.matches("integrations"), try r.peek() == .array {
                try r.readArray { r, _ in
                    if try r.peek() == .string { integrations.append(try r.readString()) } else { try r.skipValue() }
                }
            } else if key.matches("packages"), try r.peek() == .array {
                try r.readArray { r, _ in
                    guard try r.peek() == .object else { return try r.skipValue() }
                    var package: (name: String?, version: String?) = (nil, nil)
                    try r.readObject { r, key in
                        if key.matches("name"), try r.peek() == .string {
                            package.name = try r.readString()
                        } else if key.matches("version"), [.string, .number, .bool].contains(try r.peek()) {
                            package.version = try r.readLooseString()
                        } else {
                            try r.skipValue()
                        }
                    }
                    if let packageName = package.name {
                        packages.append(SDKInfo.Package(name: packageName, version: package.version))
                    }
                }
            } else {
                try r.skipValue()
            }
        }
        guard let name else { return nil }
        return SDKInfo(name: name, version: version, integrations: integrations, packages: packages)
    }

    /// One `debug_meta.images[]` entry as a loaded module; nil for images that are not mapped code (no
    /// `image_addr`: source maps, ProGuard mappings, JVM images).
    ///
    /// For ELF images (and images without a `type`) `code_id` is the GNU build-id Faultline finds debug
    /// files by. For Mach-O images (`macho`, and the legacy `apple` type with `uuid` and `name`) the build-id is the
    /// image's `LC_UUID`, which Sentry sends as the `debug_id` (any case, with or without hyphens, maybe an age
    /// suffix): its 32 hex digits, lower-cased, in order (not byte-swapped, unlike an ELF's debug id).
    /// `image_vmaddr` is not read: the symbolicator takes the `__TEXT` address from the debug file itself (SDKs
    /// send 0). Other images keep no build-id: a PE `code_id` is a timestamp and size, and an ELF `debug_id`
    /// alone holds only the first 16 bytes of a build-id, which finds no file.
    mutating func readSentryImage() throws -> LoadedModule? {
        var type: String?
        var codeFile: String?
        var debugFile: String?
        var legacyName: String?
        var codeID: String?
        var debugID: String?
        var legacyUUID: String?
        var arch: String?
        var cpuType: Int?
        var cpuSubtype: Int?
        var base: UInt64?
        var size: UInt64?
        try readObject { r, key in
            if key.matches("type") {
                type = try r.optional("type") { try $0.readString() }
            } else if key.matches("code_file") {
                codeFile = try r.optional("code_file") { try $0.readString() }
            } else if key.matches("debug_file") {
                debugFile = try r.optional("debug_file") { try $0.readString() }
            } else if key.matches("name") {
                legacyName = try r.optional("name") { try $0.readString() }
            } else if key.matches("code_id") {
                codeID = try r.optional("code_id") { try $0.readString() }
            } else if key.matches("debug_id") {
                debugID = try r.optional("debug_id") { try $0.readString() }
            } else if key.matches("uuid") {
                legacyUUID = try r.optional("uuid") { try $0.readString() }
            } else if key.matches("arch") {
                arch = try r.optional("arch") { try $0.readString() }
            } else if key.matches("cpu_type") {
                cpuType = try r.optional("cpu_type") { try $0.readInt() }
            } else if key.matches("cpu_subtype") {
                cpuSubtype = try r.optional("cpu_subtype") { try $0.readInt() }
            } else if key.matches("image_addr") {
                base = try r.optional("image_addr") { try $0.readAddress() }
            } else if key.matches("image_size") {
                size = try r.optional("image_size") { try $0.readUInt64() }
            } else {
                try r.skipValue()
            }
        }
        guard let base else { return nil }
        var buildID: BuildID?
        var format: ImageFormat?
        switch type {
        case nil, "elf":
            if type != nil { format = .elf }
            if let codeID, !codeID.isEmpty {
                guard let parsed = BuildID(codeID) else {
                    throw FormatError(
                        .invalidField, "must be a GNU build-id (an even number of hex digits, 2–128)", field: "code_id")
                }
                buildID = parsed
            }
        case "macho", "apple":
            format = .macho
            let field = type == "apple" ? "uuid" : "debug_id"
            if let raw = (type == "apple" ? legacyUUID ?? debugID : debugID ?? legacyUUID), !raw.isEmpty {
                guard let parsed = AppleUUID.buildID(raw) else {
                    throw FormatError(
                        .invalidField, "must be a Mach-O UUID (32 hex digits, hyphens allowed)", field: field)
                }
                // An all-zero UUID is an image without one (it finds no dSYM).
                buildID = parsed.rawValue.utf8.allSatisfy { $0 == UInt8(ascii: "0") } ? nil : parsed
            }
            if arch == nil, let cpuType { arch = AppleUUID.architecture(cpuType: cpuType, cpuSubtype: cpuSubtype) }
        case "pe":
            format = .pe
        default:
            break
        }
        let path = codeFile ?? legacyName ?? debugFile
        let name = path.map(Self.baseName) ?? "unknown"
        return LoadedModule(
            name: name, path: path, buildID: buildID, baseAddress: base, size: size.flatMap { $0 > 0 ? $0 : nil },
            format: format, arch: arch.flatMap { $0.isEmpty ? nil : String($0.prefix(32)) })
    }

    /// The last component of a `/` or `\` separated path.
    static func baseName(_ path: String) -> String {
        guard let slash = path.lastIndex(where: { $0 == "/" || $0 == "\\" }) else { return path }
        let name = path[path.index(after: slash)...]
        return name.isEmpty ? path : String(name)
    }
}

/// Sentry's `logentry` formatting: positional `%s`-style placeholders filled from `params`.
enum SentryMessageFormat {
    /// `message` with each `%s`, `%d`, `%i`, `%f` or `%r` replaced by the next param and `%%` by `%`;
    /// placeholders without a param stay as they are.
    static func format(_ message: String, params: [String]) -> String {
        var out = ""
        var next = 0
        var chars = message.makeIterator()
        while let c = chars.next() {
            guard c == "%" else {
                out.append(c)
                continue
            }
            guard let spec = chars.next() else {
                out.append(c)
                break
            }
            switch spec {
            case "%":
                out.append("%")
            case let spec where "sdifr".contains(spec) && next < params.count:
                out += params[next]
                next += 1
            default:
                out.append(c)
                out.append(spec)
            }
        }
        return out
    }
}
