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

    /// Makes the folder and its `runs/` and `queue/` (mode 0700).
    package func prepare() throws {
        for folder in [path, runs, queue] {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw SDKError(.io, "cannot make the state folder \(folder): \(error)")
            }
        }
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
            id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D })
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

    static func readSmall(_ path: String, limit: Int = 64 * 1024) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: limit) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func writeSmall(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SDKError(.io, "cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        var written = 0
        var rounds = 0
        while written < bytes.count, rounds < 1000 {
            rounds += 1
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SDKError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            written += n
        }
    }

    static func writeAtomically(_ path: String, _ text: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        try writeSmall(temporary, text)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw SDKError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
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
