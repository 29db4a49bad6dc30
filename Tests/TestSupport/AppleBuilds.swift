import Foundation
import Synchronization

/// Real Mach-O programs built by the tests on Linux: clang and swiftc cross-compile for Apple targets, ld64.lld
/// links, dsymutil-19 makes the dSYM, llvm-strip-19 the stripped executable and llvm-lipo-19 fat files.
///
/// Programs are freestanding (no SDK): C with static inline helpers (inline frames), C++ with namespaces,
/// templates and methods, Swift with `-parse-stdlib` (`$s` names) and Embedded Swift (`$e` names). Every build
/// is made once per test process, in a folder of its own (ld64.lld's UUID depends on the output path, so a
/// build's UUID is stable within the process and different builds never share one), under a temporary folder
/// removed when the process exits.
///
/// Facts about a build (UUID, `__TEXT` vmaddr, the `__text` section, function addresses) are read with the LLVM
/// tools, never written down.
public enum AppleBuilds {
    /// The CPU a build is for.
    public enum Architecture: String, Sendable, CaseIterable {
        case arm64, arm64e, x86_64
    }

    /// The operating system a build is for.
    public enum Platform: String, Sendable {
        case iOS = "ios", macOS = "macos"
    }

    /// The source language of a build.
    public enum Language: String, Sendable {
        /// C with `static inline` helpers at `-O1`: inline chains.
        case c
        /// C++ with a namespace, a class template and methods: `__Z` names.
        case cpp
        /// Swift with `-parse-stdlib` (no standard library needed): `_$s` names.
        case swift
        /// Embedded Swift (`-enable-experimental-feature Embedded`): `_$e` names.
        case embeddedSwift
    }

    /// What to build.
    public struct Request: Hashable, Sendable, CustomStringConvertible {
        public var language: Language
        public var architecture: Architecture
        public var platform: Platform
        public var dwarfVersion: Int
        /// A dylib (`-dylib`; its `__TEXT` vmaddr is 0) instead of an executable.
        public var dylib: Bool

        public init(
            _ language: Language, _ architecture: Architecture = .arm64, _ platform: Platform = .iOS,
            dwarf dwarfVersion: Int = 5, dylib: Bool = false
        ) {
            self.language = language
            self.architecture = architecture
            self.platform = platform
            self.dwarfVersion = dwarfVersion
            self.dylib = dylib
        }

        /// A name usable as a file name, unique per request.
        public var description: String {
            "\(language.rawValue)-\(architecture.rawValue)-\(platform.rawValue)-dwarf\(dwarfVersion)\(dylib ? "-dylib" : "")"
        }

        /// The target triple for clang and swiftc.
        var triple: String {
            let version: String
            switch (platform, language) {
            case (.iOS, .embeddedSwift): version = "18.0"
            case (.iOS, _): version = "15.0"
            case (.macOS, .embeddedSwift): version = "15.0"
            case (.macOS, _): version = "11.0"
            }
            return "\(architecture.rawValue)-apple-\(platform.rawValue)\(version)"
        }

        var minimumOS: String { String(triple.split(separator: "-").last!.drop { $0.isLetter }) }
    }

    /// A function as the symbol table has it.
    public struct Function: Sendable, Equatable {
        /// The symbol's name as stored (with the Mach-O leading underscore: `_main`, `_$s4shop…`, `__ZN…`).
        public var symbol: String
        public var address: UInt64
        /// Up to the next function's address, or the end of `__text`.
        public var size: UInt64
        /// A local (non-external) symbol (`t` in nm).
        public var local: Bool
    }

    /// One thin build: the linked binary, its dSYM and its stripped copy.
    public struct Build: Sendable {
        public var request: Request
        /// The linked binary (executable or dylib) with its full symbol table and debug map.
        public var binary: String
        /// The `.dSYM` bundle folder.
        public var dSYMBundle: String
        /// The DWARF file inside the bundle (`X.dSYM/Contents/Resources/DWARF/X`).
        public var dwarfFile: String
        /// The binary after `llvm-strip-19 -S -x` (no debug map, no local symbols).
        public var stripped: String
        /// The LC_UUID as 32 lower-case hex digits, in file order (the BuildID spelling).
        public var uuid: String
        /// The `__TEXT` segment's vmaddr (0x1_0000_0000 for executables, 0 for dylibs).
        public var textVMAddr: UInt64
        /// The `__TEXT,__text` section: `[start, end)`.
        public var text: Range<UInt64>
        /// The functions in `__text`, by address (from `llvm-nm-19`, without `__mh_execute_header`).
        public var functions: [Function]
        /// The source files compiled.
        public var sources: [String]

