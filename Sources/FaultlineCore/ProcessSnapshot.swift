/// The state of a crashed native process as a stack walker needs it: each thread's registers, the
/// memory that was captured around the stacks, and the modules mapped at their load addresses.
///
/// A minidump (Crashpad, Breakpad, sentry-native, `faultline-run`) is converted into a snapshot once,
/// at the edge; the walker reads only this. Every value came from a hostile file: nothing here is
/// checked beyond its type, so readers of a snapshot bound their loops and check their arithmetic.
public struct ProcessSnapshot: Sendable, Equatable {
    public enum Architecture: String, Sendable, Equatable {
        case x86_64
        case arm64
    }

    public var architecture: Architecture
    /// The threads, the crashing one first when the dump names it.
    public var threads: [Thread]
    /// Captured memory, sorted by start address and not overlapping.
    public var memory: [MemoryRegion]
    /// The mapped modules, sorted by base address.
    public var modules: [Module]
    /// What stopped the process, when the dump says.
    public var exception: Exception?

    public init(
        architecture: Architecture, threads: [Thread], memory: [MemoryRegion], modules: [Module],
        exception: Exception?
    ) {
        self.architecture = architecture
        self.threads = threads
        self.memory = memory
        self.modules = modules
        self.exception = exception
    }

    public struct Thread: Sendable, Equatable {
        public var id: UInt64
        public var name: String?
        /// Whether this thread raised the exception. Its registers are the crash context (the
        /// Exception stream's), not the signal handler's state from the thread list.
        public var crashed: Bool
        /// General registers by DWARF register number: x86-64 0–16 (`rax`…`r15`, 16 = return
        /// address column/`rip`), arm64 0–30 (`x0`…`x30`), 31 `sp`.
        public var registers: [Int: UInt64]
        /// The instruction pointer (x86-64 `rip`, arm64 `pc`).
        public var pc: UInt64
        /// The stack pointer (x86-64 `rsp`, DWARF 7; arm64 `sp`, DWARF 31).
        public var sp: UInt64

        public init(id: UInt64, name: String? = nil, crashed: Bool, registers: [Int: UInt64], pc: UInt64, sp: UInt64) {
            self.id = id
            self.name = name
            self.crashed = crashed
            self.registers = registers
            self.pc = pc
            self.sp = sp
        }
    }

    public struct MemoryRegion: Sendable, Equatable {
        public var start: UInt64
        public var bytes: [UInt8]

        public init(start: UInt64, bytes: [UInt8]) {
            self.start = start
            self.bytes = bytes
        }
    }

    public struct Module: Sendable, Equatable {
        /// The mapped file's path as the process saw it.
        public var path: String
        public var base: UInt64
        public var size: UInt64
        public var buildID: BuildID?

        public init(path: String, base: UInt64, size: UInt64, buildID: BuildID?) {
            self.path = path
            self.base = base
            self.size = size
            self.buildID = buildID
        }
    }

    public struct Exception: Sendable, Equatable {
        /// The POSIX signal number (Linux dumps keep it in the exception code).
        public var signal: Int32
        /// The signal's `si_code`.
        public var code: Int32
        public var faultAddress: UInt64
        public var threadID: UInt64

        public init(signal: Int32, code: Int32, faultAddress: UInt64, threadID: UInt64) {
            self.signal = signal
            self.code = code
            self.faultAddress = faultAddress
            self.threadID = threadID
        }
    }
}
