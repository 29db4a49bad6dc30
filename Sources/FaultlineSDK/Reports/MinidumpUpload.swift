/// A minidump as Sentry's minidump endpoint takes it: `POST {base}/api/{project}/minidump/?sentry_key=KEY`,
/// `multipart/form-data` with the dump in `upload_file_minidump` and the event's attributes as JSON in `sentry`
/// (docs/native.md, "faultline-run"). `faultline-run` queues one per crash it captured (kind `minidump`); the
/// ``Uploader`` sends it gzip-compressed like every item, with the reports' rate limits.
///
/// The boundary is derived from the event id, so the queue keeps only the body. The id is made after the dump
/// was read, so the process's memory cannot hold the boundary unless by chance; ``body(eventID:dump:sentry:)``
/// answers nil then and the caller takes another id.
package enum MinidumpUpload {
    /// `faultline-minidump-<event id>`.
    package static func boundary(eventID: String) -> String { "faultline-minidump-" + eventID }

    package static func contentType(eventID: String) -> String {
        "multipart/form-data; boundary=" + boundary(eventID: eventID)
    }

    /// `{base}/api/{project}/minidump/?sentry_key=KEY`. A DSN without a project sends `0`: the server finds the
    /// project by the key.
    package static func url(_ dsn: DSN) -> String {
        let project = dsn.projectID.map(percentEncoded) ?? "0"
        return dsn.baseURL + "/api/" + project + "/minidump/?sentry_key=" + percentEncoded(dsn.key)
    }

    /// The multipart body: `sentry` first, then `upload_file_minidump` (`filename`, `application/octet-stream`).
    /// Nil when the boundary occurs in the dump or the JSON.
    package static func body(eventID: String, dump: [UInt8], sentry: [UInt8], filename: String = "minidump.dmp")
        -> [UInt8]?
    {
        let marker = Array(("--" + boundary(eventID: eventID)).utf8)
        guard !contains(dump, marker), !contains(sentry, marker) else { return nil }
        let safeName = String(
            filename.unicodeScalars.filter { $0.isASCII && $0 != "\"" && $0 != "\\" && $0.value >= 0x20 }.prefix(128)
                .map(Character.init))
        var out: [UInt8] = []
        out.reserveCapacity(dump.count + sentry.count + 512)
        out +=
            marker
            + Array(
                "\r\nContent-Disposition: form-data; name=\"sentry\"\r\nContent-Type: application/json\r\n\r\n".utf8)
        out += sentry
        out += Array("\r\n".utf8) + marker
        out += Array(
            "\r\nContent-Disposition: form-data; name=\"upload_file_minidump\"; filename=\"\(safeName.isEmpty ? "minidump.dmp" : safeName)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                .utf8)
        out += dump
        out += Array("\r\n".utf8) + marker + Array("--\r\n".utf8)
        return out
    }

    /// The `sentry` field: the event's attributes, as a Sentry SDK would set them for this crash.
    ///
    /// `event_id`, `timestamp`, `platform` `native`, `level` `fatal`, `release` (the app version) and `dist`
    /// (the build), `environment`, `user.id` (the SDK's user id, else the install id), `contexts.app`
    /// (`app_identifier`, `app_version`, `app_build`), `contexts.os` and `contexts.device`, the run in
    /// `contexts.faultline` (`session_id`, `install_id`, `pid`, `errors`, `signal`), the custom keys in
    /// `extra`, the standard error's last lines in `extra.crash_message`, and the breadcrumbs (the SDK's, then
    /// those lines with category `stderr`). Strings are cut as the native report cuts them.
    package static func sentryEvent(
        eventID: String, timestamp: Double, signal: Int32, context: RunContext?, device: DeviceInfo,
        stderrTail: [String], crashMessage: String?
    ) -> [UInt8] {
        var w = JSONWriter()
        let time = NativeReport.validTimestamp(timestamp) ?? 0
        w.beginObject()
        w.field("event_id", eventID)
        w.field("timestamp", time)
        w.field("platform", "native")
        w.field("level", "fatal")
        if let context {
            w.field("release", context.appVersion.map { NativeReport.cut($0, 200) })
            w.field("dist", context.appBuild.map { NativeReport.cut($0, 64) })
            w.field("environment", context.environment.map { NativeReport.cut($0, 64) })
            let user = context.userID ?? (context.installID.isEmpty ? nil : context.installID)
            if let user {
                w.key("user"); w.beginObject()
                w.field("id", NativeReport.cut(user, Limits.customKeyBytes))
                w.endObject()
            }
        }
        w.key("contexts"); w.beginObject()
        if let context {
            w.key("app"); w.beginObject()
            w.field("app_identifier", context.appID.map { NativeReport.cut($0, 1024) })
            w.field("app_version", context.appVersion.map { NativeReport.cut($0, 1024) })
            w.field("app_build", context.appBuild.map { NativeReport.cut($0, 1024) })
            w.endObject()
        }
        w.key("os"); w.beginObject()
        w.field("name", device.os)
        w.field("kernel_version", device.osVersion)
        w.endObject()
        w.key("device"); w.beginObject()
        w.field("arch", device.arch)
        w.field("model", device.model)
        if let memory = device.memory { w.key("memory_size"); w.uint(memory) }
        w.endObject()
        w.key("faultline"); w.beginObject()
        if let context {
            if NativeReport.isSessionID(context.sessionID) { w.field("session_id", context.sessionID) }
            if !context.installID.isEmpty {
                w.field("install_id", NativeReport.cut(context.installID, Limits.customKeyBytes))
            }
            w.key("pid"); w.int(Int64(context.pid))
            w.key("errors"); w.int(Int64(max(0, context.errors)))
        }
        w.key("signal"); w.int(Int64(signal))
        w.endObject()
        w.endObject()
        w.key("extra"); w.beginObject()
        var seen = Set<String>()
        for key in (context?.customKeys ?? []).prefix(Limits.customKeys) {
            let name = NativeReport.cut(key.key, Limits.customKeyBytes)
            guard name != "crash_message", seen.insert(name).inserted else { continue }
            w.key(name)
            switch NativeReport.cut(key.value) {
            case .string(let s): w.string(s)
            case .int(let i): w.int(i)
            case .double(let d): w.double(d)
            case .bool(let b): w.bool(b)
            }
        }
        w.field("crash_message", crashMessage.map { NativeReport.cut($0, 4096) })
        w.endObject()
        let crumbs =
            (context?.breadcrumbs ?? [])
            + stderrTail.map { Breadcrumb(timestamp: time, message: $0, category: "stderr") }
        w.key("breadcrumbs"); w.beginObject()
        w.key("values"); w.beginArray()
        var budget = Limits.breadcrumbBytes
        let kept = crumbs.reversed().prefix { crumb in
            let size = 32 &+ crumb.message.utf8.count &+ (crumb.category?.utf8.count ?? 0)
            guard size <= budget else { return false }
            budget -= size
            return true
        }
        for crumb in kept.reversed() {
            w.beginObject()
            w.field("timestamp", NativeReport.validTimestamp(crumb.timestamp) ?? time)
            w.field("message", NativeReport.cut(crumb.message, 8192))
            w.field("category", crumb.category.map { NativeReport.cut($0, 1024) })
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.endObject()
        return w.bytes
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return false }
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    /// RFC 3986 unreserved characters kept, every other byte `%XX`.
    static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in text.utf8 {
            switch b {
            case 0x30...0x39, 0x41...0x5a, 0x61...0x7a, 0x2d, 0x2e, 0x5f, 0x7e: out.append(b)
            default: out += [0x25, hex[Int(b >> 4)], hex[Int(b & 0xf)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
