import Foundation

/// Runs tools (gcc, objcopy, llvm-symbolizer, …) for tests that build real binaries.
public enum Command {
    public struct Result: Sendable {
        public let status: Int32
        public let out: String
        public let err: String
    }

    /// Runs `tool` (looked up on PATH) with `arguments`; output is captured through files so large outputs
    /// cannot fill a pipe and block.
    @discardableResult
    public static func run(
        _ tool: String, _ arguments: [String], in directory: String? = nil,
        environment: [String: String] = [:]
    ) throws -> Result {
        TestTools.ensure(tool)  // a missing tool is installed, not a reason to fail
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("cmd-\(UUID().uuidString)").path
        FileManager.default.createFile(atPath: base + ".out", contents: nil)
        FileManager.default.createFile(atPath: base + ".err", contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".err")
        }
        process.standardOutput = FileHandle(forWritingAtPath: base + ".out")
        process.standardError = FileHandle(forWritingAtPath: base + ".err")
        // Never the test runner's own stdin: a tool that reads it (gdb does) would wait for input forever.
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            out: (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "",
            err: (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "")
    }

    /// Runs and throws unless the tool exits 0.
    @discardableResult
    public static func check(_ tool: String, _ arguments: [String], in directory: String? = nil) throws -> String {
        let result = try run(tool, arguments, in: directory)
        guard result.status == 0 else {
            throw CommandError(
                description: "\(tool) \(arguments.joined(separator: " ")) exited \(result.status): \(result.err)")
        }
        return result.out
    }
}

public struct CommandError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// A temporary folder removed when the value goes away.
public final class TempFolder: @unchecked Sendable {
    // @unchecked: immutable after init.
    public let path: String
    public init(_ prefix: String = "faultline-test") throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `name` in the folder; returns the path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    public func file(_ name: String) -> String { path + "/" + name }
}

/// Real ELF fixtures built by the tests themselves.
public enum ELFFixtures {
    /// A small C program with static inline helpers, so that `-O2 -g` produces inline frames.
    public static let crashyC = """
        #include <stdio.h>
        #include <stdlib.h>

        static inline int scale(int value, int factor) {
            return value * factor + 1;
        }

        static inline int compute(int *data, int n) {
            int total = 0;
            for (int i = 0; i < n; i++) {
                total += scale(data[i], i);
            }
            return total;
        }

        __attribute__((noinline)) int process_order(int *data, int n) {
            int total = compute(data, n);
            if (total > 1000) {
                int *nothing = NULL;
                return *nothing + total;
            }
            return total;
        }

        int main(int argc, char **argv) {
            int data[8];
            for (int i = 0; i < 8; i++) data[i] = argc * 100 + i;
            printf("%d\\n", process_order(data, 8));
            return 0;
        }
        """

    /// Compiles `source` (C) into `folder/name` with `flags`; returns the binary's path.
    public static func compileC(_ source: String, name: String, in folder: TempFolder, flags: [String]) throws -> String
    {
        let src = try folder.write(name + ".c", source)
        let out = folder.file(name)
        try Command.check("gcc", flags + ["-o", out, src])
        return out
    }

    /// The build-id `readelf -n` reports for `path` (an independent reading to compare against).
    public static func readelfBuildID(_ path: String) throws -> String? {
        let out = try Command.check("readelf", ["-n", path])
        guard let line = out.split(separator: "\n").first(where: { $0.contains("Build ID:") }) else { return nil }
        return line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
    }
}

/// A Swift program that traps (array index out of range) in a release build, and the JSON crash file the
/// Swift runtime writes for it.
public enum SwiftCrashFixture {
    public static let source = """
        struct Order { var items: [Int] }
        @inline(never) func pick(_ order: Order, _ index: Int) -> Int { order.items[index] }
        @inline(never) func process(_ n: Int) -> Int { pick(Order(items: [1, 2, 3]), n) }
        print(process(CommandLine.arguments.count + 5))
        """

    /// Builds the program with `swiftc -O -g`, runs it with `SWIFT_BACKTRACE=…format=json…`, and returns
    /// the binary's path and the crash file's bytes.
    public static func crash(in folder: TempFolder) throws -> (binary: String, report: Data) {
        let src = try folder.write("main.swift", source)
        let binary = folder.file("trap")
        try Command.check("swiftc", ["-O", "-g", src, "-o", binary])
        let out = folder.file("crashes")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let run = try Command.run(
            binary, [],
            environment: [
                "SWIFT_BACKTRACE": "enable=yes,format=json,symbolicate=off,threads=all,images=all,output-to=\(out)"
            ])
        guard run.status != 0, let file = try FileManager.default.contentsOfDirectory(atPath: out).first else {
            throw CommandError(description: "the program did not crash or wrote no report: \(run.err)")
        }
        return (binary, try Data(contentsOf: URL(fileURLWithPath: out + "/" + file)))
    }
}

extension ELFFixtures {
    /// C++ with namespaces, templates and inlining.
    public static let ordersCpp = """
        #include <vector>
        #include <string>
        #include <stdexcept>
        #include <cstdio>

        namespace shop {
        template <typename T>
        struct Basket {
            std::vector<T> items;
            inline T total() const {
                T sum{};
                for (const auto &item : items) sum += item;
                return sum;
            }
        };

        namespace payments {
        __attribute__((noinline)) int charge(const Basket<int> &basket, int factor) {
            int total = basket.total() * factor;
            if (total > 100000) throw std::runtime_error("too expensive");
            return total;
        }
        }  // namespace payments
        }  // namespace shop

        int main(int argc, char **) {
            shop::Basket<int> basket{{1, 2, 3, argc}};
            std::printf("%d\\n", shop::payments::charge(basket, argc * 1000));
            return 0;
        }
        """
}
