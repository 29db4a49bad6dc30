import Glibc
import Synchronization

/// The run's context on disk, always current: a memory-mapped file (`MAP_SHARED`) the SDK writes into.
///
/// Writes go to the page cache through the mapping, so they survive
/// a crash or `SIGKILL` of the app (not a power loss) without a system call per write: that is what keeps
/// `Faultline.log` and `setCustomValue` well under a microsecond. The format is versioned and documented
/// in docs/sdk.md; a reader never trusts it (it may be torn, truncated or written by a newer SDK).
///
/// Every change is committed by one aligned store made after the bytes it publishes (with a fence in
/// between): strings and custom values are double-buffered and switched by an `active` index, a custom key
/// slot becomes visible when its `state` turns to 1, and a breadcrumb when the ring's `end` counter passes
/// it. A process that dies in the middle of a write therefore leaves the previous state readable.
///
/// The process that writes the run holds an exclusive `flock` on the file while it lives (``isHeld(at:)``), so
/// a state file nobody holds belongs to a run that has ended.
package final class StateFile: @unchecked Sendable {
    // MARK: Format, version 1 (all integers little-endian; see docs/sdk.md "The state file")

    package enum Layout {
        /// "FLTSTATE".
        static let magic: UInt64 = 0x4554_4154_5354_4C46
        static let version: UInt32 = 1

        // Header fields (byte offsets).
        static let oMagic = 0, oVersion = 8, oHeaderBytes = 12, oKeySlots = 16, oKeySlotBytes = 20
        static let oRingOffset = 24, oRingBytes = 28, oFileBytes = 32
        static let oPID = 40, oExited = 44, oStartedAt = 48, oErrors = 56, oDroppedKeys = 64
        static let oKeyOrder = 72, oRingStart = 80, oRingEnd = 88
        static let oStrings = 256

        /// One string: `active` (u32), pad, then two buffers of `length` (u32, `UInt32.max` = nil), pad, bytes.
        static let stringBytes = Limits.customKeyBytes
        static let stringBufferBytes = 8 + stringBytes
        static let stringSlotBytes = 8 + 2 * stringBufferBytes
        enum Slot: Int, CaseIterable {
            case sessionID, installID, userID, appID, appVersion, appBuild, environment
        }

        static let headerBytes = 16384
        static let keySlots = Limits.customKeys
        /// A key slot: `state` (u32: 0 free, 1 used), `active` (u32), `order` (u64), key length (u32), pad, key
        /// bytes, then two value buffers: type (u32: 1 string, 2 int, 3 double, 4 bool), length (u32), bytes.
        static let valueBufferBytes = 8 + Limits.customKeyBytes
        static let keySlotBytes = 24 + Limits.customKeyBytes + 2 * valueBufferBytes
        static let ringOffset = 217_088
        static let ringBytes = Limits.breadcrumbBytes
        static let fileBytes = ringOffset + ringBytes

        /// A breadcrumb record: length of the whole record (u32, a multiple of 8), message length (u32),
        /// category length (u16, `UInt16.max` = nil), pad (u16), pad (u32), timestamp (f64 bits), pad (u64),
        /// category bytes, message bytes, padding to 8. The 32-byte head matches the server's size estimate.
        static let recordHead = 32
        /// A single breadcrumb's message is cut at this many bytes (at a character boundary).
        static let maxMessageBytes = 16 * 1024
        static let maxCategoryBytes = 256
    }

    private let base: UnsafeMutableRawPointer
    private let fd: Int32
    /// Guards every write (and the in-memory index of keys); readers of the own mapping take it too.
    private let lock = Mutex<[String: Int]>([:])
    /// Whether this process holds the file's `flock`.
    package let holdsLock: Bool

    private init(base: UnsafeMutableRawPointer, fd: Int32, holdsLock: Bool) {
        self.base = base
        self.fd = fd
        self.holdsLock = holdsLock
    }

    deinit {
        munmap(base, Layout.fileBytes)
        Glibc.close(fd)
    }

    // MARK: Opening

    /// Makes a new state file for a run that is about to start (by the SDK, or by `faultline-run` before it
    /// starts its child); the file holds `context` (breadcrumbs and keys included). Mode 0600; the caller
    /// holds the file's `flock` until the `StateFile` is released.
    package static func create(at path: String, context: RunContext) throws -> StateFile {
        // Made under a temporary name, locked and filled, then renamed into place: whoever looks for ended runs
        // never sees a half-made or unlocked file at `path` (the lock stays with the open file across rename).
        // New, never through a link (`O_EXCL | O_NOFOLLOW`): see ``PrivateFolder``.
        let temporary = path + ".tmp-\(getpid())"
        let fd: Int32
        do { fd = try PrivateFile.createNew(temporary, flags: O_RDWR) } catch {
            throw SDKError(.io, "cannot create the state file \(path): \(error)")
        }
        guard ftruncate(fd, off_t(Layout.fileBytes)) == 0 else {
            let text = errnoText()
            Glibc.close(fd)
            unlink(temporary)
            throw SDKError(.io, "cannot size the state file \(path): \(text)")
        }
        let held = flock(fd, LOCK_EX | LOCK_NB) == 0
        let file: StateFile
        do { file = try map(fd: fd, path: path, holdsLock: held) } catch {
            unlink(temporary)
            throw error
        }
        file.initialize(context)
        guard rename(temporary, path) == 0 else {
            let text = errnoText()
            unlink(temporary)
            throw SDKError(.io, "cannot create the state file \(path): \(text)")
        }
        return file
    }

    /// Opens the state file `faultline-run` made for this process (`FAULTLINE_RUN_STATE`), to write into it.
    /// Throws `corruptStateFile` when it is not a version-1 state file of the right size, `unsafeFolder` when it
    /// is a link or a file of another user (the path comes from the environment).
    package static func open(at path: String) throws -> StateFile {
        let fd = Glibc.open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw SDKError(.io, "cannot open the state file \(path): \(errnoText())") }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            Glibc.close(fd)
            throw SDKError(.unsafeFolder, "\(path) is not a regular file of this user (uid \(geteuid()))")
        }
        guard Int(exactly: info.st_size) == Layout.fileBytes else {
            Glibc.close(fd)
            throw SDKError(.corruptStateFile, "\(path) is not a state file of this SDK (wrong size)")
        }
        // The launcher usually holds the lock for its child; taking it as well is a bonus, not a need.
        let held = flock(fd, LOCK_EX | LOCK_NB) == 0
        let file = try map(fd: fd, path: path, holdsLock: held)
        // Validate the header and rebuild the key index from what the file holds.
        let buffer = UnsafeRawBufferPointer(start: file.base, count: Layout.fileBytes)
        guard (try? parse(buffer)) != nil else {
            throw SDKError(.corruptStateFile, "\(path) is not a readable state file")
        }
        file.lock.withLock { index in
            for slot in 0..<Layout.keySlots where file.u32(file.keySlot(slot)) == 1 {
                let p = file.keySlot(slot)
                let length = min(Int(file.u32(p + 16)), Limits.customKeyBytes)
                index[
                    String(decoding: UnsafeRawBufferPointer(start: file.base + p + 24, count: length), as: UTF8.self)] =
                    slot
            }
        }
        return file
    }

    private static func map(fd: Int32, path: String, holdsLock: Bool) throws -> StateFile {
        guard let pointer = mmap(nil, Layout.fileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
            pointer != MAP_FAILED
        else {
            let text = errnoText()
            Glibc.close(fd)
            throw SDKError(.io, "cannot map the state file \(path): \(text)")
        }
        return StateFile(base: pointer, fd: fd, holdsLock: holdsLock)
    }

    /// Whether a live process holds the file's `flock` (its run is going on). A missing file is not held.
    package static func isHeld(at path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    // MARK: Reading

    /// A snapshot of the file, typically of a run that has ended. Never traps on a torn, truncated or hostile
    /// file: throws `corruptStateFile` when it cannot make sense of it.
    package static func read(at path: String) throws -> RunContext {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw SDKError(.io, "cannot open the state file \(path): \(errnoText())") }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw SDKError(.corruptStateFile, "\(path) is not a regular file")
        }
        var bytes = [UInt8](repeating: 0, count: Layout.fileBytes)
        var filled = 0
        var rounds = 0
        while filled < bytes.count, rounds < 1024 {
            rounds += 1
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SDKError(.io, "cannot read the state file \(path): \(errnoText())")
            }
            if n == 0 { break }
            filled += n
        }
        guard filled == Layout.fileBytes else {
            throw SDKError(.corruptStateFile, "\(path) is truncated (\(filled) of \(Layout.fileBytes) bytes)")
        }
        return try bytes.withUnsafeBytes { try parse($0) }
    }

    /// Parses a whole file's bytes; every offset and length is checked against the buffer.
    package static func parse(_ b: UnsafeRawBufferPointer) throws -> RunContext {
        func bad(_ why: String) -> SDKError { SDKError(.corruptStateFile, "not a readable state file: \(why)") }
        func u32(_ o: Int) -> UInt32 {
            guard o >= 0, o + 4 <= b.count else { return 0 }
            return UInt32(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt32.self))
        }
        func u64(_ o: Int) -> UInt64 {
            guard o >= 0, o + 8 <= b.count else { return 0 }
            return UInt64(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt64.self))
        }
        func text(_ o: Int, _ length: Int) -> String? {
            guard o >= 0, length >= 0, o + length <= b.count else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: b[o..<(o + length)]), as: UTF8.self)
        }
        guard b.count >= Layout.fileBytes else { throw bad("truncated") }
        guard u64(Layout.oMagic) == Layout.magic else { throw bad("no magic number") }
        guard u32(Layout.oVersion) == Layout.version else { throw bad("version \(u32(Layout.oVersion)) is not 1") }
        guard u32(Layout.oHeaderBytes) == UInt32(Layout.headerBytes), u32(Layout.oKeySlots) == UInt32(Layout.keySlots),
            u32(Layout.oKeySlotBytes) == UInt32(Layout.keySlotBytes),
            u32(Layout.oRingOffset) == UInt32(Layout.ringOffset),
            u32(Layout.oRingBytes) == UInt32(Layout.ringBytes), u64(Layout.oFileBytes) == UInt64(Layout.fileBytes)
        else { throw bad("unexpected sizes") }

        func string(_ slot: Layout.Slot) -> String? {
            let p = Layout.oStrings + slot.rawValue * Layout.stringSlotBytes
            let buffer = p + 8 + Int(u32(p) & 1) * Layout.stringBufferBytes
            let length = u32(buffer)
            guard length != UInt32.max, let n = Int(exactly: length), n <= Layout.stringBytes else { return nil }
            return text(buffer + 8, n)
        }
        guard let sessionID = string(.sessionID), let installID = string(.installID) else {
            throw bad("no session or install id")
        }
        let pidBits = u32(Layout.oPID)
        let started = Double(bitPattern: u64(Layout.oStartedAt))
        let errors = Int(exactly: min(u64(Layout.oErrors), UInt64(Int32.max))) ?? 0
        var context = RunContext(
            sessionID: sessionID, installID: installID, userID: string(.userID), appID: string(.appID),
            appVersion: string(.appVersion), appBuild: string(.appBuild), environment: string(.environment),
            startedAt: started.isFinite ? started : 0, pid: Int32(bitPattern: pidBits), errors: errors,
            exitedNormally: u32(Layout.oExited) == 1)

        // Custom keys: used slots, in the order they were first set.
        var keys: [(order: UInt64, key: CustomKey)] = []
        for slot in 0..<Layout.keySlots {
            let p = Layout.headerBytes + slot * Layout.keySlotBytes
            guard u32(p) == 1 else { continue }
            let keyLength = Int(u32(p + 16))
            guard keyLength <= Limits.customKeyBytes, let key = text(p + 24, keyLength) else { continue }
            let value = p + 24 + Limits.customKeyBytes + Int(u32(p + 4) & 1) * Layout.valueBufferBytes
            let valueLength = Int(u32(value + 4))
            let typed: CustomValue
            switch u32(value) {
            case 1:
                guard valueLength <= Limits.customKeyBytes, let s = text(value + 8, valueLength) else { continue }
                typed = .string(s)
            case 2: typed = .int(Int64(bitPattern: u64(value + 8)))
            case 3: typed = .double(Double(bitPattern: u64(value + 8)))
            case 4: typed = .bool(u64(value + 8) != 0)
            default: continue
            }
            keys.append((u64(p + 8), CustomKey(key: key, value: typed)))
        }
        context.customKeys = keys.sorted { $0.order < $1.order }.map(\.key)

        // Breadcrumbs: the committed records between start and end, oldest first.
        let start = u64(Layout.oRingStart)
        let end = u64(Layout.oRingEnd)
        guard start <= end, end - start <= UInt64(Layout.ringBytes) else { throw bad("breadcrumb ring out of range") }
        let ring = UnsafeRawBufferPointer(rebasing: b[Layout.ringOffset..<(Layout.ringOffset + Layout.ringBytes)])
        func ringBytes(_ position: UInt64, _ count: Int) -> [UInt8] {
            let at = Int(position % UInt64(Layout.ringBytes))
            let first = min(count, Layout.ringBytes - at)
            var out = Array(ring[at..<(at + first)])
            if first < count { out += ring[0..<min(count - first, Layout.ringBytes)] }
            return out
        }
        var position = start
        var crumbs: [Breadcrumb] = []
        let maxRecords = Layout.ringBytes / Layout.recordHead
        while position < end, crumbs.count < maxRecords {
            let left = end - position
            guard left >= UInt64(Layout.recordHead) else { break }
            let head = ringBytes(position, Layout.recordHead)
            let (recordLength, messageLength, categoryLength, timestamp) = head.withUnsafeBytes {
                (
                    UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
                    UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self)),
                    UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt16.self)),
                    Double(bitPattern: UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
                )
            }
            let category = categoryLength == UInt16.max ? 0 : Int(categoryLength)
            guard let total = Int(exactly: recordLength), total % 8 == 0, UInt64(total) <= left,
                let message = Int(exactly: messageLength), message <= Layout.maxMessageBytes,
                category <= Layout.maxCategoryBytes, Layout.recordHead + category + message <= total
            else { break }  // a damaged record: keep what came before it
            let body = ringBytes(position + UInt64(Layout.recordHead), category + message)
            crumbs.append(
                Breadcrumb(
                    timestamp: timestamp.isFinite ? timestamp : 0,
                    message: String(decoding: body[category...], as: UTF8.self),
                    category: categoryLength == UInt16.max ? nil : String(decoding: body[..<category], as: UTF8.self)))
            position += UInt64(total)
        }
        context.breadcrumbs = crumbs
        return context
    }

    /// The context as this process wrote it.
    package func snapshot() -> RunContext? {
        lock.withLock { _ in try? Self.parse(UnsafeRawBufferPointer(start: base, count: Layout.fileBytes)) }
    }

    /// The file's bytes as they are now (one copy under the lock, no parsing): what `record(error:)` takes on
    /// the caller's thread; ``parse(_:)`` turns it into a context later, on a background task.
    package func copyBytes() -> [UInt8] {
        lock.withLock { _ in Array(UnsafeRawBufferPointer(start: base, count: Layout.fileBytes)) }
    }

    /// Custom keys dropped because 64 were already set.
    package var droppedKeys: Int {
        lock.withLock { _ in Int(exactly: min(u64(Layout.oDroppedKeys), UInt64(Int32.max))) ?? 0 }
    }

    // MARK: Writing (no system calls)

    /// Appends a breadcrumb (message cut at 16 KB, category at 256 bytes, at character boundaries).
    package func log(_ message: String, timestamp: Double, category: String? = nil) {
        var message = message
        var categoryText = category.map { cutString($0, Layout.maxCategoryBytes) } ?? ""
        let messageLength = cut(message, Layout.maxMessageBytes)
        let categoryLength: UInt16 = category == nil ? .max : UInt16(categoryText.utf8.count)
        message.withUTF8 { m in
            categoryText.withUTF8 { c in
                lock.withLock { _ in
                    appendRecord(
                        message: UnsafeRawBufferPointer(m), category: UnsafeRawBufferPointer(c), timestamp: timestamp,
                        categoryLength: categoryLength, messageLength: messageLength)
                }
            }
        }
    }

    /// Sets or (with `nil`) removes a custom key; a new key beyond the 64th is dropped and counted.
    package func setCustomValue(_ value: CustomValue?, forKey key: String) {
        let key = cutString(key, Limits.customKeyBytes)
        lock.withLock { index in
            if let slot = index[key] {
                let p = keySlot(slot)
                guard let value else {
                    store32(p, 0)  // one store removes it
                    index[key] = nil
                    return
                }
                let next = (u32(p + 4) & 1) ^ 1
                writeValue(value, at: valueBuffer(p, next))
                fence()
                store32(p + 4, next)
                return
            }
            guard let value else { return }
            guard let slot = (0..<Layout.keySlots).first(where: { u32(keySlot($0)) == 0 }) else {
                store64(Layout.oDroppedKeys, u64(Layout.oDroppedKeys) &+ 1)
                return
            }
            let p = keySlot(slot)
            var keyCopy = key
            keyCopy.withUTF8 { bytes in
                (base + p + 24).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                store32(p + 16, UInt32(bytes.count))
            }
            writeValue(value, at: valueBuffer(p, 0))
            store32(p + 4, 0)
            let order = u64(Layout.oKeyOrder) &+ 1
            store64(Layout.oKeyOrder, order)
            store64(p + 8, order)
            fence()
            store32(p, 1)
            index[key] = slot
        }
    }

    package func setUserID(_ id: String?) {
        lock.withLock { _ in writeString(id, .userID) }
    }

    /// Fills in what the app knows about itself (a `nil` leaves what the file holds, e.g. the launcher's value).
    package func setApp(id: String?, version: String?, build: String?, environment: String?) {
        lock.withLock { _ in
            if let id { writeString(id, .appID) }
            if let version { writeString(version, .appVersion) }
            if let build { writeString(build, .appBuild) }
            if let environment { writeString(environment, .environment) }
        }
    }

    package func setPID(_ pid: Int32) {
        lock.withLock { _ in store32(Layout.oPID, UInt32(bitPattern: pid)) }
    }

    package func incrementErrors() {
        lock.withLock { _ in store64(Layout.oErrors, u64(Layout.oErrors) &+ 1) }
    }

    package func markExited() {
        lock.withLock { _ in store32(Layout.oExited, 1) }
    }

    // MARK: Internals

    private func initialize(_ context: RunContext) {
        lock.withLock { index in
            index.removeAll()
            memset(base, 0, Layout.fileBytes)
            store32(Layout.oVersion, Layout.version)
            store32(Layout.oHeaderBytes, UInt32(Layout.headerBytes))
            store32(Layout.oKeySlots, UInt32(Layout.keySlots))
            store32(Layout.oKeySlotBytes, UInt32(Layout.keySlotBytes))
            store32(Layout.oRingOffset, UInt32(Layout.ringOffset))
            store32(Layout.oRingBytes, UInt32(Layout.ringBytes))
            store64(Layout.oFileBytes, UInt64(Layout.fileBytes))
            store32(Layout.oPID, UInt32(bitPattern: context.pid))
            store32(Layout.oExited, context.exitedNormally ? 1 : 0)
            store64(Layout.oStartedAt, context.startedAt.bitPattern)
            store64(Layout.oErrors, UInt64(clamping: context.errors))
            writeString(context.sessionID, .sessionID)
            writeString(context.installID, .installID)
            writeString(context.userID, .userID)
            writeString(context.appID, .appID)
            writeString(context.appVersion, .appVersion)
            writeString(context.appBuild, .appBuild)
            writeString(context.environment, .environment)
        }
        for key in context.customKeys { setCustomValue(key.value, forKey: key.key) }
        for crumb in context.breadcrumbs { log(crumb.message, timestamp: crumb.timestamp, category: crumb.category) }
        fence()
        lock.withLock { _ in store64(Layout.oMagic, Layout.magic) }  // last: a half-made file has no magic
    }

    private func keySlot(_ slot: Int) -> Int { Layout.headerBytes + slot * Layout.keySlotBytes }
    private func valueBuffer(_ slot: Int, _ which: UInt32) -> Int {
        slot + 24 + Limits.customKeyBytes + Int(which) * Layout.valueBufferBytes
    }

    private func writeValue(_ value: CustomValue, at p: Int) {
        switch value {
        case .string(let s):
            var s = cutString(s, Limits.customKeyBytes)
            s.withUTF8 { bytes in
                if let source = bytes.baseAddress { (base + p + 8).copyMemory(from: source, byteCount: bytes.count) }
                store32(p + 4, UInt32(bytes.count))
            }
            store32(p, 1)
        case .int(let v):
            store64(p + 8, UInt64(bitPattern: v))
            store32(p, 2)
        case .double(let v):
            store64(p + 8, v.bitPattern)
            store32(p, 3)
        case .bool(let v):
            store64(p + 8, v ? 1 : 0)
            store32(p, 4)
        }
    }

    private func writeString(_ value: String?, _ slot: Layout.Slot) {
        let p = Layout.oStrings + slot.rawValue * Layout.stringSlotBytes
        let next = (u32(p) & 1) ^ 1
        let buffer = p + 8 + Int(next) * Layout.stringBufferBytes
        if let value {
            var s = cutString(value, Layout.stringBytes)
            s.withUTF8 { bytes in
                if let source = bytes.baseAddress {
                    (base + buffer + 8).copyMemory(from: source, byteCount: bytes.count)
                }
                store32(buffer, UInt32(bytes.count))
            }
        } else {
            store32(buffer, UInt32.max)
        }
        fence()
        store32(p, next)
    }

    /// Appends one record to the ring, evicting the oldest records first; `end` moves last.
    private func appendRecord(
        message: UnsafeRawBufferPointer, category: UnsafeRawBufferPointer, timestamp: Double, categoryLength: UInt16,
        messageLength: Int
    ) {
        let body = category.count + messageLength
        let total = (Layout.recordHead + body + 7) & ~7
        var start = u64(Layout.oRingStart)
        let end = u64(Layout.oRingEnd)
        var evicted = false
        var rounds = 0
        while end &- start + UInt64(total) > UInt64(Layout.ringBytes), start < end, rounds < Layout.ringBytes {
            rounds += 1
            let length = UInt64(ringU32(start))
            guard length >= UInt64(Layout.recordHead), length <= end - start else {
                start = end  // cannot happen with our own writes; start over rather than loop
                break
            }
            start += length
            evicted = true
        }
        if evicted {
            store64(Layout.oRingStart, start)
            fence()
        }
        var head = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &head) { h in
            h.storeBytes(of: UInt32(total).littleEndian, toByteOffset: 0, as: UInt32.self)
            h.storeBytes(of: UInt32(messageLength).littleEndian, toByteOffset: 4, as: UInt32.self)
            h.storeBytes(of: categoryLength.littleEndian, toByteOffset: 8, as: UInt16.self)
            h.storeBytes(of: timestamp.bitPattern.littleEndian, toByteOffset: 16, as: UInt64.self)
            ringWrite(end, UnsafeRawBufferPointer(h))
        }
        ringWrite(end + UInt64(Layout.recordHead), category)
        ringWrite(
            end + UInt64(Layout.recordHead + category.count),
            UnsafeRawBufferPointer(rebasing: message[..<messageLength]))
        fence()
        store64(Layout.oRingEnd, end + UInt64(total))
    }

    private func ringWrite(_ position: UInt64, _ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        let at = Int(position % UInt64(Layout.ringBytes))
        let first = min(bytes.count, Layout.ringBytes - at)
        (base + Layout.ringOffset + at).copyMemory(from: source, byteCount: first)
        if first < bytes.count {
            (base + Layout.ringOffset).copyMemory(from: source + first, byteCount: bytes.count - first)
        }
    }

    private func ringU32(_ position: UInt64) -> UInt32 {
        var value: UInt32 = 0
        withUnsafeMutableBytes(of: &value) { out in
            var at = Int(position % UInt64(Layout.ringBytes))
            for i in 0..<4 {
                out[i] = base.load(fromByteOffset: Layout.ringOffset + at, as: UInt8.self)
                at += 1
                if at == Layout.ringBytes { at = 0 }
            }
        }
        return UInt32(littleEndian: value)
    }

    private func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: base.load(fromByteOffset: o, as: UInt32.self)) }
    private func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: base.load(fromByteOffset: o, as: UInt64.self)) }
    private func store32(_ o: Int, _ v: UInt32) {
        base.storeBytes(of: v.littleEndian, toByteOffset: o, as: UInt32.self)
    }
    private func store64(_ o: Int, _ v: UInt64) {
        base.storeBytes(of: v.littleEndian, toByteOffset: o, as: UInt64.self)
    }
    /// Orders the stores before it before the stores after it (a compiler barrier on x86, `dmb ish` on arm64).
    private func fence() { atomicMemoryFence(ordering: .releasing) }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// `string` cut to at most `maxBytes` UTF-8 bytes at a character boundary.
package func cutString(_ string: String, _ maxBytes: Int) -> String {
    if string.utf8.count <= maxBytes { return string }
    var bytes = 0
    var end = string.startIndex
    for index in string.indices {
        let next = string.index(after: index)
        let size = string.utf8.distance(from: index, to: next)
        if bytes + size > maxBytes { break }
        bytes += size
        end = next
    }
    return String(string[..<end])
}

/// How many UTF-8 bytes of `string` fit in `maxBytes` at a character boundary.
private func cut(_ string: String, _ maxBytes: Int) -> Int {
    if string.utf8.count <= maxBytes { return string.utf8.count }
    return cutString(string, maxBytes).utf8.count
}