        /// The address of the function whose symbol is `symbol` (with its Mach-O underscore) or ends with it.
        public func address(of symbol: String) -> UInt64? {
            (functions.first { $0.symbol == symbol } ?? functions.first { $0.symbol.hasSuffix(symbol) })?.address
        }
    }

    /// A fat (universal) binary and its fat dSYM, made of thin builds.
    public struct FatBuild: Sendable {
        public var binary: String
        public var dSYMBundle: String
        /// The fat DWARF file inside the bundle.
        public var dwarfFile: String
        /// The thin builds, in the order given.
        public var slices: [Build]
    }

    struct Cache {
        var folder: String?
        var builds: [Request: Build] = [:]
        var fats: [[Request]: FatBuild] = [:]
    }

    static let cache = Mutex(Cache())

    /// Builds `request` once per process (later calls return the same files).
    /// - Throws: `CommandError` when a tool fails.
    public static func build(_ request: Request) throws -> Build {
        try cache.withLock { cache in
            if let known = cache.builds[request] { return known }
            let root = try folder(&cache)
            let built = try make(request, in: root + "/" + request.description)
            cache.builds[request] = built
            return built
        }
    }

    /// Builds the thin `requests` and joins them into one fat binary and one fat dSYM (dsymutil-19 on the fat
    /// binary, with `lipo` on PATH), once per process.
    /// - Throws: `CommandError` when a tool fails.
    public static func fat(_ requests: [Request]) throws -> FatBuild {
        let slices = try requests.map(build)
        return try cache.withLock { cache in
            if let known = cache.fats[requests] { return known }
            let root = try folder(&cache)
            let dir = root + "/fat-" + requests.map(\.description).joined(separator: "+")
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let name = "Universal"
            let binary = dir + "/" + name
            try Command.check("llvm-lipo-19", ["-create"] + slices.map(\.binary) + ["-output", binary])
            let bundle = binary + ".dSYM"
            try dsymutil(binary, bundle, root: root)
            let built = FatBuild(
                binary: binary, dSYMBundle: bundle, dwarfFile: bundle + "/Contents/Resources/DWARF/" + name,
                slices: slices)
            cache.fats[requests] = built
            return built
        }
    }

    /// A folder holding a `lipo` link to llvm-lipo-19 (dsymutil calls `lipo` for fat inputs); prepend it to PATH.
    public static func lipoFolder() throws -> String {
        try cache.withLock { try folder(&$0) } + "/bin"
    }

    // MARK: building

