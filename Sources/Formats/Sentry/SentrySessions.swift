import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sentry release-health payloads (client-protocols.md §1.6) → session updates.
///
/// - `session`: one update of one session. `sid` and `started` are required, `attrs.release` too
///   (sentry-sdk drops sessions without a release, and a session without one counts for no release).
///   Sentry has no `errored` end state — an errored session is `exited` with `errors > 0` — but Relay
///   accepts `errored` as a status, so it is read as a still-running session (`ok`) with at least one error,
///   which a later `exited`/`crashed` update can still end. `init` is read (and checked) but not kept.
/// - `sessions`: request-mode aggregates, `{attrs, aggregates: [{started, did?, exited, errored, crashed,
///   abnormal}]}`: one counted update per status an aggregate counts (``SessionUpdate/count``), so that
///   crash-free rates need no second code path and a count costs one row, not one row per session. Their ids
///   are derived from the caller's `seed` and the aggregate (see `aggregateSessionID`).
///
/// Timestamps are ISO 8601 strings or unix seconds. The release is the version `ReleaseName` reads
/// (`com.x@2.4.0+240` → `2.4.0`, as events of that release are filed). `did` and the release are cut to the limits.
public enum SentrySessions {
    /// Sessions one `sessions` item may count in all; a larger count is refused rather than cut, so that the
    /// numbers are right or absent, never silently wrong.
    public static let maxSynthesizedPerItem = 10_000

    /// Parses a `session` item's payload at `range` of `bytes`.
    /// - Throws: `FormatError` naming the field (`attrs.release`, `sid`, `status`…).
    public static func session(_ bytes: [UInt8], range: Range<Int>, limits: IngestLimits) throws -> SessionUpdate {
        try JSONReader.with(bytes, checked: range) { r in
            var sid: String?
            var did: String?
            var started: Date?
            var status = "ok"
            var errors = 0
            var duration: Double?
            var seq: Int64?
            var attrs = Attrs()
            guard try r.peek() == .object else { throw FormatError(.malformedJSON, "a session must be a JSON object") }
            try r.readObject { r, key in
                if key.matches("sid") {
                    sid = try r.optional("sid") { try $0.readString() }
                } else if key.matches("did") {
                    did = try r.optional("did") { try $0.readLooseString() }
                } else if key.matches("init") {
                    _ = try r.optional("init") { try $0.readBool() }
                } else if key.matches("started") {
                    started = try r.optional("started") { try $0.readTimestamp() }
                } else if key.matches("timestamp") {
                    _ = try r.optional("timestamp") { try $0.readTimestamp() }
                } else if key.matches("status") {
                    status = try r.optional("status") { try $0.readString() } ?? status
                } else if key.matches("errors") {
                    errors = try r.optional("errors") { try $0.readInt() } ?? 0
                    guard errors >= 0 else { throw FormatError(.invalidField, "must not be negative", field: "errors") }
                } else if key.matches("duration") {
                    duration = try r.optional("duration") { try $0.readDouble() }
                    guard (duration ?? 0) >= 0 else {
                        throw FormatError(.invalidField, "must not be negative", field: "duration")
                    }
                } else if key.matches("seq") {
                    seq = try r.optional("seq") { Int64(try $0.readInt()) }
                } else if key.matches("attrs") {
                    attrs = try r.optional("attrs") { try $0.readSessionAttrs() } ?? attrs
                } else {
                    try r.skipValue()
                }
            }
            try r.expectEnd()

            guard let rawSID = sid else { throw FormatError(.invalidField, "is required", field: "sid") }
            guard let sessionID = SessionID(rawSID) else {
                throw FormatError(.invalidField, "must be 1–128 printable ASCII characters", field: "sid")
            }
            guard let started else { throw FormatError(.invalidField, "is required", field: "started") }
            let release = try attrs.requiredRelease(limits: limits)
            let state: SessionStatus
            if status == "errored" {
                state = .ok
                errors = max(errors, 1)
            } else if let known = SessionStatus(rawValue: status) {
                state = known
            } else {
                throw FormatError(
                    .invalidField, "must be one of ok, exited, crashed, abnormal, errored", field: "status")
            }
            return SessionUpdate(
                sessionID: sessionID,
                distinctID: nonEmpty(did).map { IngestLimits.truncate($0, toBytes: limits.maxUserIDBytes) },
                release: release, environment: attrs.environment(limits: limits), started: started, status: state,
                errors: errors, duration: duration, seq: seq)
        }
    }

