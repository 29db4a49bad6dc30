import FaultlineCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `ByteSource` over a file, read with `pread`: only the bytes asked for are read, so inspecting a
/// 2 GB debug file costs a few kilobytes of I/O.
public final class FileByteSource: ByteSource {
    let fd: Int32
    public let size: UInt64

    public init(path: String) throws {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ELFError.unsupported("cannot open the file (errno \(errno))") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            close(fd)
            throw ELFError.unsupported("cannot stat the file (errno \(errno))")
        }
        size = UInt64(clamping: st.st_size)
    }

    deinit { close(fd) }

    public func bytes(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
            throw ELFError.truncated("needs \(count) bytes at offset \(offset), the file has \(size)")
        }
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            guard n > 0 else { throw ELFError.truncated("short read at offset \(offset)") }
            done += n
        }
        return out
    }
}

/// `DebugFileInspecting` with the ELF reader.
public struct ELFFileInspector: DebugFileInspecting {
    public init() {}

    public func inspect(path: String) throws -> DebugFileFacts {
        let info = try ELFReader.inspect(try FileByteSource(path: path))
        var kinds = Set<DebugFileKind>()
        if info.servesDebugInfo { kinds.insert(.debuginfo) }
        if info.servesExecutable { kinds.insert(.executable) }
        return DebugFileFacts(
            buildID: info.buildID, kinds: kinds, architecture: info.architecture, fileType: info.fileType.rawValue,
            features: info.features, compressedDebugSections: info.hasCompressedDebugSections)
    }
}
