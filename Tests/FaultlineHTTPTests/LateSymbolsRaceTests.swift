import FaultlineApp
import FaultlineCore
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import TestSupport
import Testing

/// Opens once; everyone waiting (before or after) goes on.
actor Gate {
    var isOpen = false
    var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters.removeAll()
    }
}

/// The real module cache, paused after its first answer until the test lets it go on: the window in which a
/// better debug file is stored while a report is being symbolicated.
struct PausingSymbolicator: AddressSymbolicating {
    let inner: any AddressSymbolicating
    let answered: Gate
    let resume: Gate

    func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
        let answer = await inner.lookup(buildID: buildID, moduleOffset: moduleOffset, project: project)
        await answered.open()
        await resume.wait()
        return answer
    }
}

/// The race between the worker and an upload, on a real SQLite file with real ELF files and the real module cache:
/// a result made with the stripped executable while the debug file was being stored is not kept as final.
@Suite struct LateSymbolsRaceTests {
    @Test func aResultMadeWhileABetterFileIsStoredIsDoneAgain() async throws {
        let program = try BuiltProgram()
        // The clock stands still: the upload and the batch happen "in the same millisecond", which must not matter.
        let app = try await TestApp(clock: FrozenClock(date: Date(timeIntervalSince1970: 1_795_000_000)))
        let nm = try Command.check("nm", ["--defined-only", program.full])
        let line = try #require(nm.split(separator: "\n").first { $0.hasSuffix(" process_order") })
        let function = try #require(UInt64(line.split(separator: " ")[0], radix: 16))
        let base: UInt64 = 0x7f00_0000_0000
        let report = """
            {"event_id":"5a1c0ffee0000000000000000000000a","kind":"crash","timestamp":1795000000,"app":{"version":"1.0"},
             "modules":[{"name":"crashy","build_id":"\(program.buildID)","base_address":"0x\(String(base, radix: 16))","size":16777216}],
             "threads":[{"crashed":true,"frames":[{"address":"0x\(String(base + function + 4, radix: 16))","kind":"pc"}]}]}
            """
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)", method: .put, headers: app.readHeaders,
                body: try BuiltProgram.bytes(program.stripped)
            ) { #expect($0.status == .created) }
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders,
                body: ByteBuffer(string: report)
            ) { #expect($0.status == .accepted) }
        }
        let answered = Gate()
        let resume = Gate()
        let worker = try app.root.symbolicationWorker(
            logger: Logger(label: "test"),
            interpose: { PausingSymbolicator(inner: $0, answered: answered, resume: resume) })
        let store = app.root.symbolicationStore
        let reportID = try #require(try await store.pending(limit: 10).first?.reportID)

        // Given: the worker looked the frame up in the stripped executable and is paused before saving.
        let first = Task { try await worker.step() }
        await answered.wait()
        // When: the debug file is stored in that window (its upload cannot queue the report: it is still pending).
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)", method: .put, headers: app.readHeaders,
                body: try BuiltProgram.bytes(program.debug)
            ) { #expect($0.status == .created) }
        }
        await resume.open()
        #expect(try await first.value == 1)

        // Then: the stale result is saved but the report stays queued, and is not grouped from it.
        let (staleState, stale) = try await store.result(reportID: reportID)
        #expect(staleState == .pending)
        #expect(stale?.threads.first?.first?.status != "dwarf")
        #expect(try await store.pending(limit: 10).map(\.reportID) == [reportID])
        try await app.test { client in
            try await client.execute(uri: "/api/v1/issues", method: .get, headers: app.readHeaders) { response in
                #expect((response.json["issues"] as? [Any])?.isEmpty == true)
            }
        }

        // And the next step redoes it with the debug file.
        #expect(try await worker.step() == 1)
        let (state, result) = try await store.result(reportID: reportID)
        #expect(state == .complete)
        let slot = try #require(result?.threads.first?.first)
        #expect(slot.status == "dwarf")
        #expect(slot.frames.last?.function == "process_order")
        #expect(slot.frames.last?.file?.hasSuffix(".c") == true)
        #expect(try await store.pending(limit: 10).isEmpty)
        try await app.test { client in
            try await client.execute(uri: "/api/v1/issues", method: .get, headers: app.readHeaders) { response in
                #expect((response.json["issues"] as? [Any])?.count == 1)
            }
            try await client.execute(uri: "/api/v1/missing-debug-files", method: .get, headers: app.readHeaders) {
                response in
                let rows = response.json["missing"] as? [[String: Any]] ?? []
                #expect(!rows.contains { $0["build_id"] as? String == program.buildID }, "\(rows)")
            }
        }
    }
}