    /// Parses a `sessions` (aggregates) item's payload into one counted update per aggregate and status.
    ///
    /// - Parameters:
    ///   - seed: makes the synthesised ids unique to this item. It must differ between envelopes whose
    ///     aggregates could be equal (two flushes counting the same minute), or the second would be taken
    ///     for a retry of the first and not counted; the same envelope resent may give the same seed.
    ///   - maxSessions: the most sessions this item may count in all.
    /// - Throws: `FormatError` naming the field; `.tooLarge` (field `aggregates`) past `maxSessions`.
    public static func aggregates(
        _ bytes: [UInt8], range: Range<Int>, seed: String, limits: IngestLimits,
        maxSessions: Int = SentrySessions.maxSynthesizedPerItem
    ) throws -> [SessionUpdate] {
        struct Aggregate {
            var started: Date?
            var did: String?
            var counts: [(SessionStatus, errors: Int, count: Int)] = []
        }
        var attrs = Attrs()
        var aggregates: [Aggregate] = []
        var total = 0
        try JSONReader.with(bytes, checked: range) { r in
            guard try r.peek() == .object else {
                throw FormatError(.malformedJSON, "an aggregate must be a JSON object")
            }
            try r.readObject { r, key in
                if key.matches("attrs") {
                    attrs = try r.optional("attrs") { try $0.readSessionAttrs() } ?? attrs
                } else if key.matches("aggregates") {
                    aggregates = try r.list("aggregates") { r in
                        var a = Aggregate()
                        try r.readObject { r, key in
                            let outcome: (SessionStatus, Int)?
                            if key.matches("started") {
                                a.started = try r.optional("started") { try $0.readTimestamp() }
                                return
                            } else if key.matches("did") {
                                a.did = try r.optional("did") { try $0.readLooseString() }
                                return
                            } else if key.matches("exited") {
                                outcome = (.exited, 0)
                            } else if key.matches("errored") {
                                outcome = (.exited, 1)
                            } else if key.matches("crashed") {
                                outcome = (.crashed, 0)
                            } else if key.matches("abnormal") {
                                outcome = (.abnormal, 0)
                            } else {
                                outcome = nil
                            }
                            guard let (status, errors) = outcome else { return try r.skipValue() }
                            let name = key.string
                            let count = try r.optional(name) { try $0.readInt() } ?? 0
                            guard count >= 0 else {
                                throw FormatError(.invalidField, "must not be negative", field: name)
                            }
                            // Compared before adding: a count near Int.max must not overflow the total.
                            guard count <= maxSessions - total else {
                                throw FormatError(
                                    .tooLarge, "an aggregate item may count at most \(maxSessions) sessions")
                            }
                            total += count
                            a.counts.append((status, errors, count))
                        }
                        guard a.started != nil else {
                            throw FormatError(.invalidField, "is required", field: "started")
                        }
                        return a
                    }
                } else {
                    try r.skipValue()
                }
            }
            try r.expectEnd()
        }
        let release = try attrs.requiredRelease(limits: limits)
        let environment = attrs.environment(limits: limits)
        var updates: [SessionUpdate] = []
        for (i, aggregate) in aggregates.enumerated() {
            guard let started = aggregate.started else { continue }
            let did = nonEmpty(aggregate.did).map { IngestLimits.truncate($0, toBytes: limits.maxUserIDBytes) }
            for (n, (status, errors, count)) in aggregate.counts.enumerated() where count > 0 {
                let id = aggregateSessionID(
                    seed: seed, release: release, environment: environment, started: started, status: status,
                    errors: errors, aggregate: i, index: n)
                updates.append(
                    SessionUpdate(
                        sessionID: id, distinctID: did, release: release, environment: environment, started: started,
                        status: status, errors: errors, count: count))
            }
        }
        return updates
    }

    /// The id of the `index`-th count (status) of aggregate `aggregate`: a UUID-shaped
    /// (version 8, "custom") 128-bit FNV-1a hash of all of it, so the same inputs always give the same id.
    static func aggregateSessionID(
        seed: String, release: String, environment: String?, started: Date, status: SessionStatus, errors: Int,
        aggregate: Int, index: Int
    ) -> SessionID {
        // Unit separators keep the fields apart: ("a", "bc") and ("ab", "c") hash differently.
        let canonical = [
            "sentry-aggregate-v1", seed, release, environment ?? "", String(started.timeIntervalSince1970),
            status.rawValue, String(errors), String(aggregate), String(index),
        ].joined(separator: "\u{1f}")
        var bytes =
            withUnsafeBytes(of: FNV1a.hash64(canonical).bigEndian, Array.init)
            + withUnsafeBytes(of: FNV1a.hash64("\u{1f}" + canonical).bigEndian, Array.init)
        bytes[6] = bytes[6] & 0x0f | 0x80  // version 8
        bytes[8] = bytes[8] & 0x3f | 0x80  // RFC 9562 variant
        let hex = Array(Hex.encode(bytes).utf8)
        var text: [UInt8] = []
        for (i, digit) in hex.enumerated() {
            if i == 8 || i == 12 || i == 16 || i == 20 { text.append(UInt8(ascii: "-")) }
            text.append(digit)
        }
        return SessionID(String(decoding: text, as: UTF8.self))!  // 36 printable ASCII characters
    }

    /// `attrs` of both item types.
    struct Attrs {
        var release: String?
        var environment: String?

        func requiredRelease(limits: IngestLimits) throws -> String {
            // One release, as events name it (`ReleaseName`): `com.x@2.4.0+240` is release `2.4.0`.
            guard let release = ReleaseName.parse(release)?.version else {
                throw FormatError(.invalidField, "is required", field: "attrs.release")
            }
            return IngestLimits.truncate(release, toBytes: limits.maxKeyValueBytes)
        }

        func environment(limits: IngestLimits) -> String? {
            nonEmpty(environment).map { IngestLimits.truncate($0, toBytes: limits.maxKeyValueBytes) }
        }
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}

extension JSONReader {
    mutating func readSessionAttrs() throws -> SentrySessions.Attrs {
        var attrs = SentrySessions.Attrs()
        try readObject { r, key in
            if key.matches("release") {
                attrs.release = try r.optional("release") { try $0.readLooseString() }
            } else if key.matches("environment") {
                attrs.environment = try r.optional("environment") { try $0.readString() }
            } else {
                try r.skipValue()
            }
        }
        return attrs
    }
}
