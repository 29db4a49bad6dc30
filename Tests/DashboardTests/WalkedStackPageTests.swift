import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// A minidump report's stacks as the server walked them, on the issue and event pages: each walked frame labelled
/// with how it was found (context, CFI, frame pointer, scanned; the scanned one marked and named as uncertain), a
/// legend of the labels, and why a walk stopped before the outermost frame. A stack the client sent shows none of it.
@Suite struct WalkedStackPageTests {
    static let end = "unwinding stopped: \(Fixtures.script)"

    /// The walk of a dump with the fixture's modules (App at 0x1000, libfoo.so at 0x100000): the crashed thread
    /// with one frame of each trust, stopped in App; a thread stopped in libfoo.so (no file uploaded for it); a thread
    /// that reached its outermost frame.
    static let walk = WalkedStacks(threads: [
        WalkedStacks.Thread(
            id: 7, name: "main", crashed: true,
            frames: [
                WalkedStacks.Frame(address: 0x1234, trust: .context),
                WalkedStacks.Frame(address: 0x1300, trust: .cfi),
                WalkedStacks.Frame(address: 0x100300, trust: .framePointer),
                WalkedStacks.Frame(address: 0x1400, trust: .scan),
            ],
            end: "frame limit"),
        WalkedStacks.Thread(
            id: 8, name: nil, crashed: false, frames: [WalkedStacks.Frame(address: 0x100100, trust: .context)],
            end: end),
        WalkedStacks.Thread(
            id: 9, name: "idle", crashed: false,
            frames: [
                WalkedStacks.Frame(address: 0x1500, trust: .context), WalkedStacks.Frame(address: 0x1600, trust: .cfi),
            ],
            end: WalkedStacks.Thread.outermostEnd),
    ])

    /// The fixture's report read back as `loadEvent` reads a minidump report: the walk applied.
    static var report: Report { Fixtures.report.applying(walk) }

    static var symbols: SymbolicatedReport {
        func app(_ name: String) -> SymbolicatedFrameSlot {
            SymbolicatedFrameSlot(frames: [ResolvedFrame(function: name)], buildID: "aabbccdd", status: "dwarf")
        }
        let lib = SymbolicatedFrameSlot(frames: [], buildID: "11223344", status: "missing_debug_file")
        return SymbolicatedReport(
            state: .partial,
            threads: [
                [app("crash_here"), app("caller"), lib, app("stale_scanned")], [lib],
                [app("wait"), app("thread_start")],
            ],
            missing: [MissingModule(buildID: "11223344", module: "libfoo.so")], walk: walk)
    }

    /// The `<li>` of the frame whose function is `function`, up to its end.
    static func frameItem(_ html: String, _ function: String) -> String? {
        guard let name = html.range(of: "<code class=\"function\">\(function)</code>"),
            let start = html.range(of: "<li class=", options: .backwards, range: html.startIndex..<name.lowerBound),
            let end = html.range(of: "</li>", range: name.upperBound..<html.endIndex)
        else { return nil }
        return String(html[start.lowerBound..<end.upperBound])
    }

    @Test func eachWalkedFrameSaysHowItWasFound() throws {
        let view = SampleEventView(report: Self.report, symbols: Self.symbols)
        let crashed = try #require(view.threads.first)
        #expect(crashed.crashed)
        #expect(crashed.frames.map { $0.trust?.trustText } == ["context", "CFI", "frame pointer", "scanned"])
        #expect(crashed.frames.map { $0.trust?.uncertain } == [false, false, false, true])
        #expect(
            crashed.frames.map { $0.trust?.trustClass }
                == FrameTrust.allCases.map { "badge badge-trust badge-trust-\($0.rawValue)" })
        #expect(view.trustLegend.map(\.trustText) == ["context", "CFI", "frame pointer", "scanned"])
        #expect(view.hasTrustLegend)

