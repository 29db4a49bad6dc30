import FaultlineCore
import Foundation
import Testing

/// Grouping: the same crash from different builds, ASLR slides and releases is one issue; different crash
/// sites are different issues; fingerprints are stable (golden values).
@Suite struct GroupingTests {
    let appBuildA = BuildID("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")!
    let appBuildB = BuildID("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")!

    func crash(
        frames: [Frame], base: UInt64 = 0x5555_0000_0000, build: BuildID? = nil, release: String = "1.0",
        type: String? = "SIGSEGV", fingerprint: [String]? = nil, kind: ReportKind = .crash
    ) -> Report {
        Report(
            eventID: EventID(UUID().uuidString)!, kind: kind, timestamp: Date(timeIntervalSince1970: 1_700_000_000),
            app: AppInfo(version: release), error: ErrorInfo(type: type, message: "Segmentation fault"),
            threads: [
                ThreadInfo(name: "worker", crashed: false, frames: [Frame(function: "idle")]),
                ThreadInfo(name: "main", crashed: true, frames: frames),
            ],
            modules: [
                LoadedModule(
                    name: "/opt/app/bin/app", path: "/opt/app/bin/app", buildID: build ?? appBuildA, baseAddress: base,
                    size: 0x10_0000),
                LoadedModule(
                    name: "libc.so.6", path: "/lib/x86_64-linux-gnu/libc.so.6", baseAddress: 0x7f00_0000_0000,
                    size: 0x20_0000),
            ],
            fingerprint: fingerprint)
    }

    /// A symbolicated slot per frame, as the symbolicator would give them.
    func symbols(_ perFrame: [[ResolvedFrame]]) -> SymbolicatedReport {
        SymbolicatedReport(
            state: .complete,
            threads: [
                [SymbolicatedFrameSlot(frames: [], buildID: nil, status: "client")],
                perFrame.map {
                    SymbolicatedFrameSlot(frames: $0, buildID: nil, status: $0.isEmpty ? "not_found" : "dwarf")
                },
            ],
            missing: [])
    }

