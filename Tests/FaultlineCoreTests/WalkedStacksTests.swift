import FaultlineCore
import Testing

/// Which debug files can change a minidump's walk, and so queue its report again when they arrive: the rule the
/// worker applies (`WalkedStacks.dependsOnEveryModule`) and what the stores record (`SymbolicationOutcome.touchedBuildIDs`).
@Suite struct WalkedStacksTests {
    static func thread(_ trusts: [FrameTrust], end: String?) -> WalkedStacks.Thread {
        WalkedStacks.Thread(
            id: 1, name: nil, crashed: true,
            frames: trusts.enumerated().map {
                WalkedStacks.Frame(address: 0x1000 + UInt64($0.offset), trust: $0.element)
            },
            end: end)
    }

    @Test func aWalkThatReachedTheOutermostFrameWithoutScanningDependsOnItsFramesModulesOnly() {
        let complete = WalkedStacks(threads: [
            Self.thread([.context, .cfi, .framePointer], end: WalkedStacks.Thread.outermostEnd),
            Self.thread([.context], end: WalkedStacks.Thread.outermostEnd),
        ])
        #expect(!complete.dependsOnEveryModule)
    }

    @Test func aWalkThatStoppedEarlyOrScannedDependsOnEveryModule() {
        // Stopped in a module without call-frame information: its caller's file may take it further
        let stopped = WalkedStacks(threads: [
            Self.thread([.context, .cfi], end: WalkedStacks.Thread.outermostEnd),
            Self.thread([.context], end: "unwinding stopped: Callback returned failure"),
        ])
        #expect(stopped.dependsOnEveryModule)
        // A scanned frame: a module's file decides which words on the stack return into known code
        let scanned = WalkedStacks(threads: [
            Self.thread([.context, .scan, .cfi], end: WalkedStacks.Thread.outermostEnd)
        ])
        #expect(scanned.dependsOnEveryModule)
        // A walk saved without an end says nothing: it is taken as stopped early
        #expect(WalkedStacks(threads: [Self.thread([.context], end: nil)]).dependsOnEveryModule)
        #expect(WalkedStacks(threads: [Self.thread([.context], end: "frame limit")]).dependsOnEveryModule)
    }

    @Test func anOutcomeTouchesItsResultsBuildIDsAndTheWalksModules() {
        let result = SymbolicatedReport(
            state: .partial,
            threads: [[SymbolicatedFrameSlot(frames: [], buildID: "bb", status: "missing_debug_file", offset: 4)]],
            missing: [MissingModule(buildID: "bb", module: "libc.so.6")])
        let plain = SymbolicationOutcome(reportID: 1, result: result, grouping: nil)
        #expect(plain.touchedBuildIDs == ["bb"])
        let walked = SymbolicationOutcome(reportID: 1, result: result, grouping: nil, alsoTouched: ["cc", "aa", "bb"])
        #expect(walked.touchedBuildIDs == ["aa", "bb", "cc"])
        // and that is what both engines record
        #expect(StoredOutcome.encode(walked, codec: .none).touched == ["aa", "bb", "cc"])
    }
}

/// When storing a file queues again the reports made with the build-id's best file, not only those made with less.
@Suite struct DebugDataRankRequeueTests {
    @Test func aReplacedBestFileAndAFirstExecutableAfterTheDebugFileRequeueTheSameRank() {
        // Other bytes for the best kind: everything made with the old file is redone
        #expect(DebugDataRank.requeuesSameRank(replaced: [.debuginfo], added: [], best: .debuginfo))
        #expect(DebugDataRank.requeuesSameRank(replaced: [.executable], added: [], best: .executable))
        // A replaced executable under a debug file changes no report made with the debug file
        #expect(!DebugDataRank.requeuesSameRank(replaced: [.executable], added: [], best: .debuginfo))
        // The first executable after the debug file: a walk takes its call-frame information from it
        #expect(DebugDataRank.requeuesSameRank(replaced: [], added: [.executable], best: .debuginfo))
        // A first debug file or executable alone outranks what was there: the plain rule queues those reports
        #expect(!DebugDataRank.requeuesSameRank(replaced: [], added: [.executable], best: .executable))
        #expect(!DebugDataRank.requeuesSameRank(replaced: [], added: [.debuginfo], best: .debuginfo))
        #expect(!DebugDataRank.requeuesSameRank(replaced: [], added: [.sources], best: .debuginfo))
    }
}
