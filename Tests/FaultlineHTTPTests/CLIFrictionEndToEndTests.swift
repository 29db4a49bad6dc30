import Foundation
import TestSupport
import Testing

/// Issue #35 (README friction), with the real `faultline` binary: `projects create --json` prints the id as a number
/// and a DSN on the port the server listens on; a bad value in a subcommand names itself and that subcommand's usage.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct CLIFrictionEndToEndTests {
    func created(_ result: (status: Int32, out: String, err: String)) throws -> [String: Any] {
        #expect(result.status == 0, "\(result.err)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
    }

    @Test func projectsCreatePrintsANumericIdAndTheDSNOfThePortTheServerListensOn() async throws {
        let folder = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Before any server ran in the folder: the default address.
        let first = try created(try await ServerProcess.run(["projects", "create", "one", "--data", folder, "--json"]))
        let id = try #require(first["id"] as? Int)
        #expect(first["id"] is NSNumber)
        #expect(first["sentry_dsn"] as? String == "http://\(first["ingest_key"] as? String ?? "")@127.0.0.1:8080/\(id)")

        // Once the server has listened (on a port of its own choosing here), DSNs name that port.
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        #expect(server.port != 8080)
        let second = try created(
            try await ServerProcess.run(["projects", "create", "two", "--data", folder, "--json"]))
        let dsn = try #require(second["sentry_dsn"] as? String)
        #expect(dsn.hasSuffix("@127.0.0.1:\(server.port)/\(try #require(second["id"] as? Int))"), "\(dsn)")
        // --public-url still wins.
        let third = try created(
            try await ServerProcess.run([
                "projects", "create", "three", "--data", folder, "--json", "--public-url", "https://crash.example.com/",
            ]))
        #expect((third["sentry_dsn"] as? String)?.hasPrefix("https://") == true)
        #expect((third["sentry_dsn"] as? String)?.hasSuffix("@crash.example.com/\(third["id"] as? Int ?? -1)") == true)
    }

    @Test func aWebhookWithAnEllipsisIsNamedWithTheSubcommandsUsage() async throws {
        let folder = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try created(try await ServerProcess.run(["projects", "create", "demo", "--data", folder, "--json"]))

        // The README's example, copied with its literal "…".
        let answer = try await ServerProcess.run([
            "alerts", "configure", "demo", "--data", folder, "--webhook", "https://hooks.slack.com/services/…",
        ])
        #expect(answer.status == 64)
        #expect(answer.err.contains("webhook_url: holds \"…\" (U+2026)"), "\(answer.err)")
        #expect(answer.err.contains("Usage: faultline alerts configure"), "\(answer.err)")
        #expect(answer.err.contains("See 'faultline alerts configure --help'"), "\(answer.err)")
        #expect(!answer.err.contains("faultline <subcommand>"), "\(answer.err)")
        // Nothing was saved.
        let shown = try await ServerProcess.run(["alerts", "show", "demo", "--data", folder])
        #expect(!shown.out.contains("hooks.slack.com"), "\(shown.out)")
    }
}
