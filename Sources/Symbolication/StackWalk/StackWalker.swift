import FaultlineCore

/// One frame of a walked stack.
public struct WalkedFrame: Sendable, Equatable {
    /// The frame's instruction address: the crashing instruction for a `.context` frame, the return address for
    /// the others (symbolicate those at `lookupAddress`, inside the call).
    public var address: UInt64
    public var trust: FrameTrust
    /// The frame's stack pointer (its canonical frame address for unwound frames), when known.
    public var stackPointer: UInt64?

    public init(address: UInt64, trust: FrameTrust, stackPointer: UInt64? = nil) {
        self.address = address
        self.trust = trust
        self.stackPointer = stackPointer
    }

    /// The address to symbolicate: a return address minus one, so that a call that ends its function (a call to
    /// a `noreturn` function) resolves to the caller and to the call's line, not to what follows.
    public var lookupAddress: UInt64 { trust == .context ? address : address &- 1 }
}

/// One thread of a walked snapshot.
public struct WalkedThread: Sendable, Equatable {
    /// Why the walk of a thread ended.
    public enum End: Sendable, Equatable {
        /// The unwinder reached the outermost frame (its CFI says there is no caller, or a return address is 0).
        case outermost
        /// The walk reached `StackWalker.Limits.maxFrames`.
        case frameLimit
        /// The next frame's stack pointer was not above the previous one's (a loop or garbage), and scanning
        /// found nothing.
        case stackPointerNotIncreasing
        /// The unwinder could not go on (no CFI, no frame pointer, memory not captured), and scanning found nothing.
        /// The message is libdw's.
        case unwindFailed(String)
    }

    public var id: UInt64
    public var name: String?
    public var crashed: Bool
    public var frames: [WalkedFrame]
    public var end: End

    public init(id: UInt64, name: String?, crashed: Bool, frames: [WalkedFrame], end: End) {
        self.id = id
        self.name = name
        self.crashed = crashed
        self.frames = frames
        self.end = end
    }
}

/// Walks the stacks of a `ProcessSnapshot` with libdwfl: each module is reported at its base from the ELF file the
/// caller names for it, libdwfl unwinds each thread from its registers over the snapshot's memory with the modules'
/// CFI (`.eh_frame`, `.debug_frame`) and falls back to frame pointers on its own, and where both fail the walker
/// scans the stack for a return address (see `FrameTrust`).
///
/// Everything in a snapshot is hostile: every memory read is checked against the captured regions, the walk of a
/// thread stops at `Limits.maxFrames` frames and when the stack pointer does not increase, scanning reads a bounded
/// number of words, and modules whose ranges wrap or overlap are not reported.
///
/// Each `walk` builds its own `Dwfl` and ends it before returning, on the calling thread: a walker may be used from
/// any number of threads at once, and no libdw handle is ever shared (elfutils' thread safety is experimental).
public struct StackWalker: Sendable {
    /// Bounds on the work one walk does.
    public struct Limits: Sendable, Equatable {
        /// Most frames per thread.
        public var maxFrames: Int
        /// Most threads walked (the crashing one first); the rest are returned with their context frame only.
        public var maxThreads: Int
        /// Most modules reported to libdwfl (in base order).
        public var maxModules: Int
        /// Words read when scanning above a frame for a return address; four times as many above the context frame
        /// (a crash in a function without CFI or frame pointer may have pushed much before it).
        public var scanWords: Int

        public init(maxFrames: Int = 256, maxThreads: Int = 512, maxModules: Int = 4096, scanWords: Int = 64) {
            self.maxFrames = maxFrames
            self.maxThreads = maxThreads
            self.maxModules = maxModules
            self.scanWords = scanWords
        }
    }

    public let limits: Limits
    let resolveELF: @Sendable (ProcessSnapshot.Module) -> String?

    /// - Parameters:
    ///   - limits: the bounds of one walk.
    ///   - resolveELF: the local path of a module's ELF file (the executable, a library, or its debug file: one that
    ///     has the module's `.eh_frame` or `.debug_frame`), found by the module's build-id; nil when none is known.
    ///     The file must be the one with that build-id: a different one walks with the wrong CFI. A module without a
    ///     file is still reported (so addresses in it belong to it), and is walked through by frame pointers.
    public init(limits: Limits = Limits(), resolveELF: @escaping @Sendable (ProcessSnapshot.Module) -> String?) {
        self.limits = limits
        self.resolveELF = resolveELF
    }

    /// Walks every thread of `snapshot`, the crashing one first (then the others in the snapshot's order).
    ///
    /// Never fails: a thread whose stack cannot be unwound gets its context frame and an `end` saying why.
    public func walk(_ snapshot: ProcessSnapshot) -> [WalkedThread] {
        let ordered = snapshot.threads.enumerated().sorted { lhs, rhs in
            lhs.element.crashed != rhs.element.crashed ? lhs.element.crashed : lhs.offset < rhs.offset
        }.map(\.element)
        let session = DwflSession(snapshot: snapshot, limits: limits, resolveELF: resolveELF)
        return ordered.enumerated().map { index, thread in
            let frames: [WalkedFrame]
            let end: WalkedThread.End
            if index < limits.maxThreads, let session {
                (frames, end) = session.walk(thread)
            } else {
                frames = [WalkedFrame(address: thread.pc, trust: .context, stackPointer: thread.sp)]
                end = .unwindFailed(session == nil ? "libdwfl could not attach to the snapshot" : "thread limit")
            }
            return WalkedThread(id: thread.id, name: thread.name, crashed: thread.crashed, frames: frames, end: end)
        }
    }
}
