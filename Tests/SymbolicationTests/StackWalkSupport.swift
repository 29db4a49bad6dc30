import FaultlineCore
import Foundation
import Symbolication
import TestSupport

/// Real crashed-process snapshots without a minidump in between: a C program built by the test crashes (SIGSEGV
/// three calls deep, through an inlined function), and its signal handler writes the crash context's registers, the
/// stack from the red zone to the stack's top, and its own `/proc/self/maps`. The walker's tests turn that into a
/// `ProcessSnapshot` directly, so the walk is checked independently of any minidump reader.
enum SelfDump {
    /// The program: `main` → `outer` → `middle` (inlined into `outer`) → `crash`, which stores through NULL.
    static let source = """
        #define _GNU_SOURCE
        #include <signal.h>
        #include <stdint.h>
        #include <stdlib.h>
        #include <string.h>
        #include <fcntl.h>
        #include <unistd.h>
        #include <ucontext.h>

        static uintptr_t stack_end;
        static const char *out_path;
        static char maps[65536];
        static ssize_t maps_len;

        static void put(int fd, const void *p, size_t n) {
            while (n) { ssize_t w = write(fd, p, n); if (w <= 0) _exit(3); p = (const char *)p + w; n -= (size_t)w; }
        }

        /* Writes the interrupted context's registers in DWARF order (rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip),
           the stack from 128 bytes below rsp (the red zone) to its top, then the maps text. */
        static void handler(int sig, siginfo_t *info, void *ctx) {
            ucontext_t *uc = ctx;
            greg_t *g = uc->uc_mcontext.gregs;
            uint64_t regs[17] = {
                g[REG_RAX], g[REG_RDX], g[REG_RCX], g[REG_RBX], g[REG_RSI], g[REG_RDI], g[REG_RBP], g[REG_RSP],
                g[REG_R8], g[REG_R9], g[REG_R10], g[REG_R11], g[REG_R12], g[REG_R13], g[REG_R14], g[REG_R15],
                g[REG_RIP] };
            uint64_t start = regs[7] - 128, length = stack_end - start;
            int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            put(fd, regs, sizeof regs);
            put(fd, &start, 8);
            put(fd, &length, 8);
            put(fd, (const void *)start, length);
            put(fd, maps, (size_t)maps_len);
            close(fd);
            _exit(0);
        }

        __attribute__((noinline)) void crash(int *p, int v) { *p = v; __asm__ volatile("" ::: "memory"); }
        static inline void middle(int *p, int v) { crash(p, v + 1); }
        __attribute__((noinline)) void outer(int *p, int v) { middle(p, v * 2); __asm__ volatile("" ::: "memory"); }

        int main(int argc, char **argv) {
            out_path = argv[1];
            int fd = open("/proc/self/maps", O_RDONLY);
            ssize_t r;
            while ((r = read(fd, maps + maps_len, sizeof maps - 1 - maps_len)) > 0) maps_len += r;
            close(fd);
            char *line = strstr(maps, "[stack]");
            while (line > maps && line[-1] != '\\n') line--;
            stack_end = strtoull(strchr(line, '-') + 1, NULL, 16);
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = handler;
            sa.sa_flags = SA_SIGINFO;
            sigaction(SIGSEGV, &sa, NULL);
            outer(argc > 5 ? (int *)argv : NULL, argc);
            return 0;
        }
        """

    /// The program's own call chain, innermost first.
    static let callChain = ["crash", "middle", "outer", "main"]

    /// How the program is built: what its frames can be unwound with.
    enum Unwinding: String, CaseIterable {
        /// `.eh_frame` (clang's default): every frame by CFI.
        case cfi
        /// No CFI for the program's code (no unwind tables, `.debug_frame` removed), frame pointers kept.
        case framePointer
        /// No CFI and no frame pointers: only a stack scan finds the callers.
        case none

