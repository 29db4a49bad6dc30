import Dashboard
import FaultlineCore
import Foundation
import Testing

/// An issue list's merge form (the rows' checkboxes and the form they belong to) and the error code beside a row's
/// title.
@Suite struct IssueListMergeFormTests {
    static func page(issues: [IssueSummary], token: String? = "ab12") async throws -> String {
        var data = FakeInsights.ProjectData()
        data.issues = issues
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        return try await renderer.issueListPage(
            project: Fixtures.demo, request: try IssueListRequest(parameters: [:]),
            insights: FakeInsights(projects: [Fixtures.demoID: data]), csrfToken: token, now: Fixtures.now)
    }

    @Test("every row of a list of two or more issues has a checkbox of the merge form, which carries the token")
    func rowsBelongToTheMergeForm() async throws {
        let html = try await Self.page(issues: [Fixtures.summary(3, title: "A"), Fixtures.summary(8, title: "B")])
        #expect(
            html.contains("<form id=\"merge-issues\" class=\"merge-issues\" method=\"post\" action=\"issues/merge\">"))
        for id in [3, 8] {
            #expect(html.contains("<input type=\"checkbox\" name=\"issues\" value=\"\(id)\" form=\"merge-issues\">"))
        }
        // The form holds the session's token and the way back to this list.
        let form = try #require(html.range(of: "<form id=\"merge-issues\"").map { html[$0.lowerBound...] })
        let body = form[..<(form.range(of: "</form>")?.upperBound ?? form.endIndex)]
        #expect(body.contains("name=\"csrf\" value=\"ab12\""))
        #expect(body.contains("name=\"back\" value=\"/demo/list\""))
        // Each checkbox sits inside its row's own form, so a page without the forms loses the checkboxes too.
        let row = try #require(html.range(of: "<form class=\"row-actions\"").map { html[$0.lowerBound...] })
        let rowForm = row[..<(row.range(of: "</form>")?.upperBound ?? row.endIndex)]
        #expect(rowForm.contains("type=\"checkbox\""))
    }

    @Test("a list of one issue has nothing to merge: no form, no checkbox")
    func oneIssueHasNoMergeForm() async throws {
        let html = try await Self.page(issues: [Fixtures.summary(3, title: "A")])
        #expect(!html.contains("merge-issues"))
        #expect(!html.contains("type=\"checkbox\""))
    }

    @Test("an issue grouped by its error's code shows the code beside its title, escaped")
    func errorCodeBesideTheTitle() async throws {
        var coded = Fixtures.summary(3, title: "NSURLErrorDomain: The request timed out.")
        coded.kind = .nonfatal
        coded.errorCode = "-1001"
        var hostile = Fixtures.summary(4, title: "Other")
        hostile.kind = .nonfatal
        hostile.errorCode = "<b>7</b>"
        let plain = Fixtures.summary(5, title: "Crash")
        let html = try await Self.page(issues: [coded, hostile, plain])
        #expect(html.contains("The request timed out.</a> <span class=\"error-code\">code <code>-1001</code></span>"))
        #expect(html.contains("<code>&lt;b&gt;7&lt;/b&gt;</code>"))
        #expect(html.components(separatedBy: "class=\"error-code\"").count == 3, "the crash has no code")
    }
}

/// The code of a grouping by error type and code, and only of that.
@Suite struct GroupingErrorCodeTests {
    static func grouping(_ source: GroupingResult.Source, _ components: [String]) -> GroupingResult {
        GroupingResult(
            fingerprint: Fingerprint(version: 3, hash: "0123456789abcdef"), source: source, components: components,
            title: "t", culprit: nil)
    }

    @Test func theCodeOfAnErrorGroupingOnly() {
        #expect(Self.grouping(.error, ["type:NSURLErrorDomain", "code:-1001", "App.load"]).errorCode == "-1001")
        #expect(Self.grouping(.error, ["type:NSURLErrorDomain", "code:"]).errorCode == nil)
        #expect(Self.grouping(.client, ["code:-1001"]).errorCode == nil)
        #expect(Self.grouping(.stack, ["code:-1001"]).errorCode == nil)
    }
}
