/// A minidump of a crashed Linux process, as Breakpad and Crashpad write them, from what the tracer read.
///
/// Pure: the bytes come only from ``MinidumpContent``, so the layout is testable without a process. Streams
/// written: ThreadList, MemoryList, ModuleList (CodeView `BpEL` records with the GNU build-id), Exception (the
/// crashing thread and its context), SystemInfo, MiscInfo (the process id), ThreadNames, and Breakpad's
/// LinuxMaps, LinuxCmdLine and LinuxProcStatus. Never LinuxEnviron: a program's environment holds secrets.
///
/// The launcher must not depend on `Formats` (the server's reader): the two meet only in the file format,
/// which the launcher's tests check by reading these dumps with `Formats.Minidump`.
struct MinidumpContent {
    enum CPU {
        case x86_64, arm64

        /// `MINIDUMP_SYSTEM_INFO.ProcessorArchitecture`: AMD64 9, ARM64 12 (Crashpad's numbers).
        var architecture: UInt16 { self == .x86_64 ? 9 : 12 }
    }

    struct Thread {
        var id: UInt32
        var name: String?
        /// The thread's context record (``MinidumpContext``).
        var context: [UInt8]
        /// The stack memory captured near the stack pointer, if any.
        var stack: Region?
    }

    struct Region {
        var start: UInt64
        var bytes: [UInt8]
    }

    struct Module {
        var base: UInt64
        var size: UInt64
        var path: String
        /// The GNU build-id as the ELF note holds it; nil when the module has none.
        var buildID: [UInt8]?
    }

    struct Exception {
        var threadID: UInt32
        var signal: UInt32
        /// `si_code`.
        var code: UInt32
        var address: UInt64
    }

    var cpu: CPU
    var processID: UInt32
    /// Unix seconds when the process stopped.
    var time: UInt32
    var processors: UInt8
    /// `uname`'s sysname, release, version and machine, space-separated (Breakpad's CSD version).
    var osDescription: String
    /// The crashing thread first.
    var threads: [Thread]
    /// Memory captured besides the stacks (the code around the crashing instruction).
    var memory: [Region]
    var modules: [Module]
    var exception: Exception?
    /// `/proc/PID/maps`, `/proc/PID/cmdline`, `/proc/PID/status` as read.
    var maps: [UInt8]?
    var commandLine: [UInt8]?
    var status: [UInt8]?
}

enum MinidumpWriter {
    /// Stream types (`MINIDUMP_STREAM_TYPE`, and Breakpad's Linux range at 0x4767_0000).
    enum Stream: UInt32 {
        case threadList = 3, moduleList = 4, memoryList = 5, exception = 6, systemInfo = 7, miscInfo = 15
        case threadNames = 24
        case linuxProcStatus = 0x4767_0004, linuxCmdLine = 0x4767_0006, linuxMaps = 0x4767_0009
    }

    /// `MDMP`, version 0xa793.
    static let signature: UInt32 = 0x504d_444d
    static let version: UInt32 = 0xa793
    /// `MD_OS_LINUX` (Breakpad).
    static let platformLinux: UInt32 = 0x8201
    /// `BpEL`: a CodeView record holding an ELF build-id.
    static let codeViewELF: UInt32 = 0x4270_454c

