import Foundation

/// A real gcc `-g` build whose line tables name files a source bundle must never hold, beside its real sources
/// (`symupload --include-sources`, issue #39.8).
///
/// The compilation directory is `src/`. The line tables name:
/// - the real sources: `src/app.c`, `src/include/helper.h`, and `src/inner.h`, a link to another file of the tree;
/// - `/proc/self/environ` and `/etc/passwd`, through `#line` (the process's environment, a system file);
/// - `src/escape.h`, a link to `outside/secret.h`, a folder beside the tree;
/// - `src/../src-evil/evil.h`, a folder whose name starts like the tree's (a string-prefix check takes it);
/// - `src/null`, a link to `/dev/null`, and `src/fifo`, a FIFO (opening it for reading would block).
public struct HostileSourceTree: Sendable {
    public let folder: TempFolder
    /// The compilation directory.
    public var sources: String { folder.file("src") }
    /// The program, built with `-g -O0` and a build-id.
    public var binary: String { folder.file("bin/app") }
    /// What a bundle may hold: the files of the tree that code lines point at.
    public var real: [String] {
        [folder.file("src/app.c"), folder.file("src/include/helper.h"), folder.file("src/inner.h")]
    }
    /// The secret that `src/escape.h` links to.
    public var secret: String { folder.file("outside/secret.h") }
    /// What no bundle may hold, as the line tables name each.
    public var hostile: [String] {
        [
            "/proc/self/environ", "/etc/passwd", folder.file("src/escape.h"), folder.file("src/../src-evil/evil.h"),
            folder.file("src/null"), folder.file("src/fifo"),
        ]
    }

    public init() throws {
        folder = try TempFolder("hostile-sources")
        for sub in ["src/include", "outside", "src-evil", "bin"] {
            try FileManager.default.createDirectory(atPath: folder.file(sub), withIntermediateDirectories: true)
        }
        try folder.write("src/include/helper.h", "static int helper(int x) {\n    return x * 3;\n}\n")
        try folder.write("src/include/real_inner.h", "static int inner(int x) {\n    return x - 1;\n}\n")
        try folder.write("outside/secret.h", "static int secret(int x) {\n    return x ^ 0x5ec2e7;\n}\n")
        try folder.write("src-evil/evil.h", "static int evil(int x) {\n    return x * 5;\n}\n")
        let src = folder.file("src")
        try folder.write(
            "src/tricks.h",
            """
            #line 1 "/proc/self/environ"
            static int from_environ(int x) {
                return x + 1;
            }
            #line 1 "/etc/passwd"
            static int from_passwd(int x) {
                return x + 2;
            }
            #line 1 "\(src)/null"
            static int from_null(int x) {
                return x + 3;
            }
            #line 1 "\(src)/fifo"
            static int from_fifo(int x) {
                return x + 4;
            }

            """)
        let files = FileManager.default
        try files.createSymbolicLink(atPath: folder.file("src/inner.h"), withDestinationPath: "include/real_inner.h")
        try files.createSymbolicLink(atPath: folder.file("src/escape.h"), withDestinationPath: "../outside/secret.h")
        try folder.write(
            "src/app.c",
            """
            #include "include/helper.h"
            #include "inner.h"
            #include "escape.h"
            #include "../src-evil/evil.h"
            #include "tricks.h"
            int main(int argc, char **argv) {
                (void)argv;
                return helper(argc) + inner(argc) + secret(argc) + evil(argc) + from_environ(argc) + from_passwd(argc)
                    + from_null(argc) + from_fifo(argc);
            }

            """)
        // The source named by its absolute path, so the line tables name every file absolutely (as CI builds do).
        try Command.check(
            "gcc", ["-g", "-O0", "-Wl,--build-id", "-o", folder.file("bin/app"), folder.file("src/app.c")], in: src)
        try files.createSymbolicLink(atPath: folder.file("src/null"), withDestinationPath: "/dev/null")
        try Command.check("mkfifo", [folder.file("src/fifo")])
    }
}
