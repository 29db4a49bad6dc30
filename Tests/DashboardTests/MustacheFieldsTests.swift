import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// The rows that name their Mustache fields themselves (`MustacheFields`, no `Mirror`) give the tree `Mirror`
/// gives: the same names, the same values, nil optionals left out alike. A field added to a row but not to its
/// `mustacheFields` fails here instead of rendering blank.
@Suite struct MustacheFieldsTests {
    /// A converted tree as text with its keys sorted, so two trees can be compared.
    static func canonical(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let fields as [String: Any]:
            return "{" + fields.keys.sorted().map { "\($0): \(canonical(fields[$0]))" }.joined(separator: ", ") + "}"
        case let items as [Any]: return "[" + items.map(canonical).joined(separator: ", ") + "]"
        case let value?: return "\(type(of: value))(\(value))"
        }
    }

    /// Every row type with its optional fields set, and again with them nil.
    static func samples() -> [(String, any MustacheFields)] {
        let slug = Fixtures.demo.slug
        let rendered: Set<String> = [Fixtures.release]
        var quiet = Fixtures.summary(2, title: "")
        quiet.culprit = nil
        quiet.firstRelease = nil
        let issue = IssueRowView(
            Fixtures.summary(1, title: Fixtures.hostile), slug: slug, from: "demo/index.html", releases: rendered)
        let bare = IssueRowView(quiet, slug: slug, from: "demo/index.html", releases: rendered)
        var ranked = TopIssue(issue: Fixtures.summary(1, title: "t"), users: 9, events: 30)
        ranked.previous = TopIssue.Counts(users: 3, events: 4)
        let sections = [
            TopIssueSection(
                anchor: "a", heading: "h", window: .last24Hours, issues: [ranked], slug: slug, from: "demo/index.html",
                releases: rendered),
            TopIssueSection(
                anchor: "b", heading: "h", window: .release(Fixtures.release), issues: [ranked], slug: slug,
                from: "demo/index.html", releases: rendered),
        ]
        let alert = Alert(
            id: 1, project: Fixtures.demoID, kind: .velocity, issue: IssueID(1), release: Fixtures.release,
            title: Fixtures.hostile,
            reason: ["issue_sessions": 12, "share_percent": 1.5], createdAt: Fixtures.now)
        let plainAlert = Alert(
            id: 2, project: Fixtures.demoID, kind: .storageFull, issue: nil, release: nil, title: "t", reason: [:],
            createdAt: Fixtures.now)
        let alertView = AlertView(alert, slug: slug, from: "demo/alerts.html", issues: [IssueID(1)], releases: rendered)
        let row = ReleaseRow(
            release: Fixtures.release, firstSeen: Fixtures.now, lastSeen: Fixtures.now, health: Fixtures.todayHealth,
            adoption: 0.4,
            recentSessions: 100, newIssues: 2)
        var samples: [(String, any MustacheFields)] = [
            ("issue row", issue), ("issue row, optionals nil", bare),
            ("alert", alertView),
            (
                "alert, optionals nil",
                AlertView(plainAlert, slug: slug, from: "demo/alerts.html", issues: [], releases: rendered)
            ),
            ("reason item", try! #require(alertView.reasonItems.first)),
            (
                "release row",
                ReleaseRowView(
                    row, slug: slug, from: "demo/releases.html", rendered: rendered, targets: CrashFreeTargets())
            ),
            ("target mark", TargetMarkView(rate: 0.9, target: 99.5)),
            ("release link", ReleaseLink(Fixtures.release, slug: slug, from: "demo/index.html", rendered: rendered)),
            ("time", TimeView(Fixtures.now)), ("badge", Badge.status(.muted)),
            ("trend", TrendView.count(9, before: 3, noun: "users", window: "the 24 hours")),
        ]
        for (index, section) in sections.enumerated() {
            samples += section.rows.map { ("top issue row \(index)", $0) }
        }
        // The sample event's rows.
        let info = InfoRow(infoLabel: "Model", infoValue: Fixtures.hostile)
        let source = SampleEventView.SourceView(
            file: "/src/App/Process.swift",
            excerpt: SourceExcerpt(firstLine: 41, lines: ["a", Fixtures.hostile, "c"], focus: 42))
        let entry = SampleEventView.FrameEntry(
            function: "app.Inventory.item(at: Swift.Int) -> Swift.Int", frameLocation: "Process.swift:42",
            inlined: true, source: source)
        let bareEntry = SampleEventView.FrameEntry(function: nil, frameLocation: nil, inlined: false)
        let frame = SampleEventView.FrameView(
            frameNumber: 3, entries: [entry, bareEntry], frameAddress: "0x1234", frameStatus: "dwarf", inApp: true,
            trust: FrameTrustLabel(.scan))
        let bareFrame = SampleEventView.FrameView(frameNumber: 0, entries: [], frameAddress: nil, frameStatus: nil)
        let segment = SampleEventView.FrameSegment(
            folded: true, foldLabel: "2 system frames", segmentStart: 1, frames: [frame, bareFrame])
        samples += [
            ("info row", info), ("source line", source.sourceLines[1]), ("source", source),
            ("frame entry", entry), ("frame entry, optionals nil", bareEntry),
            ("frame", frame), ("frame, optionals nil", bareFrame), ("frame segment", segment),
            (
                "thread",
                SampleEventView.ThreadView(
                    threadHeading: "Thread 0", crashed: true, frames: [frame], hasFrames: true, segments: [segment],
                    walkEnd: Fixtures.hostile)
            ),
            (
                "thread, optionals nil",
                SampleEventView.ThreadView(threadHeading: "Thread 1", crashed: false, frames: [], hasFrames: false)
            ),
            ("frame trust", FrameTrustLabel(.framePointer)),
            (
                "breadcrumb",
                SampleEventView.BreadcrumbView(
                    crumbTime: TimeView(Fixtures.now), crumbLevel: "info", crumbCategory: "ui",
                    crumbMessage: Fixtures.hostile, crumbData: [info],
                    hasCrumbData: true)
            ),
            (
                "breadcrumb, optionals nil",
                SampleEventView.BreadcrumbView(
                    crumbTime: TimeView(Fixtures.now), crumbLevel: nil, crumbCategory: nil, crumbMessage: nil,
                    crumbData: [], hasCrumbData: false)
            ),
        ]
        return samples
    }

    @Test func namedFieldsGiveTheTreeMirrorGives() throws {
        let samples = Self.samples()
        #expect(samples.contains { $0.0 == "top issue row 0" } && samples.contains { $0.0 == "top issue row 1" })
        for (name, sample) in samples {
            let names = sample.mustacheFields.map(\.0)
            let labels = Mirror(reflecting: sample).children.compactMap(\.label)
            #expect(names == labels, "\(name): fields \(names), properties \(labels)")
            let named = Self.canonical(MustacheTree.convertOptional(sample))
            let reflected = Self.canonical(MustacheTree.convertOptional(sample, fieldsFirst: false))
            #expect(named == reflected, "\(name)")
            #expect(named.hasPrefix("{"), "\(name): \(named)")
        }
    }
}
