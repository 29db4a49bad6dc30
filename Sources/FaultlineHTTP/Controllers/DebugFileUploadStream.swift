import FaultlineCore
import Formats
import Foundation
import Hummingbird
import Pipeline

/// Streams one debug-file upload into its temporary file, deciding as early as the bytes allow.
///
/// A source bundle (`SYSB` magic) is written as it comes and checked whole afterwards (`DebugFileService`).
/// For an ELF file, every inflated piece is checked before it is written: the ELF header from the first bytes (a gzip bomb of
/// zeros or a text file is answered `not_elf` after one piece), the build-id as soon as the `PT_NOTE` segment
/// that holds it has arrived (`build_id_mismatch`), and the running size against both the largest debug
/// file (`too_large`) and what the project's quota has left (`quota_exceeded`), so an upload is stopped and
/// answered 413 at the byte that crosses a limit. The SHA-256 that names the stored blob is computed on the
/// way, so a large file is never read twice.
struct DebugFileUploadStream {
    /// Most bytes of the file (after inflating) and of the request body.
    let maxFileBytes: UInt64
    /// Most bytes the project's quota can take for this file.
    let allowance: UInt64
    /// The build-id the URL claims (nil: unknown until the file is read).
    let claimed: BuildID?
    let digest: any ContentDigesting
    /// The error for a file that does not fit the quota.
    let quotaError: DebugFileError

    /// The running state of one upload.
    struct Progress {
        var written: UInt64 = 0
        var check = ELFPrefixCheck()
        /// The first bytes, until the magic decides: nil while undecided, true for a source bundle (`SYSB`), whose
        /// build-id is checked from its manifest once it is complete.
        var bundle: Bool?
        var head: [UInt8] = []
    }

    /// Writes `body` (decoded per `encoding`) to `path`; returns the size and SHA-256 of what was written.
    func write(_ body: RequestBody, encoding: BodyDecoding.ContentEncoding, to path: String) async throws -> (size: UInt64, sha256: ContentHash) {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let inflater = encoding == .identity ? nil : try StreamingInflater(limit: maxFileBytes)
        var received: UInt64 = 0
        var progress = Progress()
        for try await chunk in body {
            let (total, overflow) = received.addingReportingOverflow(UInt64(chunk.readableBytes))
            guard !overflow, total <= maxFileBytes else { throw tooLarge }
            received = total
            let bytes = Array(chunk.readableBytesView)
            if let inflater {
                try inflater.feed(bytes) { try accept($0, &progress, handle) }
            } else {
                try accept(bytes, &progress, handle)
            }
        }
        try inflater?.finish()
        do {
            if progress.bundle == nil { try progress.check.feed(progress.head) }
            if progress.bundle != true { try progress.check.finish() }
        } catch {
            throw DebugFileError(.notELF, "the upload is not an ELF file that can be read: \(error)")
        }
        return (progress.written, digest.finalize())
    }

    var tooLarge: FormatError { FormatError(.tooLarge, "a debug file may be at most \(maxFileBytes >> 20) MiB") }

    /// Checks, hashes and writes one piece of the file.
    func accept(_ bytes: [UInt8], _ progress: inout Progress, _ handle: FileHandle) throws {
        let (total, overflow) = progress.written.addingReportingOverflow(UInt64(bytes.count))
        guard !overflow, total <= maxFileBytes else { throw tooLarge }
        guard total <= allowance else { throw quotaError }
        do {
            if progress.bundle == nil {
                progress.head += bytes
                if progress.head.count >= SourceBundle.magic.count {
                    let bundle = SourceBundle.hasMagic(progress.head)
                    progress.bundle = bundle
                    if !bundle { try progress.check.feed(progress.head) }
                    progress.head = []
                }
            } else if progress.bundle == false {
                try progress.check.feed(bytes)
            }
        } catch {
            throw DebugFileError(.notELF, "the upload is not an ELF file that can be read: \(error)")
        }
        if case .buildID(let found) = progress.check.verdict, let claimed, found != claimed {
            throw DebugFileError(.buildIDMismatch, "the file's build-id is \(found), not \(claimed)")
        }
        digest.update(bytes)
        try handle.write(contentsOf: bytes)
        progress.written = total
    }
}
