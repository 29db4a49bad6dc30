import FaultlineCore
import Foundation
import Testing

/// Grouping v2: the blamed frame decides, titles name the cause, and the issue decisions are pure.
/// Frame names here are the forms the runtime's demangler gives for real swiftc output (see the end-to-end
/// corpus test for the same rules on real crashes).
@Suite struct GroupingV2Tests {
    let app = BuildID("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")!

    func crash(_ frames: [Frame], description: String? = "Illegal instruction", message: String? = nil) -> Report {
        var report = Report(
            eventID: EventID(UUID().uuidString)!, kind: .crash, timestamp: Date(timeIntervalSince1970: 1_700_000_000),
            error: description.map { ErrorInfo(type: $0, message: $0) },
            threads: [ThreadInfo(crashed: true, frames: frames)],
            modules: [
                LoadedModule(
                    name: "app", path: "/srv/app/app", buildID: app, baseAddress: 0x5555_0000_0000, size: 0x10_0000),
                LoadedModule(
                    name: "libswiftCore.so", path: "/usr/lib/swift/linux/libswiftCore.so",
                    baseAddress: 0x7f00_0000_0000, size: 0x80_0000),
                LoadedModule(
                    name: "libvendor.so", path: "/srv/app/libvendor.so", baseAddress: 0x7e00_0000_0000, size: 0x10_0000),
            ])
        report.crashMessage = message
        return report
    }

    func symbols(_ slots: [[ResolvedFrame]]) -> SymbolicatedReport {
        SymbolicatedReport(
            state: .complete, threads: [slots.map { SymbolicatedFrameSlot(frames: $0, buildID: nil, status: "dwarf") }],
            missing: [])
    }

    let item = ResolvedFrame(
        function: "app.Inventory.item(at: Swift.Int) -> Swift.Int", file: "/src/app/main.swift", line: 3)

    /// -O: one frame, the inline chain of the trap. -Onone: the runtime's `_assertionFailure` in libswiftCore, the
    /// specialized subscript, then the app's frames. Both are the issue of `Inventory.item(at:)`.
    @Test func optimizedAndDebugBuildsOfOneCrashSiteAreOneIssue() {
        let optimized = Grouping.group(
            crash([Frame(address: 0x5555_0000_1713)]),
            symbols: symbols([
                [
                    ResolvedFrame(
                        function: "Swift runtime failure: Index out of range", file: "<compiler-generated>",
                        inlined: true),
                    ResolvedFrame(
                        function:
                            "generic specialization <Swift.Int> of Swift.Array._checkSubscript(_: Swift.Int, wasNativeTypeChecked: Swift.Bool) -> Swift._DependenceToken",
                        file: "<compiler-generated>", inlined: true),
                    ResolvedFrame(
                        function:
                            "generic specialization <Swift.Int> of Swift.Array.subscript.getter : (Swift.Int) -> A",
                        file: "<compiler-generated>", inlined: true),
                    item,
                ]
            ]))
        let debug = Grouping.group(
            crash([
                Frame(address: 0x7f00_0016_df7f), Frame(address: 0x7f00_002f_961f), Frame(address: 0x5555_0000_21d1),
                Frame(address: 0x5555_0000_3488),
            ]),
            symbols: symbols([
                [
                    ResolvedFrame(
                        function:
                            "closure #1 (Swift.UnsafeBufferPointer<Swift.UInt8>) -> () in closure #1 (Swift.UnsafeBufferPointer<Swift.UInt8>) -> () in Swift._assertionFailure(_: Swift.StaticString, _: Swift.StaticString, file: Swift.StaticString, line: Swift.UInt, flags: Swift.UInt32) -> Swift.Never"
                    )
                ],
                [
                    ResolvedFrame(
                        function:
                            "Swift._assertionFailure(_: Swift.StaticString, _: Swift.StaticString, file: Swift.StaticString, line: Swift.UInt, flags: Swift.UInt32) -> Swift.Never"
                    )
                ],
                [item],
                [ResolvedFrame(function: "main", file: "/src/app/main.swift", line: 31)],
            ]))
        #expect(optimized.components == debug.components)
        #expect(optimized.fingerprint == debug.fingerprint)
        #expect(optimized.culprit == "Inventory.item(at:) (main.swift:3)")
        #expect(debug.culprit == optimized.culprit)
        #expect(optimized.title == "Fatal error: Index out of range")
        // Without the message the debug build only knows that the runtime stopped it.
        #expect(debug.title == "Fatal error")
        #expect(debug.titleRank < optimized.titleRank)
    }

