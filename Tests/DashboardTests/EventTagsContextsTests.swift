import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// An event's tags, custom keys, SDK and contexts each under their own heading on the issue page, hostile names and
/// values escaped; a report without them shows no empty Tags, SDK or Contexts section.
@Suite struct EventTagsContextsTests {
    static let hostile = Fixtures.hostile

    static var report: Report {
        var report = Fixtures.report
        report.tags = [("level", "error"), ("plan \(hostile)", "pro \(hostile)")]
        report.sdk = SDKInfo(
            name: "sentry.python \(hostile)", version: "2.75.0", integrations: ["argv", "excepthook"],
            packages: [SDKInfo.Package(name: "pypi:sentry-sdk", version: "2.75.0")])
        report.contexts = [
            ReportContext(name: "order \(hostile)", values: [("id", "1234"), ("items", #"["sku-1"]"#)]),
            ReportContext(name: "rust", type: "runtime", values: [("name", "rustc")]),
            ReportContext(name: "empty"),
        ]
        return report
    }

    func issuePage(_ report: Report) async throws -> String {
        var sources = Fixtures.sources()
        sources.event = { sample in sample.eventID == Fixtures.sample.eventID ? (report, nil) : nil }
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let store = PageStore()
        _ = try await renderer.render(sources: sources, now: Fixtures.now, since: nil) { path, html in
            await store.put(path, html)
        }
        return try #require(await store.pages["demo/issues/1.html"])
    }

    /// The HTML under `<h3>heading</h3>` up to the next `<h3`.
    static func section(_ heading: String, in html: String) -> String? {
        guard let start = html.range(of: "<h3>\(heading)</h3>") else { return nil }
        let rest = html[start.upperBound...]
        return String(rest[..<(rest.range(of: "<h3")?.lowerBound ?? rest.endIndex)])
    }

    @Test func tagsCustomKeysSDKAndContextsAreApartAndEscaped() async throws {
        let html = try await issuePage(Self.report)
        let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; co"
        #expect(!html.contains("<script"))
        #expect(HTMLInspector.parse(html).stray == 0)

        let tags = try #require(Self.section("Tags", in: html))
        #expect(tags.contains("<th scope=\"row\">level</th><td>error</td>"))
        #expect(tags.contains("<th scope=\"row\">plan \(escaped)</th><td>pro \(escaped)</td>"))
        #expect(!tags.contains("key "))  // the custom keys are not tags
        let keys = try #require(Self.section("Custom keys", in: html))
        #expect(keys.contains("<th scope=\"row\">key \(escaped)</th>"))
        #expect(!keys.contains("plan"))

        let sdk = try #require(Self.section("SDK", in: html))
        #expect(sdk.contains("<dt>Name</dt><dd>sentry.python \(escaped)</dd>"))
        #expect(sdk.contains("<dt>Version</dt><dd>2.75.0</dd>"))
        #expect(sdk.contains("<dt>Integrations</dt><dd>argv, excepthook</dd>"))
        #expect(sdk.contains("<dt>Packages</dt><dd>pypi:sentry-sdk 2.75.0</dd>"))

        let contexts = try #require(Self.section("Contexts", in: html))
        #expect(contexts.contains("<h4>order \(escaped)</h4>"))
        #expect(contexts.contains("<dt>items</dt><dd>[&quot;sku-1&quot;]</dd>"))
        #expect(contexts.contains("<h4>rust (runtime)</h4>"))
        #expect(contexts.contains("<h4>empty</h4>"))
        #expect(contexts.contains("<p>No values.</p>"))
        // The device block stays where it was, before the SDK and the contexts.
        let device = try #require(html.range(of: "<h3>Device, app and user</h3>"))
        let sdkHeading = try #require(html.range(of: "<h3>SDK</h3>"))
        #expect(device.lowerBound < sdkHeading.lowerBound)
    }

    @Test func aReportWithoutThemShowsNoEmptySections() async throws {
        let html = try await issuePage(Fixtures.report)
        #expect(Self.section("Tags", in: html) == nil)
        #expect(Self.section("SDK", in: html) == nil)
        #expect(Self.section("Contexts", in: html) == nil)
        #expect(Self.section("Custom keys", in: html) != nil)
    }

    @Test func droppedTagsAndContextsAreSaid() {
        var trimmed = TrimCounts()
        trimmed.tagsDropped = 3
        trimmed.contextsDropped = 1
        trimmed.contextKeysDropped = 2
        #expect(
            SampleEventView.trimNotes(trimmed) == [
                "3 tags dropped (over the limit of 64)", "1 context dropped (over the limit of 32)",
                "2 context values dropped (over 64 in one context or SDK list)",
            ])
    }
}
