import CZlib
import FaultlineCore
import Foundation
import MachO

/// Splits an upload that holds several debug files: a fat (universal) Mach-O into one file per slice, a ZIP archive of
/// dSYMs (App Store Connect's and Xcode Organizer's `dSYMs.zip`: `X.app.dSYM/Contents/Resources/DWARF/X`, fat or thin)
/// into the Mach-O images in it.
///
/// The archive is hostile: it is read with the source bundles' bounded ZIP reader (`SourceBundle.centralDirectory`:
/// bounded entry count and directory size, every entry's bytes its own), and each entry is inflated to disk, never into
/// memory, under two caps that hold while the bytes are produced, not because the directory says so: `maxEntryBytes`
/// an entry and `maxTotalBytes` all of them, then checked against its declared size and CRC-32. Entries that are not
/// little-endian Mach-O images (`Info.plist`, relocation maps) are dropped. Entry names are labels for people, never paths on disk.
public struct DebugFileSplitter: Sendable {
    /// Bounds on what an archive may make the server do.
    public struct Limits: Sendable {
        /// Most entries in the archive's central directory.
        public var maxEntries: Int
        /// Largest inflated entry.
        public var maxEntryBytes: UInt64
        /// Most bytes inflated from one archive.
        public var maxTotalBytes: UInt64
        /// Most debug files one upload may hold (slices of all its images).
        public var maxPieces: Int
        public init(
            maxEntries: Int = 10_000, maxEntryBytes: UInt64 = 4 << 30, maxTotalBytes: UInt64 = 4 << 30,
            maxPieces: Int = 1_000
        ) {
            self.maxEntries = maxEntries
            self.maxEntryBytes = maxEntryBytes
            self.maxTotalBytes = maxTotalBytes
            self.maxPieces = maxPieces
        }
    }

    let limits: Limits
    public init(limits: Limits = Limits()) { self.limits = limits }

    static let zipMagic: [UInt8] = [0x50, 0x4b, 0x03, 0x04]

    /// Whether `head` begins a ZIP archive (a local file header).
    public static func isZip(_ head: some Collection<UInt8>) -> Bool { head.starts(with: zipMagic) }

    /// Whether `head` begins a fat Mach-O.
    public static func isFat(_ head: some Collection<UInt8>) -> Bool {
        let magic = MachOContainer.magic(of: head)
        return magic == .fat32 || magic == .fat64
    }

    /// The pieces of the upload at `path`, each written to a file `newFile` gives; nil when it is one debug file.
    /// - Throws: `MachOError` or `FormatError` naming what is wrong; every file `newFile` gave is the caller's.
    public func split(path: String, name: String?, newFile: () throws -> TemporaryUpload) throws -> [DebugFilePiece]? {
        let source = try FileByteSource(path: path)
        guard source.size >= 4 else { return nil }
        let head = try source.bytes(at: 0, count: 4)
        if Self.isFat(head) { return try slices(of: source, name: name ?? "upload", newFile: newFile) }
        if Self.isZip(head) { return try archive(source, newFile: newFile) }
        return nil
    }

    /// One file per slice of a fat Mach-O, named `name (arch)`.
    func slices(of source: FileByteSource, name: String, newFile: () throws -> TemporaryUpload) throws
        -> [DebugFilePiece]
    {
        var pieces: [DebugFilePiece] = []
        for slice in try MachOContainer.slices(size: source.size, read: source.bytes) {
            let upload = try newFile()
            try Self.copy(source, from: slice.offset, count: slice.size, to: upload.path)
            pieces.append(DebugFilePiece(upload: upload, name: "\(name) (\(slice.architecture))"))
        }
        return pieces
    }

