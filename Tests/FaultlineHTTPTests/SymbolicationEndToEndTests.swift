import AsyncHTTPClient
import FaultlineCore
import Formats
import Foundation
import NIOHTTP1
import SQLiteStorage
import TestSupport
import Testing

/// A release Swift program traps; its crash file is posted; the debug file arrives afterwards; the
/// background worker symbolicates the stored report to the right function and line.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SymbolicationEndToEndTests {
    @Test func aCrashBecomesSymbolicatedWhenItsSymbolsArriveLater() async throws {
        let scratch = try TempFolder("swift-crash")
        let (binary, file) = try SwiftCrashFixture.crash(in: scratch)
        let buildID = try #require(try ELFFixtures.readelfBuildID(binary))
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("symbolicate", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let read = [("Authorization", "Bearer \(project.upload)")]

        let posted = try await http.send(
            .POST, server.baseURL + "/api/v1/crashes/swift?app_version=1.0",
            headers: [("Authorization", "Bearer \(project.ingest)")],
            body: Array(file))
        let id = try #require((posted.json["accepted"] as? [String])?.first)

        // Without symbols: the worker records the missing build-id.
        let before = try await waitFor(http, server.baseURL + "/api/v1/reports/\(id)", read) { state in
            state != "pending"
        }
        #expect((before["symbolication"] as? [String: Any])?["state"] as? String == "missing")
        let missing = try await http.send(
            .GET, server.baseURL + "/api/v1/missing-debug-files?release=1.0", headers: read)
        let listed = missing.json["missing"] as? [[String: Any]]
        #expect(listed?.first?["build_id"] as? String == buildID)
        #expect(listed?.first?["module"] as? String == "trap")

        // The debug file arrives; the report is symbolicated again.
        let uploaded = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)", headers: read,
            body: Array(try Data(contentsOf: URL(fileURLWithPath: binary))))
        #expect(uploaded.status == 201)
        let after = try await waitFor(http, server.baseURL + "/api/v1/reports/\(id)", read) { state in
            state == "complete"
        }
        let symbolication = try #require(after["symbolication"] as? [String: Any])
        #expect(symbolication["state"] as? String == "complete")
        let crashed = try #require((symbolication["threads"] as? [[[String: Any]]])?.first?.first)
        let frames = try #require(crashed["frames"] as? [[String: Any]])
        #expect(frames.first?["function"] as? String == "Swift runtime failure: Index out of range")
        #expect(frames.first?["line"] == nil)  // compiler-generated: no invented line
        let pick = try #require(frames.last)
        #expect(pick["function"] as? String == "trap.pick(trap.Order, Swift.Int) -> Swift.Int")
        #expect(pick["line"] as? Int == 2)
        #expect((pick["file"] as? String)?.hasSuffix("main.swift") == true)
        let after2 = try await http.send(.GET, server.baseURL + "/api/v1/missing-debug-files", headers: read)
        #expect((after2.json["missing"] as? [Any])?.isEmpty == true)

        // The server stored the result compressed: a reader of its file needs the zlib codec, and gets the same frames.
        let database = try SQLiteEngine(path: folder + "/faultline.sqlite", codec: .zlib)
        defer { try? database.close() }
        let eventID = try #require(EventID(id))
        let raw = try #require(
            try await SQLiteReportReader(database: database).rawReport(eventID: eventID, project: nil))
        let stored = try await SQLiteSymbolicationStore(database: database).result(reportID: raw.summary.cursor)
        #expect(
            stored.report?.threads.first?.first?.frames.last?.function
                == "trap.pick(trap.Order, Swift.Int) -> Swift.Int")
        let withoutCodec = try SQLiteEngine(path: folder + "/faultline.sqlite")
        defer { try? withoutCodec.close() }
        await #expect(throws: StoredBlobError.self) {
            try await SQLiteSymbolicationStore(database: withoutCodec).result(reportID: raw.summary.cursor)
        }
    }

    /// Polls a report until its symbolication state satisfies `done` (the worker runs in the background).
    func waitFor(_ http: HTTP, _ url: String, _ headers: [(String, String)], _ done: (String) -> Bool) async throws
        -> [String: Any]
    {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let answer = try await http.send(.GET, url, headers: headers)
            let state = (answer.json["symbolication"] as? [String: Any])?["state"] as? String ?? "pending"
            if done(state) || ContinuousClock.now > deadline { return answer.json }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
