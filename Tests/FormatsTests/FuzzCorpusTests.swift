import FaultlineCore
import Formats
import Foundation
import NIOCore
import Testing

/// The fuzz targets' seeds as tests (docs/fuzzing.md): every committed seed parses, so that the fuzzer starts
/// from valid inputs and a format change that breaks them shows here (re-run tools/fuzzing/make-seeds.py).
/// `run` is what the harness does with an input; a regression test for a crash input can call it.
@Suite struct FuzzCorpusTests {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let seeds = here.appendingPathComponent("../../tools/fuzzing/seeds").standardized
    static let formatTargets = [
        "native", "body", "sentry-envelope", "sentry-event", "swift-crash", "apple-crash", "multipart", "elf",
        "minidump", "minidump-form",
    ]

    static func files(_ folder: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.map {
            folder.appendingPathComponent($0)
        }
    }

    /// What the fuzz harness (tools/fuzzing/Sources/FaultlineFuzz.swift) does with an input, throwing the
    /// first error instead of ignoring it; returns how many things the input held (reports, parts, bytes…).
    @discardableResult
    static func run(_ target: String, _ bytes: [UInt8], name: String = "") throws -> Int {
        let limits = IngestLimits()
        let receivedAt = Date(timeIntervalSince1970: 1_795_000_000)
        switch target {
        case "native":
            if name.hasPrefix("sessions") { return try NativeSessions.decode(bytes, limits: limits).count }
            let decoded = try NativeReports.decode(bytes, limits: limits)
            for item in decoded.items { _ = try item.get() }
            return decoded.items.count
        case "body":
            guard let selector = bytes.first else { throw FormatError(.malformedJSON, "empty") }
            let rest = Array(bytes.dropFirst())
            let limit = 1 << 20
            switch selector % 5 {
            case 0: return try BodyDecoding.inflate(ByteBuffer(bytes: rest), encoding: .gzip, limit: limit).count
            case 1: return try BodyDecoding.inflate(ByteBuffer(bytes: rest), encoding: .deflate, limit: limit).count
            case 2: return try BodyDecoding.inflate(ByteBuffer(bytes: rest), encoding: .br, limit: limit).count
            case 3: return try BodyDecoding.inflateStored(rest, limit: limit).count
            default:
                let inflater = try StreamingInflater(limit: UInt64(limit))
                var out = 0
                var start = 0
                var step = 1
                while start < rest.count {
                    let end = min(rest.count, start + step)
                    try inflater.feed(Array(rest[start..<end])) { out += $0.count }
                    start = end
                    step = step &* 3 &+ 1
                }
                try inflater.finish()
                return out
            }
        case "sentry-envelope":
            let contents = try SentryEnvelopeReader.read(
                bytes, receivedAt: receivedAt, limits: limits, maxAttachmentBytes: 64 * 1024, sessionSeed: "fuzz")
            if let problem = contents.problems.first { throw problem }
            return (contents.event == nil ? 0 : 1) + contents.sessions.count + contents.attachments.count
        case "sentry-event":
            return try SentryStoreReader.read(bytes, receivedAt: receivedAt, limits: limits).event == nil ? 0 : 1
        case "swift-crash":
            return try SwiftCrashReports.parse(envelope: bytes, limits: limits).threads.count
        case "apple-crash":
            let meta = SwiftCrashReports.Metadata(eventID: "00000000000000000000000000000001")
            return try AppleCrashReports.report(file: bytes, metadata: meta, limits: limits).threads.count
        case "multipart":
            let newline = bytes.firstIndex(of: 10) ?? bytes.count
            let header = String(decoding: bytes[..<newline], as: UTF8.self)
            let body = newline < bytes.count ? Array(bytes[(newline + 1)...]) : []
            var parser = try MultipartParser(
                boundary: try MultipartParser.boundary(fromContentType: header), maxHeaderBytes: 1024, maxParts: 64)
            var parts = 0
            var start = 0
            var step = 1 + (body.count % 7)
            while start < body.count {
                let end = min(body.count, start + step)
                for event in try parser.feed(body[start..<end]) { if case .partStart = event { parts += 1 } }
                start = end
                step = step &* 2 &+ 1
            }
            try parser.finish()
            return parts
        case "elf":
            return try ELFReader.inspect(MemoryByteSource(bytes)).sectionNames.count
        case "minidump":
            return try Minidump(bytes: bytes).snapshot().threads.count
        case "minidump-form":
            if name == "envelope" { return try MinidumpSubmission.envelope(bytes)?.dump.count ?? 0 }
            let newline = bytes.firstIndex(of: 10) ?? bytes.count
            let contentType = String(decoding: bytes[..<newline], as: UTF8.self)
            return try MinidumpSubmission.multipart(
                Array(bytes[min(newline + 1, bytes.count)...]), contentType: contentType
            ).dump.count
        default:
            Issue.record("unknown fuzz target \(target)")
            return 0
        }
    }

    @Test(arguments: formatTargets)
    func everySeedIsAValidInput(target: String) throws {
        let files = Self.files(Self.seeds.appendingPathComponent(target))
        #expect(files.count >= 2, "tools/fuzzing/make-seeds.py writes seeds for \(target)")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            #expect(bytes.count <= 100 * 1024, "\(file.lastPathComponent) is a small seed")
            do {
                let count = try Self.run(target, bytes, name: file.lastPathComponent)
                #expect(count > 0, "\(target)/\(file.lastPathComponent) holds something")
            } catch {
                Issue.record("seed \(target)/\(file.lastPathComponent) does not parse: \(error)")
            }
        }
    }
}
