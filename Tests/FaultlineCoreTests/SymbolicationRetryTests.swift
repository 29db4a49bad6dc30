import FaultlineCore
import Foundation
import Testing

/// Poison-pill rules and hostile addresses in the pure symbolication rules (issue #9, finding 2).
@Suite struct SymbolicationRetryTests {
    @Test func planSortsReportsByTheAttemptsAlreadyCounted() {
        let plan = SymbolicationRetry.plan([(1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (6, 0), (7, 9)], maxAttempts: 3)
        #expect(plan.fresh == [1, 6])
        #expect(plan.suspects == [2, 3])
        #expect(plan.failGrouped == [4])
        #expect(plan.failUngrouped == [5, 7])
    }

    @Test func failureReasonsSayWhatHappened() {
        #expect(SymbolicationRetry.reason(attempts: 3).contains("stopped while processing this report 3 times"))
        let failed = SymbolicatedReport.failed("why")
        #expect(failed.state == .missing)
        #expect(failed.failure == "why")
    }

    @Test func theFailureReasonRoundTripsAndOldResultsDecodeWithout() throws {
        let data = try JSONEncoder().encode(SymbolicatedReport.failed("why"))
        #expect(String(decoding: data, as: UTF8.self).contains(#""failure_reason":"why""#))
        #expect(try JSONDecoder().decode(SymbolicatedReport.self, from: data).failure == "why")
        let old = Data(#"{"state":"complete","threads":[],"missing":[]}"#.utf8)
        #expect(try JSONDecoder().decode(SymbolicatedReport.self, from: old).failure == nil)
    }

    @Test func modulesEndingPastTheAddressSpaceDoNotTrap() {
        let top = LoadedModule(name: "top", baseAddress: 0xffff_ffff_ffff_f000, size: 0x10_0000)
        let low = LoadedModule(name: "low", baseAddress: 0x1000, size: 0x1000)
        #expect(SymbolicationRules.module(for: 0xffff_ffff_ffff_fff0, in: [low, top])?.name == "top")
        #expect(SymbolicationRules.module(for: 0x1800, in: [top, low])?.name == "low")
        #expect(SymbolicationRules.module(for: 0x2000, in: [low, top]) == nil)
        let unsized = LoadedModule(name: "unsized", baseAddress: 0)
        #expect(SymbolicationRules.module(for: .max - 1, in: [unsized])?.name == "unsized")
        #expect(SymbolicationRules.lookupAddress(Frame(address: 0, instructionKind: .returnAddress), index: 3) == 0)
    }
}