    @Test func theCrashMessageNamesTheCauseWhenNoFrameDoes() {
        let report = crash(
            [Frame(address: 0x5555_0000_2480)], message: "app/main.swift:14: Fatal error: Division by zero\n")
        let result = Grouping.group(
            report,
            symbols: symbols([
                [
                    ResolvedFrame(
                        function: "app.Splitter.share(_: Swift.Int, among: Swift.Int) -> Swift.Int",
                        file: "/src/app/main.swift", line: 14)
                ]
            ]))
        #expect(result.title == "Fatal error: Division by zero")
        #expect(result.titleRank == Grouping.TitleRank.cause)
        #expect(result.components == ["Splitter.share(_:among:)"])
    }

    @Test func wrappersThunksAndCompilerGeneratedFramesAreNeverBlamed() {
        let result = Grouping.group(
            crash([
                Frame(address: 0x5555_0000_2a2a), Frame(address: 0x5555_0000_30a2), Frame(address: 0x5555_0000_2e2f),
                Frame(address: 0x5555_0000_27e7),
            ]),
            symbols: symbols([
                [
                    ResolvedFrame(
                        function:
                            "protocol witness for Swift.IteratorProtocol.next() -> A.Element? in conformance Swift.IndexingIterator<A> : Swift.IteratorProtocol in Swift",
                        file: "<compiler-generated>")
                ],
                [
                    ResolvedFrame(
                        function:
                            "partial apply for closure #1 (Swift.String) -> Swift.Int in app.Parser.run(Swift.Int) -> [Swift.Int]",
                        file: "<compiler-generated>")
                ],
                [
                    ResolvedFrame(
                        function: "closure #1 (Swift.String) -> Swift.Int in app.Parser.run(Swift.Int) -> [Swift.Int]",
                        file: "/src/app/main.swift", line: 26)
                ],
                [
                    ResolvedFrame(
                        function: "app.Parser.run(Swift.Int) -> [Swift.Int]", file: "/src/app/main.swift", line: 26)
                ],
            ]))
        #expect(result.components.count == 1)
        #expect(result.components[0].hasPrefix("closure #1 in "))
        #expect(!result.components[0].contains("->"))
        #expect(result.culprit?.hasSuffix("(main.swift:26)") == true)
    }

    @Test func standardLibraryCodeInlinedIntoTheAppIsNotTheApps() {
        let result = Grouping.group(
            crash([Frame(address: 0x5555_0000_1000), Frame(address: 0x5555_0000_2000)]),
            symbols: symbols([
                [
                    ResolvedFrame(
                        function: "Swift.Dictionary.subscript.getter : (A) -> B?", file: "/src/app/main.swift", line: 9)
                ],
                [
                    ResolvedFrame(
                        function: "app.Cache.lookup(Swift.String) -> Swift.Int", file: "/src/app/main.swift", line: 9)
                ],
            ]))
        #expect(result.components == ["Cache.lookup(_:)"])
    }

