import FaultlineCore
import Foundation
import Testing

/// A symbolicator that answers from a table and records what it was asked.
actor TableSymbolicator: AddressSymbolicating {
    var asked: [(BuildID, UInt64)] = []
    let known: [BuildID: [UInt64: AddressLookup]]
    init(_ known: [BuildID: [UInt64: AddressLookup]]) { self.known = known }
    func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
        asked.append((buildID, moduleOffset))
        guard let table = known[buildID] else { return .missingDebugFile }
        return table[moduleOffset] ?? .notFound
    }
}

@Suite struct SymbolicationRulesTests {
    let app = BuildID("aa11")!
    let lib = BuildID("bb22")!

    func report(_ frames: [Frame], modules: [LoadedModule]) -> Report {
        Report(
            eventID: EventID(String(repeating: "a", count: 32))!, kind: .crash,
            timestamp: Date(timeIntervalSince1970: 0),
            threads: [ThreadInfo(crashed: true, frames: frames)], modules: modules)
    }

    @Test func findsTheModuleAndAdjustsReturnAddresses() async {
        let modules = [
            LoadedModule(name: "app", buildID: app, baseAddress: 0x1000, size: 0x1000),
            LoadedModule(name: "lib", buildID: lib, baseAddress: 0x8000),
        ]
        #expect(SymbolicationRules.module(for: 0x1fff, in: modules)?.name == "app")
        #expect(SymbolicationRules.module(for: 0x2000, in: modules) == nil)  // past app's size, before lib
        #expect(SymbolicationRules.module(for: 0x9000, in: modules)?.name == "lib")  // no size: up to the end
        #expect(SymbolicationRules.lookupAddress(Frame(address: 0x10), index: 0) == 0x10)
        #expect(SymbolicationRules.lookupAddress(Frame(address: 0x10), index: 1) == 0xf)
        #expect(
            SymbolicationRules.lookupAddress(Frame(address: 0x10, instructionKind: .programCounter), index: 3) == 0x10)
        #expect(
            SymbolicationRules.lookupAddress(Frame(address: 0x10, instructionKind: .returnAddress), index: 0) == 0xf)
    }

    @Test func statesFollowWhatResolved() async {
        let modules = [
            LoadedModule(name: "app", buildID: app, baseAddress: 0x1000, size: 0x1000),
            LoadedModule(name: "lib", buildID: lib, baseAddress: 0x8000, size: 0x1000),
        ]
        let symbols = TableSymbolicator([
            app: [
                0x10: .resolved([ResolvedFrame(function: "f", file: "a.c", line: 3)]),
                0x1f: .symbolOnly(ResolvedFrame(function: "g"), offset: 4),
            ]
        ])
        let complete = await SymbolicationRules.symbolicate(
            report([Frame(address: 0x1010)], modules: modules), project: ProjectID(1), with: symbols)
        #expect(complete.state == .complete)
        #expect(complete.threads[0][0].frames.first?.function == "f")

        // A caller frame (index 1) is looked up one byte earlier: 0x1020 - 1 - 0x1000 = 0x1f.
        let partial = await SymbolicationRules.symbolicate(
            report(
                [Frame(address: 0x1010), Frame(address: 0x1020), Frame(address: 0x8010), Frame(address: 0x5000)],
                modules: modules),
            project: ProjectID(1), with: symbols)
        #expect(partial.state == .partial)
        #expect(partial.threads[0].map(\.status) == ["dwarf", "symbol_table", "missing_debug_file", "no_module"])
        #expect(partial.missing == [MissingModule(buildID: "bb22", module: "lib")])

        let none = await SymbolicationRules.symbolicate(
            report([Frame(address: 0x8010)], modules: modules), project: ProjectID(1), with: symbols)
        #expect(none.state == .missing)
        let clientSide = await SymbolicationRules.symbolicate(
            report([Frame(function: "main", file: "m.c", line: 1)], modules: modules), project: ProjectID(1),
            with: symbols)
        #expect(clientSide.state == .notNeeded)
        #expect(clientSide.threads[0][0].status == "client")
    }

    @Test func touchedBuildIDsAreEveryBuildIDOnceSorted() {
        var rng = SystemRandomNumberGenerator()
        let ids = ["cc", "aa", "bb", "dd", "ee"]
        for _ in 0..<200 {
            // Runs of one module and switches between modules, in several threads, with unresolved slots.
            let threads = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                (0..<Int.random(in: 0...12, using: &rng)).map { _ in
                    SymbolicatedFrameSlot(
                        frames: [], buildID: Bool.random(using: &rng) ? nil : ids[Int.random(in: 0..<3, using: &rng)],
                        status: "not_found",
                        offset: 1)
                }
            }
            let missing = Bool.random(using: &rng) ? [MissingModule(buildID: "dd", module: "libd.so")] : []
            let site =
                Bool.random(using: &rng)
                ? SymbolicatedFrameSlot(frames: [], buildID: "ee", status: "dwarf", offset: 2) : nil
            let report = SymbolicatedReport(state: .partial, threads: threads, missing: missing, messageSite: site)
            var expected = Set(threads.joined().compactMap(\.buildID)).union(missing.map(\.buildID))
            if let site { expected.insert("ee") }
            #expect(report.touchedBuildIDs == expected.sorted())
        }
    }
}
