import Foundation

/// The app's state folder (docs/sdk.md): `install-id`, `settings`, `last-run`, `queue/`, `runs/`, `crashes/`.
/// Shared by the SDK and `faultline-run`; every file in it is small text written atomically (temporary file,
/// then `rename`), and read as untrusted.
package struct StateFolder: Sendable {
    package var path: String

    package init(path: String) {
        self.path = path
    }

    package var runs: String { path + "/runs" }
    package var queue: String { path + "/queue" }
    package var crashes: String { path + "/crashes" }

    /// The default folder of `program`: `FAULTLINE_STATE_DIR`, else `$XDG_STATE_HOME/faultline/<program>`, else
    /// `~/.local/state/faultline/<program>`.
    package static func defaultPath(program: String, environment: [String: String]) -> String {
        if let explicit = environment["FAULTLINE_STATE_DIR"], !explicit.isEmpty { return explicit }
        let name = program.isEmpty ? "app" : program
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/faultline/" + name }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/state/faultline/" + name
    }

    /// Makes the folder and its `runs/` and `queue/` (mode 0700) and checks each (``PrivateFolder``): throws
    /// `unsafeFolder` when another user could change one. `path` becomes the checked path (parents' links
    /// resolved), which every later file operation uses.
    package mutating func prepare() throws {
        path = try PrivateFolder.make(path, what: "state folder")
        _ = try PrivateFolder.make(runs, what: "runs folder")
        _ = try PrivateFolder.make(queue, what: "queue folder")
    }

    /// The installation's id, made once (a lowercase UUID). Two processes starting at once agree: the first
    /// `link` wins and both read what it wrote.
    package func installID() throws -> String {
        let file = path + "/install-id"
        if let existing = Self.readSmall(file), let id = Self.validID(existing) { return id }
        let made = UUID().uuidString.lowercased()
        let temporary = file + ".tmp-\(getpid())"
        try Self.writeSmall(temporary, made + "\n")
        if link(temporary, file) != 0 {
            // Someone else made it first, or an unusable one is there: replace only an unusable one.
            if let existing = Self.readSmall(file), let id = Self.validID(existing) {
                unlink(temporary)
                return id
            }
            rename(temporary, file)
        } else {
            unlink(temporary)
        }
        return Self.readSmall(file).flatMap(Self.validID) ?? made
    }

    static func validID(_ text: String) -> String? {
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !id.isEmpty, id.utf8.count <= 128,
            id.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D
            })
        else { return nil }
        return id
    }

    /// `settings`: `collection=on|off`, one setting a line. Missing or unreadable: on.
    package func collectionEnabled() -> Bool {
        guard let text = Self.readSmall(path + "/settings") else { return true }
        for line in text.split(separator: "\n").prefix(64) where line.hasPrefix("collection=") {
            return line.dropFirst("collection=".count).trimmingCharacters(in: .whitespaces) != "off"
        }
        return true
    }

    package func setCollectionEnabled(_ enabled: Bool) throws {
        try Self.writeAtomically(path + "/settings", "collection=\(enabled ? "on" : "off")\n")
    }

    /// How the previous run ended (`last-run`: `exited`, `crashed` or `abnormal`), nil when unknown.
    package func lastRun() -> SessionUpdate.Status? {
        guard let text = Self.readSmall(path + "/last-run") else { return nil }
        let word = text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard let status = SessionUpdate.Status(rawValue: word), status != .ok else { return nil }
        return status
    }

    package func setLastRun(_ status: SessionUpdate.Status) throws {
        try Self.writeAtomically(path + "/last-run", status.rawValue + "\n")
    }

    /// The state files in `runs/`.
    package func runFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: runs)) ?? [])
            .filter { $0.hasSuffix(".state") }.sorted().prefix(10_000).map { runs + "/" + $0 }
    }

    // MARK: Small files

    /// At most `limit` bytes of a regular file in the folder, as text (never through a link).
    static func readSmall(_ path: String, limit: Int = 64 * 1024) -> String? {
        PrivateFile.read(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Writes a new file (`O_EXCL | O_NOFOLLOW`: whatever is at `path` is replaced, never followed).
    static func writeSmall(_ path: String, _ text: String) throws {
        try PrivateFile.write(Array(text.utf8), toNew: path, sync: false)
    }

    static func writeAtomically(_ path: String, _ text: String) throws {
        try PrivateFile.writeAtomically(path, Array(text.utf8), sync: true)
    }
}

/// The `SWIFT_BACKTRACE` setting the SDK and `faultline-run` use; `output-to` is the crash folder.
package enum BacktraceSetting {
    package static func value(crashDirectory: String) -> String {
        "enable=yes,interactive=no,format=json,symbolicate=off,threads=all,images=all,output-to=\(crashDirectory)"
    }

    /// The folder `SWIFT_BACKTRACE` sends JSON crash files to, or nil when it does not (not set, disabled,
    /// text format, or no `output-to` folder).
    package static func jsonCrashDirectory(_ setting: String?) -> String? {
        guard let setting, !setting.isEmpty else { return nil }
        var options: [String: String] = [:]
        for part in setting.split(separator: ",").prefix(64) {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2 { options[pair[0].lowercased()] = pair[1] }
        }
        let off = ["no", "false", "off", "0"]
        if let enable = options["enable"]?.lowercased(), off.contains(enable) { return nil }
        guard options["format"]?.lowercased() == "json", let folder = options["output-to"], folder.hasPrefix("/")
        else { return nil }
        return folder
    }
}