    @Test func projectRulesDecideWhichModulesAreInApp() {
        let report = crash([Frame(address: 0x7e00_0000_1000), Frame(address: 0x5555_0000_2000)])
        let frames = symbols([[ResolvedFrame(function: "vendor_parse")], [ResolvedFrame(function: "load_config")]])
        #expect(Grouping.group(report, symbols: frames).components == ["vendor_parse"])
        let excluded = Grouping.group(report, symbols: frames, inApp: InAppRules(exclude: ["libvendor*"]))
        #expect(excluded.components == ["load_config"])
        // A system library made in-app by a rule.
        let core = crash([Frame(address: 0x7f00_0000_1000), Frame(address: 0x5555_0000_2000)])
        let coreFrames = symbols([[ResolvedFrame(function: "swift_retain")], [ResolvedFrame(function: "load_config")]])
        #expect(Grouping.group(core, symbols: coreFrames).components == ["load_config"])
        #expect(
            Grouping.group(core, symbols: coreFrames, inApp: InAppRules(include: ["libswiftCore.so"])).components == [
                "swift_retain"
            ])
        #expect(InAppRules.glob("lib*.so.?", matches: "libz.so.1"))
        #expect(!InAppRules.glob("lib*.so.?", matches: "libz.so.12"))
        #expect(InAppRules.glob("*", matches: ""))
        #expect(
            !InAppRules.glob(String(repeating: "*a", count: 64), matches: String(repeating: "a", count: 4000) + "b"))
    }

    @Test func titlesNeverRepeatAndTheSignalIsTheLastResort() {
        let segv = Grouping.group(
            crash([Frame(address: 0x5555_0000_272c)], description: "Bad pointer dereference"),
            symbols: symbols([[ResolvedFrame(function: "app.Buffer.peek(Swift.Int) -> Swift.Int")]]))
        #expect(segv.title == "SIGSEGV: Bad pointer dereference")
        let ill = Grouping.group(crash([Frame(address: 0x5555_0000_272c)]), symbols: nil)
        #expect(ill.title == "SIGILL: Illegal instruction")
        var exception = crash(
            [Frame(function: "shop::payments::charge(shop::Basket<int> const&, int)")], description: nil)
        exception.crashMessage =
            "terminate called after throwing an instance of 'std::runtime_error'\n  what():  too expensive\n"
        let cpp = Grouping.group(exception, symbols: nil)
        #expect(cpp.title == "std::runtime_error: too expensive")
        var sentry = crash([Frame(function: "f")], description: nil)
        sentry.error = ErrorInfo(type: "ValueError", message: "ValueError: bad input")
        #expect(Grouping.group(sentry, symbols: nil).title == "ValueError: bad input")
        sentry.error = ErrorInfo(type: "KeyError", message: "'id'")
        #expect(Grouping.group(sentry, symbols: nil).title == "KeyError: 'id'")
    }

    @Test func crashMessagesAreUnderstood() {
        let swift = CrashMessage.parse(
            "app/main.swift:17: Fatal error: missing configuration db2\napp/main.swift:17: Fatal error: missing configuration db2"
        )
        #expect(
            swift
                == CrashMessage(
                    kind: .swiftFatalError, type: "Fatal error", text: "missing configuration db2",
                    file: "app/main.swift", line: 17))
        #expect(CrashMessage.parse("Fatal error")?.title == "Fatal error")
        #expect(
            CrashMessage.parse("Swift/ContiguousArrayBuffer.swift:692: Precondition failed: Index out of range")?.title
                == "Precondition failed: Index out of range")
        #expect(
            CrashMessage.parse("a.out: t.c:5: main: Assertion `n > 0' failed.")
                == CrashMessage(kind: .assertion, type: "Assertion failed", text: "n > 0", file: "t.c", line: 5))
        #expect(CrashMessage.parse("terminate called without an active exception")?.kind == .uncaughtCppException)
        #expect(CrashMessage.parse("   \n ") == nil)
        #expect(CrashMessage.parse("something odd happened\nmore")?.title == "something odd happened")
        // The backtracer's banner and printed frames are not the message.
        #expect(CrashMessage.parse("\n*** Signal 4: Backtracing from 0x55eae28753b9... done ***\n") == nil)
        #expect(
            CrashMessage.parse(
                "*** Signal 4: Backtracing from 0x1... done ***\nSwift/IntegerTypes.swift:9012: Fatal error: Division by zero"
            )?.title
                == "Fatal error: Division by zero")
        #expect(
            CrashMessage.parse(
                "Current stack trace:\n0    libswiftCore.so    0x00007f0000001234 _assertionFailure + 12") == nil)
        // Hostile: long, no newlines, odd colons — bounded, no trap.
        let long = String(repeating: "x:1: ", count: 100_000) + "Fatal error: y"
        #expect((CrashMessage.parse(long)?.text.count ?? 0) <= 500)
        #expect(CrashMessage.parse("::::: Fatal error::") != nil)
    }
}

