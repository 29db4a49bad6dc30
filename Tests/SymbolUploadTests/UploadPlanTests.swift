import FaultlineCore
import SymbolUpload
import Testing

@Suite struct UploadPlanTests {
    let id = BuildID("aa11")!
    let other = BuildID("bb22")!

    func file(_ path: String, _ id: BuildID?, _ kinds: Set<DebugFileKind>, size: UInt64) -> LocalDebugFile {
        LocalDebugFile(
            path: path, size: size,
            facts: DebugFileFacts(
                buildID: id, kinds: kinds, architecture: "x86_64", fileType: "shared_object", features: [],
                compressedDebugSections: false))
    }

    @Test func sendsEachMissingKindOnceFromTheSmallestFileThatHasIt() {
        let full = file("app", id, [.debuginfo, .executable], size: 900)
        let debug = file("app.debug", id, [.debuginfo], size: 500)
        let stripped = file("app.stripped", id, [.executable], size: 300)
        let plan = UploadPlan(files: [full, debug, stripped], missing: [id: [.debuginfo, .executable]])
        #expect(plan.uploads.map(\.file.path) == ["app.debug", "app.stripped"])
        #expect(plan.uploads.map(\.kinds) == [[.debuginfo], [.executable]])
        #expect(plan.problems.isEmpty)
    }

    @Test func nothingMissingMeansNothingToUpload() {
        let full = file("app", id, [.debuginfo, .executable], size: 900)
        let plan = UploadPlan(files: [full], missing: [:])
        #expect(plan.uploads.isEmpty)
        #expect(plan.present == [full])
    }

    @Test func onlyTheMissingKindIsSent() {
        let full = file("app", id, [.debuginfo, .executable], size: 900)
        let plan = UploadPlan(files: [full], missing: [id: [.executable]])
        #expect(plan.uploads.map(\.kinds) == [[.executable]])
    }

    @Test func problemsForCheck() {
        let noID = file("plain", nil, [.debuginfo, .executable], size: 10)
        let strippedOnly = file("lib.so", other, [.executable], size: 10)
        let plan = UploadPlan(files: [noID, strippedOnly], missing: [other: [.executable]])
        #expect(plan.problems.map(\.kind) == [.noBuildID, .noDebugInfo])
        #expect(plan.problems.last?.buildID == other)
        #expect(UploadPlan.wants([noID, strippedOnly]) == [other: [.executable]])
    }
}
