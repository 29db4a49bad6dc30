import FaultlineCore
import Foundation
import Testing

/// The decisions both engines' debug-file stores apply: the quota, replacements, released blobs, change sequence.
@Suite struct DebugFileChangeTests {
    let new = ContentHash(String(repeating: "a", count: 64))!
    let old = ContentHash(String(repeating: "b", count: 64))!

    func change(size: UInt64, kinds: Set<DebugFileKind> = [.executable, .debuginfo]) -> DebugFileChange {
        DebugFileChange(
            ReceivedDebugFile(upload: TemporaryUpload(path: "/nowhere"), sha256: new, size: size),
            facts: DebugFileFacts(
                buildID: nil, kinds: kinds, architecture: "x86_64", fileType: "executable", features: [],
                compressedDebugSections: false),
            buildID: BuildID("ab")!, project: ProjectID(1), name: nil, at: Date(timeIntervalSince1970: 0))
    }

    @Test func theQuotaCountsTheFileOnceAndRefusesWhatOverflows() {
        let file = change(size: 10)
        #expect(file.rows.map(\.kind) == [.debuginfo, .executable])
        #expect(file.refusal(others: 90, quota: 100) == nil)
        #expect(file.refusal(others: 91, quota: 100) == .quotaExceeded(wouldUse: 101))
        // Sizes come from uploads: a sum past UInt64.max is refused as the largest use, never wrapped into a small one.
        #expect(file.refusal(others: .max - 5, quota: .max) == .quotaExceeded(wouldUse: .max))
    }

    @Test func onlyNewOrOtherBytesTakeASequenceAndOnlyOtherBytesAreAReplacement() {
        var file = change(size: 1)
        let same = file.note(previous: new.rawValue, for: .debuginfo)
        #expect(!same)  // the same bytes again
        #expect(file.outcome == .stored(file.rows, replaced: false))
        let added = file.note(previous: nil, for: .executable)
        #expect(added)  // a new row
        #expect(file.replacedKinds.isEmpty && file.released.isEmpty)
        let other = file.note(previous: old.rawValue, for: .executable)
        #expect(other)  // other bytes
        #expect(file.replacedKinds == [.executable])
        #expect(file.released == [old])
        #expect(file.outcome == .stored(file.rows, replaced: true))
        // A row from before blobs (no hash) is replaced, and releases nothing.
        var legacy = change(size: 1)
        let unhashed = legacy.note(previous: "", for: .debuginfo)
        #expect(unhashed)
        #expect(legacy.replacedKinds == [.debuginfo] && legacy.released.isEmpty)
        // A source bundle resolves no address: never a sequence value, even when it replaces one.
        var bundle = change(size: 1, kinds: [.sources])
        let sources = bundle.note(previous: old.rawValue, for: .sources)
        #expect(!sources)
        #expect(bundle.replacedKinds == [.sources])
    }
}
