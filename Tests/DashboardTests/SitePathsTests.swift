import Dashboard
import FaultlineCore
import Testing

@Suite("Site paths")
struct SitePathsTests {
    let slug = ProjectSlug("demo")!

    @Test("links between pages are relative and climb out of subfolders")
    func relativeLinks() {
        #expect(SitePaths.relative(from: "index.html", to: SitePaths.overview(slug)) == "demo/index.html")
        #expect(SitePaths.relative(from: "demo/index.html", to: "style.css") == "../style.css")
        #expect(SitePaths.relative(from: "demo/index.html", to: SitePaths.issue(slug, IssueID(7))) == "issues/7.html")
        #expect(SitePaths.relative(from: "demo/issues/7.html", to: SitePaths.issues(slug)) == "../issues.html")
        #expect(SitePaths.relative(from: "demo/issues/7.html", to: "style.css") == "../../style.css")
        #expect(
            SitePaths.relative(from: "demo/issues/7.html", to: SitePaths.release(slug, "1.0"))
                == "../releases/\(FNV1a.hex64("1.0")).html")
    }

    @Test("a release page is named by the hash of the release, whatever the release holds")
    func releaseFileNames() {
        for release in ["1.0", "../../etc/passwd", "<script>", "1.0 (42)", ""] {
            let name = SitePaths.releaseFileName(release)
            #expect(name.count == 21)
            #expect(name.dropLast(5).allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(name.hasSuffix(".html"))
        }
        #expect(SitePaths.releaseFileName("1.0") != SitePaths.releaseFileName("1.0 "))
    }
}