/// The issue decisions, without SQL.
@Suite struct IssueFilingTests {
    func grouping(rank: Int = Grouping.TitleRank.cause) -> GroupingResult {
        GroupingResult(
            fingerprint: Fingerprint(version: Grouping.version, hash: "0123456789abcdef"), source: .stack,
            components: ["f()"], title: "Fatal error: x", culprit: "f()", titleRank: rank)
    }

    func input(
        current: IssueFiling.IssueState? = nil, reportVersion: Int = Grouping.version,
        target: IssueFiling.IssueState? = nil,
        seen: Bool = false, release: String? = "2.0"
    ) -> IssueFiling.Input {
        IssueFiling.Input(
            grouping: grouping(), current: current, reportGroupingVersion: reportVersion, target: target,
            targetSeenInRelease: seen, release: release, alertOnNewIssue: true, alertOnRegression: true,
            newIssues: target == nil ? IssueFiling.NewIssueBudget(cap: 100, createdInWindow: 0, overflow: nil) : nil)
    }

    func issue(
        _ id: Int64, _ status: IssueStatus = .open, version: Int = Grouping.version,
        rank: Int = Grouping.TitleRank.cause
    )
        -> IssueFiling.IssueState
    {
        IssueFiling.IssueState(id: id, status: status, groupingVersion: version, titleRank: rank)
    }

    @Test func aFirstReportMakesAnIssueAndAnnouncesIt() {
        #expect(
            IssueFiling.decide(input()) == [
                .createIssue(statusFrom: nil), .move(from: nil, carryHistory: false), .alertNewIssue,
            ])
    }

    @Test func aReportThatMovesBecauseItsSymbolsArrivedIsNotNews() {
        #expect(
            IssueFiling.decide(input(current: issue(1))) == [
                .createIssue(statusFrom: nil), .move(from: 1, carryHistory: false),
            ])
    }

    @Test func aClosedIssueInANewReleaseRegressesOnceAndAMutedOneStaysQuiet() {
        #expect(
            IssueFiling.decide(input(target: issue(7, .closed))) == [
                .move(from: nil, carryHistory: false), .reopenRegressed, .alertRegression,
            ])
        #expect(
            IssueFiling.decide(input(target: issue(7, .closed), seen: true)) == [.move(from: nil, carryHistory: false)])
        #expect(IssueFiling.decide(input(target: issue(7, .muted))) == [.move(from: nil, carryHistory: false)])
    }

    @Test func aMoreSpecificTitleReplacesAVaguerOne() {
        #expect(IssueFiling.decide(input(current: issue(3, rank: 1), target: issue(3, rank: 1))) == [.retitle])
        #expect(IssueFiling.decide(input(current: issue(3), target: issue(3))) == [])
    }

    @Test func aNewGroupingVersionCarriesIssuesOverWithoutAlerts() {
        // The first report of an old issue gives it the new fingerprint: same id, status, counts, history.
        #expect(
            IssueFiling.decide(input(current: issue(5, .closed, version: 1), reportVersion: 1)) == [.rekey(issue: 5)])
        // Another old issue's report lands in that one (two v1 issues were one crash site): merged, its alerts follow.
        #expect(
            IssueFiling.decide(input(current: issue(6, .open, version: 1), reportVersion: 1, target: issue(5, .closed)))
                == [.move(from: 6, carryHistory: true)])
        // A report of an already carried-over issue that groups differently now: the issue splits, keeping its status.
        #expect(
            IssueFiling.decide(input(current: issue(5, .muted), reportVersion: 1))
                == [.createIssue(statusFrom: 5), .move(from: 5, carryHistory: false)])
    }
}
