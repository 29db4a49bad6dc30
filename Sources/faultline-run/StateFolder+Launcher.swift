import FaultlineSDK
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the launcher adds to the SDK's ``StateFolder``: the private crash folder it gives the Swift runtime as
/// `output-to`, and finding the crash files of its child there.
extension StateFolder {
    /// Makes the folder, `runs/`, `queue/` and `crashes/`, all 0700: crash files hold registers and memory.
    func prepareForLauncher() throws {
        try prepare()
        do {
            try FileManager.default.createDirectory(
                atPath: crashes, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SDKError(.io, "cannot make the crash folder \(crashes): \(error)")
        }
        _ = chmod(crashes, 0o700)  // it may have been there already, made by someone else
    }

    /// The Swift runtime's crash files for `pid` (`<program>-<pid>-<n>.json`), oldest `n` first.
    func crashFiles(pid: Int32) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: crashes)) ?? []
        return names.prefix(10_000).compactMap { name -> (Int, String)? in
            guard let n = Self.crashFileNumber(name, pid: pid) else { return nil }
            return (n, crashes + "/" + name)
        }
        .sorted { $0.0 < $1.0 }
        .map(\.1)
    }

    /// `n` when `name` is `<anything>-<pid>-<n>.json` (a program name may itself hold dashes).
    static func crashFileNumber(_ name: String, pid: Int32) -> Int? {
        guard name.hasSuffix(".json") else { return nil }
        let parts = name.dropLast(5).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2] == Substring(String(pid)),
            let n = Int(parts[parts.count - 1]), n >= 0
        else { return nil }
        return n
    }
}
