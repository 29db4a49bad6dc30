import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Late symbols in any order, on the real server: a release Swift program crashes; its crash file, its stripped
/// executable and its split debug file arrive in each of the six orders (one project per order), the background
/// worker settling after every step. Every order ends in the same symbolication, byte for byte, resolved from
/// DWARF, and in the same issue.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct LateSymbolsEndToEndTests {
    enum Arrival: String, CaseIterable { case crash, executable, debug }

    static let orders: [[Arrival]] = {
        func permutations(_ items: [Arrival]) -> [[Arrival]] {
            guard items.count > 1 else { return [items] }
            return items.indices.flatMap { i -> [[Arrival]] in
                var rest = items
                let first = rest.remove(at: i)
                return permutations(rest).map { [first] + $0 }
            }
        }
        return permutations(Arrival.allCases)
    }()

    @Test func everyArrivalOrderEndsInTheSameSymbolsAndIssue() async throws {
        #expect(Self.orders.count == 6 && Set(Self.orders.map { $0.map(\.rawValue).joined() }).count == 6)
        let scratch = try TempFolder("late-symbols")
        let (binary, crashFile) = try SwiftCrashFixture.crash(in: scratch)
        let debug = scratch.file("trap.debug")
        let stripped = scratch.file("trap.stripped")
        try Command.check("objcopy", ["--only-keep-debug", binary, debug])
        try Command.check("objcopy", ["--strip-all", binary, stripped])
        let buildID = try #require(try ELFFixtures.readelfBuildID(binary))
        // Both halves keep the build-id note (the server matches them to the crash by it), and only the debug file
        // has DWARF.
        #expect(try ELFFixtures.readelfBuildID(debug) == buildID)
        #expect(try ELFFixtures.readelfBuildID(stripped) == buildID)
        let sections = { (path: String) in try Command.check("readelf", ["-S", "-W", path]) }
        #expect(try sections(debug).contains(".debug_info"))
        #expect(try !sections(stripped).contains(".debug_info"))
        #expect(try !sections(stripped).contains(".symtab"))

        let folder = ServerProcess.newFolder()
        var projects: [(ingest: String, upload: String, id: Int)] = []
        for index in Self.orders.indices {
            projects.append(try await ServerProcess.createProject("order\(index)", in: folder))
        }
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let files: [Arrival: [UInt8]] = [
            .executable: Array(try Data(contentsOf: URL(fileURLWithPath: stripped))),
            .debug: Array(try Data(contentsOf: URL(fileURLWithPath: debug))),
        ]

        var finals: [String] = []
        var issues: [(fingerprint: String, title: String)] = []
        for (order, project) in zip(Self.orders, projects) {
            let name = order.map(\.rawValue).joined(separator: " → ")
            let read = [("Authorization", "Bearer \(project.upload)")]
            var eventID: String?
            var have: Set<Arrival> = []
            for arrival in order {
                switch arrival {
                case .crash:
                    let posted = try await http.send(
                        .POST, server.baseURL + "/api/v1/crashes/swift?app_version=1.0",
                        headers: [("Authorization", "Bearer \(project.ingest)")], body: Array(crashFile))
                    #expect(posted.status == 202, "\(name): \(posted.json)")
                    eventID = try #require((posted.json["accepted"] as? [String])?.first)
                case .executable, .debug:
                    let uploaded = try await http.send(
                        .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)", headers: read, body: files[arrival])
                    #expect(uploaded.status == 201, "\(name): \(uploaded.json)")
                }
                have.insert(arrival)
                // The worker runs between the steps: wait until the report is settled.
                guard let eventID else { continue }
                let settled = try await settle(http, server.baseURL + "/api/v1/reports/\(eventID)", read)
                #expect(settled != nil, "\(name): the report stayed pending after \(arrival)")
                // What is still missing: with only the stripped executable, the build-id is listed with what is there.
                let missing = try await http.send(.GET, server.baseURL + "/api/v1/missing-debug-files", headers: read)
                let row = (missing.json["missing"] as? [[String: Any]])?.first { $0["build_id"] as? String == buildID }
                if have.contains(.debug) {
                    #expect(row == nil, "\(name): listed as missing after the debug file arrived: \(missing.json)")
                } else {
                    #expect(row?["module"] as? String == "trap", "\(name): \(missing.json)")
                    #expect(
                        row?["has"] as? [String] == (have.contains(.executable) ? ["executable"] : []),
                        "\(name): \(missing.json)")
                }
            }
            let id = try #require(eventID)
            let report = try await http.send(.GET, server.baseURL + "/api/v1/reports/\(id)", headers: read)
            let symbolication = try #require(report.json["symbolication"] as? [String: Any], "\(name)")
            finals.append(
                String(
                    decoding: try JSONSerialization.data(withJSONObject: symbolication, options: [.sortedKeys]),
                    as: UTF8.self))

            // Resolved from DWARF: the crashing frame's inline chain ends in `pick`, main.swift line 2.
            let crashed = try #require((symbolication["threads"] as? [[[String: Any]]])?.first?.first, "\(name)")
            #expect(crashed["status"] as? String == "dwarf", "\(name): \(symbolication["state"] ?? "-") \(crashed)")
            let frames = try #require(crashed["frames"] as? [[String: Any]])
            #expect(frames.first?["function"] as? String == "Swift runtime failure: Index out of range", "\(name)")
            let pick = try #require(frames.last)
            #expect((pick["function"] as? String)?.contains("pick") == true, "\(name): \(pick)")
            #expect(pick["line"] as? Int == 2, "\(name): \(pick)")
            #expect((pick["file"] as? String)?.hasSuffix("main.swift") == true, "\(name): \(pick)")

            // One issue: the report was regrouped when its symbols improved, and no stale issue is left behind.
            let listed = try await http.send(.GET, server.baseURL + "/api/v1/issues", headers: read)
            let all = try #require(listed.json["issues"] as? [[String: Any]], "\(name): \(listed.json)")
            #expect(all.count == 1, "\(name): \(all)")
            issues.append((all.first?["fingerprint"] as? String ?? "", all.first?["title"] as? String ?? ""))
        }
        #expect(
            Set(finals).count == 1, "the final symbolication differs between orders:\n\(finals.joined(separator: "\n"))"
        )
        #expect(Set(issues.map(\.fingerprint)).count == 1, "\(issues)")
        #expect(Set(issues.map(\.title)).count == 1, "\(issues)")
        #expect(issues.first?.fingerprint.isEmpty == false)
    }

    /// Polls a report until it is no longer pending (a report queued again shows state `pending` with its previous
    /// frames) and two reads a moment apart agree; nil if it never settles.
    func settle(_ http: HTTP, _ url: String, _ headers: [(String, String)]) async throws -> [String: Any]? {
        let deadline = ContinuousClock.now + .seconds(60)
        var previous: Data?
        while ContinuousClock.now < deadline {
            let answer = try await http.send(.GET, url, headers: headers)
            let symbolication = answer.json["symbolication"] as? [String: Any]
            let state = symbolication?["state"] as? String ?? "pending"
            if state != "pending", let symbolication {
                let bytes = try JSONSerialization.data(withJSONObject: symbolication, options: [.sortedKeys])
                if bytes == previous { return answer.json }
                previous = bytes
            } else {
                previous = nil
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}
