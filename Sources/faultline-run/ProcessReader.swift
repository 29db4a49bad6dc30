import CPtrace

#if canImport(Glibc)
import Glibc
#endif

/// Reads a stopped, traced process into a ``MinidumpContent``: each thread's registers (`PTRACE_GETREGSET`),
/// the stack memory near each stack pointer and the code around the crashing instruction (`/proc/PID/mem`),
/// the modules from `/proc/PID/maps` with the build-ids from their ELF notes as mapped, and the process's
/// maps, command line and status.
///
/// Bounds (so that a dump stays small whatever the process looks like): at most ``maxThreads`` threads, the
/// crashing thread's stack up to ``crashingStackBytes`` and the others' up to ``stackBytes`` (from the stack
/// pointer, less the x86-64 red zone, to the end of its mapping), at most ``maxMemoryBytes`` of memory in all
/// (threads past it keep their registers only), ``maxModules`` modules, and 1 MiB of each `/proc` file.
///
/// The environment is never written: no LinuxEnviron stream, and no stack memory from where the kernel put the
/// argument and environment strings at exec (`arg_start` of `/proc/PID/stat`, the top of the main thread's stack)
/// upwards. Without that cut the main thread's stack, whose frames lie a few KiB below those strings, would carry
/// every variable (tokens, passwords in URLs) to the server; the frames need none of it.
struct ProcessReader {
    static let maxThreads = 1024
    static let crashingStackBytes = 256 * 1024
    static let stackBytes = 64 * 1024
    static let maxMemoryBytes = 16 << 20
    static let maxModules = 2048
    /// The bytes below the stack pointer a leaf function may use without moving it (x86-64 System V).
    static let redZone: UInt64 = 128
    static let procFileBytes = 1 << 20

    let pid: pid_t
    private let memory: Int32

    init(pid: pid_t) {
        self.pid = pid
        memory = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
    }

    func close() { if memory >= 0 { _ = Glibc.close(memory) } }

    /// The dump of the process stopped at `crash` (every thread in `threads` must be in a ptrace stop).
    func read(crash: CrashStop, threads: [pid_t], now: UInt32) -> MinidumpContent {
        let mapsText = Self.readFile("/proc/\(pid)/maps")
        let maps = mapsText.map(Self.parseMaps) ?? []
        var content = MinidumpContent(
            cpu: Self.cpu, processID: UInt32(bitPattern: pid), time: now,
            processors: UInt8(clamping: sysconf(Int32(_SC_NPROCESSORS_ONLN))), osDescription: Self.osDescription(),
            threads: [], memory: [], modules: [], exception: nil, maps: mapsText,
            commandLine: Self.readFile("/proc/\(pid)/cmdline"), status: Self.readFile("/proc/\(pid)/status"))
        content.exception = .init(
            threadID: UInt32(bitPattern: crash.thread), signal: UInt32(bitPattern: crash.signal),
            code: UInt32(bitPattern: crash.code), address: crash.address)
        var budget = Self.maxMemoryBytes
        var pc: UInt64?
        let strings = Self.stringsStart(pid: pid)
        for tid in ([crash.thread] + threads.filter { $0 != crash.thread }).prefix(Self.maxThreads) {
            guard let registers = Self.registers(of: tid) else { continue }
            let limit = min(budget, tid == crash.thread ? Self.crashingStackBytes : Self.stackBytes)
            let stack = stackRegion(sp: registers.sp, maps: maps, limit: limit, below: strings)
            budget -= stack?.bytes.count ?? 0
            if tid == crash.thread { pc = registers.pc }
            content.threads.append(
                .init(
                    id: UInt32(bitPattern: tid), name: Self.threadName(pid: pid, tid: tid), context: registers.context,
                    stack: stack))
        }
        // The code around the crashing instruction, as Breakpad keeps it (unless a stack already holds it).
        if let pc, pc > 128, let code = readRegion(pc - 128, count: 256),
            !content.threads.contains(where: { $0.stack.map { Self.overlaps($0, code) } ?? false })
        {
            content.memory.append(code)
        }
        content.modules = modules(maps)
        return content
    }

