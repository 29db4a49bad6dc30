import Foundation
import Synchronization

/// Installs a tool a test runs when it is missing, so that a plain `swift test` on a fresh machine provides gcc,
/// binutils, llvm-symbolizer, lld-19, llvm-19 (dsymutil-19, llvm-lipo-19, …), elfutils, gdb, zip or sentry-cli
/// itself instead of failing for want of one (`tools/lib/test-needs tool:NAME`, which knows each tool's package).
///
/// `Command.run` asks before it runs a tool. A tool on PATH (or an absolute path that exists) costs a few `stat`s;
/// a missing one is installed at most once per process. When it cannot be installed (no network, not root and no
/// sudo, or no package known for it), the run goes ahead and fails naming the tool: never a silent skip.
public enum TestTools {
    /// `tools/lib/test-needs`, found from this file's place in the repository.
    static let needsScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/lib/test-needs").path

    /// Tools this process has already tried to install.
    private static let tried = Mutex<Set<String>>([])

    /// Installs `tool` (a name looked up on PATH, or an absolute path) if it is missing.
    public static func ensure(_ tool: String) {
        guard !isInstalled(tool) else { return }
        tried.withLock { tried in
            guard tried.insert(tool).inserted, !isInstalled(tool) else { return }
            // bash is on PATH, so this run does not come back here while the lock is held.
            _ = try? Command.run("bash", [needsScript, "tool:" + tool])
        }
    }

    static func isInstalled(_ tool: String) -> Bool {
        let files = FileManager.default
        if tool.contains("/") { return files.isExecutableFile(atPath: tool) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { files.isExecutableFile(atPath: "\($0)/\(tool)") }
    }
}
