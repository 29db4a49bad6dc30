import FaultlineCore

/// A minidump as Crashpad, Breakpad, sentry-native and `faultline-run` write it on Linux: a pure reader of
/// hostile bytes.
///
/// The file is a header, a directory of streams, and the streams each directory entry points at. The reader
/// decodes the streams a Linux crash carries — SystemInfo, Exception (with the crash context), ThreadList,
/// MemoryList/Memory64List, ModuleList (CodeView `BpEL` build-ids, `RSDS` for completeness), ThreadNames,
/// MiscInfo's process id, Breakpad's Linux streams and CrashpadInfo annotations — and keeps the others as
/// directory entries. `snapshot()` converts the result into the `ProcessSnapshot` a stack walker reads.
///
/// Every offset, count and size comes from the file: reads are bounds-checked, list counts must fit in
/// their stream, and stream, string and memory totals are capped (`max*` below), so no input traps,
/// allocates without bound or loops for long. A stream the reader understands but cannot decode fails the
/// whole read with a `MinidumpError` that names the stream; unknown streams are skipped.
///
/// Memory is not copied while reading: `MemoryRange` and `Thread.stack` name file ranges, copied once by
/// `snapshot()` or `memory(_:)`.
public struct Minidump: Sendable {
    /// Most directory entries read.
    static let maxStreams = 4_096
    /// Most bytes of one string (a module path, an annotation).
    static let maxStringBytes: UInt32 = 64 * 1024
    /// Most Crashpad annotations read, over all modules.
    static let maxAnnotations = 4_096

    /// The file's bytes.
    let file: MinidumpBytes

    /// The header's version (low 16 bits `0xA793`) and implementation-specific high bits.
    public var version: UInt32
    /// When the dump was written, seconds since 1970 (UTC).
    public var timestamp: UInt32
    /// `MINIDUMP_TYPE` flags.
    public var flags: UInt64
    /// The directory, in file order: every stream, understood or not.
    public var streams: [StreamEntry] = []

    public var systemInfo: SystemInfo?
    public var exception: Exception?
    public var threads: [Thread] = []
    /// Thread names by thread id (the ThreadNames stream).
    public var threadNames: [UInt32: String] = [:]
    /// Captured memory, in file order (MemoryList, then Memory64List).
    public var memoryRanges: [MemoryRange] = []
    public var modules: [Module] = []
    /// The process id (MiscInfo), when the dump says.
    public var processID: UInt32?
    /// Breakpad's Linux streams (`/proc` files copied into the dump).
    public var linux = LinuxStreams()
    /// Crashpad's own stream: report and client ids, annotations.
    public var crashpad: CrashpadInfo?

    /// Reads a minidump.
    /// - Throws: `MinidumpError` naming the first thing that is wrong.
    public init(bytes: [UInt8]) throws(MinidumpError) {
        file = MinidumpBytes(bytes: bytes)
        guard bytes.count >= 32 else {
            if bytes.count >= 4, Array(bytes[0..<4]) != Self.signature {
                throw MinidumpError(.notMinidump, "the file does not start with MDMP")
            }
            throw MinidumpError(.truncated, "the \(bytes.count)-byte file is shorter than the 32-byte minidump header")
        }
        guard Array(bytes[0..<4]) == Self.signature else {
            throw MinidumpError(.notMinidump, "the file does not start with MDMP")
        }
        version = file.u32(4)
        guard version & 0xFFFF == 0xA793 else {
            throw MinidumpError(.malformed, "header version \(version & 0xFFFF) is not 0xa793")
        }
        let streamCount = file.u32(8)
        let directory = file.u32(12)
        timestamp = file.u32(20)
        flags = file.u64(24)
        guard streamCount <= Self.maxStreams else {
            throw MinidumpError(.tooLarge, "the directory lists \(streamCount) streams, more than \(Self.maxStreams)")
        }
        let entries = try file.range(UInt64(directory), UInt64(streamCount) * 12, "the stream directory")
        streams.reserveCapacity(Int(streamCount))
        for at in stride(from: entries.lowerBound, to: entries.upperBound, by: 12) {
            streams.append(
                StreamEntry(type: file.u32(at), location: Location(size: file.u32(at + 4), rva: file.u32(at + 8))))
        }
        // SystemInfo first: it says how to read the CPU contexts other streams hold.
        for entry in streams where entry.type == StreamType.systemInfo { try read(entry) }
        for entry in streams where entry.type != StreamType.systemInfo { try read(entry) }
    }

    static let signature: [UInt8] = Array("MDMP".utf8)

    /// The bytes of a captured range, thread stack or stream.
    public func bytes(_ location: Location) -> ArraySlice<UInt8> {
        // Locations handed out by the reader were checked when they were read.
        guard let range = try? file.range(UInt64(location.rva), UInt64(location.size), "a location") else { return [] }
        return file.bytes[range]
    }

    /// The bytes of a captured memory range.
    public func memory(_ range: MemoryRange) -> ArraySlice<UInt8> {
        guard let r = try? file.range(range.fileOffset, range.size, "memory") else { return [] }
        return file.bytes[r]
    }
}