    static func overlaps(_ a: MinidumpContent.Region, _ b: MinidumpContent.Region) -> Bool {
        let aEnd = a.start &+ UInt64(a.bytes.count)
        let bEnd = b.start &+ UInt64(b.bytes.count)
        return a.start < bEnd && b.start < aEnd
    }

    // MARK: - Registers

    struct Registers {
        var pc: UInt64
        var sp: UInt64
        var context: [UInt8]
    }

    #if arch(x86_64)
    static let cpu = MinidumpContent.CPU.x86_64

    static func registers(of tid: pid_t) -> Registers? {
        var regs = user_regs_struct()
        guard getRegisterSet(tid, NT_PRSTATUS, &regs) else { return nil }
        var fx = [UInt8](repeating: 0, count: 512)
        let hasFX = fx.withUnsafeMutableBytes { getRegisterSet(tid, NT_PRFPREG, $0.baseAddress!, $0.count) }
        let r = MinidumpContext.AMD64(
            rax: regs.rax, rbx: regs.rbx, rcx: regs.rcx, rdx: regs.rdx, rsi: regs.rsi, rdi: regs.rdi,
            rbp: regs.rbp, rsp: regs.rsp, r8: regs.r8, r9: regs.r9, r10: regs.r10, r11: regs.r11,
            r12: regs.r12, r13: regs.r13, r14: regs.r14, r15: regs.r15, rip: regs.rip, eflags: regs.eflags,
            cs: regs.cs, ss: regs.ss, ds: regs.ds, es: regs.es, fs: regs.fs, gs: regs.gs,
            fxsave: hasFX ? fx : nil)
        return Registers(pc: regs.rip, sp: regs.rsp, context: MinidumpContext.amd64(r))
    }
    #elseif arch(arm64)
    static let cpu = MinidumpContent.CPU.arm64

    static func registers(of tid: pid_t) -> Registers? {
        var regs = user_pt_regs()
        guard getRegisterSet(tid, NT_PRSTATUS, &regs) else { return nil }
        var r = MinidumpContext.ARM64()
        withUnsafeBytes(of: regs.regs) { raw in
            for i in 0..<31 { r.x[i] = raw.load(fromByteOffset: i * 8, as: UInt64.self) }
        }
        r.sp = regs.sp
        r.pc = regs.pc
        r.pstate = regs.pstate
        var fp = [UInt8](repeating: 0, count: 32 * 16 + 8)
        if fp.withUnsafeMutableBytes({ getRegisterSet(tid, NT_PRFPREG, $0.baseAddress!, $0.count) }) {
            r.vector = Array(fp[0..<512])
            r.fpsr = u32(fp, 512)
            r.fpcr = u32(fp, 516)
        }
        return Registers(pc: regs.pc, sp: regs.sp, context: MinidumpContext.arm64(r))
    }
    #endif

    private static func getRegisterSet<T>(_ tid: pid_t, _ type: Int32, _ value: inout T) -> Bool {
        withUnsafeMutableBytes(of: &value) { getRegisterSet(tid, type, $0.baseAddress!, $0.count) }
    }

    private static func getRegisterSet(_ tid: pid_t, _ type: Int32, _ base: UnsafeMutableRawPointer, _ size: Int)
        -> Bool
    {
        var vector = iovec(iov_base: base, iov_len: size)
        return faultline_ptrace(
            Int32(FAULTLINE_PTRACE_GETREGSET), tid, UnsafeMutableRawPointer(bitPattern: Int(type)), &vector) == 0
    }

    // MARK: - Memory

