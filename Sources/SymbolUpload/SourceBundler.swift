import FaultlineCore
import Formats
import Symbolication

#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Collects the source files a debug file names into one source bundle (`symupload --include-sources`).
///
/// Reads the debug file's line tables (`SourceFiles`), takes each named file that exists on this machine as a
/// regular file, and writes them into a `SourceBundleWriter` bundle keyed by the debug file's build-id. Files
/// that are not here (built elsewhere, generated and deleted) are counted, not an error: the bundle holds what
/// the CI machine has.
public enum SourceBundler {
    /// A bundle written to disk, ready to upload, and what went into it.
    public struct Bundle: Sendable {
        /// The bundle file, as an upload of kind `sources` for the build-id.
        public var file: LocalDebugFile
        /// Source paths in the bundle.
        public var included: [String]
        /// Paths the line tables name that are not readable files here.
        public var absent: [String]
        /// Paths left out, with why (too large, bundle full).
        public var skipped: [(path: String, reason: String)]
    }

    /// Makes the bundle of `debugFile`'s sources in `folder`; nil when none of its sources is on this machine.
    ///
    /// - Throws: when the debug file cannot be read or the bundle cannot be written.
    public static func bundle(
        of debugFile: LocalDebugFile, in folder: String, limits: SourceBundleWriter.Limits = .init()
    ) throws -> Bundle? {
        guard let buildID = debugFile.facts.buildID else { return nil }
        let objectName = URL(fileURLWithPath: debugFile.path).lastPathComponent
        var writer = SourceBundleWriter(
            buildID: buildID, objectName: objectName, arch: debugFile.facts.architecture, limits: limits)
        var absent: [String] = []
        var skipped: [(path: String, reason: String)] = []
        for path in try SourceFiles.referenced(byFile: debugFile.path) {
            guard let contents = readRegularFile(path, limit: limits.maxFileBytes) else {
                absent.append(path)
                continue
            }
            switch contents {
            case .tooLarge(let size):
                skipped.append((path, SourceBundleWriter.Skip.tooLarge(size).description))
            case .bytes(let bytes):
                if let skip = try writer.add(path: path, contents: bytes) { skipped.append((path, skip.description)) }
            }
        }
        guard !writer.paths.isEmpty else { return nil }
        let bytes = try writer.finish()
        let target = folder + "/" + buildID.rawValue + "-" + objectName + ".src.zip"
        guard FileManager.default.createFile(atPath: target, contents: Data(bytes)) else {
            throw UploadError(message: "cannot write the source bundle \(target)", status: nil)
        }
        let facts = DebugFileFacts(
            buildID: buildID, kinds: [.sources], architecture: debugFile.facts.architecture, fileType: "source_bundle",
            features: ["sources"], compressedDebugSections: false)
        return Bundle(
            file: LocalDebugFile(path: target, size: UInt64(bytes.count), facts: facts), included: writer.paths,
            absent: absent, skipped: skipped)
    }

    enum Contents {
        case bytes([UInt8])
        case tooLarge(Int)
    }

    /// The file's bytes when it is a readable regular file (following links); nil otherwise.
    static func readRegularFile(_ path: String, limit: Int) -> Contents? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        guard st.st_size <= limit else { return .tooLarge(Int(clamping: st.st_size)) }
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard data.count <= limit else { return .tooLarge(data.count) }
        return .bytes(Array(data))
    }
}
