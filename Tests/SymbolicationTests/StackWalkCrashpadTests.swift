import FaultlineCore
import Formats
import Foundation
import Symbolication
import TestSupport
import Testing

/// The stack walker on real Crashpad minidumps (`Crashpad` in TestSupport: small C programs crash under the real
/// `crashpad_handler`), read with the minidump reader: the walked and symbolicated frames equal each program's call
/// chain, and Breakpad's processor (`SymbolicOracle`) finds the same frames given the same files. End-to-end: the
/// real `crashpad_handler` and `symbolic` come from PyPI.
@Suite(.serialized, .tags(.endToEnd)) struct StackWalkCrashpadTests {
    /// Each module's own file by build-id: the program and the test's library, and this machine's libc and loader
    /// (the dump was written here; Crashpad names libraries by file name only), keyed by the module's path.
    static func files(_ snapshot: ProcessSnapshot) -> [String: String] {
        var files: [String: String] = [:]
        for module in snapshot.modules {
            files[module.path] = LocalELFFiles.find(module)
        }
        return files
    }

    /// A scenario's crash, its snapshot, the modules' files (looked up once: each lookup reads candidate files'
    /// build-ids) and the walked threads.
    static func walk(
        _ scenario: Crashpad.Scenario
    ) throws -> (Crashpad.Crash, ProcessSnapshot, files: [String: String], [WalkedThread]) {
        let crash = try Crashpad.crash(scenario)
        let snapshot = try Minidump(bytes: crash.bytes).snapshot()
        let files = Self.files(snapshot)
        return (crash, snapshot, files, StackWalker { files[$0.path] }.walk(snapshot))
    }

    @Test(arguments: [Crashpad.Scenario.segfault, .abort, .library])
    func theWalkedCrashingThreadIsTheProgramsCallChain(scenario: Crashpad.Scenario) throws {
        let (crash, snapshot, files, threads) = try Self.walk(scenario)
        let crashed = try #require(threads.first)
        #expect(crashed.crashed)
        #expect(crashed.frames.first?.trust == .context)
        let names = try SelfDump.functions(crashed.frames, modules: snapshot.modules, files: files)
        // abort's frames in libc (raise, abort) come first: the chain starts at the first program function.
        let start = try #require(names.firstIndex(of: crash.callChain[0]), "\(names)")
        #expect(Array(names[start...].prefix(crash.callChain.count)) == crash.callChain, "\(names)")
        // With every file at hand, CFI walks all the way: no frame pointer guesses and no scanning.
        #expect(crashed.frames.dropFirst().allSatisfy { $0.trust == .cfi }, "\(crashed.frames)")
        #expect(crashed.end == .outermost)
    }

    @Test func theCrashOnASecondThreadIsWalkedFirstAndTheMainThreadToo() throws {
        let (crash, snapshot, files, threads) = try Self.walk(.secondThread)
        #expect(threads.count >= 2)
        #expect(threads.first?.crashed == true)
        #expect(threads.first?.name == "worker")
        let crashedNames = try SelfDump.functions(threads[0].frames, modules: snapshot.modules, files: files)
        #expect(Array(crashedNames.prefix(crash.callChain.count)) == crash.callChain, "\(crashedNames)")
        // The main thread waits in pthread_join, called by main.
        let mainThread = try #require(threads.dropFirst().first { !$0.crashed && $0.name != "worker" })
        #expect(try SelfDump.functions(mainThread.frames, modules: snapshot.modules, files: files).contains("main"))
    }

    @Test(arguments: Crashpad.Scenario.allCases)
    func breakpadsProcessorFindsTheSameFramesGivenTheSameFiles(scenario: Crashpad.Scenario) throws {
        let (crash, _, files, threads) = try Self.walk(scenario)
        let oracle = try SymbolicOracle.walk(dump: crash.dump, files: files)
        for thread in threads {
            let reference = try #require(oracle.threads.first { $0.id == thread.id }, "thread \(thread.id)")
            // symbolic gives a caller frame's instruction as its return address minus one: our `lookupAddress`.
            // Its scan may add frames past the outermost one, which CFI says does not exist: compare the frames it
            // found by context or CFI.
            let ours = thread.frames.map(\.lookupAddress)
            let theirs = reference.frames.filter { $0.trust == "cfi" || $0.trust == "context" }.map(\.instruction)
            #expect(
                Array(theirs.prefix(ours.count)) == ours,
                "\(scenario) thread \(thread.id): \(reference.frames) vs \(thread.frames)")
        }
        #expect(oracle.threads[oracle.requesting].id == threads.first?.id)
    }
}