    /// Every Mach-O image in a ZIP archive, fat ones split.
    func archive(_ source: FileByteSource, newFile: () throws -> TemporaryUpload) throws -> [DebugFilePiece] {
        let bounds = SourceBundle.Limits(maxEntries: limits.maxEntries)
        let (entries, base) = try SourceBundle.centralDirectory(source, limits: bounds, prefix: 0)
        var pieces: [DebugFilePiece] = []
        var inflated: UInt64 = 0
        for (name, entry) in entries.sorted(by: { $0.key < $1.key }) where !name.hasSuffix("/") && entry.size >= 4 {
            guard entry.size <= limits.maxEntryBytes else {
                throw FormatError(.tooLarge, "\(name) is larger than \(limits.maxEntryBytes) bytes", field: "archive")
            }
            guard entry.size <= limits.maxTotalBytes - inflated else {
                throw FormatError(
                    .tooLarge, "the archive's files inflate to more than \(limits.maxTotalBytes) bytes",
                    field: "archive")
            }
            let upload = try newFile()
            try Self.extract(entry, named: name, from: source, base: base, to: upload.path)
            inflated += entry.size
            let file = try FileByteSource(path: upload.path)
            let head = try file.bytes(at: 0, count: 4)
            if Self.isFat(head) {
                pieces += try slices(of: file, name: name, newFile: newFile)
                unlink(upload.path)
            } else if let magic = MachOContainer.magic(of: head), magic == .thin32 || magic == .thin64 {
                pieces.append(DebugFilePiece(upload: upload, name: name))
            } else {
                unlink(upload.path)
            }
            guard pieces.count <= limits.maxPieces else {
                throw FormatError(
                    .tooLarge, "the archive holds more than \(limits.maxPieces) debug files", field: "archive")
            }
        }
        guard !pieces.isEmpty else {
            throw FormatError(
                .invalidField, "the archive holds no Mach-O file (a dSYM's Contents/Resources/DWARF/…)",
                field: "archive")
        }
        return pieces
    }

    /// Inflates one entry into `path`: at most its declared size is produced, then the size and CRC-32 must match.
    static func extract(
        _ entry: SourceBundle.Entry, named name: String, from source: FileByteSource, base: UInt64, to path: String
    ) throws {
        let dataOffset = try SourceBundle.dataOffset(of: entry, in: source, base: base, limit: entry.size, name: name)
        guard let out = FileHandle(forWritingAtPath: path) else {
            throw FormatError(.invalidField, "cannot write \(name)", field: "archive")
        }
        defer { try? out.close() }
        var crc: UInt = 0
        var written: UInt64 = 0
        func output(_ bytes: [UInt8]) throws {
            crc = bytes.withUnsafeBufferPointer { CZlib.crc32(crc, $0.baseAddress, uInt(clamping: $0.count)) }
            written += UInt64(bytes.count)
            try out.write(contentsOf: bytes)
        }
        let inflater: StreamingInflater?
        switch entry.method {
        case 0:
            guard entry.compressedSize == entry.size else {
                throw SourceBundle.error("\(name) is not the size its directory entry says")
            }
            inflater = nil
        case 8: inflater = try StreamingInflater(limit: entry.size, raw: true)
        default:
            throw SourceBundle.error(
                "\(name) uses ZIP compression method \(entry.method); only stored and deflate are supported")
        }
        var at: UInt64 = 0
        do {
            while at < entry.compressedSize {
                let count = Int(min(1 << 20, entry.compressedSize - at))
                let raw = try SourceBundle.read(source, at: base + dataOffset + at, count: count)
                at += UInt64(count)
                if let inflater { try inflater.feed(raw, output) } else { try output(raw) }
            }
            try inflater?.finish()
        } catch let error as FormatError where error.code == .tooLarge {
            throw SourceBundle.error("\(name) inflates to more than its directory entry says")
        } catch let error as FormatError where error.code == .corruptCompression {
            throw SourceBundle.error("\(name) does not inflate")
        }
        guard written == entry.size else {
            throw SourceBundle.error("\(name) is not the size its directory entry says")
        }
        guard UInt32(truncatingIfNeeded: crc) == entry.crc32 else {
            throw SourceBundle.error("\(name) fails its CRC-32 check")
        }
    }

    /// Copies `count` bytes at `offset` of `source` into a new file at `path`, a megabyte at a time.
    static func copy(_ source: FileByteSource, from offset: UInt64, count: UInt64, to path: String) throws {
        guard let out = FileHandle(forWritingAtPath: path) else {
            throw FormatError(.invalidField, "cannot write a slice", field: "file")
        }
        defer { try? out.close() }
        var done: UInt64 = 0
        while done < count {
            let n = Int(min(1 << 20, count - done))
            try out.write(contentsOf: try source.bytes(at: offset + done, count: n))
            done += UInt64(n)
        }
    }
}