        // The walk that stopped says where (the last frame's module) and why; in a module without a file, what to
        // upload. The one that reached the outermost frame says nothing.
        #expect(
            crashed.walkEnd
                == "The walk stopped at frame 3 in App, before the outermost frame (frame limit): frames below it "
                + "may be missing.")
        let stopped = try #require(view.threads.dropFirst().first)
        #expect(
            stopped.walkEnd
                == "The walk stopped at frame 0 in libfoo.so, before the outermost frame (\(Self.end)): frames "
                + "below it may be missing. No file of libfoo.so is uploaded: upload libfoo.so itself with symupload (its "
                + ".eh_frame lets the walk go on).")
        #expect(view.threads.last?.walkEnd == nil)
    }

    @Test func aStackTheClientSentHasNoLabels() {
        let view = SampleEventView(report: Fixtures.report, symbols: Fixtures.symbols)
        #expect(view.threads.allSatisfy { thread in thread.frames.allSatisfy { $0.trust == nil } })
        #expect(view.threads.allSatisfy { $0.walkEnd == nil })
        #expect(view.trustLegend.isEmpty && !view.hasTrustLegend)
    }

    @Test func theIssuePageLabelsWalkedFramesAndSaysWhereAWalkStopped() async throws {
        var sources = Fixtures.sources()
        sources.event = { sample in sample.eventID == Fixtures.sample.eventID ? (Self.report, Self.symbols) : nil }
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let store = PageStore()
        _ = try await renderer.render(sources: sources, now: Fixtures.now, since: nil) { path, html in
            await store.put(path, html)
        }
        let issue = try #require(await store.pages["demo/issues/1.html"])

        // Each label is text (never colour alone), named for screen readers, explained in its tooltip.
        for (function, label) in [
            ("crash_here", FrameTrustLabel(.context)), ("caller", FrameTrustLabel(.cfi)),
            ("stale_scanned", FrameTrustLabel(.scan)),
        ] {
            let item = try #require(Self.frameItem(issue, function), "\(function)")
            #expect(
                item.contains(
                    "<span class=\"\(label.trustClass)\" title=\"\(label.trustExplanation)\">"
                        + "<span class=\"visually-hidden\">found by </span>\(label.trustText)</span>"),
                "\(item)")
        }
        // The frame-pointer frame has no function (its module has no file): its label is there all the same.
        #expect(issue.contains("<span class=\"visually-hidden\">found by </span>frame pointer</span>"))
        // The scanned frame is marked and says in words that it may be wrong; the others do not.
        let scanned = try #require(Self.frameItem(issue, "stale_scanned"))
        #expect(scanned.hasPrefix("<li class=\"frame-in-app frame-uncertain\">"))  // App is the demo's own code
        #expect(
            scanned.contains("<span class=\"frame-warning\">may be a stale return address, not a real caller</span>"))
        #expect(issue.components(separatedBy: "frame-uncertain").count - 1 == 1)
        #expect(issue.components(separatedBy: "class=\"frame-warning\"").count - 1 == 1)

        // The legend explains the labels the event's frames carry.
        #expect(issue.contains("<details class=\"trust-legend\">"))
        #expect(
            issue.contains(
                "<div><dt><span class=\"badge badge-trust badge-trust-scan\">scanned</span></dt><dd>Found by scanning"))

        // Where walks stopped short, escaped; nothing under the thread that reached its outermost frame.
        #expect(
            issue.contains(
                "<p class=\"walk-end\">The walk stopped at frame 3 in App, before the outermost frame (frame limit)"))
        #expect(
            issue.contains(
                "(unwinding stopped: &lt;script&gt;alert(1)&lt;/script&gt;): frames below it may be missing. "
                    + "No file of libfoo.so is uploaded"))
        #expect(!issue.contains("<script>alert(1)</script>"))
        #expect(issue.components(separatedBy: "<p class=\"walk-end\">").count - 1 == 2)
    }

    @Test func theEventPageShowsTheSameLabels() async throws {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let page = try await renderer.eventPage(
            project: Fixtures.demo, eventID: Fixtures.sample.eventID.rawValue,
            event: (Self.report, Self.symbols, IssueID(1)))
        #expect(page.contains("<span class=\"visually-hidden\">found by </span>CFI</span>"))
        #expect(page.contains("<details class=\"trust-legend\">"))
        #expect(page.components(separatedBy: "<p class=\"walk-end\">").count - 1 == 2)

        let client = try await renderer.eventPage(
            project: Fixtures.demo, eventID: Fixtures.sample.eventID.rawValue,
            event: (Fixtures.report, Fixtures.symbols, IssueID(1)))
        #expect(!client.contains("badge-trust"))
        #expect(!client.contains("trust-legend"))
        #expect(!client.contains("walk-end"))
    }
}