    /// Up to `count` bytes at `address`; nil when none can be read. Stops at the first unreadable byte.
    func readRegion(_ address: UInt64, count: Int) -> MinidumpContent.Region? {
        guard memory >= 0, count > 0, let offset = off_t(exactly: address) else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes {
                pread(memory, $0.baseAddress! + done, count - done, offset + off_t(done))
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        guard done > 0 else { return nil }
        return .init(start: address, bytes: Array(bytes[0..<done]))
    }

    /// The stack from just below `sp` to the end of its mapping, at most `limit` bytes, and never `strings` or above
    /// when that address is in the range (the argument and environment strings: ``stringsStart(pid:)``).
    func stackRegion(sp: UInt64, maps: [Mapping], limit: Int, below strings: UInt64? = nil) -> MinidumpContent.Region? {
        guard limit > 0, let mapping = maps.first(where: { $0.start <= sp && sp < $0.end }) else { return nil }
        let start = max(mapping.start, sp >= Self.redZone ? sp - Self.redZone : 0)
        var end = mapping.end
        if let strings, start < strings, strings < end { end = strings }
        let count = Int(clamping: min(end - start, UInt64(limit)))
        return readRegion(start, count: count)
    }

    /// Where the process's argument strings begin, the environment's follow (`arg_start`, field 48 of
    /// `/proc/PID/stat`, shown to a tracer); nil when unreadable or zero.
    static func stringsStart(pid: pid_t) -> UInt64? {
        guard let text = readFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: UInt8(ascii: ")")) else {
            return nil
        }
        // After the command name (which may hold spaces and parentheses): field 3 first, so field N at N - 3.
        let fields = text[(close + 1)...].split(separator: 0x20)
        guard fields.count > 45, let value = UInt64(String(decoding: fields[45], as: UTF8.self)), value > 0 else {
            return nil
        }
        return value
    }

    // MARK: - Modules

    struct Mapping: Equatable {
        var start: UInt64
        var end: UInt64
        var readable: Bool
        var offset: UInt64
        var inode: UInt64
        var path: String
    }