    @Test func golden() {
        // Given a fixed report, the fingerprint never changes (a change would split every stored issue).
        let report = crash(frames: [Frame(address: 0x5555_0000_1234), Frame(address: 0x5555_0000_2000)])
        let symbolicated = symbols([
            [
                ResolvedFrame(function: "parse(_:)", file: "/src/Parser.swift", line: 10, inlined: true),
                ResolvedFrame(function: "load()", file: "/src/Loader.swift", line: 20),
            ],
            [ResolvedFrame(function: "main", file: "/src/main.swift", line: 3)],
        ])
        let result = Grouping.group(report, symbols: symbolicated)
        #expect(result.source == .stack)
        // v2 and later: the blamed frame only (the innermost in-app frame).
        #expect(result.components == ["parse(_:)"])
        #expect(
            result.fingerprint.rawValue == "v3:\(FNV1a.hex64("faultline-grouping-v3\ncrash\ncomputed\nparse(_:)\n"))")
        #expect(result.fingerprint.rawValue == "v3:aa5d62c75b605da0")
        #expect(FNV1a.hex64("") == "cbf29ce484222325")
        #expect(FNV1a.hex64("a") == "af63dc4c8601ec8c")
        #expect(result.title == "SIGSEGV: Segmentation fault")
        #expect(result.titleRank == Grouping.TitleRank.signal)
        #expect(result.culprit == "parse(_:) (Parser.swift:10)")
    }

    @Test func sameCrashAcrossBuildsSlidesAndReleasesIsOneIssue() {
        let frames1 = symbols([
            [ResolvedFrame(function: "crashHere(int)", file: "a.c", line: 5)],
            [ResolvedFrame(function: "main", file: "a.c", line: 9)],
        ])
        let frames2 = symbols([
            [ResolvedFrame(function: "crashHere(int)", file: "a.c", line: 7)],
            [ResolvedFrame(function: "main", file: "a.c", line: 12)],
        ])
        let a = crash(frames: [Frame(address: 0x5555_0000_1000), Frame(address: 0x5555_0000_2000)], release: "1.0")
        let b = crash(
            frames: [Frame(address: 0x6666_0000_1400), Frame(address: 0x6666_0000_2800)], base: 0x6666_0000_0000,
            build: appBuildB, release: "2.0")
        #expect(Grouping.group(a, symbols: frames1).fingerprint == Grouping.group(b, symbols: frames2).fingerprint)
    }

    @Test func differentCrashSitesAreDifferentIssues() {
        let a = crash(frames: [Frame(address: 0x5555_0000_1000)])
        let one = Grouping.group(a, symbols: symbols([[ResolvedFrame(function: "parseHeader()")]]))
        let two = Grouping.group(a, symbols: symbols([[ResolvedFrame(function: "parseBody()")]]))
        #expect(one.fingerprint != two.fingerprint)
    }

    @Test func runtimeAndTrapFramesAreSkipped() {
        let report = crash(
            frames: [
                Frame(function: "__pthread_kill_implementation"), Frame(function: "raise"), Frame(function: "abort"),
                Frame(function: "__assert_fail"), Frame(function: "check(int)"), Frame(function: "main"),
            ], type: nil)
        let result = Grouping.group(report, symbols: nil)
        #expect(result.components == ["check"])
        #expect(result.title == "Assertion failed")
        // A Swift trap: the runtime-failure inline frame and stdlib frames go, the app's function stays, and the
        // failure names the issue.
        let swift = crash(frames: [Frame(address: 0x5555_0000_1000)], type: nil)
        let swiftResult = Grouping.group(
            swift,
            symbols: symbols([
                [
                    ResolvedFrame(function: "Swift runtime failure: Index out of range", inlined: true),
                    ResolvedFrame(function: "Swift.Array.subscript.getter : (Swift.Int) -> A", inlined: true),
                    ResolvedFrame(function: "pick(_:_:)", file: "main.swift", line: 2),
                ]
            ]))
        #expect(swiftResult.components == ["pick(_:_:)"])
        #expect(swiftResult.title == "Fatal error: Index out of range")
        #expect(swiftResult.titleRank == Grouping.TitleRank.cause)
    }

    @Test func normalizationRemovesCloneSuffixesAndSpecializations() {
        // Names as grouping labels them (clone suffixes, then FunctionNames.simplified): clones and specializations gone.
        #expect(Grouping.withoutCloneSuffixes("compute.constprop.0.isra.0") == "compute")
        #expect(Grouping.withoutCloneSuffixes("compute.cold") == "compute")
        #expect(FunctionNames.simplified("ns::f(int) [clone .cold]") == "ns::f")
        #expect(FunctionNames.simplified("generic specialization <Swift.Int> of app.sum<A>([A]) -> A") == "sum(_:)")
        #expect(FunctionNames.simplified("specialized app.sum([Swift.Int]) -> Swift.Int") == "sum(_:)")
        #expect(FunctionNames.simplified("std::vector<int>::at(unsigned long)") == "std::vector<int>::at")
        // And a C clone of the crashing function is the same issue as the function itself.
        let report = crash(frames: [Frame(function: "compute.constprop.0.isra.0")])
        #expect(
            Grouping.group(report, symbols: nil).fingerprint
                == Grouping.group(crash(frames: [Frame(function: "compute")]), symbols: nil).fingerprint)
    }

    @Test func unsymbolicatedFramesUseModuleAndOffsetAndIgnoreTheSlide() {
        let a = crash(frames: [Frame(address: 0x5555_0000_1234)])
        let b = crash(frames: [Frame(address: 0x7777_0000_1234)], base: 0x7777_0000_0000)
        let ra = Grouping.group(a, symbols: nil)
        #expect(ra.components == ["app+0x1234"])
        #expect(ra.fingerprint == Grouping.group(b, symbols: nil).fingerprint)
    }

    @Test func inAppFramesComeFirst() {
        // libc frames above the app's are not the crash site when an app frame exists.
        let report = crash(frames: [Frame(address: 0x7f00_0000_5000), Frame(address: 0x5555_0000_1000)])
        let result = Grouping.group(
            report, symbols: symbols([[ResolvedFrame(function: "memcpy")], [ResolvedFrame(function: "copyBuffer()")]]))
        #expect(result.components == ["copyBuffer()"])
    }

    @Test func nonFatalsGroupByTypeCodeAndTopFrames() {
        func error(code: String, message: String) -> Report {
            Report(
                eventID: EventID(UUID().uuidString)!, kind: .nonfatal, timestamp: Date(),
                error: ErrorInfo(type: "NSURLErrorDomain", code: code, message: message),
                threads: [
                    ThreadInfo(crashed: false, frames: [Frame(function: "fetch()"), Frame(function: "refresh()")])
                ])
        }
        let a = Grouping.group(error(code: "-1009", message: "offline at 10:01"), symbols: nil)
        let b = Grouping.group(error(code: "-1009", message: "offline at 11:17"), symbols: nil)
        let c = Grouping.group(error(code: "-1001", message: "timed out"), symbols: nil)
        #expect(a.source == .error)
        #expect(a.components == ["type:NSURLErrorDomain", "code:-1009", "fetch()", "refresh()"])
        #expect(a.fingerprint == b.fingerprint)
        #expect(a.fingerprint != c.fingerprint)
    }

    @Test func clientFingerprintWinsAndCanExtendTheDefault() {
        let report = crash(frames: [Frame(function: "f()")], fingerprint: ["checkout", "{{ default }}"])
        let result = Grouping.group(report, symbols: nil)
        #expect(result.source == .client)
        #expect(result.components == ["checkout", "f()"])
        let other = Grouping.group(crash(frames: [Frame(function: "g()")], fingerprint: ["checkout"]), symbols: nil)
        let same = Grouping.group(crash(frames: [Frame(function: "h()")], fingerprint: ["checkout"]), symbols: nil)
        #expect(other.fingerprint == same.fingerprint)
    }

    @Test func messagesMaskVariableParts() {
        #expect(
            Grouping.normalizeMessage("user 1234 not found at 0xdeadbeef")
                == Grouping.normalizeMessage("user 99 not found at 0x1"))
        #expect(Grouping.normalizeMessage("file 'a.txt' missing") == Grouping.normalizeMessage("file 'b.txt' missing"))
        #expect(Grouping.normalizeMessage("disk full") != Grouping.normalizeMessage("disk empty"))
    }

    @Test func fingerprintParsesItsOwnText() {
        let f = Fingerprint(version: 1, hash: "0123456789abcdef")
        #expect(Fingerprint(f.rawValue) == f)
        #expect(Fingerprint("v1:XYZ") == nil)
        #expect(Fingerprint("1:0123456789abcdef") == nil)
    }
}
