import FaultlineCore
import Testing

/// The "Open in tracker" link: each tracker's prefilled new-issue URL, with its own parameter names, and the checks a
/// tracker URL passes.
@Suite struct TrackerLinkTests {
    let draft = TrackerIssueDraft(
        title: "Fatal error: Index out of range", culprit: "Inventory.load() (Inventory.swift:42)", events: 1234,
        users: 56, firstRelease: "2.4.0", link: "https://faultline.acme.dev/app/issues/7.html")
    let body =
        "Culprit%3A%20Inventory.load%28%29%20%28Inventory.swift%3A42%29%0AEvents%3A%201234%2C%20users%20affected%3A%2056%0A"
        + "First%20release%3A%202.4.0%0AFaultline%20issue%3A%20https%3A%2F%2Ffaultline.acme.dev%2Fapp%2Fissues%2F7.html"
    let title = "Fatal%20error%3A%20Index%20out%20of%20range"

    @Test func gitHubTakesTitleAndBody() throws {
        let tracker = try IssueTracker.validated(kind: .github, url: "https://github.com/acme/app/")
        #expect(tracker.url == "https://github.com/acme/app")
        #expect(
            TrackerLink.newIssueURL(tracker, draft)
                == "https://github.com/acme/app/issues/new?title=\(title)&body=\(body)")
    }

    @Test func gitLabTakesIssueTitleAndIssueDescription() throws {
        let tracker = try IssueTracker.validated(kind: .gitlab, url: "https://gitlab.com/acme/group/app")
        #expect(
            TrackerLink.newIssueURL(tracker, draft)
                == "https://gitlab.com/acme/group/app/-/issues/new?issue[title]=\(title)&issue[description]=\(body)")
    }

    @Test func giteaTakesTitleAndBody() throws {
        let tracker = try IssueTracker.validated(kind: .gitea, url: "http://git.acme.dev:3000/acme/app")
        #expect(
            TrackerLink.newIssueURL(tracker, draft)
                == "http://git.acme.dev:3000/acme/app/issues/new?title=\(title)&body=\(body)")
    }

    @Test func jiraTakesProjectIssueTypeSummaryAndDescription() throws {
        let tracker = try IssueTracker.validated(
            kind: .jira, url: "https://acme.atlassian.net/?pid=10000&issuetype=10004")
        #expect(
            TrackerLink.newIssueURL(tracker, draft)
                == "https://acme.atlassian.net/secure/CreateIssueDetails!init.jspa?pid=10000&issuetype=10004"
                + "&summary=\(title)&description=\(body)")
        // Without the project and the issue type, Jira's create screen cannot open: refused up front
        #expect(throws: TrackerURLError.self) {
            try IssueTracker.validated(kind: .jira, url: "https://acme.atlassian.net")
        }
    }

    @Test func whatIsUnknownIsLeftOutAndLongTitlesAreCut() throws {
        let tracker = IssueTracker(kind: .github, url: "https://github.com/acme/app")
        let bare = TrackerIssueDraft(
            title: String(repeating: "é", count: 500), culprit: nil, events: 1, users: 0, firstRelease: nil, link: nil)
        let url = TrackerLink.newIssueURL(tracker, bare)
        #expect(url.hasSuffix("&body=Events%3A%201%2C%20users%20affected%3A%200"))
        // 200 characters of two UTF-8 bytes, each byte as %XX
        #expect(url.contains("title=" + String(repeating: "%C3%A9", count: 200) + "&"))
    }

    @Test func trackerURLsAreHTTPWithAHostAndBounded() throws {
        #expect(
            try TrackerURL.validated("  https://github.com/acme/app/issues/12 ", field: "f")
                == "https://github.com/acme/app/issues/12")
        #expect(try TrackerURL.validated("", field: "f") == nil)
        #expect(try TrackerURL.validated("   ", field: "f") == nil)
        for bad in [
            "javascript:alert(1)", "ftp://x/y", "https://", "https:///path", "https://user:pw@host/x",
            "https://host/a b", "https://host/\"x", "https://host/<x>", "https://host/x\n",
            "https://host/" + String(repeating: "a", count: 2048),
        ] {
            #expect(throws: TrackerURLError.self, "\(bad)") { try TrackerURL.validated(bad, field: "f") }
        }
        let error = #expect(throws: TrackerURLError.self) {
            try TrackerURL.validated("file:///etc", field: "tracker_issue_url")
        }
        #expect(error?.field == "tracker_issue_url")
        #expect(throws: TrackerURLError.self) {
            try IssueTracker.validated(kind: .github, url: "https://github.com/a/b?x=1")
        }
    }
}