    static func folder(_ cache: inout Cache) throws -> String {
        if let folder = cache.folder { return folder }
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent(
                "faultline-apple-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
            ).path
        try FileManager.default.createDirectory(atPath: path + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: path + "/bin/lipo", withDestinationPath: "/usr/bin/llvm-lipo-19")
        cache.folder = path
        // The builds live as long as the test process: removed when it exits.
        atexit {
            if let folder = AppleBuilds.cache.withLock({ $0.folder }) {
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        return path
    }

    static func dsymutil(_ binary: String, _ bundle: String, root: String) throws {
        let path = root + "/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try Command.run("dsymutil-19", [binary, "-o", bundle], environment: ["PATH": path])
        guard result.status == 0 else {
            throw CommandError(description: "dsymutil-19 \(binary) exited \(result.status): \(result.err)")
        }
    }

    static func make(_ request: Request, in dir: String) throws -> Build {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let name = request.dylib ? "libShop.dylib" : "Shop"
        let binary = dir + "/" + name
        let object = dir + "/shop.o"
        var sources: [String] = []
        func write(_ file: String, _ text: String) throws -> String {
            let path = dir + "/" + file
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            sources.append(path)
            return path
        }
        switch request.language {
        case .c:
            let source = try write("shop.c", AppleSources.c)
            try Command.check(
                "clang",
                [
                    "-target", request.triple, "-g", "-gdwarf-\(request.dwarfVersion)", "-O1",
                    "-fno-omit-frame-pointer", "-c", source, "-o", object,
                ])
        case .cpp:
            let source = try write("shop.cpp", AppleSources.cpp)
            try Command.check(
                "clang++",
                [
                    "-target", request.triple, "-g", "-gdwarf-\(request.dwarfVersion)", "-O1",
                    "-fno-exceptions", "-fno-rtti", "-c", source, "-o", object,
                ])
        case .swift, .embeddedSwift:
            let files = [
                try write("Orders.swift", AppleSources.swiftOrders), try write("main.swift", AppleSources.swiftMain),
            ]
            var flags = [
                "-target", request.triple, "-parse-stdlib", "-g", "-O", "-wmo", "-module-name", "shop",
                "-dwarf-version=\(request.dwarfVersion)", "-c", "-o", object,
            ]
            if request.language == .embeddedSwift { flags += ["-enable-experimental-feature", "Embedded"] }
            try Command.check("swiftc", flags + files, in: dir)
        }
        let arch = request.architecture.rawValue
        var link = [
            "-arch", arch, "-platform_version", request.platform.rawValue, request.minimumOS, request.minimumOS,
            "-o", binary, object, "-undefined", "dynamic_lookup",
        ]
        link += request.dylib ? ["-dylib", "-install_name", "@rpath/" + name] : ["-e", "_main"]
        try Command.check("/usr/lib/llvm-19/bin/ld64.lld", link)
        if request.architecture == .arm64e { try markArm64e(binary) }
        let bundle = binary + ".dSYM"
        try dsymutil(binary, bundle, root: URL(fileURLWithPath: dir).deletingLastPathComponent().path)
        let stripped = dir + "/" + name + ".stripped"
        try Command.check("llvm-strip-19", ["-S", "-x", binary, "-o", stripped])

        let (textVMAddr, text) = try layout(binary)
        return Build(
            request: request, binary: binary, dSYMBundle: bundle,
            dwarfFile: bundle + "/Contents/Resources/DWARF/" + name,
            stripped: stripped, uuid: try uuid(binary), textVMAddr: textVMAddr, text: text,
            functions: try functions(binary, text: text), sources: sources)
    }

    /// ld64.lld-19 writes arm64e inputs out as plain arm64 (`cpusubtype` ALL), and dsymutil then finds no object of
    /// that architecture: the header gets arm64e's subtype with the pointer-authentication ABI bit
    /// (`CPU_SUBTYPE_ARM64E | CPU_SUBTYPE_PTRAUTH_ABI`), as Apple's linker writes it.
    static func markArm64e(_ path: String) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: 8)
        try handle.write(contentsOf: [0x02, 0x00, 0x00, 0x80])
    }

    // MARK: reading facts with the LLVM tools

    /// The UUID of a thin file as 32 lower-case hex digits (`llvm-dwarfdump-19 --uuid`).
    public static func uuid(_ path: String) throws -> String {
        try uuids(path).first?.uuid ?? { throw CommandError(description: "no UUID in \(path)") }()
    }

    /// Every slice's architecture and UUID (32 lower-case hex digits), in the order llvm-dwarfdump lists them.
    public static func uuids(_ path: String) throws -> [(architecture: String, uuid: String)] {
        try Command.check("llvm-dwarfdump-19", ["--uuid", path]).split(separator: "\n").compactMap { line in
            // UUID: 4C4C446C-5555-3144-A152-143A94F229BC (arm64) /path
            let parts = line.split(separator: " ")
            guard parts.count >= 3, parts[0] == "UUID:" else { return nil }
            let arch = parts[2].trimmingCharacters(in: CharacterSet(charactersIn: "()"))
            return (arch, parts[1].replacingOccurrences(of: "-", with: "").lowercased())
        }
    }

