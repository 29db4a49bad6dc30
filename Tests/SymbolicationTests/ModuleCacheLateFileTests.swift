import FaultlineCore
import Foundation
import Symbolication
import Synchronization
import TestSupport
import Testing

/// The module cache when a better file arrives for a build-id it has answered from: real ELF files (gcc -g,
/// split with objcopy) and real libdw.
@Suite struct ModuleCacheLateFileTests {
    /// What the store holds, and its change counter.
    final class Files: Sendable {
        let state = Mutex<(paths: [DebugFileKind: String], generation: UInt64)>(([:], 0))
        func put(_ kind: DebugFileKind, _ path: String) {
            state.withLock {
                $0.paths[kind] = path
                $0.generation += 1
            }
        }
        /// Stored without telling anyone (the cache must still find a file it never had).
        func putQuietly(_ kind: DebugFileKind, _ path: String) { state.withLock { $0.paths[kind] = path } }
        var generation: UInt64 { state.withLock { $0.generation } }
        func path(_ kind: DebugFileKind) -> String? { state.withLock { $0.paths[kind] } }
    }

    @Test func aBetterFileReplacesTheModuleAnsweredFromAndTheOldOneIsClosed() async throws {
        let folder = try TempFolder("cache-late")
        let full = try ELFFixtures.compileC(ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O2", "-g"])
        let debug = folder.file("crashy.debug")
        let stripped = folder.file("crashy.stripped")
        try Command.check("objcopy", ["--only-keep-debug", full, debug])
        try Command.check("objcopy", ["--strip-debug", full, stripped])
        let buildID = try #require(BuildID(try ELFFixtures.readelfBuildID(full) ?? ""))
        let nm = try Command.check("nm", ["--defined-only", full])
        let line = try #require(nm.split(separator: "\n").first { $0.hasSuffix(" process_order") })
        let offset = try #require(UInt64(line.split(separator: " ")[0], radix: 16)) + 4
        let files = Files()
        let cache = ModuleCache(generation: { files.generation }) { _, kind, _ in files.path(kind) }
        let project = ProjectID(1)

        // Nothing stored: missing, and not remembered: a file stored without the counter moving is found at once.
        #expect(await cache.lookup(buildID: buildID, moduleOffset: offset, project: project) == .missingDebugFile)
        files.putQuietly(.executable, stripped)
        guard
            case .symbolOnly(let symbol, _) = await cache.lookup(
                buildID: buildID, moduleOffset: offset, project: project)
        else {
            Issue.record("the executable's symbol table was not used")
            return
        }
        #expect(symbol.function == "process_order")
        #expect(await cache.isOpen(stripped))

        // The debug file arrives: the next lookup answers from DWARF, and the executable's module is closed.
        files.put(.debuginfo, debug)
        guard case .resolved(let frames) = await cache.lookup(buildID: buildID, moduleOffset: offset, project: project)
        else {
            Issue.record("the debug file was not used")
            return
        }
        #expect(frames.last?.function == "process_order")
        #expect(frames.last?.line != nil)
        #expect(await cache.isOpen(debug))
        #expect(await !cache.isOpen(stripped))
        #expect(await cache.openCount == 1)
    }
}
