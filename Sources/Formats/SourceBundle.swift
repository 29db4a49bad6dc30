import CZlib
import FaultlineCore
import Foundation

/// A Sentry source bundle: the source files a binary was built from, for showing code around a frame.
///
/// The layout (sentry-cli `debug-files bundle-sources`, `debug-files upload --include-sources`, and
/// `symupload --include-sources`): the magic `SYSB`, a little-endian u32 version (2), then a ZIP archive. sentry-cli
/// writes the archive's offsets from the start of the file (the header included); other writers count from the
/// byte after the header: the reader takes the base that the end-of-central-directory record's position implies
/// (0 or 8), as ZIP readers do for a prefixed archive. The archive holds `manifest.json`
/// (`{"files": {"files/<abs path>": {"type": "source", "path": "<abs path>"}}, "arch", "code_id", "debug_id",
/// "object_name"}`) and one entry per source file, stored or deflated.
///
/// Everything in a bundle is hostile: the central directory is read with bounded sizes and entry counts,
/// every offset and size is checked against the file before it is used (no trapping arithmetic), an entry
/// inflates into at most `Limits.maxFileBytes` (the zip-bomb rule: the declared size is not trusted, the
/// output is capped while it is produced) and must then match its declared size and CRC-32. Names inside the
/// bundle are opaque keys: they are compared, never used as paths on disk.
///
/// Every byte of the archive belongs to at most one entry: entries whose local ranges (header, name and
/// compressed data) overlap, alias one another or run into the central directory are refused, and a name may
/// appear once. Without that rule, 128 directory entries naming one 8 MiB local entry would make a 17 KB upload
/// inflate and CRC 1 GiB; with it, the bytes inflated are bounded by what the archive really holds (deflate's
/// ratio, at most about 1000:1, and `Limits.maxTotalBytes`). The manifest lists at most `Limits.maxEntries` files.
///
/// Opening a bundle parses its manifest (a 16 MiB manifest takes a second): `Index` is what opening learns, a
/// `Sendable` value that `SourceBundleCache` keeps so a bundle is parsed once, not once per request.
public struct SourceBundle {
    /// Bounds on what a bundle may make the reader do.
    public struct Limits: Sendable {
        /// Most entries in the central directory, and most files `manifest.json` may list.
        public var maxEntries: Int
        /// Largest central directory, in bytes.
        public var maxDirectoryBytes: Int
        /// Largest inflated `manifest.json`.
        public var maxManifestBytes: Int
        /// Largest inflated source file.
        public var maxFileBytes: Int
        /// Most bytes inflated when a whole bundle is checked (entries may share their data, so the sum of
        /// the files is bounded on its own, not by the bundle's size).
        public var maxTotalBytes: Int
        public init(
            maxEntries: Int = 65_535, maxDirectoryBytes: Int = 32 << 20, maxManifestBytes: Int = 16 << 20,
            maxFileBytes: Int = 8 << 20, maxTotalBytes: Int = 1 << 30
        ) {
            self.maxEntries = maxEntries
            self.maxDirectoryBytes = maxDirectoryBytes
            self.maxManifestBytes = maxManifestBytes
            self.maxFileBytes = maxFileBytes
            self.maxTotalBytes = maxTotalBytes
        }
    }

    /// One entry of the ZIP central directory.
    struct Entry: Sendable {
        var method: UInt16
        var crc32: UInt32
        var compressedSize: UInt64
        var size: UInt64
        /// Offset of the local header, from the start of the ZIP (after the `SYSB` header).
        var localHeader: UInt64
        /// Where the next entry's local header (or the central directory) starts: the entry's local header, name,
        /// extra field and data must end here, so that no two entries share a byte.
        var end: UInt64 = 0
    }

    /// What opening a bundle learns (the central directory and the manifest): enough to read any file again
    /// from the same bytes without parsing anything.
    public struct Index: Sendable {
        /// Where the archive's offset 0 is in the file: 0 (sentry-cli) or 8 (after the header).
        let base: UInt64
        let entries: [String: Entry]
        /// What `manifest.json` says.
        public let manifest: Manifest
        /// Source path after `SourcePaths.normalized` → ZIP entry name.
        let byNormalizedPath: [String: String]
        /// Roughly the memory this index holds (names, paths and fixed costs per entry): what a cache counts.
        public let approximateBytes: Int
    }

    /// What `manifest.json` says about the bundle.
    public struct Manifest: Sendable, Equatable {
        /// The GNU build-id of the binary the sources belong to (`code_id`).
        public var codeID: BuildID?
        /// Sentry's debug id of that binary.
        public var debugID: String?
        public var architecture: String?
        public var objectName: String?
        /// Source path (as the debug information names it) → ZIP entry name.
        public var files: [String: String]
    }

