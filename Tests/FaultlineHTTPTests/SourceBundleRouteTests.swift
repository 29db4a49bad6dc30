import FaultlineCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

/// debuginfod's `/buildid/{id}/source/…` over the real application (real SQLite file, real blob store), counting
/// through the composition's own cache how often a bundle is parsed.
@Suite struct SourceBundleRouteTests {
    /// Issue #39.4: every source request opened the bundle again and parsed its manifest (1.5 s for 250,000 files).
    @Test func aBundleIsParsedOnceForManySourceRequests() async throws {
        let app = try await TestApp()
        let buildID = "d1b2c3d4e5f60718293a4b5c6d7e8f9001122334"
        let files = try TempFolder("source-bundle-route")
        // Given a bundle of 20,000 files (a 1.2 MB manifest)…
        let bundle = try BuiltProgram.bytes(
            try SourceBundles.crafted(buildID: buildID, files: 20_000, size: 16, in: files))
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/debug-files/\(buildID)", method: .put, headers: app.readHeaders, body: bundle
            ) { response in
                #expect(
                    response.status == .created, "\(String(decoding: response.body.readableBytesView, as: UTF8.self))")
            }
            // Checking the upload does not go through the cache of opened bundles.
            #expect(app.root.sourceBundles.opens == 0)
            // …when three of its files are asked for…
            for file in ["f0", "f19999", "f7"] {
                try await client.execute(
                    uri: "/buildid/\(buildID)/source/src/\(file).c", method: .get, headers: app.readHeaders
                ) { response in
                    #expect(response.status == .ok)
                    #expect(Array(response.body.readableBytesView) == [UInt8](repeating: 0, count: 16))
                }
            }
            // …and one it lacks…
            try await client.execute(
                uri: "/buildid/\(buildID)/source/src/none.c", method: .get, headers: app.readHeaders
            ) { response in
                #expect(response.status == .notFound)
            }
            // …its manifest was parsed once.
            #expect(app.root.sourceBundles.opens == 1)
        }
    }
}