    /// The dump's bytes. Offsets are 32-bit (`RVA`): content past 4 GiB cannot be written and the caller's
    /// bounds keep it far below (``ProcessReader``).
    static func write(_ content: MinidumpContent) -> [UInt8] {
        var out = ByteWriter()
        var streams: [(Stream, UInt32, UInt32)] = []  // type, size, rva
        func stream(_ type: Stream, _ body: (inout ByteWriter) -> Void) {
            out.align(8)
            let start = out.count
            body(&out)
            streams.append((type, UInt32(out.count - start), UInt32(start)))
        }
        let streamCount = 10
        // Header, then the directory (patched at the end).
        out.u32(signature)
        out.u32(version)
        out.u32(UInt32(streamCount))
        out.u32(32)
        out.u32(0)  // checksum
        out.u32(content.time)
        out.u64(0)  // flags: MiniDumpNormal
        let directory = out.count
        out.zeros(streamCount * 12)

        // Contexts and stacks first, so the lists can point at them.
        var contextLocations: [(UInt32, UInt32)] = []
        var stackLocations: [(UInt64, UInt32, UInt32)?] = []
        for thread in content.threads {
            out.align(16)
            contextLocations.append((UInt32(thread.context.count), UInt32(out.count)))
            out.bytes(thread.context)
        }
        var memory: [(UInt64, UInt32, UInt32)] = []
        for thread in content.threads {
            guard let stack = thread.stack, !stack.bytes.isEmpty else {
                stackLocations.append(nil)
                continue
            }
            out.align(16)
            let location = (stack.start, UInt32(stack.bytes.count), UInt32(out.count))
            out.bytes(stack.bytes)
            stackLocations.append(location)
            memory.append(location)
        }
        for region in content.memory where !region.bytes.isEmpty {
            out.align(16)
            memory.append((region.start, UInt32(region.bytes.count), UInt32(out.count)))
            out.bytes(region.bytes)
        }
        memory.sort { $0.0 < $1.0 }

        stream(.threadList) { w in
            w.u32(UInt32(content.threads.count))
            for (index, thread) in content.threads.enumerated() {
                w.u32(thread.id)
                w.u32(0)  // suspend count
                w.u32(0)  // priority class
                w.u32(0)  // priority
                w.u64(0)  // TEB
                let stack = stackLocations[index]
                w.u64(stack?.0 ?? 0)
                w.u32(stack?.1 ?? 0)
                w.u32(stack?.2 ?? 0)
                w.u32(contextLocations[index].0)
                w.u32(contextLocations[index].1)
            }
        }
        stream(.memoryList) { w in
            w.u32(UInt32(memory.count))
            for (start, size, rva) in memory {
                w.u64(start)
                w.u32(size)
                w.u32(rva)
            }
        }
        // Module names and CodeView records go after the list; their offsets are patched in.
        var modulePatches: [(Int, MinidumpContent.Module)] = []
        stream(.moduleList) { w in
            w.u32(UInt32(content.modules.count))
            for module in content.modules {
                let at = w.count
                w.u64(module.base)
                w.u32(UInt32(clamping: module.size))
                w.u32(0)  // checksum
                w.u32(0)  // time stamp
                w.u32(0)  // name RVA, patched
                w.zeros(52)  // VS_FIXEDFILEINFO
                w.u32(0)  // CodeView record: size, RVA, patched
                w.u32(0)
                w.zeros(8)  // misc record
                w.zeros(16)  // reserved
                modulePatches.append((at, module))
            }
        }
        for (at, module) in modulePatches {
            out.align(4)
            out.patch(at + 20, UInt32(out.count))
            out.minidumpString(module.path)
            if let id = module.buildID {
                out.align(4)
                out.patch(at + 20 + 4 + 52, UInt32(4 + id.count))
                out.patch(at + 20 + 4 + 52 + 4, UInt32(out.count))
                out.u32(codeViewELF)
                out.bytes(id)
            }
        }
        stream(.exception) { w in
            let exception = content.exception
            let index = exception.flatMap { e in content.threads.firstIndex { $0.id == e.threadID } }
            w.u32(exception?.threadID ?? 0)
            w.u32(0)  // alignment
            w.u32(exception?.signal ?? 0)
            w.u32(exception?.code ?? 0)
            w.u64(0)  // nested record
            w.u64(exception?.address ?? 0)
            w.u32(0)  // parameters
            w.u32(0)
            w.zeros(15 * 8)
            w.u32(index.map { contextLocations[$0].0 } ?? 0)
            w.u32(index.map { contextLocations[$0].1 } ?? 0)
        }
        var csdPatch = 0
        stream(.systemInfo) { w in
            w.u16(content.cpu.architecture)
            w.u16(0)  // processor level
            w.u16(0)  // processor revision
            w.u8(content.processors)
            w.u8(1)  // product type: workstation
            let release = Self.kernelVersion(content.osDescription)
            w.u32(release.0)
            w.u32(release.1)
            w.u32(release.2)
            w.u32(platformLinux)
            csdPatch = w.count
            w.u32(0)  // CSD version RVA, patched
            w.u16(0)  // suite mask
            w.u16(0)
            w.zeros(24)  // CPU information
        }
        out.align(4)
        out.patch(csdPatch, UInt32(out.count))
        out.minidumpString(content.osDescription)
        stream(.miscInfo) { w in
            w.u32(24)  // size of MINIDUMP_MISC_INFO
            w.u32(1)  // MINIDUMP_MISC1_PROCESS_ID
            w.u32(content.processID)
            w.zeros(12)
        }
        var namePatches: [(Int, String)] = []
        stream(.threadNames) { w in
            let named = content.threads.filter { $0.name != nil }
            w.u32(UInt32(named.count))
            for thread in named {
                w.u32(thread.id)
                namePatches.append((w.count, thread.name ?? ""))
                w.u64(0)  // RVA64 of the name, patched
            }
        }
        for (at, name) in namePatches {
            out.align(4)
            out.patch64(at, UInt64(out.count))
            out.minidumpString(name)
        }
        stream(.linuxMaps) { $0.bytes(content.maps ?? []) }
        stream(.linuxCmdLine) { $0.bytes(content.commandLine ?? []) }
        stream(.linuxProcStatus) { $0.bytes(content.status ?? []) }

        precondition(streams.count == streamCount, "the header's stream count must match the streams written")
        for (index, (type, size, rva)) in streams.enumerated() {
            out.patch(directory + index * 12, type.rawValue)
            out.patch(directory + index * 12 + 4, size)
            out.patch(directory + index * 12 + 8, rva)
        }
        return out.data
    }

