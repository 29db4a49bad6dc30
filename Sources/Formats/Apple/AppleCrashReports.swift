import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Apple's own crash reports, as `POST /api/v1/crashes/apple` and `faultline crashes import` take them: an `.ips`
/// file (`IPSCrashParser`) or a classic `.crash` text report (`CrashTextParser`), told apart by their first byte.
///
/// The report names its app (bundle id, version, build), device (model, OS), install (`CrashReporter Key`) and
/// event (`Incident Identifier`), so the client passes nothing beside it but what a crash reporter cannot know
/// (user, session, environment). What is stored is the envelope the Swift runtime's files use
/// (`SwiftCrashReports.envelope`), the scrubbed file as a JSON string under `apple_crash`:
/// `{"faultline_meta": {...}, "apple_crash": "<the file>"}` in the `swift-crash` payload format; re-reading it parses
/// the file again. The metadata holds the event and install ids read from the file before it was scrubbed (a
/// project's own sensitive names may filter `CrashReporter Key`'s value), so what is stored reads back as what was
/// answered.
public enum AppleCrashReports {
    /// Which spelling a file is.
    public enum Spelling: String, Sendable {
        case ips
        case crash
    }

    /// The spelling of `bytes`: `.ips` when the first character (after a byte-order mark and white space) is `{`.
    public static func spelling(of bytes: [UInt8]) -> Spelling {
        var i = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0a || bytes[i] == 0x0d || bytes[i] == 0x09 { i += 1 }
        return i < bytes.count && bytes[i] == UInt8(ascii: "{") ? .ips : .crash
    }

    /// Reads a file into what it says.
    static func read(_ bytes: [UInt8]) throws -> AppleCrash {
        guard !bytes.isEmpty else { throw FormatError(.invalidField, "the file is empty", field: "body") }
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        switch spelling(of: body) {
        case .ips:
            let start = body.firstIndex { $0 == UInt8(ascii: "{") } ?? 0
            return try IPSCrashParser.parse(start == 0 ? body : Array(body[start...]))
        case .crash:
            return try CrashTextParser.parse(body)
        }
    }

    /// The report a stored file makes, with the client's metadata (see `parse(envelope:)`) laid over what the file says.
    /// The file's size was checked where it arrived (`prepare`); what bounds a stored one is the envelope's
    /// (`SwiftCrashReports.maxEnvelopeBytes`).
    /// - Throws: `FormatError` naming the field (`threads[1].frames[0].imageIndex`) or the line (`line 42`).
    public static func report(file: [UInt8], metadata: SwiftCrashReports.Metadata, limits: IngestLimits) throws
        -> Report
    {
        guard let eventID = EventID(metadata.eventID) else {
            throw FormatError(.invalidField, "must be a UUID or 32 hex digits", field: "event_id")
        }
        var report = try read(file).report(eventID: eventID)
        if let id = metadata.appID { report.app.id = id }
        if let version = metadata.appVersion { report.app.version = version }
        if let build = metadata.appBuild { report.app.build = build.isEmpty ? nil : build }
        if let user = metadata.userID { report.userID = user }
        if let install = metadata.installID { report.installID = install }
        if let raw = metadata.sessionID {
            guard let session = SessionID(raw) else {
                throw FormatError(.invalidField, "must be 1–128 printable ASCII characters", field: "session_id")
            }
            report.sessionID = session
        }
        if let environment = metadata.environment { report.environment = environment }
        if let message = metadata.message { report.crashMessage = message }
        limits.apply(to: &report)
        return report
    }

