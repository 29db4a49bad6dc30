import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #35 (6), against the real `faultline` binary on 127.0.0.1: while reports wait to be processed every page
/// says how many, and the notice is gone from every page once they are processed. The backlog is made
/// deterministic: a server that aborts when it symbolicates one build-id (a DEBUG-only fault) dies with its batch
/// unsaved, so every report it took stays pending.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct CatchingUpNoticeEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    @Test func pagesSayReportsAreStillBeingProcessedUntilTheyAre() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let poison = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef"
        // Given a server that dies on the first batch, leaving its five reports pending
        let dying = try await ServerProcess(
            folder: folder, environment: ["FAULTLINE_TEST_ABORT_ON_BUILD_ID": poison])
        defer { dying.cleanUp() }
        let reports = (0..<5).map {
            MultiNodeEndToEndTests.crash(
                $0, kind: $0 % 2, buildID: $0 == 0 ? poison : "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")
        }
        _ = try? await http.postReports(
            dying.baseURL, key: shop.ingest, #"{"reports":["# + reports.joined(separator: ",") + "]}")
        try await dying.waitForExit(timeout: .seconds(60))
        #expect(dying.log.contains("aborting on purpose"))

        // When the site is rendered with them still waiting, every page says so, with the time
        let out = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let rendered = try await ServerProcess.run(["render", "--data", folder, "--out", out])
        #expect(rendered.status == 0, "\(rendered.err)")
        for page in ["index.html", "shop/index.html", "shop/issues.html", "shop/releases.html", "shop/alerts.html"] {
            let html = try String(contentsOfFile: out + "/" + page, encoding: .utf8)
            #expect(html.contains("<p class=\"processing-notice\" role=\"status\">"), "\(page)")
            #expect(html.contains("5 reports are still being processed, updated <time datetime="), "\(page)")
        }

        // Then a server without the fault processes them, and the notice leaves every page, issue pages included
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let overview = folder + "/site/shop/index.html"
        #expect(
            try await eventually {
                guard let html = try? String(contentsOfFile: overview, encoding: .utf8) else { return false }
                return !html.contains("processing-notice") && html.contains("href=\"issues/")
            })
        let issues = try FileManager.default.contentsOfDirectory(atPath: folder + "/site/shop/issues")
        #expect(!issues.isEmpty)
        #expect(
            try await eventually {
                issues.allSatisfy { name in
                    let html =
                        (try? String(contentsOfFile: folder + "/site/shop/issues/" + name, encoding: .utf8)) ?? ""
                    return !html.isEmpty && !html.contains("processing-notice")
                }
            })
    }
}
