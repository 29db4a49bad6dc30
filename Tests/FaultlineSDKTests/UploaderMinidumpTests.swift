import TestSupport
import Testing

@testable import FaultlineSDK

/// A minidump `faultline-run` queued with its fallback crash report under the same event id: the dump goes first
/// to Sentry's minidump endpoint, and the report goes only when the server refuses the dump.
@Suite struct UploaderMinidumpTests {
    let dsn = try! DSN("http://0123456789abcdef0123456789abcdef@127.0.0.1:9/prefix/3")
    let eventID = "0123456789abcdef0123456789abcdef"
    let dumpURL = "http://127.0.0.1:9/prefix/api/3/minidump/?sentry_key=0123456789abcdef0123456789abcdef"

    func drain(_ script: [ScriptedTransport.Script]) async throws -> (ScriptedTransport, rejected: Int, LogLines) {
        let folder = try TempFolder("sdk-uploader-minidump")
        let queue = try DeliveryQueue(directory: folder.path)
        let transport = ScriptedTransport(script)
        let clock = ManualClock()
        let log = LogLines()
        let uploader = Uploader(dsn: dsn, queue: queue, transport: transport, clock: clock, log: log.sink)
        try queue.enqueue(kind: .minidump, id: eventID, json: Array("multipart".utf8))
        try queue.enqueue(kind: .crash, id: eventID, json: Array(#"{"r":1}"#.utf8))
        let empty = await uploader.drain(deadline: clock.now + .seconds(60))
        #expect(empty)
        #expect(queue.pending().isEmpty)
        // Read while the folder lives.
        return withExtendedLifetime(folder) { (transport, queue.rejected(), log) }
    }

    @Test func aTakenDumpRemovesItsFallbackReport() async throws {
        let (transport, _, log) = try await drain([answer(200)])
        #expect(transport.requests.map(\.url) == [dumpURL])
        #expect(
            transport.requests.first?.header("Content-Type")
                == "multipart/form-data; boundary=faultline-minidump-\(eventID)")
        #expect(log.all.isEmpty)
    }

    /// `faultline-run` queues the fallback just after the dump while its uploader runs: a dump answered in between
    /// must not let the fallback go too (CI saw both sent under load).
    @Test func aFallbackQueuedAfterItsDumpWasTakenIsNotSent() async throws {
        let folder = try TempFolder("sdk-uploader-minidump-late")
        defer { withExtendedLifetime(folder) {} }
        let queue = try DeliveryQueue(directory: folder.path)
        let transport = ScriptedTransport([answer(200)])
        let clock = ManualClock()
        let uploader = Uploader(dsn: dsn, queue: queue, transport: transport, clock: clock, log: LogLines().sink)
        try queue.enqueue(kind: .minidump, id: eventID, json: Array("multipart".utf8))
        #expect(await uploader.drain(deadline: clock.now + .seconds(60)))
        try queue.enqueue(kind: .crash, id: eventID, json: Array(#"{"r":1}"#.utf8))
        try queue.enqueue(kind: .crash, id: String(repeating: "f", count: 32), json: Array(#"{"r":2}"#.utf8))
        #expect(await uploader.drain(deadline: clock.now + .seconds(60)))
        #expect(queue.pending().isEmpty)
        // The other crash went; the taken dump's fallback did not.
        #expect(transport.requests.map(\.url) == [dumpURL, "http://127.0.0.1:9/prefix/api/v1/reports"])
        #expect(transport.requests.last?.json == #"{"r":2}"#)
    }

    @Test func aRefusedDumpSendsItsFallbackReportInstead() async throws {
        let (transport, rejected, log) = try await drain([answer(404), answer(202)])
        #expect(transport.requests.map(\.url) == [dumpURL, "http://127.0.0.1:9/prefix/api/v1/reports"])
        #expect(transport.requests.last?.json == #"{"r":1}"#)
        #expect(rejected == 1)
        #expect(log.all.count == 1)
        #expect(log.all.first?.hasPrefix("faultline: the server refused minidump \(eventID) (HTTP 404") == true)
        #expect(log.all.first?.hasSuffix("; the crash is sent without its stack") == true, "\(log.all)")
    }
}