    /// The magic and the version this reader understands.
    public static let magic: [UInt8] = Array("SYSB".utf8)
    public static let version: UInt32 = 2
    static let headerSize: UInt64 = 8

    let source: any ByteSource
    let limits: Limits
    /// The central directory and the manifest.
    public let index: Index
    /// What `manifest.json` says about the bundle.
    public var manifest: Manifest { index.manifest }

    /// True when the first bytes of a file are a source bundle's magic.
    public static func hasMagic(_ prefix: some Collection<UInt8>) -> Bool { prefix.starts(with: magic) }

    /// Opens a bundle: checks the header, reads the central directory and the manifest.
    /// - Throws: `FormatError` naming what is wrong (never traps on any input).
    public init(_ source: any ByteSource, limits: Limits = Limits()) throws {
        self.source = source
        self.limits = limits
        guard source.size >= Self.headerSize else { throw Self.error("the file is too short to be a source bundle") }
        let header = try Self.read(source, at: 0, count: 8)
        guard Self.hasMagic(header) else { throw Self.error("the file does not start with SYSB") }
        let version = Self.u32(header, 4)
        guard version == Self.version else {
            throw Self.error("source bundle version \(version) is not supported (only 2)")
        }
        let (entries, base) = try Self.centralDirectory(source, limits: limits)
        guard let manifestEntry = entries["manifest.json"] else { throw Self.error("the bundle has no manifest.json") }
        let manifestBytes = try Self.extract(
            manifestEntry, from: source, base: base, limit: limits.maxManifestBytes, name: "manifest.json")
        let manifest = try Self.parseManifest(manifestBytes)
        // Manifest keys are entry names (unique), so no two paths share an entry; the count is bounded like the archive's.
        guard manifest.files.count <= limits.maxEntries else {
            throw Self.error("manifest.json lists more than \(limits.maxEntries) files")
        }
        var normalized: [String: String] = [:]
        var bytes = 256
        for (name, _) in entries { bytes += name.utf8.count + 96 }
        for (path, entry) in manifest.files {
            bytes += path.utf8.count + entry.utf8.count + 64
            if entries[entry] != nil, let key = SourcePaths.normalized(path) {
                normalized[key] = entry
                bytes += key.utf8.count + 48
            }
        }
        index = Index(
            base: base, entries: entries, manifest: manifest, byNormalizedPath: normalized, approximateBytes: bytes)
    }

    /// A bundle over `source` whose central directory and manifest were read before (`index` of a bundle opened on
    /// the same bytes): nothing is parsed again.
    public init(_ source: any ByteSource, index: Index, limits: Limits = Limits()) {
        self.source = source
        self.index = index
        self.limits = limits
    }

    /// The source paths the bundle holds (normalised), sorted.
    public var paths: [String] { index.byNormalizedPath.keys.sorted() }

    /// The bytes of the source file the debug information calls `path`, or nil when the bundle lacks it.
    /// - Throws: `FormatError` when the entry is damaged or inflates past `Limits.maxFileBytes`.
    public func file(atPath path: String) throws -> [UInt8]? {
        guard let key = SourcePaths.normalized(path), let name = index.byNormalizedPath[key],
            let entry = index.entries[name]
        else {
            return nil
        }
        return try Self.extract(entry, from: source, base: index.base, limit: limits.maxFileBytes, name: name)
    }

    /// Inflates every file the manifest lists, once per entry, and checks each against its size and CRC-32;
    /// returns the bytes inflated.
    /// - Throws: `FormatError` for a damaged entry, one past `Limits.maxFileBytes`, or all of them together past
    ///   `Limits.maxTotalBytes`.
    public func verifyFiles() throws -> Int {
        var total = 0
        for name in Set(index.byNormalizedPath.values).sorted() {
            guard let entry = index.entries[name] else { continue }
            // Each at most maxFileBytes: the sum cannot overflow before the check stops it.
            total += try Self.extract(entry, from: source, base: index.base, limit: limits.maxFileBytes, name: name)
                .count
            guard total <= limits.maxTotalBytes else {
                throw FormatError(
                    .tooLarge, "the bundle's files inflate to more than \(limits.maxTotalBytes) bytes",
                    field: "source_bundle")
            }
        }
        return total
    }

    // MARK: - ZIP

    static func error(_ message: String) -> FormatError { FormatError(.invalidField, message, field: "source_bundle") }

    static func read(_ source: any ByteSource, at offset: UInt64, count: Int) throws -> [UInt8] {
        do {
            return try source.bytes(at: offset, count: count)
        } catch {
            throw Self.error("the bundle is truncated (needs \(count) bytes at offset \(offset))")
        }
    }