    /// `start-end perms offset dev inode path` lines; malformed lines are skipped.
    static func parseMaps(_ text: [UInt8]) -> [Mapping] {
        var out: [Mapping] = []
        for line in text.split(separator: 0x0A).prefix(65_536) {
            let fields = line.split(separator: 0x20, maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5 else { continue }
            let range = fields[0].split(separator: UInt8(ascii: "-"))
            guard range.count == 2, let start = hex(range[0]), let end = hex(range[1]), start < end,
                let offset = hex(fields[2]), let inode = UInt64(String(decoding: fields[4], as: UTF8.self))
            else { continue }
            var path = fields.count > 5 ? String(decoding: fields[5], as: UTF8.self) : ""
            while path.hasPrefix(" ") { path.removeFirst() }
            out.append(
                Mapping(
                    start: start, end: end, readable: fields[1].first == UInt8(ascii: "r"), offset: offset,
                    inode: inode,
                    path: path))
        }
        return out
    }

    private static func hex(_ text: ArraySlice<UInt8>) -> UInt64? {
        guard !text.isEmpty, text.count <= 16 else { return nil }
        return UInt64(String(decoding: text, as: UTF8.self), radix: 16)
    }

    /// Each ELF file mapped from offset 0 (and the vDSO): its base, the extent of its mappings, its path and
    /// the build-id read from its notes in the process's memory.
    func modules(_ maps: [Mapping]) -> [MinidumpContent.Module] {
        var out: [MinidumpContent.Module] = []
        var index = 0
        while index < maps.count, out.count < Self.maxModules {
            let first = maps[index]
            index += 1
            let isVDSO = first.path == "[vdso]"
            guard first.readable, first.offset == 0, isVDSO || (first.inode != 0 && first.path.hasPrefix("/")) else {
                continue
            }
            guard let header = readRegion(first.start, count: 64), header.bytes.count == 64,
                header.bytes.starts(with: [0x7f, 0x45, 0x4c, 0x46])
            else { continue }
            var end = first.end
            // The file's later mappings (code, data) follow; bss and gaps between them belong to it too.
            while index < maps.count, maps[index].path == first.path, maps[index].inode == first.inode,
                maps[index].offset != 0
            {
                end = maps[index].end
                index += 1
            }
            out.append(
                .init(
                    base: first.start, size: end - first.start, path: isVDSO ? "linux-vdso.so.1" : first.path,
                    buildID: buildID(base: first.start, header: header.bytes)))
        }
        return out
    }

    /// The `NT_GNU_BUILD_ID` note of the 64-bit ELF image mapped at `base`, read through its program headers.
    func buildID(base: UInt64, header: [UInt8]) -> [UInt8]? {
        guard header[4] == 2, header[5] == 1 else { return nil }  // ELFCLASS64, little-endian
        let phoff = Self.u64(header, 32)
        let phentsize = Int(Self.u16(header, 54))
        let phnum = Int(Self.u16(header, 56))
        guard phentsize >= 56, phnum > 0, phnum <= 256, phoff < 1 << 20 else { return nil }
        guard let table = readRegion(base + phoff, count: phentsize * phnum), table.bytes.count == phentsize * phnum
        else { return nil }
        // The load bias: the base less the first PT_LOAD's address (0 for position-independent files).
        var firstLoad: UInt64?
        var notes: [(UInt64, UInt64)] = []
        for i in 0..<phnum {
            let at = i * phentsize
            let type = Self.u32(table.bytes, at)
            if type == 1, firstLoad == nil { firstLoad = Self.u64(table.bytes, at + 16) }
            if type == 4 { notes.append((Self.u64(table.bytes, at + 16), Self.u64(table.bytes, at + 32))) }
        }
        guard let firstLoad, base >= firstLoad else { return nil }
        let bias = base - (firstLoad & ~0xfff)
        for (address, size) in notes.prefix(16) where size > 0 && size <= 64 * 1024 {
            let (start, overflow) = bias.addingReportingOverflow(address)
            guard !overflow, let region = readRegion(start, count: Int(size)) else { continue }
            if let id = Self.gnuBuildID(inNotes: region.bytes) { return id }
        }
        return nil
    }

    /// The descriptor of the first `GNU` note of type 3 in a note segment.
    static func gnuBuildID(inNotes bytes: [UInt8]) -> [UInt8]? {
        var at = 0
        while at + 12 <= bytes.count {
            let nameSize = Int(u32(bytes, at))
            let descSize = Int(u32(bytes, at + 4))
            let type = u32(bytes, at + 8)
            let nameStart = at + 12
            let descStart = nameStart + ((nameSize + 3) & ~3)
            let next = descStart + ((descSize + 3) & ~3)
            guard nameSize <= 256, descSize <= 4096, descStart + descSize <= bytes.count else {
                return nil
            }
            if type == 3, nameSize == 4, bytes[nameStart..<nameStart + 4].elementsEqual([0x47, 0x4e, 0x55, 0]),
                descSize > 0
            {
                return Array(bytes[descStart..<descStart + descSize])
            }
            at = next
        }
        return nil
    }

    private static func u16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    private static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }
    private static func u64(_ b: [UInt8], _ at: Int) -> UInt64 { UInt64(u32(b, at)) | UInt64(u32(b, at + 4)) << 32 }

    // MARK: - Files

    /// A `/proc` file's bytes, at most ``procFileBytes``; nil when it cannot be opened.
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = Glibc.close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while out.count < procFileBytes {
            let n = chunk.withUnsafeMutableBytes {
                Glibc.read(fd, $0.baseAddress, min($0.count, procFileBytes - out.count))
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    static func threadName(pid: pid_t, tid: pid_t) -> String? {
        guard var bytes = readFile("/proc/\(pid)/task/\(tid)/comm"), !bytes.isEmpty else { return nil }
        if bytes.last == 0x0A { bytes.removeLast() }
        return String(decoding: bytes.prefix(64), as: UTF8.self)
    }

    /// `Linux 6.8.0-45-generic #45-Ubuntu SMP … x86_64`, as Breakpad writes the CSD version.
    static func osDescription() -> String {
        var name = utsname()
        guard uname(&name) == 0 else { return "Linux" }
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
        }
        return [field(name.sysname), field(name.release), field(name.version), field(name.machine)].joined(
            separator: " ")
    }
}

/// Where a traced thread stopped with a fatal signal.
struct CrashStop {
    var thread: pid_t
    var signal: Int32
    var code: Int32
    var address: UInt64
}
