import Foundation
import TestSupport
import Testing

/// `faultline --version`: the release and the commit the binary was built from (Plugins/VersionStamp).
@Suite struct VersionCommandTests {
    @Test func versionNamesTheReleaseAndTheCommitBuilt() async throws {
        let answer = try await ServerProcess.run(["--version"])
        #expect(answer.status == 0)
        let text = answer.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: " ")
        #expect(parts.count == 3, "\(text)")
        let semver = parts.first.map { $0.split(separator: ".").compactMap { Int($0) } } ?? []
        #expect(semver.count == 3, "\(text)")
        // The binary was built from this checkout (the plugin runs before every build).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let head = try Command.check("git", ["-C", root, "rev-parse", "--short=12", "HEAD"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text.hasSuffix("(commit \(head))"), "\(text) is not built from \(head)")
    }
}