extension Minidump {
    /// Stream types this reader knows (`MINIDUMP_STREAM_TYPE`, Breakpad's `0x4767…`, Crashpad's `0x4350…`).
    public enum StreamType {
        public static let threadList: UInt32 = 3
        public static let moduleList: UInt32 = 4
        public static let memoryList: UInt32 = 5
        public static let exception: UInt32 = 6
        public static let systemInfo: UInt32 = 7
        public static let memory64List: UInt32 = 9
        public static let miscInfo: UInt32 = 15
        public static let threadNames: UInt32 = 24
        public static let linuxCPUInfo: UInt32 = 0x4767_0003
        public static let linuxProcStatus: UInt32 = 0x4767_0004
        public static let linuxLSBRelease: UInt32 = 0x4767_0005
        public static let linuxCmdLine: UInt32 = 0x4767_0006
        public static let linuxEnviron: UInt32 = 0x4767_0007
        public static let linuxAuxv: UInt32 = 0x4767_0008
        public static let linuxMaps: UInt32 = 0x4767_0009
        public static let crashpadInfo: UInt32 = 0x4350_0001
    }

    /// Where something is in the file (`MINIDUMP_LOCATION_DESCRIPTOR`).
    public struct Location: Sendable, Equatable {
        public var size: UInt32
        public var rva: UInt32
        public init(size: UInt32, rva: UInt32) {
            self.size = size
            self.rva = rva
        }
    }

    /// One directory entry.
    public struct StreamEntry: Sendable, Equatable {
        public var type: UInt32
        public var location: Location
    }

    /// The CPU and OS that wrote the dump (`MINIDUMP_SYSTEM_INFO`).
    public struct SystemInfo: Sendable, Equatable {
        /// `PROCESSOR_ARCHITECTURE_*`: 0 x86, 5 ARM, 9 AMD64, 12 and Breakpad's 0x8003 ARM64.
        public var processorArchitecture: UInt16
        public var processorCount: UInt8
        /// 0x8201 Linux, 0x8203 Android, 2 Windows, 0x8101 macOS, 0x8102 iOS.
        public var platformID: UInt32
        public var majorVersion: UInt32
        public var minorVersion: UInt32
        public var buildNumber: UInt32
        /// The OS build string (Linux: the kernel's `uname -srvm`), when present.
        public var osVersion: String?

        /// The architecture a `ProcessSnapshot` can describe, when this is one.
        public var architecture: ProcessSnapshot.Architecture? {
            switch processorArchitecture {
            case 9: return .x86_64
            case 12, 0x8003: return .arm64
            default: return nil
            }
        }
    }

    /// The exception that ended the process (`MINIDUMP_EXCEPTION_STREAM`). On Linux the code is the
    /// signal number and the flags are its `si_code`.
    public struct Exception: Sendable, Equatable {
        public var threadID: UInt32
        public var code: UInt32
        public var flags: UInt32
        public var address: UInt64
        /// `exception_information`, as many as the record says (at most 15).
        public var parameters: [UInt64]
        /// The crashing thread's registers at the fault, not the signal handler's.
        public var context: CPUContext?
    }

    /// One thread of the thread list (`MINIDUMP_THREAD`).
    public struct Thread: Sendable, Equatable {
        public var id: UInt32
        /// The start address of the captured stack, and where its bytes are.
        public var stackStart: UInt64
        public var stack: Location
        /// The thread's registers when the dump was written (for the crashing thread, the signal handler's).
        public var context: CPUContext?
    }

    /// A captured memory range: `size` bytes of the process at `start`, at `fileOffset` in the file.
    public struct MemoryRange: Sendable, Equatable {
        public var start: UInt64
        public var size: UInt64
        public var fileOffset: UInt64
    }

    /// A mapped module (`MINIDUMP_MODULE`).
    public struct Module: Sendable, Equatable {
        public var base: UInt64
        public var size: UInt32
        public var name: String
        public var codeView: CodeView?

        /// The GNU build-id, when the CodeView record carries one (`BpEL`).
        public var buildID: BuildID? {
            if case .elf(let id) = codeView { return BuildID(bytes: id) }
            return nil
        }
    }

    /// A module's CodeView record.
    public enum CodeView: Sendable, Equatable {
        /// `BpEL`: Breakpad's and Crashpad's record for ELF modules, the GNU build-id's bytes.
        case elf(buildID: [UInt8])
        /// `RSDS`: a PDB 7.0 signature (GUID, age, file name). Old Breakpad Linux writers put the first
        /// 16 bytes of the build-id in the GUID.
        case pdb70(guid: [UInt8], age: UInt32, fileName: String)
        /// Any other signature, kept so a reader can say what it was.
        case other(signature: UInt32)
    }

    /// Breakpad's Linux streams: files from `/proc` and `/etc` copied into the dump.
    public struct LinuxStreams: Sendable, Equatable {
        /// `/proc/PID/cmdline`, one element an argument.
        public var cmdLine: [String]?
        /// `/proc/PID/environ`, one element a `NAME=value`. Raw memory of the user's process: drop it before
        /// storing.
        public var environ: [String]?
        public var lsbRelease: String?
        public var maps: String?
        public var procStatus: String?
        public var cpuInfo: String?
        public var auxv: [UInt8]?
    }

    /// Crashpad's stream (`MinidumpCrashpadInfo`).
    public struct CrashpadInfo: Sendable, Equatable {
        /// The report's UUID bytes, as written (the first three fields little-endian).
        public var reportID: [UInt8]
        public var clientID: [UInt8]
        /// Process-wide annotations (`--annotation=K=V` and the client's simple annotations).
        public var annotations: [String: String]
        /// Annotations modules registered, in file order.
        public var modules: [ModuleAnnotations]
    }

    /// One module's Crashpad annotations.
    public struct ModuleAnnotations: Sendable, Equatable {
        /// The module's index in the module list.
        public var moduleIndex: UInt32
        public var list: [String]
        public var simple: [String: String]
        /// Annotation objects whose type is a string (`kString`), by name.
        public var objects: [String: String]
    }
}
