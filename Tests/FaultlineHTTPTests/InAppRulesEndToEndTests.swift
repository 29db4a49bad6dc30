import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// A project's in-app rules (`faultline projects configure --in-app-include/--in-app-exclude`) decide which frame
/// a running server blames: a vendored library shipped beside the app stops being blamed once excluded.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct InAppRulesEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    static func crash(_ n: Int) -> String {
        #"""
        {"event_id":"\#(Payloads.eventID(n))","kind":"crash","timestamp":"2026-11-22T05:08:09Z","app":{"version":"1.0"},
         "error":{"type":"SIGSEGV","message":"Segmentation fault"},
         "threads":[{"crashed":true,"frames":[
           {"address":"0x7e0000001000","function":"vendor_parse","file":"vendor.c","line":40},
           {"address":"0x555500002000","function":"load_config","file":"config.c","line":12}]}],
         "modules":[{"name":"libvendor.so","path":"/srv/app/libvendor.so","base_address":"0x7e0000000000","size":1048576},
                    {"name":"app","path":"/srv/app/app","base_address":"0x555500000000","size":1048576}]}
        """#
    }

    @Test func excludingAVendoredLibraryMovesTheBlameToTheAppsOwnFrame() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("rules", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let read = [("Authorization", "Bearer \(project.upload)")]
        func culprits() async throws -> Set<String> {
            let answer = try await http.send(.GET, server.baseURL + "/api/v1/issues", headers: read)
            return Set((answer.json["issues"] as? [[String: Any]] ?? []).compactMap { $0["culprit"] as? String })
        }

        #expect(try await http.postReports(server.baseURL, key: project.ingest, Self.crash(1)).status == 202)
        #expect(try await eventually { try await culprits() == ["vendor_parse (vendor.c:40)"] })

        let configured = try await ServerProcess.run(
            [
                "projects", "configure", "rules", "--data", folder, "--json", "--in-app-exclude", "libvendor*",
                "--in-app-include", "libcompany?.so",
            ])
        #expect(configured.status == 0, "\(configured.err)")
        let json = try JSONSerialization.jsonObject(with: Data(configured.out.utf8)) as? [String: Any]
        #expect(json?["in_app_exclude"] as? [String] == ["libvendor*"])
        #expect(json?["in_app_include"] as? [String] == ["libcompany?.so"])

        // The running server reads the rules with its next batch.
        #expect(try await http.postReports(server.baseURL, key: project.ingest, Self.crash(2)).status == 202)
        #expect(
            try await eventually {
                try await culprits() == ["vendor_parse (vendor.c:40)", "load_config (config.c:12)"]
            })

        let cleared = try await ServerProcess.run([
            "projects", "configure", "rules", "--data", folder, "--json", "--clear-in-app",
        ])
        let clearedJSON = try JSONSerialization.jsonObject(with: Data(cleared.out.utf8)) as? [String: Any]
        #expect(clearedJSON?["in_app_exclude"] as? [String] == [])
        let refused = try await ServerProcess.run(
            [
                "projects", "configure", "rules", "--data", folder, "--in-app-include",
                String(repeating: "x", count: 200),
            ])
        #expect(refused.status != 0)
        #expect(refused.err.contains("in-app pattern"))
    }
}