    /// One file made ready to ingest: parsed (refused whole when any part is wrong), its ids taken, scrubbed and
    /// wrapped into what is stored. The report answered is made from the stored form, so it is exactly what a
    /// re-read gives.
    ///
    /// The documented limit applies to the file as uploaded (after inflating): at most `limits.maxBatchBytes`. The
    /// stored form is larger (the file JSON-escaped beside the metadata) and is bounded by
    /// `SwiftCrashReports.maxEnvelopeBytes`, which a real report under the limit never reaches.
    ///
    /// - Parameters:
    ///   - metadata: what the client passed; an empty `eventID` means "the file's incident id, else the first 16
    ///     bytes of the file's SHA-256" (so the same file sent twice is one event).
    ///   - hasher: SHA-256 (the event id of a file without an incident id).
    /// - Throws: `FormatError` (`.tooLarge` past either bound).
    public static func prepare(
        file: [UInt8], metadata: SwiftCrashReports.Metadata, scrubber: Scrubber, limits: IngestLimits,
        hasher: any ContentHashing
    ) throws -> (report: PreparedReport, payload: StoredPayload) {
        guard file.count <= limits.maxBatchBytes else {
            throw FormatError(.tooLarge, "a crash report may be at most \(limits.maxBatchBytes) bytes")
        }
        let crash = try read(file)
        var meta = metadata
        if meta.eventID.isEmpty {
            let digest = hasher.sha256()
            digest.update(file)
            meta.eventID =
                crash.incident.flatMap(EventID.init)?.rawValue ?? String(digest.finalize().rawValue.prefix(32))
        }
        if meta.installID == nil { meta.installID = crash.crashReporterKey }
        meta = meta.scrubbed(by: scrubber)
        let clean = try scrubbed(file, by: scrubber)
        let envelope = try envelope(clean, metadata: meta)
        let bound = SwiftCrashReports.maxEnvelopeBytes(limits)
        guard envelope.count <= bound else {
            throw FormatError(
                .tooLarge,
                "the report escaped for storage is \(envelope.count) bytes, more than \(bound) (control characters "
                    + "take 6 bytes each)")
        }
        // The accepted report is the one a re-read of the stored form gives, by construction: the JSON string holding
        // the file does not keep every byte of it (`\u0000` reads back as U+FFFD), so the file itself is not parsed
        // for the report.
        let report = try SwiftCrashReports.parse(envelope: envelope, limits: limits)
        let payload = StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(envelope), encoding: .deflate, inflatedSize: envelope.count,
            format: .swiftCrash)
        return (PreparedReport(report: report, range: 0..<envelope.count), payload)
    }

    /// The stored form: `{"faultline_meta": <metadata>, "apple_crash": "<file>"}`.
    public static func envelope(_ file: [UInt8], metadata: SwiftCrashReports.Metadata) throws -> [UInt8] {
        guard let text = String(validating: file, as: UTF8.self) else {
            throw FormatError(.malformedJSON, "the report is not UTF-8 text")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var out =
            Array("{\"faultline_meta\":".utf8) + Array(try encoder.encode(metadata)) + Array(",\"apple_crash\":".utf8)
        JSONScrubbing.encodeString(text.utf8, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The file with the project's privacy rules applied where people's data can be, never where the report's
    /// structure is: an `.ips`'s two JSON documents value by value (`JSONScrubbing`); a text report line by line, a
    /// frame after its address and an image after its UUID (so home folders in paths and secrets in messages go,
    /// while addresses, offsets and UUIDs stay exactly as written).
    public static func scrubbed(_ file: [UInt8], by scrubber: Scrubber) throws -> [UInt8] {
        guard scrubber.isActive else { return file }
        if spelling(of: file) == .ips, let newline = file.firstIndex(of: 0x0a) {
            let header =
                try JSONScrubbing.scrub(file, range: 0..<newline, scrubber: scrubber) ?? Array(file[..<newline])
            let bodyStart = newline + 1
            let rest = Array(file[bodyStart...])
            let body: [UInt8]
            if spelling(of: rest) == .ips {
                body = try JSONScrubbing.scrub(rest, scrubber: scrubber) ?? rest
            } else {
                body = scrubbedText(rest, by: scrubber)
            }
            return header + [0x0a] + body
        }
        return scrubbedText(file, by: scrubber)
    }

    static func scrubbedText(_ bytes: [UInt8], by scrubber: Scrubber) -> [UInt8] {
        guard let text = String(validating: bytes, as: UTF8.self) else { return bytes }
        var changed = false
        var lines: [Substring] = []
        var out: [String] = []
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        out.reserveCapacity(lines.count)
        for line in lines {
            let kept: Substring
            let free: Substring
            if let frame = CrashTextParser.frameLine(line) {
                kept = line[..<frame.tail.startIndex]
                free =
                    CrashTextParser.isBasePlusOffset(frame.tail.trimmingCharacters(in: .whitespaces)[...])
                    ? "" : frame.tail
            } else if line.drop(while: { $0 == " " }).hasPrefix("0x"), let close = line.firstIndex(of: ">") {
                kept = line[...close]
                free = line[line.index(after: close)...]
            } else {
                kept = ""
                free = line
            }
            if !free.isEmpty, let clean = scrubber.scrub(String(free)) {
                out.append(String(kept) + clean)
                changed = true
            } else {
                out.append(String(line))
            }
        }
        return changed ? Array(out.joined(separator: "\n").utf8) : bytes
    }
}
