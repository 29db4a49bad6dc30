import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes a Sentry source bundle: the source files a debug file's line tables name, in one compressed file per
/// build-id (`symupload --include-sources`).
///
/// The format is the one `sentry-cli debug-files upload --include-sources` sends (client-protocols.md §2.4), so the
/// server reads one format whichever tool uploaded it: `SYSB`, a little-endian `UInt32` version 2, then a ZIP
/// archive of deflated entries whose offsets count from the start of the file, header included (as sentry-cli
/// writes them; ZIP readers accept either) — `manifest.json`, which maps each entry to
/// the original path and names the build (`code_id` = build-id, `debug_id`, `arch`, `object_name`), and one entry
/// `files/<absolute path without its leading slash>` per source file. No ZIP64: the limits keep every size and
/// count within the classic format.
public struct SourceBundleWriter {
    /// How much one bundle holds; a file or a bundle past these is left out, and said so (`skipped`).
    public struct Limits: Sendable, Equatable {
        /// Largest source file taken (generated sources can be huge and are rarely worth showing).
        public var maxFileBytes: Int
        /// Most files in one bundle.
        public var maxFiles: Int
        /// Most uncompressed bytes in one bundle.
        public var maxTotalBytes: Int

        public init(maxFileBytes: Int = 4 << 20, maxFiles: Int = 20_000, maxTotalBytes: Int = 256 << 20) {
            self.maxFileBytes = maxFileBytes
            self.maxFiles = min(maxFiles, 65_000)
            self.maxTotalBytes = min(maxTotalBytes, 1 << 30)
        }
    }

    /// Why a file was left out of the bundle.
    public enum Skip: Equatable, Sendable, CustomStringConvertible {
        case tooLarge(Int)
        case bundleFull
        case notAbsolute
        public var description: String {
            switch self {
            case .tooLarge(let bytes): return "larger than the per-file limit (\(bytes) bytes)"
            case .bundleFull: return "the bundle is full"
            case .notAbsolute: return "not an absolute path"
            }
        }
    }

    struct Entry {
        var name: [UInt8]
        var crc: UInt32
        var compressedSize: UInt32
        var size: UInt32
        var offset: UInt32
    }

    struct Manifest: Encodable {
        struct File: Encodable {
            var type = "source"
            var path: String
        }
        var files: [String: File] = [:]
        var arch: String
        var code_id: String
        var debug_id: String
        var object_name: String
    }

    public let limits: Limits
    var manifest: Manifest
    var archive: [UInt8] = []
    var entries: [Entry] = []
    var totalBytes = 0

    /// The paths in the bundle so far, in the order they were added.
    public private(set) var paths: [String] = []

    /// - Parameters:
    ///   - buildID: the build-id of the binary whose sources these are (the bundle's key on the server).
    ///   - objectName: the binary's file name, as sentry-cli names it.
    ///   - arch: the binary's architecture (`x86_64`, `aarch64`).
    public init(buildID: BuildID, objectName: String, arch: String, limits: Limits = Limits()) {
        self.limits = limits
        manifest = Manifest(
            arch: arch, code_id: buildID.rawValue, debug_id: SentryDebugID.from(buildID: buildID),
            object_name: objectName)
    }

    /// The entry name of a source path: `files/` and the path without its leading slash.
    public static func entryName(ofPath path: String) -> String {
        "files/" + path.drop(while: { $0 == "/" })
    }

    /// Adds one source file; returns why it was left out, or nil when it is in.
    @discardableResult
    public mutating func add(path: String, contents: [UInt8]) throws -> Skip? {
        guard path.hasPrefix("/") else { return .notAbsolute }
        guard contents.count <= limits.maxFileBytes else { return .tooLarge(contents.count) }
        guard paths.count < limits.maxFiles, totalBytes + contents.count <= limits.maxTotalBytes else {
            return .bundleFull
        }
        let name = Self.entryName(ofPath: path)
        guard manifest.files[name] == nil else { return nil }
        try append(name: name, contents: contents)
        manifest.files[name] = .init(path: path)
        paths.append(path)
        totalBytes += contents.count
        return nil
    }

    /// The whole bundle: the header, the entries, `manifest.json`, the central directory.
    public mutating func finish() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try append(name: "manifest.json", contents: Array(try encoder.encode(manifest)))
        var out: [UInt8] = Array("SYSB".utf8)
        Self.put32(2, &out)
        out += archive
        let directoryOffset = UInt32(archive.count + Self.headerSize)
        var directory: [UInt8] = []
        for entry in entries {
            Self.put32(0x0201_4b50, &directory)
            Self.put16(20, &directory)  // made by: 2.0
            Self.put16(20, &directory)  // needed: 2.0 (deflate)
            Self.put16(0x0800, &directory)  // UTF-8 names
            Self.put16(8, &directory)  // deflate
            Self.put16(0, &directory)  // time 00:00
            Self.put16(0x21, &directory)  // date 1980-01-01
            Self.put32(entry.crc, &directory)
            Self.put32(entry.compressedSize, &directory)
            Self.put32(entry.size, &directory)
            Self.put16(UInt16(entry.name.count), &directory)
            Self.put16(0, &directory)  // extra
            Self.put16(0, &directory)  // comment
            Self.put16(0, &directory)  // disk
            Self.put16(0, &directory)  // internal attributes
            Self.put32(0, &directory)  // external attributes
            Self.put32(entry.offset, &directory)
            directory += entry.name
        }
        out += directory
        Self.put32(0x0605_4b50, &out)
        Self.put16(0, &out)
        Self.put16(0, &out)
        Self.put16(UInt16(entries.count), &out)
        Self.put16(UInt16(entries.count), &out)
        Self.put32(UInt32(directory.count), &out)
        Self.put32(directoryOffset, &out)
        Self.put16(0, &out)
        return out
    }

    mutating func append(name: String, contents: [UInt8]) throws {
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= 0xffff else {
            throw FormatError(.tooLarge, "a source path is longer than a ZIP name allows")
        }
        let compressed = try Zlib.deflateRaw(contents)
        // The limits keep the archive far below 4 GiB; checked conversions say so if that ever changes.
        guard let offset = UInt32(exactly: archive.count + Self.headerSize), let size = UInt32(exactly: contents.count),
            let compressedSize = UInt32(exactly: compressed.count),
            archive.count + 30 + nameBytes.count + compressed.count < Int(UInt32.max) / 2
        else { throw FormatError(.tooLarge, "the source bundle would outgrow the ZIP format") }
        let entry = Entry(
            name: nameBytes, crc: Zlib.crc32(contents), compressedSize: compressedSize, size: size, offset: offset)
        Self.put32(0x0403_4b50, &archive)
        Self.put16(20, &archive)
        Self.put16(0x0800, &archive)
        Self.put16(8, &archive)
        Self.put16(0, &archive)
        Self.put16(0x21, &archive)
        Self.put32(entry.crc, &archive)
        Self.put32(entry.compressedSize, &archive)
        Self.put32(entry.size, &archive)
        Self.put16(UInt16(nameBytes.count), &archive)
        Self.put16(0, &archive)
        archive += nameBytes
        archive += compressed
        entries.append(entry)
    }

    /// `SYSB` and the version, before the archive.
    static let headerSize = 8

    static func put16(_ value: UInt16, _ out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    static func put32(_ value: UInt32, _ out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
