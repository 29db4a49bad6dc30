/// Size limits applied to every report on the way in (DESIGN.md, after Crashlytics).
///
/// Trimming, not rejecting, is the rule for everything but the whole report's size: a crash with one
/// over-long custom value is still a crash the team wants to see. What was trimmed is counted in
/// `Report.trimmed` and stored with the report.
public struct IngestLimits: Sendable, Equatable {
    /// Custom keys kept per report; keys past this (in sorted key order) are dropped and counted. Tags, the values of
    /// one context block, and an SDK's integrations and packages are held to the same number.
    public var maxCustomKeys = 64
    /// Context blocks kept per report (`Report.contexts`); blocks past this (in name order) are dropped and counted.
    public var maxContexts = 32
    /// Bytes (UTF-8) a custom key or value may have; longer ones are truncated at a character boundary.
    public var maxKeyValueBytes = 1024
    /// Bytes of breadcrumbs kept per report; the oldest crumbs are dropped first.
    public var maxBreadcrumbBytes = 64 * 1024
    /// Bytes a user id or install id may have.
    public var maxUserIDBytes = 1024
    /// Bytes of one report's JSON after inflating; a larger report is rejected (413).
    public var maxReportBytes = 1024 * 1024
    /// Bytes of one request body after inflating (a batch); larger is rejected (413).
    public var maxBatchBytes = 10 * 1024 * 1024
    /// Reports per batch.
    public var maxReportsPerBatch = 1000
    /// Threads kept per report, frames kept per thread and modules kept per report.
    public var maxThreads = 256
    public var maxFramesPerThread = 512
    public var maxModules = 2048
    /// Bytes kept of free-text fields (messages, names, paths).
    public var maxTextBytes = 8 * 1024
    /// Bytes kept of what a crashing program printed (`Report.crashMessage`): enough for a Swift
    /// `Fatal error: …` line or a C++ `terminate called after throwing …` / `what():` pair, not a whole log.
    public var maxCrashMessageBytes = 4 * 1024

    public init() {}

    /// Trims `report` to the limits and records what was removed in `report.trimmed`.
    public func apply(to report: inout Report) {
        var counts = report.trimmed

        report.customKeys.sort { $0.key < $1.key }
        if report.customKeys.count > maxCustomKeys {
            counts.customKeysDropped += report.customKeys.count - maxCustomKeys
            report.customKeys.removeSubrange(maxCustomKeys...)
        }
        for i in report.customKeys.indices {
            let (key, value) = report.customKeys[i]
            let shortKey = Self.truncate(key, toBytes: maxKeyValueBytes)
            var newValue = value
            if case .string(let s) = value {
                let short = Self.truncate(s, toBytes: maxKeyValueBytes)
                if short.utf8.count != s.utf8.count { counts.valuesTruncated += 1 }
                newValue = .string(short)
            }
            if shortKey.utf8.count != key.utf8.count { counts.valuesTruncated += 1 }
            report.customKeys[i] = (shortKey, newValue)
        }

        applyToTagsAndContexts(&report, counts: &counts)

        for keyPath in [\Report.userID, \Report.installID] {
            if let id = report[keyPath: keyPath] {
                let short = Self.truncate(id, toBytes: maxUserIDBytes)
                if short.utf8.count != id.utf8.count { counts.valuesTruncated += 1 }
                report[keyPath: keyPath] = short
            }
        }
        // Every other free-text field: bounded so that no single string dominates storage or pages.
        func cap(_ text: inout String?, _ limit: Int) {
            guard let value = text, value.utf8.count > limit else { return }
            text = Self.truncate(value, toBytes: limit)
            counts.valuesTruncated += 1
        }
        let short = maxKeyValueBytes
        if var error = report.error {
            cap(&error.message, maxTextBytes)
            cap(&error.type, short)
            cap(&error.code, short)
            if var mach = error.mach {
                cap(&mach.name, short)
                cap(&mach.signal, short)
                error.mach = mach
            }
            report.error = error
        }
        cap(&report.crashMessage, maxCrashMessageBytes)
        cap(&report.environment, short)
        cap(&report.app.id, short)
        cap(&report.app.version, short)
        cap(&report.app.build, short)
        cap(&report.app.displayVersion, short)
        cap(&report.app.displayBuild, short)
        cap(&report.device.osBuild, short)
        cap(&report.device.model, short)
        cap(&report.device.os, short)
        cap(&report.device.osVersion, short)
        cap(&report.device.arch, short)
        cap(&report.device.locale, short)
        for t in report.threads.indices {
            cap(&report.threads[t].name, short)
            for f in report.threads[t].frames.indices {
                cap(&report.threads[t].frames[f].module, short)
                cap(&report.threads[t].frames[f].function, maxTextBytes)
                cap(&report.threads[t].frames[f].file, short)
            }
        }
        for m in report.modules.indices {
            var name: String? = report.modules[m].name
            cap(&name, short)
            report.modules[m].name = name ?? ""
            cap(&report.modules[m].path, short)
            cap(&report.modules[m].arch, short)
        }
        if let fingerprint = report.fingerprint {
            report.fingerprint = fingerprint.prefix(16).map { Self.truncate($0, toBytes: short) }
        }

        for b in report.breadcrumbs.indices {
            cap(&report.breadcrumbs[b].message, maxTextBytes)
            cap(&report.breadcrumbs[b].category, short)
            cap(&report.breadcrumbs[b].level, short)
        }
        var crumbBytes = 0
        var keepFrom = report.breadcrumbs.count
        // Walk newest to oldest; keep crumbs while they fit.
        for i in report.breadcrumbs.indices.reversed() {
            let size = Self.approximateSize(of: report.breadcrumbs[i])
            if crumbBytes + size > maxBreadcrumbBytes { break }
            crumbBytes += size
            keepFrom = i
        }
        if keepFrom > 0 {
            counts.breadcrumbsDropped += keepFrom
            report.breadcrumbs.removeSubrange(0..<keepFrom)
        }

        if report.threads.count > maxThreads {
            // Never drop the crashed thread: move it to the front before cutting.
            if let crashed = report.threads.firstIndex(where: \.crashed), crashed >= maxThreads {
                report.threads.swapAt(0, crashed)
            }
            counts.threadsDropped += report.threads.count - maxThreads
            report.threads.removeSubrange(maxThreads...)
        }
        for i in report.threads.indices where report.threads[i].frames.count > maxFramesPerThread {
            counts.framesDropped += report.threads[i].frames.count - maxFramesPerThread
            report.threads[i].frames.removeSubrange(maxFramesPerThread...)
        }
        if report.modules.count > maxModules {
            counts.modulesDropped += report.modules.count - maxModules
            report.modules.removeSubrange(maxModules...)
        }
        report.trimmed = counts
    }

