import Foundation
import Testing

extension IssueMergeEndToEndTests {
    /// `faultline issues merge|unmerge` against the data folder of a running server: exit 4 for an unknown project,
    /// issue or merged fingerprint, 1 with the reason for a refusal, 0 and one line for a merge the server then shows.
    @Test func theCLIMergesAndNamesWhatItRefuses() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        // Given: two issues of the shop.
        for (n, site) in [(1, "parseCart"), (2, "loadImage")] {
            #expect(
                try await http.postReports(
                    server.baseURL, key: shop.ingest,
                    InsightsEndToEndTests.crash(n, site: site, version: "1.0", user: "u\(n)")
                ).status == 202)
        }
        #expect(try await eventually { try await issues(server, token: shop.upload).count == 2 })
        let listed = try await issues(server, token: shop.upload).sorted { $0.id < $1.id }
        let (cart, image) = (listed[0], listed[1])
        func cli(_ arguments: [String]) async throws -> (status: Int32, out: String, err: String) {
            try await ServerProcess.run(["issues"] + arguments + ["--data", folder])
        }

        let noProject = try await cli(["merge", "\(cart.id)", "\(image.id)", "--project", "nope"])
        #expect(noProject.status == 4 && noProject.err.contains("no project 'nope'"), "\(noProject)")
        let noIssue = try await cli(["merge", "\(cart.id)", "999999", "--project", "shop"])
        #expect(noIssue.status == 4 && noIssue.err.contains("no issue 999999"), "\(noIssue)")
        let itself = try await cli(["merge", "\(cart.id)", "\(cart.id)", "--project", "shop"])
        #expect(itself.status == 1 && itself.err.contains("cannot be merged into itself"), "\(itself)")
        let notMerged = try await cli(["unmerge", "\(cart.id)", image.fingerprint, "--project", "shop"])
        #expect(notMerged.status == 4 && notMerged.err.contains("was not merged"), "\(notMerged)")
        #expect(try await issues(server, token: shop.upload).count == 2, "a refusal changes nothing")

        // When image merges into cart from the CLI: one line, and the server answers with the merged issue.
        let merged = try await cli(["merge", "\(cart.id)", "\(image.id)", "--project", "shop"])
        #expect(merged.status == 0 && merged.out == "merged \(image.id) into issue \(cart.id)\n", "\(merged)")
        #expect(try await events(server, cart.id, token: shop.upload) == 2)
        #expect(try await issues(server, token: shop.upload).map(\.id) == [cart.id])
    }
}
