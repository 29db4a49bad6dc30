/// Whether to assemble one file of sentry-cli's assemble request from its chunks, decided before a byte is written.
///
/// An assemble request names a file by a list of chunk checksums, and that list is the client's word: one small
/// chunk (8 MiB of zeros is 8 KB gzip'd) listed 64 times would make the server write and hash 512 MiB before
/// anything looks at the result. So the list, the chunks' stored sizes, the file's first bytes, the project's
/// quota and the assemblies already running are all weighed first, and the bytes are written only on `.write`:
///
/// 1. the list is not empty, not longer than the largest file can need, and names no chunk more than
///    `maxRepeats` times (`screen`, which needs no I/O, so a hostile list costs nothing to refuse);
/// 2. every chunk is stored (else `.missing`: sentry-cli uploads them and asks again);
/// 3. no other assembly of the same file is running, and fewer than `maxParallel` of the project's
///    (else `.wait`: sentry-cli asks again a second later);
/// 4. the listed sizes add up (checked arithmetic) to more than 0 and at most `maxFileBytes`, and, with what
///    the project's running assemblies may still write, to at most what its quota has left;
/// 5. the first bytes begin a debug file the store accepts (the same check as a `PUT` upload's first bytes).
///
/// The written file is still verified whole afterwards (SHA-1, ELF or source bundle, build-id, the quota in
/// the store's transaction): the plan only ever refuses earlier what that would refuse, or what would cost
/// more to find out than the client paid to send.
public enum ChunkAssemblyPlan {
    /// The bounds a plan is made within.
    public struct Limits: Sendable, Equatable {
        /// The largest file the server accepts.
        public var maxFileBytes: UInt64
        /// The size the server told sentry-cli to cut files into (at least 1).
        public var chunkSize: UInt64
        /// How many times one chunk may be listed in a file.
        public var maxRepeats: Int
        /// How many assemblies of one project may run at once.
        public var maxParallel: Int

        public init(maxFileBytes: UInt64, chunkSize: UInt64, maxRepeats: Int, maxParallel: Int) {
            self.maxFileBytes = maxFileBytes
            self.chunkSize = max(1, chunkSize)
            self.maxRepeats = max(1, maxRepeats)
            self.maxParallel = max(1, maxParallel)
        }

        /// The most chunks a file within `maxFileBytes` is cut into.
        public var maxChunks: UInt64 { maxFileBytes / chunkSize + (maxFileBytes % chunkSize == 0 ? 0 : 1) }
    }

    /// What the first bytes of the file say (from `DebugFileInspecting.inspectHead`).
    public enum Head: Sendable, Equatable {
        /// They begin a debug file the store accepts; its build-id when they name it.
        case debugFile(BuildID?)
        /// They cannot begin one; why, for people.
        case notADebugFile(String)
    }

    /// The assemblies of the project running now.
    public struct Running: Sendable, Equatable {
        /// How many.
        public var count: Int
        /// Bytes they may still write (each one's planned size).
        public var bytes: UInt64
        /// Whether one of them is this very file.
        public var sameFile: Bool

        public init(count: Int = 0, bytes: UInt64 = 0, sameFile: Bool = false) {
            self.count = count
            self.bytes = bytes
            self.sameFile = sameFile
        }
    }

    /// Why a file is not assembled; each names what was wrong, for sentry-cli to print.
    public enum Refusal: Sendable, Equatable, CustomStringConvertible {
        /// No chunks listed, or only empty ones.
        case empty
        /// More chunks listed than a file of the largest size (`maxFileBytes`) is cut into (`max`).
        case tooManyChunks(listed: Int, max: UInt64, maxFileBytes: UInt64)
        /// One chunk listed more often than allowed.
        case repeatedChunk(ChunkChecksum, times: Int, max: Int)
        /// The listed sizes add up to more than the largest file (or past 2^64).
        case tooLarge(max: UInt64)
        /// The file does not fit what the project's quota has left.
        case overQuota(bytes: UInt64, left: UInt64)
        /// The first bytes cannot begin a debug file.
        case notADebugFile(String)

