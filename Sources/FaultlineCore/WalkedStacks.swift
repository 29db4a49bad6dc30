/// The stacks a stack walker found in a minidump: per thread, the crashing one first, each frame's address and how it
/// was found (`FrameTrust`).
///
/// Kept with a report's symbolication result (`SymbolicatedReport.walk`): whoever reads the report again (the
/// dashboard, the read API) applies it (`Report.applying(_:)`) and sees the frames the worker grouped, also once the
/// dump itself is gone.
public struct WalkedStacks: Sendable, Equatable, Codable {
    public struct Thread: Sendable, Equatable, Codable {
        /// The thread's id in the dumped process.
        public var id: UInt64
        public var name: String?
        public var crashed: Bool
        /// Innermost first.
        public var frames: [Frame]
        /// Why the walk ended, in words (`outermostEnd`, `frame limit`, libdw's message), for the page.
        public var end: String?

        /// The `end` of a walk that reached the thread's outermost frame (the start of its stack).
        public static let outermostEnd = "outermost frame"

        /// Why the walk stopped before the outermost frame, for the page to say that frames may be missing below
        /// the last one; nil when it reached the outermost frame or did not say.
        public var stoppedEarly: String? {
            guard let end, end != Self.outermostEnd else { return nil }
            return end
        }

        public init(id: UInt64, name: String?, crashed: Bool, frames: [Frame], end: String?) {
            self.id = id
            self.name = name
            self.crashed = crashed
            self.frames = frames
            self.end = end
        }
    }

    public struct Frame: Sendable, Equatable, Codable {
        /// The crashing instruction for a `.context` frame, a return address for the others.
        public var address: UInt64
        public var trust: FrameTrust

        public init(address: UInt64, trust: FrameTrust) {
            self.address = address
            self.trust = trust
        }
    }

    public var threads: [Thread]

    public init(threads: [Thread]) {
        self.threads = threads
    }
}

extension Report {
    /// The report with its threads replaced by `walk`'s, at most `limits`' threads and frames per thread (a walk is
    /// bounded by the same limits as a client's stack). Registers and names stay where the report had them for the
    /// same thread (matched by position: a minidump report's threads are in the walk's order).
    public func applying(_ walk: WalkedStacks, limits: IngestLimits = IngestLimits()) -> Report {
        var report = self
        var threads: [ThreadInfo] = []
        threads.reserveCapacity(min(walk.threads.count, limits.maxThreads))
        for (index, walked) in walk.threads.prefix(limits.maxThreads).enumerated() {
            let earlier = index < self.threads.count ? self.threads[index] : nil
            let frames = walked.frames.prefix(limits.maxFramesPerThread).map { frame in
                Frame(
                    address: frame.address, instructionKind: frame.trust == .context ? .programCounter : .returnAddress,
                    trust: frame.trust)
            }
            threads.append(
                ThreadInfo(
                    name: walked.name ?? earlier?.name, crashed: walked.crashed, frames: Array(frames),
                    registers: earlier?.registers ?? []))
        }
        report.threads = threads
        return report
    }
}

/// Walks the stacks of a report made from a minidump (`Report.walksMinidump`), from the dump stored with it and the
/// project's debug files (the modules' call-frame information).
public protocol StackWalking: Sendable {
    /// The walked stacks of `report` (stored as `reportID` of `project`): walked from its dump when the dump is still
    /// stored, else the walk saved with its last result; nil when there is neither.
    func walk(_ report: Report, reportID: Int64, project: ProjectID) async -> WalkedStacks?
}

extension WalkedStacks {
    /// Whether a debug file of a module that no frame of the walk is in could change it: a thread stopped before its
    /// outermost frame (a module's call-frame information may take it further), or a frame was found by scanning
    /// (scanning keeps a word only if it returns into a module whose code is known, and a module's file makes its
    /// code known). A walk that reached every thread's outermost frame by context, CFI and frame pointers depends only
    /// on the modules its frames are in.
    public var dependsOnEveryModule: Bool {
        threads.contains { thread in
            thread.end != Thread.outermostEnd || thread.frames.contains { $0.trust == .scan }
        }
    }
}
