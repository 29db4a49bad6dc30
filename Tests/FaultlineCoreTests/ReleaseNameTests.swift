import Foundation
import Testing

@testable import FaultlineCore

/// One release, however it is written: the release is the version, the build beneath it.
@Suite struct ReleaseNameTests {
    @Test(
        arguments: [
            // (raw, dist, version, build, package)
            ("2.4.0", "240", "2.4.0", "240", nil),
            ("2.4.0", nil, "2.4.0", nil, nil),
            ("2.4.0 (240)", nil, "2.4.0", "240", nil),
            ("com.example.app@2.4.0+240", nil, "2.4.0", "240", "com.example.app"),
            ("com.example.app@2.4.0+240", "240", "2.4.0", "240", "com.example.app"),
            ("com.example.app@2.4.0", "240", "2.4.0", "240", "com.example.app"),
            ("2.4.0+240", nil, "2.4.0", "240", nil),
            ("@scope/web@1.2.0", nil, "1.2.0", nil, "@scope/web"),
            ("  2.4.0  ", " 240 ", "2.4.0", "240", nil),
        ] as [(String, String?, String, String?, String?)])
    func everySpellingIsOneRelease(raw: String, dist: String?, version: String, build: String?, package: String?) {
        let name = ReleaseName.parse(raw, build: dist)
        #expect(name == ReleaseName(version: version, build: build, package: package))
    }

    @Test func aBuildGivenApartWinsOverOneWrittenIn() {
        #expect(ReleaseName.parse("app@2.4.0+239", build: "240")?.build == "240")
        #expect(ReleaseName.parse("2.4.0 (239)", build: "240") == ReleaseName(version: "2.4.0", build: "240"))
    }

    @Test(arguments: ["a1b2c3d", "2026-11-29", "release-7", "2.4.0+", "+240", "app@", "2.4.0 ()", "(240)", "x (y) z"])
    func textThatNamesNoBuildStaysAsItIs(raw: String) {
        #expect(ReleaseName.parse(raw) == ReleaseName(version: raw))
    }

    @Test func blankIsNoRelease() {
        #expect(ReleaseName.parse(nil) == nil)
        #expect(ReleaseName.parse("") == nil)
        #expect(ReleaseName.parse("   ", build: "240") == nil)
        #expect(ReleaseName.release(of: "") == "")
    }

    @Test func aNativeReportsReleaseIsItsVersionAndItsBuildIsBeneath() {
        let app = AppInfo(version: "2.4.0", build: "240")
        #expect(app.release == "2.4.0")
        #expect(app.releaseBuild == "240")
        #expect(AppInfo(version: "2.4.0 (240)").release == "2.4.0")
        #expect(AppInfo(build: "240").release == nil)
    }

    @Test func anIssueIsBrokenDownByTheBuildsBeneathItsReleases() {
        var report = Report(
            eventID: EventID("0c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5")!, kind: .crash,
            timestamp: Date(timeIntervalSince1970: 1_790_000_000))
        report.app = AppInfo(version: "com.example.app@2.4.0+240")
        #expect(GroupingInput.make(report, symbols: nil).tags["build"] == "2.4.0 (240)")
        report.app = AppInfo(version: "2.4.0")
        #expect(GroupingInput.make(report, symbols: nil).tags["build"] == nil)
    }
}