    /// Major, minor and patch of the kernel release in `Linux 6.8.0-45-generic #45 …`; zeros when absent.
    static func kernelVersion(_ description: String) -> (UInt32, UInt32, UInt32) {
        let words = description.split(separator: " ")
        guard words.count > 1 else { return (0, 0, 0) }
        var numbers: [UInt32] = []
        for part in words[1].split(whereSeparator: { !$0.isNumber }).prefix(3) {
            numbers.append(UInt32(part.prefix(9)) ?? 0)
        }
        while numbers.count < 3 { numbers.append(0) }
        return (numbers[0], numbers[1], numbers[2])
    }
}

/// Little-endian bytes with in-place patches of earlier fields.
struct ByteWriter {
    private(set) var data: [UInt8] = []
    var count: Int { data.count }

    mutating func u8(_ value: UInt8) { data.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func bytes(_ value: [UInt8]) { data.append(contentsOf: value) }
    mutating func zeros(_ count: Int) { data.append(contentsOf: repeatElement(0, count: count)) }

    mutating func align(_ alignment: Int) {
        let extra = data.count % alignment
        if extra != 0 { zeros(alignment - extra) }
    }

    mutating func patch(_ offset: Int, _ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { for (i, b) in $0.enumerated() { data[offset + i] = b } }
    }

    mutating func patch64(_ offset: Int, _ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { for (i, b) in $0.enumerated() { data[offset + i] = b } }
    }

    /// `MINIDUMP_STRING`: the UTF-16LE byte length, the code units, a 16-bit NUL.
    mutating func minidumpString(_ text: String) {
        let units = Array(text.utf16.prefix(32 * 1024))
        u32(UInt32(units.count * 2))
        for unit in units { u16(unit) }
        u16(0)
    }
}
