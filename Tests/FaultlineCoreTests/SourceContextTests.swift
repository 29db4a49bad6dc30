import FaultlineCore
import Foundation
import Testing

/// Source context rules: path normalisation (debuginfod and bundle keys), excerpts around a line, and which
/// frames are in-app (as grouping decides).
@Suite struct SourceContextTests {
    @Test func pathsAreNormalisedLexically() {
        #expect(SourcePaths.normalized("/src/app/main.c") == "/src/app/main.c")
        #expect(SourcePaths.normalized("//src//app/./main.c") == "/src/app/main.c")
        #expect(SourcePaths.normalized("/src/lib/../app/main.c") == "/src/app/main.c")
        #expect(SourcePaths.normalized("/../../etc/passwd") == "/etc/passwd")  // never above the root
        #expect(SourcePaths.normalized("/src/app/") == "/src/app")
        #expect(SourcePaths.normalized("src/./a.c") == "src/a.c")
        #expect(SourcePaths.normalized("../a.c") == "../a.c")
        #expect(SourcePaths.normalized("") == nil)
        #expect(SourcePaths.normalized(".") == nil)
        #expect(SourcePaths.normalized("/a\u{0}b") == nil)
        #expect(SourcePaths.normalized("/" + String(repeating: "a", count: SourcePaths.maxBytes)) == nil)
    }

    let text = Array((1...20).map { "line \($0)" }.joined(separator: "\n").utf8) + [0x0A]

    @Test func excerptsHoldTheLinesAroundTheFocus() throws {
        let middle = try #require(SourceExcerpt.around(10, radius: 5, in: text))
        #expect(middle.firstLine == 5)
        #expect(middle.lines == (5...15).map { "line \($0)" })
        #expect(middle.focus == 10)
        let top = try #require(SourceExcerpt.around(2, radius: 5, in: text))
        #expect(top.firstLine == 1)
        #expect(top.lines.count == 7)
        let bottom = try #require(SourceExcerpt.around(20, radius: 5, in: text))
        #expect(bottom.lines == (15...20).map { "line \($0)" })  // no empty line after the final newline
        #expect(SourceExcerpt.around(21, radius: 5, in: text) == nil)
        #expect(SourceExcerpt.around(0, radius: 5, in: text) == nil)
        #expect(SourceExcerpt.around(Int.max, radius: 5, in: text) == nil)
        #expect(SourceExcerpt.around(3, radius: 1000, in: text) == nil)
    }

    @Test func longLinesAndCarriageReturnsAndBadUTF8AreTamed() throws {
        let long = Array(String(repeating: "x", count: 5000).utf8)
        let bytes = Array("a\r\n".utf8) + long + [0x0A, 0xFF, 0xFE, 0x0A]
        let excerpt = try #require(SourceExcerpt.around(2, radius: 1, in: bytes))
        #expect(excerpt.lines[0] == "a")
        #expect(excerpt.lines[1].utf8.count <= SourceExcerpt.maxLineBytes + 3)
        #expect(excerpt.lines[1].hasSuffix("…"))
        #expect(excerpt.lines[2] == "\u{FFFD}\u{FFFD}")
    }

    @Test func inAppFramesFollowTheGroupingRules() {
        let app = BuildID("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")!
        let report = Report(
            eventID: EventID(UUID().uuidString)!, kind: .crash, timestamp: Date(timeIntervalSince1970: 1_700_000_000),
            threads: [
                ThreadInfo(
                    crashed: true,
                    frames: [
                        Frame(address: 0x7f00_0000_1000), Frame(address: 0x5555_0000_1000),
                        Frame(address: 0x7e00_0000_1000),
                        Frame(address: 0x5555_0000_2000),
                    ])
            ],
            modules: [
                LoadedModule(
                    name: "app", path: "/srv/app/app", buildID: app, baseAddress: 0x5555_0000_0000, size: 0x10_0000),
                LoadedModule(
                    name: "libc.so.6", path: "/usr/lib/x86_64-linux-gnu/libc.so.6", baseAddress: 0x7f00_0000_0000,
                    size: 0x80_0000),
                LoadedModule(
                    name: "libvendor.so", path: "/srv/app/libvendor.so", baseAddress: 0x7e00_0000_0000, size: 0x10_0000),
            ])
        let symbols = SymbolicatedReport(
            state: .complete,
            threads: [
                [
                    SymbolicatedFrameSlot(
                        frames: [ResolvedFrame(function: "raise")], buildID: nil, status: "symbol_table"),
                    SymbolicatedFrameSlot(
                        frames: [ResolvedFrame(function: "divide", file: "/src/a.c", line: 4)], buildID: app.rawValue,
                        status: "dwarf"),
                    SymbolicatedFrameSlot(
                        frames: [ResolvedFrame(function: "vendor_call")], buildID: nil, status: "symbol_table"),
                    SymbolicatedFrameSlot(
                        frames: [ResolvedFrame(function: "abort")], buildID: app.rawValue, status: "dwarf"),
                ]
            ],
            missing: [])
        // libc is a system library, `abort` a runtime frame even inside the app; the vendor library is in-app by default…
        #expect(Grouping.inAppFrames(report, thread: 0, symbols: symbols, rules: .none) == [false, true, true, false])
        // …and not once the project's rules exclude it.
        #expect(
            Grouping.inAppFrames(report, thread: 0, symbols: symbols, rules: InAppRules(exclude: ["libvendor*"]))
                == [false, true, false, false])
        #expect(Grouping.inAppFrames(report, thread: 3, symbols: symbols, rules: .none).isEmpty)
    }
}
