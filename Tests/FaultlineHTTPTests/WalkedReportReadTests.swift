import FaultlineCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The read API answers a report with the stacks the worker walked (`SymbolicatedReport.walk`, applied by
/// `SymbolicationStore.readBack` as on the dashboard): the walked frames, each with its `trust`; a stack the client
/// sent has none.
@Suite struct WalkedReportReadTests {
    static let base: UInt64 = 0x7f00_0000_0000

    @Test func aWalkedReportsFramesCarryTheirTrust() async throws {
        let app = try await TestApp()
        try await app.test { client in
            let body = "[" + Payloads.crash(1, frames: 2) + "," + Payloads.crash(2, frames: 2) + "]"
            try await client.execute(
                uri: "/api/v1/reports", method: .post, headers: app.ingestHeaders, body: ByteBuffer(string: body)
            ) { #expect($0.status == .accepted) }
        }
        // Given: report 1's result holds a walk of two threads (as the worker saves a minidump report's).
        let store = app.root.symbolicationStore
        let pending = try await store.pending(limit: 10)
        #expect(pending.count == 2)
        let reportID = try #require(
            pending.first { $0.raw.summary.eventID.rawValue == Payloads.normalized(1) }?.reportID)
        let trusts: [FrameTrust] = [.context, .cfi, .framePointer, .scan]
        let walk = WalkedStacks(threads: [
            WalkedStacks.Thread(
                id: 1, name: "main", crashed: true,
                frames: trusts.enumerated().map {
                    WalkedStacks.Frame(address: Self.base + 0x100 * UInt64($0 + 1), trust: $1)
                },
                end: "frame limit"),
            WalkedStacks.Thread(
                id: 2, name: "io", crashed: false,
                frames: [WalkedStacks.Frame(address: Self.base + 0x900, trust: .context)],
                end: WalkedStacks.Thread.outermostEnd),
        ])
        let slot = SymbolicatedFrameSlot(
            frames: [], buildID: "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a", status: "missing_debug_file")
        let result = SymbolicatedReport(
            state: .missing, threads: [Array(repeating: slot, count: 4), [slot]],
            missing: [MissingModule(buildID: "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a", module: "libapp.so")],
            walk: walk)
        try await store.save(result, grouping: nil, reportID: reportID, at: Date())

        try await app.test { client in
            // When: the report is read. Then: its threads are the walked ones, each frame with its trust.
            let walked = try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(1))", method: .get, headers: app.readHeaders
            ) { response in
                #expect(response.status == .ok)
                return response.json
            }
            let threads = try #require(walked["threads"] as? [[String: Any]])
            #expect(threads.map { $0["name"] as? String } == ["main", "io"])
            let frames = threads[0]["frames"] as? [[String: Any]] ?? []
            #expect(frames.map { $0["trust"] as? String } == ["context", "cfi", "fp", "scan"])
            #expect(
                frames.map { $0["address"] as? String } == [
                    "0x7f0000000100", "0x7f0000000200", "0x7f0000000300", "0x7f0000000400",
                ])
            #expect(frames.map { $0["kind"] as? String } == ["pc", "return", "return", "return"])
            #expect((threads[1]["frames"] as? [[String: Any]])?.map { $0["trust"] as? String } == ["context"])
            let symbolication = walked["symbolication"] as? [String: Any]
            #expect((symbolication?["threads"] as? [[Any]])?.map(\.count) == [4, 1])

            // A stack the client sent: its own frames, none with a trust.
            let sent = try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(2))", method: .get, headers: app.readHeaders
            ) { $0.json }
            let sentFrames = (sent["threads"] as? [[String: Any]])?.first?["frames"] as? [[String: Any]] ?? []
            #expect(sentFrames.count == 2)
            #expect(sentFrames.allSatisfy { $0["trust"] == nil })
        }
    }
}
