import FaultlineCore
import Formats
import Foundation
import Hummingbird
import Pipeline

/// Streams one debug-file upload into its temporary file, deciding as early as the bytes allow.
///
/// A source bundle (`SYSB` magic) and a ZIP archive of dSYMs are written as they come and checked whole afterwards
/// (`DebugFileService`). A Mach-O file's (thin or fat) header is checked from its first bytes (`MachOFileInspector`),
/// its slices and UUIDs once it is complete. Bytes that begin none of these are refused as they arrive: `not_elf`.
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

    /// What the first bytes say the upload is.
    enum Kind {
        /// Checked whole once complete: a source bundle (`SYSB`), whose build-id is in its manifest, or a ZIP of dSYMs.
        case checkedWhole
        /// A Mach-O file whose header passed; its slices are read once it is complete.
        case machO
        /// An ELF file, checked piece by piece (`ELFPrefixCheck`).
        case elf
    }

    /// The running state of one upload.
    struct Progress {
        var written: UInt64 = 0
        var check = ELFPrefixCheck()
        /// Nil until the first bytes decide.
        var kind: Kind?
        var head: [UInt8] = []
    }

    /// The bytes a Mach-O header check reads (a 64-bit header; a fat header and its first entries).
    static let machOHeadBytes = 32

    /// Writes `body` (decoded per `encoding`) to `path`; returns the size and SHA-256 of what was written.
    func write(_ body: RequestBody, encoding: BodyDecoding.ContentEncoding, to path: String) async throws -> (
        size: UInt64, sha256: ContentHash
    ) {
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
            if progress.kind == nil { try decide(&progress, final: true) }
            if progress.kind == .elf { try progress.check.finish() }
        } catch let error as DebugFileError {
            throw error
        } catch {
            throw DebugFileError(.notELF, "the upload is not an ELF or Mach-O file that can be read: \(error)")
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
            if progress.kind == nil {
                progress.head += bytes
                try decide(&progress, final: false)
            } else if progress.kind == .elf {
                try progress.check.feed(bytes)
            }
        } catch let error as DebugFileError {
            throw error
        } catch {
            throw DebugFileError(.notELF, "the upload is not an ELF or Mach-O file that can be read: \(error)")
        }
        if case .buildID(let found) = progress.check.verdict, let claimed, found != claimed {
            throw DebugFileError(.buildIDMismatch, "the file's build-id is \(found), not \(claimed)")
        }
        digest.update(bytes)
        try handle.write(contentsOf: bytes)
        progress.written = total
    }

    /// Decides what the upload is from `progress.head` once it holds enough bytes (or the whole file, when `final`).
    func decide(_ progress: inout Progress, final: Bool) throws {
        let head = progress.head
        guard head.count >= SourceBundle.magic.count || final else { return }
        if SourceBundle.hasMagic(head) || DebugFileSplitter.isZip(head) {
            progress.kind = .checkedWhole
        } else if MachOFileInspector.hasMagic(head) {
            guard head.count >= Self.machOHeadBytes || final else { return }
            // A thin image's UUID is in its load commands, right after the header: usually in the first piece.
            if let found = try MachOFileInspector().inspectHead(head), let claimed, found != claimed {
                throw DebugFileError(.buildIDMismatch, "the file's build-id (LC_UUID) is \(found), not \(claimed)")
            }
            progress.kind = .machO
        } else {
            progress.kind = .elf
            do {
                try progress.check.feed(head)
            } catch ELFError.notELF {
                throw DebugFileError(
                    .notELF, "the upload is not an ELF or Mach-O file (nor a ZIP of dSYMs or a source bundle)")
            }
        }
        progress.head = []
    }
}
