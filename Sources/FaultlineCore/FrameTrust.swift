/// How a stack walker found a frame, from the most to the least certain: each frame of a walked (minidump)
/// stack carries it, because a frame found by scanning may be a stale return address left on the stack
/// rather than a real caller. The issue and event pages label each walked frame with it, and the read API gives it
/// as the frame's `trust` (docs/native.md, "What a frame's trust means").
///
/// The raw values are the ones Sentry and Breakpad's processor use (`context`, `cfi`, `fp`, `scan`), so a
/// team moving from them reads the same words.
public enum FrameTrust: String, Sendable, Equatable, Hashable, Codable, CaseIterable {
    /// The registers the dump recorded for the thread (the crash context for the crashing thread): exact.
    case context
    /// Unwound with the module's call-frame information (`.eh_frame` or `.debug_frame`): reliable.
    case cfi
    /// Unwound by following the frame-pointer chain where no CFI covered the callee: usually right.
    case framePointer = "fp"
    /// Found by scanning the stack for a value that returns just after a call instruction in a known module,
    /// where CFI and frame pointers both failed: plausible, possibly stale.
    case scan
}
