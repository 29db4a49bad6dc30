import FaultlineCore
import Foundation
import TestSupport
import Testing

@testable import Dashboard

/// The release page's gate: the command it shows is one a person can paste, whatever the release is called.
@Suite struct ReleaseGateViewTests {
    /// What `/bin/sh` makes of `word`: the text one argument receives.
    func shell(_ word: String) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "printf %s " + word]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func aReleaseNameIsOneShellWordWhateverItHolds() throws {
        let names = [
            "2.4.0", "com.example.shop@2.4.0+240", "1.0 (77)", "it's", "1.0;echo hi", "$(id)", "`id`",
            "a\"b", "'", "x'y'z", "~/1", "*",
        ]
        for name in names {
            #expect(try shell(ReleaseGateView.shellWord(name)) == name, "\(name) → \(ReleaseGateView.shellWord(name))")
        }
        // Plain names stay as the SDKs send them.
        #expect(ReleaseGateView.shellWord("com.example.shop@2.4.0+240") == "com.example.shop@2.4.0+240")
    }

    @Test func theCommandNamesTheProjectAndTheQuotedRelease() throws {
        let gate = ReleaseGate.decide(
            ReleaseGateEvidence(release: "1.0;touch x", health: ReleaseHealth(), daysOut: 1),
            policy: ReleaseGatePolicy())
        let view = ReleaseGateView(gate, slug: try #require(ProjectSlug("shop")))
        #expect(view.command == "faultline gate --project shop --release '1.0;touch x'")
        #expect(view.verdictText == "Not enough data yet")
    }
}
