import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// Source context and readable frames on the issue page's sample event: lines around in-app frames (escaped, an
/// `<ol start>` with the frame's line marked), in-app frames marked, runs of system frames folded without JavaScript.
@Suite struct SourceContextPageTests {
    /// Answers one excerpt (with hostile text) and records what it was asked.
    actor FakeSourceReader: SourceContextReading {
        var asked: [[CodeLocation]] = []
        nonisolated func excerpts(for locations: [CodeLocation], project: ProjectID, radius: Int) async
            -> [CodeLocation: SourceExcerpt]
        {
            await record(locations)
            var out: [CodeLocation: SourceExcerpt] = [:]
            for location in locations
            where location.file == "/src/App/Process.swift" && project == Fixtures.demoID && radius == 5 {
                out[location] = SourceExcerpt(
                    firstLine: 37,
                    lines: (37...47).map { $0 == 42 ? "    let item = items[\(Fixtures.script)]" : "// line \($0)" },
                    focus: 42)
            }
            return out
        }
        func record(_ locations: [CodeLocation]) { asked.append(locations) }
    }

    static let libc = LoadedModule(
        name: "libc.so.6", path: "/usr/lib/x86_64-linux-gnu/libc.so.6", buildID: BuildID("cc00cc00"),
        baseAddress: 0x7f00_0000_0000,
        size: 0x20_0000)

    /// The fixture's report with system frames around the app's: raise, abort above; two libc frames below.
    static var report: Report {
        var report = Fixtures.report
        report.modules.append(libc)
        report.threads[1].frames = [
            Frame(address: 0x7f00_0000_1000, instructionKind: .programCounter),
            Frame(address: 0x7f00_0000_2000, instructionKind: .returnAddress),
            Frame(address: 0x1234, instructionKind: .returnAddress),
            Frame(address: 0x7f00_0000_3000, instructionKind: .returnAddress),
            Frame(address: 0x7f00_0000_4000, instructionKind: .returnAddress),
            Frame(address: 0x7f00_0000_5000, instructionKind: .returnAddress),
        ]
        return report
    }

    static var symbols: SymbolicatedReport {
        var symbols = Fixtures.symbols
        let app = SymbolicatedFrameSlot(
            frames: [ResolvedFrame(function: "App.process()", file: "/src/App/Process.swift", line: 42)],
            buildID: "aabbccdd",
            status: "dwarf")
        func system(_ name: String) -> SymbolicatedFrameSlot {
            SymbolicatedFrameSlot(frames: [ResolvedFrame(function: name)], buildID: "cc00cc00", status: "symbol_table")
        }
        symbols.threads[1] = [
            system("raise"), system("abort"), app, system("__libc_start_call_main"), system("__libc_start_main_impl"),
            system("_start"),
        ]
        return symbols
    }

    @Test func theSampleEventShowsSourceLinesAndFoldsSystemFrames() async throws {
        let reader = FakeSourceReader()
        var sources = Fixtures.sources()
        sources.event = { sample in sample.eventID == Fixtures.sample.eventID ? (Self.report, Self.symbols) : nil }
        sources.sourceContext = reader
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let store = PageStore()
        _ = try await renderer.render(sources: sources, now: Fixtures.now, since: nil) { path, html in
            await store.put(path, html)
        }
        let issue = try #require(await store.pages["demo/issues/1.html"])

        // Only in-app frames with a file and a line were asked for (the app frame and the worker thread's).
        let asked = await reader.asked.flatMap { $0 }
        #expect(asked.contains(CodeLocation(buildID: BuildID("aabbccdd")!, file: "/src/App/Process.swift", line: 42)))
        #expect(!asked.contains { $0.buildID.rawValue == "cc00cc00" })

        // The lines around the frame's line, numbered from 37, the frame's own line marked and escaped.
        #expect(issue.contains("<figcaption>Process.swift, lines 37–47 (line 42 marked)</figcaption>"))
        #expect(issue.contains("<ol class=\"source-lines\" start=\"37\">"))
        #expect(
            issue.contains(
                "<li class=\"source-focus\"><mark><code>    let item = items[&lt;script&gt;alert(1)&lt;/script&gt;]</code></mark>"
                    + "<span class=\"visually-hidden\"> (this frame’s line)</span></li>"))
        #expect(issue.contains("<li><code>// line 41</code></li>"))
        #expect(!issue.contains("<script>alert(1)</script>"))

        // System frames above and below the app's are folded, numbered as in the thread; the app frame is marked.
        #expect(
            issue.contains(
                "<details class=\"frames-folded\">\n<summary>2 system frames</summary>\n<ol class=\"frames\" start=\"0\">"
            ))
        #expect(issue.contains("<summary>3 system frames</summary>\n<ol class=\"frames\" start=\"3\">"))
        #expect(issue.contains("<ol class=\"frames\" start=\"2\">\n<li class=\"frame-in-app\">"))
        #expect(issue.contains("<span class=\"badge badge-in-app\">in app</span>"))
        #expect(issue.components(separatedBy: "<li class=\"frame-system\">").count - 1 == 5)
        // Threads with in-app frames only are not folded at all.
        #expect(issue.components(separatedBy: "<details class=\"frames-folded\">").count - 1 == 2)
    }

    @Test func segmentsFoldOnlyRunsOfSystemFramesAndNeverAWholeThread() {
        func frames(_ inApp: [Bool]) -> [SampleEventView.FrameView] {
            inApp.enumerated().map { SampleEventView.FrameView(frameNumber: $0, entries: [], inApp: $1) }
        }
        let mixed = SampleEventView.segments(frames([false, true, false, true, true, false, false]))
        #expect(mixed.map(\.folded) == [false, true])
        #expect(mixed.map(\.segmentStart) == [0, 5])
        #expect(mixed[0].frames.count == 5)  // a single system frame stays in line
        #expect(mixed[1].foldLabel == "2 system frames")
        let system = SampleEventView.segments(frames([false, false, false]))
        #expect(system.map(\.folded) == [false])
        #expect(SampleEventView.segments([]).isEmpty)
    }
}
