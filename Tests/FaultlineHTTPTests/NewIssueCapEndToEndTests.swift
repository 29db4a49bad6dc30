import AsyncHTTPClient
import FaultlineCore
import Foundation
import Testing

/// Issue #39, finding 11, against the real `faultline` binary on 127.0.0.1: client-chosen fingerprints made one
/// permanent issue, rendered page and new-issue alert per report (1,000 of each from two requests). Past the project's
/// new-issue cap, new fingerprints are held in one overflow issue with one folded alert; another project is untouched.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct NewIssueCapEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// A crash the client grouped itself: `fingerprint` is its own.
    static func crash(_ n: Int, fingerprint: String) -> String {
        """
        {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"\(InsightsEndToEndTests.now)","user_id":"u\(n % 7)",
         "app":{"version":"1.0","build":"1"},"fingerprint":["\(fingerprint)"],
         "error":{"type":"SIGSEGV","message":"boom"},
         "threads":[{"name":"main","crashed":true,"frames":[{"function":"work","file":"src/work.c","line":12}]}]}
        """
    }

    func get(_ server: ServerProcess, _ path: String, token: String) async throws -> [String: Any] {
        let answer = try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(token)")])
        guard answer.status == 200 else {
            throw TestFailure("GET \(path) → \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return answer.json
    }

    func issues(_ server: ServerProcess, token: String) async throws -> [[String: Any]] {
        try await get(server, "/api/v1/issues?limit=1000", token: token)["issues"] as? [[String: Any]] ?? []
    }

    func newIssueAlerts(_ server: ServerProcess, token: String) async throws -> [[String: Any]] {
        let alerts =
            try await get(server, "/api/v1/alerts?limit=1000", token: token)["alerts"] as? [[String: Any]] ?? []
        return alerts.filter { $0["kind"] as? String == "new_issue" }
    }

    /// The cap's window (the default, an hour from the epoch) that holds `date`.
    static func window(_ date: Date) -> Int64 {
        IssueFiling.window(
            containing: Int64(date.timeIntervalSince1970 * 1000), minutes: AlertSettings().newIssueWindowMinutes
        ).lowerBound
    }

    @Test func aThousandClientFingerprintsMakeAtMostCapPlusOneIssuesAndAlerts() async throws {
        let folder = ServerProcess.newFolder()
        let flood = try await ServerProcess.createProject("flood", in: folder)
        let quiet = try await ServerProcess.createProject("quiet", in: folder)
        // The cap is a project's alert setting, also from the CLI; out of bounds is refused and names the setting.
        let refused = try await ServerProcess.run([
            "alerts", "configure", "quiet", "--new-issue-cap", "0", "--data", folder,
        ])
        #expect(refused.status != 0 && refused.err.contains("new_issue_cap"), "\(refused)")
        let configured = try await ServerProcess.run([
            "alerts", "configure", "quiet", "--new-issue-cap", "500", "--data", folder,
        ])
        #expect(configured.status == 0 && configured.out.contains(#""new_issue_cap" : 500"#), "\(configured)")
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let cap = AlertSettings().newIssueCap
        let started = Date()

        // Given two requests to project "flood", each of 500 crashes with fingerprints the client made up…
        for request in 0..<2 {
            let body = (0..<500).map { i in Self.crash(request * 500 + i + 1, fingerprint: "made-up-\(request)-\(i)") }
            let answer = try await http.postReports(
                server.baseURL, key: flood.ingest, "[" + body.joined(separator: ",") + "]")
            #expect(answer.status == 202, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        // …and project "quiet"'s first crash right after them.
        #expect(
            try await http.postReports(server.baseURL, key: quiet.ingest, Self.crash(5_000, fingerprint: "quiet-one"))
                .status == 202)

        // When the worker has filed all of them (every event is kept: the issues' events add up to 1,000).
        #expect(
            try await eventually(timeout: .seconds(180)) {
                let events = try await issues(server, token: flood.upload).reduce(0) {
                    $0 + ($1["events"] as? Int ?? 0)
                }
                let quietIssues = try await issues(server, token: quiet.upload).count
                return events == 1_000 && quietIssues == 1
            })
        // A run across the top of an hour has two windows, each with its own cap.
        let windows = Self.window(started) == Self.window(Date()) ? 1 : 2

        // Then "flood" has at most cap + 1 issues: its first `cap`, and one overflow issue holding the rest.
        let listed = try await issues(server, token: flood.upload)
        #expect(listed.count <= windows * (cap + 1))
        let overflow = try #require(listed.first { $0["title"] as? String == IssueFiling.overflowGrouping.title })
        if windows == 1 {
            #expect(listed.count == cap + 1)
            #expect(overflow["events"] as? Int == 1_000 - cap)
        }
        let detail = try await get(server, "/api/v1/issues/\(overflow["id"] as? Int ?? 0)", token: flood.upload)
        #expect((detail["grouping"] as? [String: Any])?["source"] as? String == "overflow")

        // And at most cap + 1 new-issue alerts: one per issue made, and one folded alert naming the overflow issue.
        let alerts = try await newIssueAlerts(server, token: flood.upload)
        #expect(alerts.count <= windows * (cap + 1))
        let folded = alerts.filter { ($0["reason"] as? [String: Any])?[IssueAlerts.heldCapKey] != nil }
        // (A run that crossed the hour may still have filed everything within one of its two windows.)
        #expect(windows == 1 ? folded.count == 1 : (1...2).contains(folded.count), "\(folded.count) in \(windows)")
        #expect(folded.allSatisfy { $0["issue_id"] as? Int == overflow["id"] as? Int })
        if windows == 1 { #expect(alerts.count == cap + 1) }

        // And "quiet" is untouched by the flood: its first issue is filed and announced as always.
        let quietIssues = try await issues(server, token: quiet.upload)
        #expect(quietIssues.count == 1)
        #expect(quietIssues.first?["title"] as? String != IssueFiling.overflowGrouping.title)
        let quietAlerts = try await newIssueAlerts(server, token: quiet.upload)
        #expect(quietAlerts.count == 1)
        #expect(quietAlerts.first?["issue_id"] as? Int == quietIssues.first?["id"] as? Int)

        // And the dashboard renders at most cap + 1 issue pages for "flood", not a thousand.
        #expect(
            await eventually {
                FileManager.default.fileExists(
                    atPath: folder + "/site/flood/issues/\(overflow["id"] as? Int ?? 0).html")
            })
        let pages = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/site/flood/issues")) ?? []
        #expect(pages.filter { $0.hasSuffix(".html") }.count <= windows * (cap + 1))
    }
}