    static func u16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    /// The central directory, by entry name. Finds the end-of-central-directory record in the last 64 KiB + 22
    /// bytes (its comment is at most 65 535 bytes), then reads every entry, each checked against the file.
    /// - Parameter prefix: the bytes before the archive (the `SYSB` header; 0 for a plain ZIP file).
    static func centralDirectory(_ source: any ByteSource, limits: Limits, prefix: UInt64 = headerSize) throws
        -> (entries: [String: Entry], base: UInt64)
    {
        guard source.size >= prefix else { throw Self.error("the file holds no ZIP archive") }
        let zipSize = source.size - prefix
        guard zipSize >= 22 else { throw Self.error("the bundle holds no ZIP archive") }
        let tailCount = min(zipSize, 22 + 65_535)
        let tailStart = source.size - tailCount
        let tail = try read(source, at: tailStart, count: Int(tailCount))
        var eocd: Int?
        var i = tail.count - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4b, tail[i + 2] == 0x05, tail[i + 3] == 0x06 {
                eocd = i
                break
            }
            i -= 1
        }
        guard let at = eocd else { throw Self.error("the ZIP archive has no end-of-central-directory record") }
        let count = Int(u16(tail, at + 10))
        let directorySize = UInt64(u32(tail, at + 12))
        let directoryOffset = UInt64(u32(tail, at + 16))
        guard u16(tail, at + 4) == 0, u16(tail, at + 6) == 0, u16(tail, at + 8) == u16(tail, at + 10) else {
            throw Self.error("multi-part ZIP archives are not supported")
        }
        guard count != 0xFFFF, directorySize != 0xFFFF_FFFF, directoryOffset != 0xFFFF_FFFF else {
            throw Self.error("ZIP64 archives are not supported")
        }
        guard count <= limits.maxEntries else {
            throw Self.error("the bundle has more than \(limits.maxEntries) entries")
        }
        guard directorySize <= UInt64(limits.maxDirectoryBytes) else {
            throw Self.error("the ZIP central directory is larger than \(limits.maxDirectoryBytes) bytes")
        }
        // The directory ends where the end record starts: that fixes the base its offset counts from.
        let eocdPosition = tailStart + UInt64(at)
        guard directorySize <= eocdPosition, eocdPosition - directorySize >= directoryOffset else {
            throw Self.error("the ZIP central directory lies outside the file")
        }
        let base = eocdPosition - directorySize - directoryOffset
        guard base == 0 || base == prefix else {
            throw Self.error("the ZIP central directory is not where its offset says")
        }
        let directory = try read(source, at: base + directoryOffset, count: Int(directorySize))
        var entries: [String: Entry] = [:]
        // (local header offset, least bytes the entry occupies there, name) of every entry, for the overlap check.
        var spans: [(start: UInt64, length: UInt64, name: String)] = []
        spans.reserveCapacity(count)
        var p = 0
        for index in 0..<count {
            guard directory.count - p >= 46, u32(directory, p) == 0x0201_4b50 else {
                throw Self.error("ZIP central directory entry \(index) is damaged")
            }
            let flags = u16(directory, p + 8)
            let nameLength = Int(u16(directory, p + 28))
            let extraLength = Int(u16(directory, p + 30))
            let commentLength = Int(u16(directory, p + 32))
            let recordLength = 46 + nameLength + extraLength + commentLength
            guard directory.count - p >= recordLength else {
                throw Self.error("ZIP central directory entry \(index) is truncated")
            }
            guard flags & 0x1 == 0 else { throw Self.error("encrypted ZIP entries are not supported") }
            let entry = Entry(
                method: u16(directory, p + 10), crc32: u32(directory, p + 16),
                compressedSize: UInt64(u32(directory, p + 20)),
                size: UInt64(u32(directory, p + 24)), localHeader: UInt64(u32(directory, p + 42)))
            guard entry.compressedSize != 0xFFFF_FFFF, entry.size != 0xFFFF_FFFF, entry.localHeader != 0xFFFF_FFFF
            else {
                throw Self.error("ZIP64 entries are not supported")
            }
            let name = String(decoding: directory[(p + 46)..<(p + 46 + nameLength)], as: UTF8.self)
            guard entries[name] == nil else { throw Self.error("the ZIP archive names \(name) twice") }
            entries[name] = entry
            // The local header repeats the name: 30 bytes, the name and the data at the least (all below 2^33).
            spans.append((entry.localHeader, 30 + UInt64(nameLength) + entry.compressedSize, name))
            p += recordLength
        }
        // Every byte belongs to one entry: sorted by where they start, each ends before the next begins, the last
        // before the central directory.
        spans.sort { $0.start < $1.start }
        for (i, span) in spans.enumerated() {
            let next = i + 1 < spans.count ? spans[i + 1].start : directoryOffset
            guard span.start <= next, span.length <= next - span.start else {
                if i + 1 < spans.count {
                    throw Self.error(
                        "ZIP entries \(span.name) and \(spans[i + 1].name) overlap (entries may not share their data)")
                }
                throw Self.error("ZIP entry \(span.name) runs into the central directory")
            }
            entries[span.name]?.end = next
        }
        return (entries, base)
    }

    /// Where an entry's compressed data starts (from `base`), after checking its local header and that the data lies in
    /// the file and in the entry's own bytes (`Entry.end`). The declared compressed size must fit what `limit` output bytes
    /// can need (deflate can pad a stream with empty blocks, not without bound).
    static func dataOffset(of entry: Entry, in source: any ByteSource, base: UInt64, limit: UInt64, name: String) throws
        -> UInt64
    {
        let (doubled, overflow) = limit.multipliedReportingOverflow(by: 2)
        let (bound, overflow2) = doubled.addingReportingOverflow(65_536)
        guard overflow || overflow2 || entry.compressedSize <= bound else {
            throw Self.error("\(name) has more compressed bytes than it can need")
        }
        let zipSize = source.size - base
        guard entry.localHeader <= zipSize, zipSize - entry.localHeader >= 30 else {
            throw Self.error("the local header of \(name) lies outside the file")
        }
        let local = try read(source, at: base + entry.localHeader, count: 30)
        guard u32(local, 0) == 0x0403_4b50 else { throw Self.error("the local header of \(name) is damaged") }
        let dataOffset = entry.localHeader + 30 + UInt64(u16(local, 26)) + UInt64(u16(local, 28))
        guard dataOffset <= zipSize, entry.compressedSize <= zipSize - dataOffset else {
            throw Self.error("the data of \(name) lies outside the file")
        }
        guard dataOffset <= entry.end, entry.compressedSize <= entry.end - dataOffset else {
            throw Self.error("the data of \(name) runs into the next ZIP entry")
        }
        return dataOffset
    }

    /// The bytes of one entry, inflated into at most `limit` bytes and checked against its size and CRC-32.
    static func extract(_ entry: Entry, from source: any ByteSource, base: UInt64, limit: Int, name: String) throws
        -> [UInt8]
    {
        guard entry.size <= UInt64(limit) else {
            throw FormatError(.tooLarge, "\(name) is larger than \(limit) bytes", field: "source_bundle")
        }
        let dataOffset = try dataOffset(of: entry, in: source, base: base, limit: UInt64(limit), name: name)
        let raw = try read(source, at: base + dataOffset, count: Int(entry.compressedSize))
        let bytes: [UInt8]
        switch entry.method {
        case 0:
            bytes = raw
        case 8:
            do {
                bytes = try Zlib.inflate(raw, container: .raw, limit: limit)
            } catch let error as FormatError where error.code == .tooLarge {
                throw FormatError(.tooLarge, "\(name) inflates to more than \(limit) bytes", field: "source_bundle")
            } catch {
                throw Self.error("\(name) does not inflate")
            }
        default:
            throw Self.error(
                "\(name) uses ZIP compression method \(entry.method); only stored and deflate are supported")
        }
        guard UInt64(bytes.count) == entry.size else {
            throw Self.error("\(name) is not the size its directory entry says")
        }
        let crc = bytes.withUnsafeBufferPointer {
            UInt32(truncatingIfNeeded: CZlib.crc32(0, $0.baseAddress, uInt(clamping: $0.count)))
        }
        guard crc == entry.crc32 else { throw Self.error("\(name) fails its CRC-32 check") }
        return bytes
    }

    struct RawManifest: Decodable {
        struct FileInfo: Decodable {
            var path: String?
        }
        var files: [String: FileInfo]?
        var arch: String?
        var code_id: String?
        var debug_id: String?
        var object_name: String?
    }

    static func parseManifest(_ bytes: [UInt8]) throws -> Manifest {
        let raw: RawManifest
        do {
            raw = try JSONDecoder().decode(RawManifest.self, from: Data(bytes))
        } catch {
            throw Self.error("manifest.json is not the JSON object a source bundle has")
        }
        var files: [String: String] = [:]
        for (entry, info) in raw.files ?? [:] {
            // Older bundles leave `path` out: the entry name is `files/` + the path.
            let path = info.path ?? (entry.hasPrefix("files/") ? String(entry.dropFirst(5)) : entry)
            files[path] = entry
        }
        return Manifest(
            codeID: raw.code_id.flatMap { BuildID($0) }, debugID: raw.debug_id, architecture: raw.arch,
            objectName: raw.object_name, files: files)
    }
}