        public var description: String {
            switch self {
            case .empty:
                return "the file is empty: there is nothing to store"
            case .tooManyChunks(let listed, let max, let maxFileBytes):
                return
                    "the file is larger than the server's limit of \(maxFileBytes >> 20) MiB: it lists \(listed) chunks, a file within it at most \(max)"
            case .repeatedChunk(let chunk, let times, let max):
                return "chunk \(chunk) is listed \(times) times; one chunk may be listed at most \(max) times in a file"
            case .tooLarge(let max):
                return "the file is larger than the server's limit of \(max >> 20) MiB"
            case .overQuota(let bytes, let left):
                return
                    "the file's \(Self.mebibytes(bytes)) MiB do not fit the project's debug-file quota: \(Self.mebibytes(left)) MiB are left"
            case .notADebugFile(let why):
                return "not stored: the file is not an ELF or Mach-O file or a source bundle (its first bytes: \(why))"
            }
        }

        /// Bytes as MiB with one decimal.
        static func mebibytes(_ bytes: UInt64) -> String {
            let tenths = bytes / (1 << 20) * 10 + (bytes % (1 << 20)) * 10 / (1 << 20)
            return "\(tenths / 10).\(tenths % 10)"
        }
    }

    /// What to do with the file.
    public enum Decision: Sendable, Equatable {
        /// Write the chunks in the listed order: `bytes` in all, which the writer must not exceed.
        case write(bytes: UInt64)
        /// These chunks are not stored (each once, in listed order): answer `not_found` with them.
        case missing([ChunkChecksum])
        /// Another assembly of the file, or too many of the project's, is running: answer `assembling`.
        case wait
        /// Answer `error`, with the refusal as the detail.
        case refuse(Refusal)
    }

    /// The checks on the list alone (step 1), made before any chunk is looked up: nil when the list may be planned.
    /// Costs O(listed) time and memory, and refuses a list longer than `limits.maxChunks` before looking at it.
    public static func screen(_ chunks: [ChunkChecksum], limits: Limits) -> Refusal? {
        guard !chunks.isEmpty else { return .empty }
        guard UInt64(chunks.count) <= limits.maxChunks else {
            return .tooManyChunks(listed: chunks.count, max: limits.maxChunks, maxFileBytes: limits.maxFileBytes)
        }
        var times: [ChunkChecksum: Int] = [:]
        for chunk in chunks {
            let n = times[chunk, default: 0] + 1
            guard n <= limits.maxRepeats else {
                return .repeatedChunk(chunk, times: chunks.count(where: { $0 == chunk }), max: limits.maxRepeats)
            }
            times[chunk] = n
        }
        return nil
    }

    /// The whole decision for one file.
    ///
    /// - Parameters:
    ///   - chunks: the file's chunks in order, as listed.
    ///   - stored: the sizes of the listed chunks the project has stored (the others are missing).
    ///   - head: what the first bytes say; not looked at unless everything else allows writing.
    ///   - quotaLeft: bytes the project's debug-file quota has left for this file.
    ///   - running: the project's assemblies running now.
    public static func decide(
        _ chunks: [ChunkChecksum], stored: [ChunkChecksum: UInt64], head: Head, quotaLeft: UInt64,
        running: Running, limits: Limits
    ) -> Decision {
        if let refusal = screen(chunks, limits: limits) { return .refuse(refusal) }
        var missing: [ChunkChecksum] = []
        var asked = Set<ChunkChecksum>()
        for chunk in chunks where stored[chunk] == nil && asked.insert(chunk).inserted { missing.append(chunk) }
        guard missing.isEmpty else { return .missing(missing) }
        guard !running.sameFile, running.count < limits.maxParallel else { return .wait }
        var total: UInt64 = 0
        for chunk in chunks {
            let (sum, overflow) = total.addingReportingOverflow(stored[chunk] ?? 0)
            guard !overflow, sum <= limits.maxFileBytes else { return .refuse(.tooLarge(max: limits.maxFileBytes)) }
            total = sum
        }
        guard total > 0 else { return .refuse(.empty) }
        let left = quotaLeft > running.bytes ? quotaLeft - running.bytes : 0
        guard total <= left else { return .refuse(.overQuota(bytes: total, left: left)) }
        if case .notADebugFile(let why) = head { return .refuse(.notADebugFile(why)) }
        return .write(bytes: total)
    }
}