    /// Tags, context blocks and the SDK held to the custom keys' limits: at most `maxCustomKeys` tags (in key order),
    /// `maxContexts` blocks (in name order) of at most `maxCustomKeys` values each, every name and value cut to
    /// `maxKeyValueBytes`; what is dropped or cut is counted.
    func applyToTagsAndContexts(_ report: inout Report, counts: inout TrimCounts) {
        func cut(_ text: String) -> String {
            let short = Self.truncate(text, toBytes: maxKeyValueBytes)
            if short.utf8.count != text.utf8.count { counts.valuesTruncated += 1 }
            return short
        }
        func cutPairs(_ pairs: [(key: String, value: String)], dropped: inout Int) -> [(key: String, value: String)] {
            let sorted = pairs.sorted { $0.key < $1.key }
            dropped += max(0, sorted.count - maxCustomKeys)
            return sorted.prefix(maxCustomKeys).map { (cut($0.key), cut($0.value)) }
        }
        report.tags = cutPairs(report.tags, dropped: &counts.tagsDropped)

        report.contexts.sort { $0.name < $1.name }
        if report.contexts.count > maxContexts {
            counts.contextsDropped += report.contexts.count - maxContexts
            report.contexts.removeSubrange(maxContexts...)
        }
        for c in report.contexts.indices {
            report.contexts[c].name = cut(report.contexts[c].name)
            report.contexts[c].type = report.contexts[c].type.map(cut)
            report.contexts[c].values = cutPairs(report.contexts[c].values, dropped: &counts.contextKeysDropped)
        }

        if var sdk = report.sdk {
            sdk.name = cut(sdk.name)
            sdk.version = sdk.version.map(cut)
            counts.contextKeysDropped += max(0, sdk.integrations.count - maxCustomKeys)
            sdk.integrations = sdk.integrations.prefix(maxCustomKeys).map(cut)
            counts.contextKeysDropped += max(0, sdk.packages.count - maxCustomKeys)
            sdk.packages = sdk.packages.prefix(maxCustomKeys).map {
                SDKInfo.Package(name: cut($0.name), version: $0.version.map(cut))
            }
            report.sdk = sdk
        }
    }

    /// The bytes a breadcrumb counts for against the rolling limit: its text plus a fixed overhead
    /// for the timestamp and framing.
    public static func approximateSize(of crumb: Breadcrumb) -> Int {
        var size = 32
        size += crumb.category?.utf8.count ?? 0
        size += crumb.level?.utf8.count ?? 0
        size += crumb.message?.utf8.count ?? 0
        for (k, v) in crumb.data { size += k.utf8.count + v.utf8.count + 6 }
        return size
    }

    /// `text` cut to at most `limit` UTF-8 bytes without splitting a character.
    public static func truncate(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let next = text.index(after: index)
            let width = text.utf8.distance(from: index, to: next)
            if used + width > limit { break }
            used += width
            end = next
        }
        return String(text[..<end])
    }
}
