import Foundation

/// A labeled crash corpus the tests build themselves: one Swift program with six crash sites (each the usual
/// way a Swift program dies, each in its own function of a small type), compiled as release and debug builds,
/// crashed under the Swift runtime's backtracer; and C/C++ programs crashed under gdb and unwound by elfutils.
public enum CrashCorpus {
    /// One crash site and what a developer must see for it.
    public struct Site: Sendable, Hashable {
        /// The program's argument that crashes here.
        public var name: String
        /// The simplified name of the function that crashes.
        public var function: String
        /// The text on the crashing line (its line number is found in the source).
        public var marker: String
        /// The issue title expected.
        public var title: String

        /// The 1-based line of `marker` in `source`.
        public func line(in source: String) -> Int {
            (source.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(marker) } ?? -1)
                + 1
        }
    }

    public static let swiftSource = """
        struct Inventory {
            var items: [Int]
            @inline(never) func item(at index: Int) -> Int { items[index] }
        }
        final class Session {
            var token: String?
            @inline(never) func requireToken() -> Int { token!.count }
        }
        struct Ledger {
            var balance: Int8
            @inline(never) mutating func deposit(_ amount: Int8) { balance += amount }
        }
        struct Splitter {
            @inline(never) func share(_ total: Int, among people: Int) -> Int { total / people }
        }
        enum Config {
            @inline(never) static func load(_ name: String) -> Never { fatalError("missing configuration \\(name)") }
        }
        struct Buffer {
            @inline(never) func peek(_ address: Int) -> Int {
                UnsafePointer<Int>(bitPattern: address)!.pointee
            }
        }
        let which = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "index"
        let n = CommandLine.arguments.count
        switch which {
        case "index": print(Inventory(items: [1, 2, 3]).item(at: n + 5))
        case "nil": print(Session().requireToken())
        case "overflow": var l = Ledger(balance: 120); l.deposit(Int8(n * 10)); print(l.balance)
        case "divide": print(Splitter().share(10, among: n - 2))
        case "fatal": Config.load("db\\(n)")
        case "pointer": print(Buffer().peek(n * 8))
        default: print("?")
        }
        """

    public static let swiftSites: [Site] = [
        Site(
            name: "index", function: "Inventory.item(at:)", marker: "items[index]",
            title: "Fatal error: Index out of range"),
        Site(
            name: "nil", function: "Session.requireToken()", marker: "token!.count",
            title: "Fatal error: Unexpectedly found nil while unwrapping an Optional value"),
        Site(
            name: "overflow", function: "Ledger.deposit(_:)", marker: "balance += amount",
            title: "Fatal error: Arithmetic overflow"),
        Site(
            name: "divide", function: "Splitter.share(_:among:)", marker: "total / people",
            title: "Fatal error: Division by zero"),
        Site(
            name: "fatal", function: "static Config.load(_:)", marker: "fatalError(",
            title: "Fatal error: missing configuration db2"),
        Site(
            name: "pointer", function: "Buffer.peek(_:)", marker: ".pointee", title: "SIGSEGV: Bad pointer dereference"),
    ]

    /// A compiled program and its split debug information.
    public struct Build: Sendable {
        public var name: String
        /// The unstripped binary (what runs and crashes).
        public var binary: String
        /// `objcopy --strip-all`: what ships.
        public var stripped: String
        /// `objcopy --only-keep-debug`: what CI uploads beside it.
        public var debugFile: String
        public var buildID: String
    }

    /// Compiles `source` with swiftc `flags` (module `app`) and splits it.
    public static func buildSwift(_ name: String, flags: [String], in folder: TempFolder) throws -> Build {
        let dir = folder.file(name)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let src = dir + "/main.swift"
        try swiftSource.write(toFile: src, atomically: true, encoding: .utf8)
        let binary = dir + "/app"
        try Command.check("swiftc", flags + ["-g", "-module-name", "app", src, "-o", binary])
        return try split(name, binary: binary)
    }

    static func split(_ name: String, binary: String) throws -> Build {
        try Command.check("objcopy", ["--only-keep-debug", binary, binary + ".debug"])
        try Command.check("objcopy", ["--strip-all", binary, binary + ".stripped"])
        guard let id = try ELFFixtures.readelfBuildID(binary) else {
            throw CommandError(description: "\(binary) has no build-id")
        }
        return Build(
            name: name, binary: binary, stripped: binary + ".stripped", debugFile: binary + ".debug", buildID: id)
    }

    /// A crash file and what the program printed.
    public struct Crash: Sendable {
        public var site: String
        public var file: Data
        /// The program's standard error (a Swift `Fatal error: …` line when the runtime printed one).
        public var stderr: String
    }

    /// Runs `build` with the argument `site` under the Swift runtime's backtracer; returns its crash file.
    public static func crashSwift(_ build: Build, site: String, in folder: TempFolder) throws -> Crash {
        let out = folder.file("crash-\(build.name)-\(site)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let run = try Command.run(
            build.binary, [site],
            environment: [
                "SWIFT_BACKTRACE":
                    "enable=yes,interactive=no,format=json,symbolicate=off,threads=all,images=all,output-to=\(out)"
            ])
        guard run.status != 0, let name = try FileManager.default.contentsOfDirectory(atPath: out).first else {
            throw CommandError(description: "\(build.name) \(site) did not crash or wrote no report: \(run.err)")
        }
        return Crash(site: site, file: try Data(contentsOf: URL(fileURLWithPath: out + "/" + name)), stderr: run.err)
    }

    // MARK: - C and C++

    public static let nativeSource = """
        #include <cstdio>
        #include <cstdlib>
        #include <cstring>
        #include <stdexcept>

        namespace shop { namespace payments {
        __attribute__((noinline)) int charge(int total) {
            if (total > 100) throw std::runtime_error("too expensive");
            return total;
        }
        } }

        extern "C" __attribute__((noinline)) int parse_header(const char *p) { return p[3] + 1; }

        extern "C" __attribute__((noinline)) void validate_config(int n) {
            if (n < 5) { std::fprintf(stderr, "config: %d entries\\n", n); std::abort(); }
        }

        int main(int argc, char **argv) {
            const char *which = argc > 1 ? argv[1] : "segv";
            if (!std::strcmp(which, "segv")) std::printf("%d\\n", parse_header(argc > 5 ? argv[0] : nullptr));
            if (!std::strcmp(which, "abort")) validate_config(argc);
            if (!std::strcmp(which, "throw")) std::printf("%d\\n", shop::payments::charge(argc * 1000));
            return 0;
        }
        """

    public static let nativeSites: [Site] = [
        Site(name: "segv", function: "parse_header", marker: "return p[3] + 1", title: "SIGSEGV: Segmentation fault"),
        Site(name: "abort", function: "validate_config", marker: "std::abort()", title: "SIGABRT: Aborted"),
        Site(
            name: "throw", function: "shop::payments::charge", marker: "throw std::runtime_error",
            title: "std::runtime_error: too expensive"),
    ]

    /// Compiles the C++ program with `g++ -O2 -g` and splits it.
    public static func buildNative(in folder: TempFolder) throws -> Build {
        let src = try folder.write("native.cpp", nativeSource)
        let binary = folder.file("native")
        try Command.check("g++", ["-O2", "-g", "-Wl,--build-id", src, "-o", binary])
        return try split("native", binary: binary)
    }

    /// Runs the program under gdb until it dies, writes a core file, unwinds it with elfutils' `eu-stack` (CFI,
    /// so frames through libc and libstdc++ are found) and lists its modules with `eu-unstrip -n`: a native v1
    /// report of raw addresses, as a native crash handler would send it, with what the program printed.
    public static func crashNative(
        _ build: Build, site: String, signal: (name: String, description: String), in folder: TempFolder,
        release: String
    ) throws -> [String: Any] {
        let stem = folder.file("native-\(site)-\(UUID().uuidString.prefix(8))")
        // gdb waits for its inferior with SIGCHLD: the test runner's blocked or ignored signals (inherited across
        // exec) are reset first.
        let reset =
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
            + "[signal.signal(s, signal.SIG_DFL) for s in (signal.SIGCHLD, signal.SIGTTOU, signal.SIGTTIN, signal.SIGPIPE)]; "
            + "os.execvp(sys.argv[1], sys.argv[1:])"
        // (`run ARGS` replaces the program's arguments, so the site goes there, with the redirection.)
        _ = try Command.run(
            "python3",
            [
                "-c", reset, "gdb", "-batch", "-nx", "-q", "-ex", "run \(site) 2>\(stem).err",
                "-ex", "generate-core-file \(stem).core", build.binary,
            ])
        let stack = try Command.check(
            "eu-stack", ["--core=\(stem).core", "--executable=\(build.binary)", "-a", "-b", "-m", "-n", "64"]
        )
        .split(separator: "\n")
        var frames: [[String: Any]] = []
        for line in stack where line.hasPrefix("#") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, parts[1].hasPrefix("0x") else { continue }
            frames.append([
                "address": String(parts[1]),
                "kind": parts.count > 3 && parts[2] == "-" && parts[3] == "1" ? "return" : "pc",
            ])
        }
        var modules: [[String: Any]] = []
        for line in try Command.check("eu-unstrip", ["-n", "--core=\(stem).core"]).split(separator: "\n") {
            let cols = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard cols.count >= 5, let plus = cols[0].firstIndex(of: "+"), let at = cols[1].firstIndex(of: "@") else {
                continue
            }
            let base = String(cols[0][..<plus])
            let size = UInt64(cols[0][cols[0].index(after: plus)...].dropFirst(2), radix: 16) ?? 0
            let path = [".", "-"].contains(cols[2]) ? cols[4] : cols[2]
            var module: [String: Any] = [
                "name": (cols[4] as NSString).lastPathComponent, "path": path, "base_address": base, "size": size,
            ]
            let id = String(cols[1][..<at])
            if id != "-" { module["build_id"] = id }
            modules.append(module)
        }
        let printed = (try? String(contentsOfFile: stem + ".err", encoding: .utf8)) ?? ""
        var report: [String: Any] = [
            "event_id": UUID().uuidString, "kind": "crash", "timestamp": Date().timeIntervalSince1970,
            "app": ["version": release], "error": ["type": signal.name, "message": signal.description],
            "threads": [["crashed": true, "frames": frames]], "modules": modules,
        ]
        if !printed.isEmpty { report["crash_message"] = printed }
        return report
    }
}