        var flags: [String] {
            switch self {
            case .cfi: return []
            case .framePointer:
                return ["-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-fno-omit-frame-pointer"]
            case .none: return ["-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-fomit-frame-pointer"]
            }
        }
    }

    struct Crash {
        var snapshot: ProcessSnapshot
        var program: String
    }

    /// Builds the program with clang `-g -O1` as `unwinding` says, runs it, and reads what its handler wrote.
    static func crash(_ unwinding: Unwinding, in folder: TempFolder) throws -> Crash {
        let source = try folder.write("selfdump.c", Self.source)
        let program = folder.file("selfdump-\(unwinding.rawValue)")
        try Command.check("clang", ["-g", "-O1"] + unwinding.flags + [source, "-o", program])
        if unwinding != .cfi { try Command.check("objcopy", ["--remove-section=.debug_frame", program]) }
        let out = folder.file("selfdump-\(unwinding.rawValue).bin")
        try Command.check(program, [out])
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        return Crash(snapshot: try snapshot(data), program: program)
    }

    /// Reads the handler's file into a one-thread snapshot whose modules are the file mappings of the maps text.
    static func snapshot(_ data: [UInt8]) throws -> ProcessSnapshot {
        func word(_ offset: Int) -> UInt64 { data[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        guard data.count >= 17 * 8 + 16 else { throw CommandError(description: "short self-dump") }
        var registers: [Int: UInt64] = [:]
        for number in 0..<17 { registers[number] = word(number * 8) }
        let start = word(17 * 8)
        let length = Int(word(17 * 8 + 8))
        let stackFrom = 17 * 8 + 16
        let stack = Array(data[stackFrom..<stackFrom + length])
        let maps = String(decoding: data[(stackFrom + length)...], as: UTF8.self)
        let thread = ProcessSnapshot.Thread(
            id: 1, crashed: true, registers: registers, pc: registers[16] ?? 0, sp: registers[7] ?? 0)
        return ProcessSnapshot(
            architecture: .x86_64, threads: [thread], memory: [.init(start: start, bytes: stack)],
            modules: modules(maps), exception: .init(signal: 11, code: 1, faultAddress: 0, threadID: 1))
    }

    /// File-backed mappings grouped by path: base = the mapping at file offset 0, end = the last mapping's end.
    static func modules(_ maps: String) -> [ProcessSnapshot.Module] {
        var modules: [String: (base: UInt64, end: UInt64)] = [:]
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[5].hasPrefix("/") else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let low = UInt64(bounds[0], radix: 16), let high = UInt64(bounds[1], radix: 16),
                let offset = UInt64(fields[2], radix: 16)
            else { continue }
            let path = String(fields[5])
            if offset == 0, modules[path] == nil {
                modules[path] = (low, high)
            } else if let module = modules[path] {
                modules[path] = (module.base, max(module.end, high))
            }
        }
        return modules.map {
            .init(path: $0.key, base: $0.value.base, size: $0.value.end - $0.value.base, buildID: nil)
        }
        .sorted { $0.base < $1.base }
    }

    /// The function names of a walk's frames, each frame's inline chain innermost first, from the modules' files
    /// (`files` by the module's path, else the path itself); "?" for a frame no file resolves.
    static func functions(
        _ frames: [WalkedFrame], modules: [ProcessSnapshot.Module], files: [String: String] = [:]
    ) throws -> [String] {
        var opened: [String: DebugModule] = [:]
        var names: [String] = []
        for frame in frames {
            let address = frame.lookupAddress
            guard let module = modules.first(where: { $0.base <= address && address - $0.base < $0.size }),
                let file = files[module.path]
                    ?? (FileManager.default.fileExists(atPath: module.path) ? module.path : nil)
            else {
                names.append("?")
                continue
            }
            let debug = try opened[file] ?? DebugModule(path: file)
            opened[file] = debug
            let chain = debug.resolve(moduleOffset: address - module.base)?.frames.compactMap(\.function) ?? []
            names += chain.isEmpty ? ["?"] : chain
        }
        return names
    }
}
