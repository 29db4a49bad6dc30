import Glibc

/// The one check of every folder the SDK and `faultline-run` keep files in: the state folder, its `runs/` and
/// `queue/`, and the crash folder. Only this user may be able to change what is in them, as ssh demands of
/// `~/.ssh`.
///
/// Why: a state folder another user made (a shared `FAULTLINE_STATE_DIR`, a path in `/tmp`) lets that user plant
/// a symbolic link where a temporary file will be written (a root run then overwrites any file the link
/// names), read crash files (registers, memory), and drop, replace or forge queued reports. So a folder is
/// refused, with a message that names the reason, when it is a symbolic link or not a folder, is owned by
/// another user than `geteuid()`, or can be written by its group or others; and each of its parents must be
/// owned by root or this user and be writable by nobody else unless sticky (`/tmp`), or another user could
/// swap the folder itself. Callers turn a refusal into "reporting is off" (the SDK disables itself, the
/// launcher still runs the program), never into a crash.
///
/// ``make(_:)`` answers the path with its parents' symbolic links resolved: every later open goes through that
/// path, whose every part has been checked, so nothing checked can be swapped underneath. Files inside are
/// opened with `O_NOFOLLOW` and made with `O_CREAT | O_EXCL | O_NOFOLLOW` (``PrivateFile``) as a second wall.
package enum PrivateFolder {
    /// Makes `path` and its missing parents (mode 0700), then checks it (after `mkdir`, so a folder someone
    /// else made first in the meantime is refused too). Answers the checked path (parents' links resolved).
    /// Throws `unsafeFolder` naming the reason, or `io` when it cannot be made.
    package static func make(_ path: String, what: String = "folder") throws -> String {
        let absolute = try absolutePath(path, what: what)
        var built = ""
        for part in absolute.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o700) != 0, errno != EEXIST {
                throw SDKError(.io, "cannot make the \(what) \(built): \(errnoText())")
            }
        }
        return try check(absolute, what: what)
    }

    /// Checks an existing folder (see the type's rules) without making anything; answers the checked path.
    package static func check(_ path: String, what: String = "folder") throws -> String {
        let absolute = try absolutePath(path, what: what)
        var parts = absolute.split(separator: "/").map(String.init)
        guard let last = parts.popLast(), last != ".", last != ".." else {
            throw SDKError(.unsafeFolder, "the \(what) \(path) must be a folder's path, not \"/\", \".\" or \"..\"")
        }
        let parent = "/" + parts.joined(separator: "/")
        guard let resolved = realpath(parent, nil) else {
            throw SDKError(.io, "cannot find the \(what)'s parent \(parent): \(errnoText())")
        }
        let canonicalParent = String(cString: resolved)
        free(resolved)
        let me = geteuid()
        // The parents, from the root down: owned by root or us, and writable by no one else unless sticky.
        var ancestor = ""
        for part in [""] + canonicalParent.split(separator: "/").map(String.init) {
            ancestor += part.isEmpty ? "" : "/" + part
            let shown = ancestor.isEmpty ? "/" : ancestor
            let info = try status(shown, what: what)
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw SDKError(.unsafeFolder, "the \(what)'s parent \(shown) is not a folder")
            }
            guard info.st_uid == 0 || info.st_uid == me else {
                throw refusal(what, path, "its parent \(shown) is owned by uid \(info.st_uid), who could swap it")
            }
            guard info.st_mode & 0o022 == 0 || info.st_mode & S_ISVTX != 0 else {
                throw refusal(
                    what, path,
                    "its parent \(shown) can be written by \(writers(info.st_mode)) (mode \(octal(info.st_mode))), who could swap it"
                )
            }
        }
        let checked = (canonicalParent == "/" ? "" : canonicalParent) + "/" + last
        let info = try status(checked, what: what)
        switch info.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw refusal(what, path, "it is a symbolic link")
        default: throw refusal(what, path, "it is not a folder")
        }
        guard info.st_uid == me else {
            throw refusal(what, path, "it is owned by uid \(info.st_uid), not by this user (uid \(me))")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw refusal(
                what, path,
                "it can be written by \(writers(info.st_mode)) (mode \(octal(info.st_mode)); chmod go-w \(checked))")
        }
        return checked
    }

    /// Gives a checked folder of ours mode 0700 (through a descriptor opened without following links, so a link
    /// swapped in cannot redirect it), e.g. the crash folder: its files hold registers and memory.
    package static func restrict(_ checkedPath: String, what: String = "folder") throws {
        let fd = open(checkedPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw SDKError(.io, "cannot open the \(what) \(checkedPath): \(errnoText())") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid() else {
            throw refusal(what, checkedPath, "it is not owned by this user (uid \(geteuid()))")
        }
        if info.st_mode & 0o777 != 0o700, fchmod(fd, 0o700) != 0 {
            throw SDKError(.io, "cannot make the \(what) \(checkedPath) private (chmod 0700): \(errnoText())")
        }
    }

    // MARK: Internals

    private static func absolutePath(_ path: String, what: String) throws -> String {
        guard !path.isEmpty else { throw SDKError(.unsafeFolder, "the \(what)'s path is empty") }
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { throw SDKError(.io, "cannot find the current folder: \(errnoText())") }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    private static func status(_ path: String, what: String) throws -> stat {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw SDKError(.io, "cannot look at the \(what) \(path): \(errnoText())") }
        return info
    }

    private static func refusal(_ what: String, _ path: String, _ why: String) -> SDKError {
        SDKError(
            .unsafeFolder, "refusing the \(what) \(path): \(why); use a folder only this user can change (docs/sdk.md)")
    }

    private static func writers(_ mode: mode_t) -> String {
        switch (mode & 0o020 != 0, mode & 0o002 != 0) {
        case (true, true): "its group and others"
        case (true, false): "its group"
        default: "others"
        }
    }

    private static func octal(_ mode: mode_t) -> String {
        let text = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// Files inside a ``PrivateFolder``: never opened through a symbolic link, temporary files always new.
package enum PrivateFile {
    /// At most `limit` bytes of a regular file; nil when it is missing, larger, a link, or not a regular file.
    /// `O_NONBLOCK`: a FIFO put in its place cannot hang the reader.
    package static func read(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 0, info.st_size <= limit
        else { return nil }
        var out = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var total = 0
        var rounds = 0
        while total < out.count, rounds < 1 << 16 {
            rounds += 1
            let n = out.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress! + total, raw.count - total) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            total += n
        }
        guard total <= limit else { return nil }
        out.removeSubrange(total...)
        return out
    }

    /// Creates `path` as a new file (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600) and answers its descriptor.
    /// Whatever is at `path` already (a temporary file of a process that died with our pid, or a planted link)
    /// is unlinked, never followed, and the creation tried once more.
    package static func createNew(_ path: String, flags: Int32 = O_WRONLY) throws -> Int32 {
        for attempt in 0..<2 {
            let fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 { return fd }
            guard errno == EEXIST, attempt == 0 else { break }
            unlink(path)
        }
        throw SDKError(.io, "cannot create \(path): \(PrivateFolder.errnoText())")
    }

    /// Writes `bytes` to a new temporary file beside `path`, `fsync`s it when `sync`, and renames it onto
    /// `path`: a reader sees the old file or the new one, and no link at either name is followed.
    package static func writeAtomically(_ path: String, _ bytes: [UInt8], sync: Bool) throws {
        let temporary = path + ".tmp-\(getpid())"
        try write(bytes, toNew: temporary, sync: sync)
        guard rename(temporary, path) == 0 else {
            let why = PrivateFolder.errnoText()
            unlink(temporary)
            throw SDKError(.io, "cannot write \(path): \(why)")
        }
    }

    /// Writes `bytes` to `path`, made new by ``createNew(_:flags:)``; removes it again when the write fails.
    package static func write(_ bytes: [UInt8], toNew path: String, sync: Bool) throws {
        let fd = try createNew(path)
        var ok = true
        bytes.withUnsafeBytes { raw in
            var offset = 0
            var rounds = 0
            while offset < raw.count, rounds < 1 << 16 {
                rounds += 1
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { ok = false; break }
                offset += n
            }
            if offset < raw.count { ok = false }
        }
        if ok, sync, fsync(fd) != 0 { ok = false }
        let why = PrivateFolder.errnoText()
        close(fd)
        guard ok else {
            unlink(path)
            throw SDKError(.io, "cannot write \(path): \(why)")
        }
    }
}
