#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A disk-backed outbox: every report and session update is written here (gzip, atomically) before anything
/// tries to send it, and removed only after the server's 2xx, so a crash of the app, of the launcher or of
/// the server loses nothing that fits the bounds.
///
/// Bounded in count and bytes; the oldest items are dropped first and
/// counted (`dropped`). At most ``Limits/unsentNonFatals`` non-fatal reports are kept; an older one goes when a
/// ninth arrives. Several processes may use one folder at once (the launcher and its child): writes are
/// rename-atomic and removal of a missing item is not an error.
///
/// On disk: one file per item, `<sequence>-<kind>-<id>.gz` (the sequence is 16 digits, one more than the
/// highest in the folder, so names sort in enqueue order), holding the gzip-compressed request body. A new
/// item is written to a dot-named temp file and renamed into place; crash reports are `fsync`ed (file and
/// folder) before `enqueue` returns, non-fatals and sessions are not (losing one to a power cut is acceptable,
/// an fsync per `record(error:)` is not). Enqueueing and the bounds run under an `flock` on `.lock`, so two
/// processes never pick the same sequence or both drop for the same overflow. `.counters` holds the number
/// of items dropped for the bounds and refused by the server. Files that do not have the item form (anything
/// else a user or another program put there) are ignored and never read. The folder must be this user's alone
/// (``PrivateFolder``, checked at `init`); no file in it is opened through a link, and temp files are always new
/// (`O_EXCL`).
package struct DeliveryQueue: Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        /// `minidump`: a crash as `faultline-run` captures it from a native program, the multipart body of
        /// Sentry's minidump endpoint (``MinidumpUpload``).
        case crash, nonfatal, session, minidump

        /// Crashes are written to disk before `enqueue` returns (`fsync`); the others are not.
        var isCrash: Bool { self == .crash || self == .minidump }
    }

    package struct Item: Sendable, Equatable {
        package var kind: Kind
        /// The file in the queue folder.
        package var path: String
        /// For reports: the event id (32 hex digits). For sessions: the session id.
        package var id: String
    }

    package var directory: String
    package var maxItems: Int
    package var maxBytes: Int
    /// At most this many non-fatal reports are kept (``Limits/unsentNonFatals``).
    package var maxNonFatals: Int = Limits.unsentNonFatals
    /// The largest compressed item `body(of:)` reads (the server refuses a body over 10 MiB anyway).
    package static let maxItemBytes = 10 << 20

    /// Opens (and makes, mode 0700, with its parents) the queue folder. Throws `unsafeFolder` when another user
    /// could change it (``PrivateFolder``): they could drop, replace or forge what waits to be sent.
    package init(directory: String, maxItems: Int = 200, maxBytes: Int = 16 << 20) throws {
        let trimmed = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        self.directory = try PrivateFolder.make(trimmed, what: "queue folder")
        self.maxItems = max(1, maxItems)
        self.maxBytes = max(1, maxBytes)
    }

    /// Stores `json` (the uncompressed request body) durably; `fsync` for crashes, not for non-fatals.
    ///
    /// Throws `io` when the folder cannot be written, or when `id` is not 1–128 of `[A-Za-z0-9_-]`. An item
    /// larger than `maxBytes` by itself is not stored: it is counted as dropped and `io` is thrown.
    @discardableResult
    package func enqueue(kind: Kind, id: String, json: [UInt8]) throws -> Item {
        guard Self.isValidID(id) else {
            throw SDKError(.io, "a queue item id must be 1–128 letters, digits, '-' or '_'")
        }
        let body = try Gzip.compress(json)
        let lock = Self.lock(directory)
        defer { Self.unlock(lock) }
        guard body.count <= maxBytes, body.count <= Self.maxItemBytes else {
            addToCounters(dropped: 1)
            throw SDKError(
                .io,
                "a \(kind.rawValue) report of \(body.count) compressed bytes is over the queue's bound of \(maxBytes)")
        }
        var entries = scan()
        if let last = entries.last?.sequence, last >= Self.maxSequence { entries = renumber(entries) }
        let sequence = (entries.last?.sequence ?? 0) &+ 1
        let name = Self.name(sequence: sequence, kind: kind, id: id)
        let path = directory + "/" + name
        let temp = directory + "/.tmp-\(getpid())-\(sequence)-\(kind.rawValue)"
        try PrivateFile.write(body, toNew: temp, sync: kind.isCrash)
        guard rename(temp, path) == 0 else {
            let why = Self.errnoText()
            unlink(temp)
            throw SDKError(.io, "could not move a queue item into \(directory): \(why)")
        }
        if kind.isCrash { Self.syncDirectory(directory) }
        let item = Item(kind: kind, path: path, id: id)
        enforceBounds(entries + [Entry(sequence: sequence, item: item, bytes: body.count)], keep: item)
        return item
    }

    /// The items waiting, oldest first.
    package func pending() -> [Item] { scan().map(\.item) }

    /// The gzip-compressed body of `item`, or nil when it is gone or unreadable (or not gzip at all).
    package func body(of item: Item) -> [UInt8]? {
        guard let bytes = PrivateFile.read(item.path, limit: Self.maxItemBytes), bytes.count >= 18, bytes[0] == 0x1f,
            bytes[1] == 0x8b
        else { return nil }
        return bytes
    }

    /// Removes `item`; a missing item (another process sent it) is not an error.
    package func remove(_ item: Item) {
        unlink(item.path)
    }

    /// Removes `item` because it can never be sent (the server refused it, or its file is unreadable), and
    /// counts it (``rejected()``). Counted only when this call removed it.
    package func reject(_ item: Item) {
        let lock = Self.lock(directory)
        defer { Self.unlock(lock) }
        if unlink(item.path) == 0 { addToCounters(rejected: 1) }
    }

    /// Removes every item (of `kinds`, default all).
    package func removeAll(kinds: Set<Kind> = Set(Kind.allCases)) {
        for entry in scan() where kinds.contains(entry.item.kind) { unlink(entry.item.path) }
    }

    /// Items dropped for the bounds since the folder was made.
    package func dropped() -> Int { counters().dropped }

    /// Items the server refused (a 4xx other than 408/429) or whose file could not be read, since the folder was made.
    package func rejected() -> Int { counters().rejected }

    /// The compressed bytes the items take.
    package func totalBytes() -> Int { scan().reduce(0) { $0 &+ $1.bytes } }

    // MARK: - Internals

    struct Entry {
        var sequence: Int
        var item: Item
        var bytes: Int
    }

    /// The folder's items, oldest first. Bounded: at most 100,000 directory entries are looked at.
    func scan() -> [Entry] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var out: [Entry] = []
        var looked = 0
        while looked < 100_000, let entry = readdir(dir) {
            looked += 1
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
                let bytes = raw.bindMemory(to: UInt8.self)
                let length = bytes.firstIndex(of: 0) ?? bytes.count
                return String(decoding: bytes[0..<length], as: UTF8.self)
            }
            guard let (sequence, kind, id) = Self.parse(name: name) else { continue }
            let path = directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            out.append(
                Entry(
                    sequence: sequence, item: Item(kind: kind, path: path, id: id),
                    bytes: Int(truncatingIfNeeded: info.st_size)))
        }
        out.sort { $0.sequence != $1.sequence ? $0.sequence < $1.sequence : $0.item.path < $1.item.path }
        return out
    }

    /// The highest sequence a name holds (16 digits).
    static let maxSequence = 9_999_999_999_999_999

    /// Renames the items to sequences 1, 2, … (in order) when the sequence space is used up; only a file put
    /// there by hand gets that far. Call with the lock held.
    private func renumber(_ entries: [Entry]) -> [Entry] {
        var out: [Entry] = []
        for (n, entry) in entries.enumerated() {
            var moved = entry
            moved.sequence = n + 1
            moved.item.path = directory + "/" + Self.name(sequence: n + 1, kind: entry.item.kind, id: entry.item.id)
            if rename(entry.item.path, moved.item.path) == 0 { out.append(moved) }
        }
        return out
    }

    /// Drops the oldest items until the bounds hold (never `keep`, the item just written), counting them.
    private func enforceBounds(_ all: [Entry], keep: Item) {
        var entries = all
        var dropCount = 0
        // The Crashlytics rule first: at most `maxNonFatals` unsent non-fatals, the oldest go.
        var nonFatals = entries.filter { $0.item.kind == .nonfatal }.count
        var index = 0
        while nonFatals > maxNonFatals, index < entries.count {
            if entries[index].item.kind == .nonfatal, entries[index].item != keep {
                if unlink(entries[index].item.path) == 0 { dropCount += 1 }
                entries.remove(at: index)
                nonFatals -= 1
            } else {
                index += 1
            }
        }
        var bytes = entries.reduce(0) { $0 &+ $1.bytes }
        index = 0
        while entries.count > maxItems || bytes > maxBytes, index < entries.count {
            if entries[index].item == keep { index += 1; continue }
            if unlink(entries[index].item.path) == 0 { dropCount += 1 }
            bytes -= entries[index].bytes
            entries.remove(at: index)
        }
        if dropCount > 0 { addToCounters(dropped: dropCount) }
        cleanStaleTemps()
    }

    /// Temp files of a process that died while writing (older than an hour) would otherwise stay forever.
    private func cleanStaleTemps() {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var looked = 0
        while looked < 100_000, let entry = readdir(dir) {
            looked += 1
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
                let bytes = raw.bindMemory(to: UInt8.self)
                return String(decoding: bytes[0..<(bytes.firstIndex(of: 0) ?? bytes.count)], as: UTF8.self)
            }
            guard name.hasPrefix(".tmp-") else { continue }
            var info = stat()
            let path = directory + "/" + name
            if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, now.tv_sec &- info.st_mtim.tv_sec > 3600 {
                unlink(path)
            }
        }
    }

    private struct Counters {
        var dropped = 0
        var rejected = 0
    }

    private var countersPath: String { directory + "/.counters" }

    /// `dropped N\nrejected M\n`; anything unreadable counts as zero.
    private func counters() -> Counters {
        var c = Counters()
        guard let bytes = PrivateFile.read(countersPath, limit: 4096) else { return c }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, parts[1].utf8.count <= 18, let n = Int(parts[1]), n >= 0 else { continue }
            if parts[0] == "dropped" { c.dropped = n } else if parts[0] == "rejected" { c.rejected = n }
        }
        return c
    }

    /// Call with the lock held.
    private func addToCounters(dropped: Int = 0, rejected: Int = 0) {
        var c = counters()
        c.dropped = c.dropped.addingReportingOverflow(dropped).overflow ? Int.max : c.dropped + dropped
        c.rejected = c.rejected.addingReportingOverflow(rejected).overflow ? Int.max : c.rejected + rejected
        let temp = directory + "/.tmp-counters-\(getpid())"
        guard
            (try? PrivateFile.write(
                Array("dropped \(c.dropped)\nrejected \(c.rejected)\n".utf8), toNew: temp, sync: false)) != nil
        else { return }
        if rename(temp, countersPath) != 0 { unlink(temp) }
    }

    static func name(sequence: Int, kind: Kind, id: String) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + "-" + kind.rawValue + "-" + id
            + ".gz"
    }

    /// `<16 digits>-<kind>-<id>.gz`, or nil for any other name.
    static func parse(name: String) -> (Int, Kind, String)? {
        let bytes = Array(name.utf8)
        guard bytes.count > 20, bytes.count < 200, bytes.suffix(3).elementsEqual(".gz".utf8) else { return nil }
        let digits = bytes.prefix(16)
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), bytes[16] == UInt8(ascii: "-") else { return nil }
        var sequence = 0
        for d in digits { sequence = sequence &* 10 &+ Int(d - 0x30) }
        let rest = String(decoding: bytes[17..<(bytes.count - 3)], as: UTF8.self)
        guard let dash = rest.firstIndex(of: "-"), let kind = Kind(rawValue: String(rest[..<dash])) else { return nil }
        let id = String(rest[rest.index(after: dash)...])
        guard isValidID(id) else { return nil }
        return (sequence, kind, id)
    }

    static func isValidID(_ id: String) -> Bool {
        let u = id.utf8
        return (1...128).contains(u.count)
            && u.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d
                    || $0 == 0x5f
            }
    }

    // MARK: - Files

    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// An exclusive `flock` on `.lock` in `directory` (-1 when it cannot be had: the caller goes on unlocked).
    static func lock(_ directory: String) -> Int32 {
        let fd = open(directory + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return -1 }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { close(fd); return -1 }
        }
        return fd
    }

    static func unlock(_ fd: Int32) {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
