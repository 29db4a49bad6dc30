import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The app's state folder, shared with the SDK inside the child (docs/sdk.md): `install-id`, `settings`,
/// `last-run`, `queue/`, `runs/<session>.state` and `crashes/` (the Swift runtime's `output-to`, mode 0700,
/// because crash files hold registers and memory).
struct StateFolder {
    let path: String

    var queue: String { path + "/queue" }
    var runs: String { path + "/runs" }
    var crashes: String { path + "/crashes" }

    /// `$XDG_STATE_HOME/faultline/<program>`, else `~/.local/state/faultline/<program>`.
    static func defaultPath(program: String, environment: [String: String]) -> String {
        let name = String(program.split(separator: "/").last ?? "program")
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return xdg + "/faultline/" + name
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/state/faultline/" + name
    }

    /// Makes the folders (the state folder and its children 0700: reports and state are private).
    func prepare() throws {
        for folder in [path, queue, runs, crashes] {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        _ = chmod(crashes, 0o700)
    }

    /// The installation's id, made once (a race between two first runs keeps one of the two).
    func installID() throws -> String {
        let file = path + "/install-id"
        if let existing = Self.readID(file) { return existing }
        let temporary = file + ".\(getpid()).tmp"
        try Data(UUID().uuidString.lowercased().utf8).write(to: URL(fileURLWithPath: temporary))
        defer { unlink(temporary) }
        _ = link(temporary, file)  // fails with EEXIST when another run made it first: theirs wins
        guard let id = Self.readID(file) else { throw CocoaError(.fileReadCorruptFile) }
        return id
    }

    private static func readID(_ file: String) -> String? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty || id.utf8.count > 128 ? nil : id
    }

    /// Whether the app's user left collection on (`Faultline.setCollectionEnabled`); on unless `settings`
    /// says off.
    func collectionEnabled() -> Bool {
        guard let text = try? String(contentsOfFile: path + "/settings", encoding: .utf8) else { return true }
        return Self.collectionEnabled(settings: text)
    }

    /// Reads the `collection` line of a `settings` file (`key=value` lines); anything unreadable means on.
    static func collectionEnabled(settings text: String) -> Bool {
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, parts[0] == "collection" || parts[0] == "collection_enabled" else { continue }
            return !["off", "false", "0", "no"].contains(parts[1].lowercased())
        }
        return true
    }

    /// Records how this run ended, for `Faultline.didCrashOnPreviousExecution` (replaced atomically).
    func writeLastRun(_ status: String) {
        let file = path + "/last-run"
        let temporary = file + ".\(getpid()).tmp"
        guard (try? Data((status + "\n").utf8).write(to: URL(fileURLWithPath: temporary))) != nil else { return }
        if rename(temporary, file) != 0 { unlink(temporary) }
    }

    /// The Swift runtime's crash files for `pid` (`<program>-<pid>-<n>.json`), oldest `n` first.
    func crashFiles(pid: Int32) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: crashes)) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard let n = Self.crashFileNumber(name, pid: pid) else { return nil }
            return (n, crashes + "/" + name)
        }
        .sorted { $0.0 < $1.0 }
        .map(\.1)
    }

    /// `n` when `name` is `<anything>-<pid>-<n>.json`.
    static func crashFileNumber(_ name: String, pid: Int32) -> Int? {
        guard name.hasSuffix(".json") else { return nil }
        let parts = name.dropLast(5).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2] == Substring(String(pid)),
              let n = Int(parts[parts.count - 1]), n >= 0
        else { return nil }
        return n
    }
}