    /// The `__TEXT` segment's vmaddr and the `__text` section's range (`llvm-objdump-19 --macho --private-headers`).
    static func layout(_ path: String) throws -> (UInt64, Range<UInt64>) {
        let lines = try Command.check("llvm-objdump-19", ["--macho", "--private-headers", path]).split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        func value(_ line: String) -> UInt64? {
            guard let text = line.split(separator: " ").last else { return nil }
            return text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
        }
        var vmaddr: UInt64?
        var text: Range<UInt64>?
        for (i, line) in lines.enumerated() where i + 2 < lines.count {
            if line == "cmd LC_SEGMENT_64", lines[i + 2] == "segname __TEXT", vmaddr == nil {
                vmaddr = lines[(i + 3)...].first { $0.hasPrefix("vmaddr") }.flatMap(value)
            }
            if line == "sectname __text", lines[i + 1] == "segname __TEXT", let start = value(lines[i + 2]),
                let size = value(lines[i + 3])
            {
                text = start..<(start + size)
            }
        }
        guard let vmaddr, let text else { throw CommandError(description: "no __TEXT or __text in \(path)") }
        return (vmaddr, text)
    }

    /// The symbols defined in `__text`, sized up to the next one (`llvm-nm-19 --defined-only -n`).
    static func functions(_ path: String, text: Range<UInt64>) throws -> [Function] {
        var found: [Function] = []
        for line in try Command.check("llvm-nm-19", ["--defined-only", "-n", path]).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, parts[1] == "T" || parts[1] == "t", let address = UInt64(parts[0], radix: 16),
                text.contains(address), !parts[2].hasPrefix("ltmp")
            else { continue }
            found.append(Function(symbol: String(parts[2]), address: address, size: 0, local: parts[1] == "t"))
        }
        for i in found.indices {
            found[i].size = (i + 1 < found.count ? found[i + 1].address : text.upperBound) - found[i].address
        }
        return found
    }
}

/// The sources of `AppleBuilds`: freestanding (no SDK headers), with inlining at `-O1`/`-O`.
public enum AppleSources {
    public static let c = """
        static volatile int sink;

        static inline int tax(int cents) { return cents / 5 + (cents % 7); }
        static inline int line_total(int price, int quantity) { return tax(price * quantity) + price * quantity; }

        static __attribute__((noinline)) int discount(int total) {
            if (total > 1000) return total - line_total(total, 1) / 10;
            return total;
        }

        __attribute__((noinline)) int checkout(int *prices, int count) {
            int sum = 0;
            for (int i = 0; i < count; i++) sum += line_total(prices[i], i + 1);
            return discount(sum);
        }

        __attribute__((noinline)) void crash_now(int *where) {
            *where = checkout(where, sink);
        }

        int main(void) {
            int prices[4] = {120, 99, 3000, 7};
            sink = checkout(prices, 4);
            crash_now(0);
            return sink;
        }
        """

    public static let cpp = """
        namespace shop {
        template <typename T> struct Basket {
            T items[4];
            int count;
            __attribute__((noinline)) T total() const {
                T sum = 0;
                for (int i = 0; i < count; i++) sum += weigh(items[i]);
                return sum;
            }
            static inline T weigh(T item) { return item * 3 + 1; }
        };

        namespace payments {
        __attribute__((noinline)) int charge(const Basket<int> &basket, int fee) { return basket.total() + fee; }
        __attribute__((noinline)) long refund(const Basket<long> &basket) { return -basket.total(); }
        }  // namespace payments
        }  // namespace shop

        volatile int sink;

        int main() {
            shop::Basket<int> basket = {{1, 2, 3, 4}, sink};
            shop::Basket<long> returned = {{5, 6, 7, 8}, sink};
            sink = shop::payments::charge(basket, 2) + (int)shop::payments::refund(returned);
            return sink;
        }
        """

    public static let swiftOrders = """
        public struct Order {
            var quantity: Builtin.Int64
            var price: Builtin.Int64
        }

        @inline(__always) func twice(_ x: Builtin.Int64) -> Builtin.Int64 { Builtin.add_Int64(x, x) }

        @inline(never) public func total(_ order: Order) -> Builtin.Int64 {
            Builtin.add_Int64(twice(order.quantity), order.price)
        }

        @inline(never) public func checkout(_ a: Order, _ b: Order) -> Builtin.Int64 {
            Builtin.add_Int64(total(a), twice(total(b)))
        }
        """

    public static let swiftMain = """
        let order = Order(quantity: Builtin.zeroInitializer(), price: Builtin.zeroInitializer())
        let sum = checkout(order, order)
        """
}
