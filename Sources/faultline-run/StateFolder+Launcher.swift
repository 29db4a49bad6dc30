import FaultlineSDK
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the launcher adds to the SDK's ``StateFolder``: the private crash folder it gives the Swift runtime as
/// `output-to`, and finding the crash files of its child there.
extension StateFolder {
    /// Makes the folder, `runs/`, `queue/` and `crashes/`, all 0700, and checks each (``PrivateFolder``): throws
    /// `unsafeFolder` when another user could change one. `crashes/` is made private (0700) even when it was
    /// there already: crash files hold registers and memory.
    mutating func prepareForLauncher() throws {
        try prepare()
        let checked = try PrivateFolder.make(crashes, what: "crash folder")
        try PrivateFolder.restrict(checked, what: "crash folder")
    }

    /// The Swift runtime's crash files for `pid` (`<program>-<pid>-<n>.json`; this runtime writes `n` as
    /// `0.0`), oldest first.
    func crashFiles(pid: Int32) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: crashes)) ?? []
        var found: [(modified: Double, path: String)] = []
        for name in names.prefix(10_000) where Self.isCrashFile(name, pid: pid) {
            let path = crashes + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let seconds = Double(info.st_mtim.tv_sec)
            let fraction = Double(info.st_mtim.tv_nsec) / 1e9
            found.append((seconds + fraction, path))
        }
        found.sort { a, b in a.modified != b.modified ? a.modified < b.modified : a.path < b.path }
        return found.map { $0.path }
    }

    /// Whether `name` is `<anything>-<pid>-<digits and dots>.json` (a program name may itself hold dashes).
    static func isCrashFile(_ name: String, pid: Int32) -> Bool {
        guard name.hasSuffix(".json") else { return false }
        let parts = name.dropLast(5).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2] == Substring(String(pid)) else { return false }
        let n = parts[parts.count - 1]
        return !n.isEmpty && n.utf8.count <= 32 && n.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }
    }
}
