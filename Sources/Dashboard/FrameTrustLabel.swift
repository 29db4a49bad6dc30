import FaultlineCore

/// How the stack walker found a frame of a minidump's stack (`FrameTrust`), as the event shows it: a word on a badge,
/// the sentence that explains it (the badge's tooltip and the event's legend), and whether the frame is uncertain
/// enough to say so in words beside it (a scanned frame may be a stale return address, not a real caller).
///
/// The words are Sentry's and Breakpad's (`context`, `CFI`, `frame pointer`, `scanned`), so a team moving from them
/// reads the same thing. Frames a client sent have no trust and get no label.
struct FrameTrustLabel {
    var trustText: String
    var trustExplanation: String
    var trustClass: String
    /// Found by scanning: the frame is marked and followed by a warning in words (never colour alone).
    var uncertain: Bool

    init(_ trust: FrameTrust) {
        switch trust {
        case .context:
            trustText = "context"
            trustExplanation =
                "Taken from the registers the dump recorded (the crash context for the crashed thread): exact."
        case .cfi:
            trustText = "CFI"
            trustExplanation =
                "Unwound with the module’s call-frame information (.eh_frame or .debug_frame): reliable."
        case .framePointer:
            trustText = "frame pointer"
            trustExplanation =
                "Unwound by following the frame-pointer chain, where no call-frame information covered the frame "
                + "above: usually right."
        case .scan:
            trustText = "scanned"
            trustExplanation =
                "Found by scanning the stack for an address just after a call, where call-frame information and frame "
                + "pointers both failed: plausible, but it may be a stale return address left by an earlier call."
        }
        trustClass = "badge badge-trust badge-trust-\(trust.rawValue)"
        uncertain = trust == .scan
    }

    /// The labels of the trusts `report`'s frames carry, most certain first: the event's legend (empty when no frame
    /// was walked).
    static func legend(_ report: Report) -> [FrameTrustLabel] {
        var seen = Set<FrameTrust>()
        for thread in report.threads {
            for frame in thread.frames {
                if let trust = frame.trust { seen.insert(trust) }
            }
        }
        return FrameTrust.allCases.filter(seen.contains).map(FrameTrustLabel.init)
    }
}
