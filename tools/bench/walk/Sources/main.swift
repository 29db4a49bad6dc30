// walk-bench: minidumps read, walked and symbolicated per second, and the memory a walk takes (issue #34).
//
// Usage: walk-bench [--iterations N] [--print] DUMP...   (--print: each thread's frames and how the walk ended)
// Each dump was written on this machine (tools/bench/walk/run makes them), so every module's file is here: the walker
// is given those (LocalELFFiles, by build-id), as the server is given uploaded files by build-id.
//
// Measured per dump, each phase repeated N times after one warm-up:
//   read:       Minidump(bytes:) + snapshot()
//   walk:       StackWalker.walk (a new Dwfl each time: modules reported, files opened, every thread unwound)
//   symbolicate: each walked frame's inline chain through DebugModule, modules kept open between dumps (as the
//               server's ModuleCache keeps them)
//   memory:     the resident set's growth by the first walk of a dump (before any other phase), its growth over N
//               more walks (what walks keep: should be ~0), and the process's peak RSS after all dumps.
import FaultlineCore
import Formats
import Foundation
import Symbolication

#if canImport(Glibc)
import Glibc
#endif

func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// The resident set now, from /proc/self/statm (pages in memory, file-backed ones included: the modules' mapped
/// files count as soon as the walk touches them).
func residentKiB() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024 : 0
}

func peakRSSKiB() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss
}

/// Runs `body` `iterations` times (after one warm-up) and returns the rate per second and µs per run.
func measure(_ iterations: Int, _ body: () throws -> Void) rethrows -> (perSecond: Double, microseconds: Double) {
    try body()
    let start = now()
    for _ in 0..<iterations { try body() }
    let seconds = Double(now() - start) / 1e9
    return (Double(iterations) / seconds, seconds * 1e6 / Double(iterations))
}

func format(_ value: Double) -> String { String(format: "%.1f", value) }

var arguments = Array(CommandLine.arguments.dropFirst())
var iterations = 200
let printFrames = arguments.contains("--print")
arguments.removeAll { $0 == "--print" }
if let flag = arguments.firstIndex(of: "--iterations"), flag + 1 < arguments.count, let value = Int(arguments[flag + 1])
{
    iterations = value
    arguments.removeSubrange(flag...(flag + 1))
}
guard !arguments.isEmpty else {
    FileHandle.standardError.write("usage: walk-bench [--iterations N] [--print] DUMP...\n".data(using: .utf8)!)
    exit(2)
}

var opened: [String: DebugModule] = [:]
for path in arguments {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let snapshot = try Minidump(bytes: bytes).snapshot()
    // Each module's own file, found once by build-id (the server's lookup in its debug-file store is not measured).
    var files: [String: String] = [:]
    for module in snapshot.modules { files[module.path] = LocalELFFiles.find(module) }
    let walker = StackWalker { [files] in files[$0.path] }

    // The first walk of the dump, before anything else: what the process grows by to walk it once (libdw's state,
    // the modules' files mapped and read, the result).
    let beforeFirst = residentKiB()
    _ = walker.walk(snapshot)
    let firstWalk = residentKiB() - beforeFirst

    let read = try measure(iterations) { _ = try Minidump(bytes: bytes).snapshot() }
    var threads: [WalkedThread] = []
    let walk = measure(iterations) { threads = walker.walk(snapshot) }
    func symbolicate(_ threads: [WalkedThread]) throws -> Int {
        var resolved = 0
        for frame in threads.flatMap(\.frames) {
            let address = frame.lookupAddress
            guard let module = snapshot.modules.first(where: { $0.base <= address && address - $0.base < $0.size }),
                let file = files[module.path]
            else { continue }
            let debug = try opened[file] ?? DebugModule(path: file)
            opened[file] = debug
            resolved += debug.resolve(moduleOffset: address - module.base)?.frames.count ?? 0
        }
        return resolved
    }
    let both = try measure(iterations) { _ = try symbolicate(walker.walk(snapshot)) }

    // Memory: what the process grew by across `iterations` more walks (a leak shows here), and the peak.
    let settled = residentKiB()
    for _ in 0..<iterations { _ = walker.walk(snapshot) }
    let growth = residentKiB() - settled

    let frames = threads.reduce(0) { $0 + $1.frames.count }
    let trusts = Dictionary(grouping: threads.flatMap(\.frames), by: \.trust).mapValues(\.count)
    print(
        "dump \((path as NSString).lastPathComponent): \(bytes.count) bytes, \(snapshot.threads.count) threads, "
            + "\(frames) frames ("
            + FrameTrust.allCases.map { "\($0.rawValue) \(trusts[$0] ?? 0)" }.joined(separator: ", ")
            + "), \(snapshot.modules.count) modules, \(files.count) with files")
    print("  read + snapshot:      \(format(read.perSecond)) /s   (\(format(read.microseconds)) µs)")
    print("  walk:                 \(format(walk.perSecond)) /s   (\(format(walk.microseconds)) µs)")
    print("  walk + symbolicate:   \(format(both.perSecond)) /s   (\(format(both.microseconds)) µs; modules kept open)")
    if printFrames {
        for thread in threads {
            let frames = thread.frames.map { "\(String($0.address, radix: 16)) \($0.trust.rawValue)" }
            let crashed = thread.crashed ? " (crashed)" : ""
            print("  thread \(thread.id)\(crashed): \(frames.joined(separator: ", ")); end: \(thread.end)")
        }
    }
    print("  resident growth: first walk \(firstWalk) KiB, then over \(iterations) more walks \(growth) KiB")
}
print("peak RSS: \(peakRSSKiB() / 1024) MiB")
