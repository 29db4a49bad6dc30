import FaultlineCore
import Foundation
import TestSupport
import Testing

@testable import Formats

/// The source bundle reader on real bundles (the real `sentry-cli debug-files bundle-sources` over a real `gcc -g`
/// program) and on hostile ones (truncated, offsets outside the file, a zip bomb, damaged entries, entries sharing
/// their data); the cache of opened bundles and the pool they are read on.
@Suite struct SourceBundleTests {
    /// A `gcc -g` program and the bundle the real `sentry-cli debug-files bundle-sources` (3.8.2) made of it,
    /// committed beside the script that made them (`Fixtures/source-bundle/sentry-cli/make-fixtures.sh`), so these
    /// tests need neither sentry-cli nor gcc.
    struct Program {
        static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/source-bundle/sentry-cli").path
        /// Where the program was built: the folder its DWARF and the bundle's manifest name.
        let buildFolder = "/tmp/faultline-source-bundle-fixture"
        let binary = Program.fixtures + "/divide"
        let bundle = Program.fixtures + "/divide.src.zip"
        /// The source file's path as the bundle names it.
        var sourcePath: String { buildFolder + "/divide.c" }
        /// The source file's bytes, from the copy committed beside the bundle.
        func source() throws -> [UInt8] {
            Array(try Data(contentsOf: URL(fileURLWithPath: Program.fixtures + "/divide.c")))
        }
    }

    @Test func readsTheManifestAndFilesOfARealBundle() throws {
        let program = Program()
        let bundle = try SourceBundle(try FileByteSource(path: program.bundle))
        // The manifest names the binary by its GNU build-id, as readelf reads it.
        let buildID = try #require(try ELFFixtures.readelfBuildID(program.binary))
        #expect(bundle.manifest.codeID?.rawValue == buildID)
        #expect(bundle.manifest.architecture == "x86_64")
        #expect(bundle.manifest.objectName == "divide")
        // The source file comes back byte for byte, whichever way the path is written.
        let original = try program.source()
        #expect(bundle.paths.contains(program.sourcePath))
        #expect(try bundle.file(atPath: program.sourcePath) == original)
        let parent = (program.buildFolder as NSString).lastPathComponent
        #expect(try bundle.file(atPath: program.buildFolder + "/./divide.c") == original)
        #expect(try bundle.file(atPath: "/" + program.buildFolder + "/../" + parent + "/divide.c") == original)
        #expect(try bundle.file(atPath: "/nowhere/divide.c") == nil)
        // The inspector takes it for what it is: sources of that build-id.
        let facts = try DebugFileFormatInspector().inspect(path: program.bundle)
        #expect(facts.kinds == [.sources])
        #expect(facts.buildID?.rawValue == buildID)
        #expect(DifObjectClass.of(facts) == .src)
        // …and the binary is still an ELF file to it.
        #expect(try DebugFileFormatInspector().inspect(path: program.binary).kinds == [.debuginfo, .executable])
    }

    @Test func excerptsComeFromEachBundleOpenedOnce() async throws {
        let program = Program()
        let rawID = try #require(try ELFFixtures.readelfBuildID(program.binary))
        let buildID = try #require(BuildID(rawID))
        let opened = Counter()
        let reader = SourceBundleExcerpts { id, _ in
            opened.increment()
            return id == buildID ? program.bundle : nil
        }
        let crash = CodeLocation(buildID: buildID, file: program.sourcePath, line: 4)
        let caller = CodeLocation(buildID: buildID, file: program.sourcePath, line: 9)
        let beyond = CodeLocation(buildID: buildID, file: program.sourcePath, line: 400)
        let other = CodeLocation(buildID: BuildID("abcd")!, file: program.sourcePath, line: 4)
        let excerpts = await reader.excerpts(for: [crash, caller, beyond, other], project: ProjectID(1), radius: 5)
        #expect(opened.value == 2)  // one bundle, one build-id without one
        let top = try #require(excerpts[crash])
        #expect(top.firstLine == 1)
        #expect(top.focus == 4)
        #expect(top.lines[3] == "    int q = a / b;")
        #expect(top.lines.count == 9)
        #expect(excerpts[caller]?.lines.count == 8)  // lines 4…11: the file ends there
        #expect(excerpts[beyond] == nil)
        #expect(excerpts[other] == nil)
    }

    // MARK: - Hostile bundles

    func expectRefused(_ bytes: [UInt8], _ comment: Comment? = nil, limits: SourceBundle.Limits = SourceBundle.Limits())
    {
        #expect(throws: FormatError.self, comment) {
            let bundle = try SourceBundle(MemoryByteSource(bytes), limits: limits)
            for path in bundle.paths { _ = try bundle.file(atPath: path) }
        }
    }

    @Test func everyTruncationOfARealBundleIsRefused() throws {
        let program = Program()
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: program.bundle)))
        #expect(bytes.count > 100)
        for length in 0..<bytes.count {
            expectRefused(Array(bytes[0..<length]), "cut at \(length) of \(bytes.count)")
        }
    }

    @Test func everyByteFlippedNeverTraps() throws {
        // Flipping any byte may still leave a readable bundle (a byte of a file name), but never a trap or a
        // wrong file: whatever is read back passed its size and CRC-32 checks.
        let program = Program()
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: program.bundle)))
        let original = try program.source()
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0xFF
            guard let bundle = try? SourceBundle(MemoryByteSource(damaged)) else { continue }
            if let read = try? bundle.file(atPath: program.sourcePath) { #expect(read == original, "byte \(index)") }
        }
    }

    @Test func offsetsOutsideTheFileAreRefused() throws {
        let folder = try TempFolder("source-bundle-hostile")
        let manifest = Array(#"{"files":{"files/a.c":{"type":"source","path":"/a.c"}},"code_id":"abcd"}"#.utf8)
        let good = try SourceBundles.python(
            [("files/a.c", Array("int x;\n".utf8), false), ("manifest.json", manifest, true)], in: folder)
        #expect(try SourceBundle(MemoryByteSource(good)).file(atPath: "/a.c") == Array("int x;\n".utf8))

        // The end-of-central-directory record: its last 22 bytes (no comment).
        let eocd = good.count - 22
        func patched(_ offset: Int, _ value: UInt32) -> [UInt8] {
            var copy = good
            for i in 0..<4 { copy[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
            return copy
        }
        expectRefused(patched(eocd + 16, 0x7FFF_FFF0), "central directory offset past the end")
        expectRefused(patched(eocd + 12, 0x7FFF_FFF0), "central directory size past the end")
        expectRefused(patched(eocd + 16, 0xFFFF_FFFF), "ZIP64 marker")
        // The first central directory entry's local header offset and sizes.
        let directory = 8 + Int(UInt32(good[eocd + 16]) | UInt32(good[eocd + 17]) << 8 | UInt32(good[eocd + 18]) << 16)
        #expect(good[directory] == 0x50 && good[directory + 1] == 0x4b && good[directory + 2] == 0x01)
        expectRefused(patched(directory + 42, 0x7FFF_0000), "local header past the end")
        expectRefused(patched(directory + 20, 0x7FFF_0000), "compressed size past the end")
        expectRefused(patched(directory + 24, 3), "declared size differs")
        expectRefused(patched(directory + 16, 0xDEAD_BEEF), "CRC-32 differs")
        // Not a bundle at all, or another version.
        expectRefused(Array("PK\u{3}\u{4}".utf8) + Array(good[4...]), "no magic")
        expectRefused(Array(good[0..<4]) + [3, 0, 0, 0] + Array(good[8...]), "version 3")
        // Too many entries for the limits.
        expectRefused(good, "entry limit", limits: SourceBundle.Limits(maxEntries: 1))
    }

    @Test func aZipBombStopsAtTheLimit() throws {
        let folder = try TempFolder("source-bundle-bomb")
        // 64 MiB of zeros deflate to about 64 KiB; the reader stops inflating past its 1 MiB limit.
        let zeros = [UInt8](repeating: 0, count: 64 << 20)
        let manifest = Array(#"{"files":{"files/bomb.c":{"type":"source","path":"/bomb.c"}},"code_id":"abcd"}"#.utf8)
        let bytes = try SourceBundles.python(
            [("files/bomb.c", zeros, true), ("manifest.json", manifest, true)], in: folder)
        #expect(bytes.count < 1 << 20)
        let limits = SourceBundle.Limits(maxFileBytes: 1 << 20)
        let bundle = try SourceBundle(MemoryByteSource(bytes), limits: limits)
        #expect(throws: FormatError.self) { _ = try bundle.file(atPath: "/bomb.c") }
        // The same bomb declaring a small size is stopped while inflating, not trusted.
        let eocd = bytes.count - 22
        let directory =
            8 + Int(UInt32(bytes[eocd + 16]) | UInt32(bytes[eocd + 17]) << 8 | UInt32(bytes[eocd + 18]) << 16)
        var lying = bytes
        lying[directory + 24] = 10
        for i in 1..<4 { lying[directory + 24 + i] = 0 }
        let liar = try SourceBundle(MemoryByteSource(lying), limits: limits)
        #expect(throws: FormatError.self) { _ = try liar.file(atPath: "/bomb.c") }
        // A bundle whose manifest is the bomb is refused when it is opened.
        let manifestBomb = try SourceBundles.python([("manifest.json", zeros, true)], in: folder)
        #expect(throws: FormatError.self) {
            _ = try SourceBundle(MemoryByteSource(manifestBomb), limits: SourceBundle.Limits(maxManifestBytes: 1 << 20))
        }
    }

    @Test func checkingAWholeBundleIsBoundedInTotal() throws {
        let folder = try TempFolder("source-bundle-total")
        let manifest = Array(
            #"{"files":{"files/a.c":{"path":"/a.c"},"files/b.c":{"path":"/b.c"}},"code_id":"abcd"}"#.utf8)
        let file = [UInt8](repeating: 0x61, count: 600 << 10)
        let bytes = try SourceBundles.python(
            [("files/a.c", file, true), ("files/b.c", file, true), ("manifest.json", manifest, false)], in: folder)
        let tight = try SourceBundle(MemoryByteSource(bytes), limits: SourceBundle.Limits(maxTotalBytes: 1 << 20))
        #expect(throws: FormatError.self) { _ = try DebugFileFormatInspector.facts(of: tight) }
        let roomy = try SourceBundle(MemoryByteSource(bytes))
        #expect(try DebugFileFormatInspector.facts(of: roomy).buildID == BuildID("abcd"))
    }

    @Test func aStoredBundlesFactsComeFromItsManifestWithoutInflatingItsFiles() throws {
        let folder = try TempFolder("source-bundle-stored")
        let manifest = Array(#"{"files":{"files/a.c":{"path":"/a.c"}},"code_id":"abcd","arch":"x86_64"}"#.utf8)
        let good = try SourceBundles.python(
            [("files/a.c", Array("int a;\n".utf8), false), ("manifest.json", manifest, false)], in: folder)
        // The first entry's CRC-32 damaged: an upload's check inflates the file and refuses it…
        let eocd = good.count - 22
        let directory = 8 + Int(UInt32(good[eocd + 16]) | UInt32(good[eocd + 17]) << 8 | UInt32(good[eocd + 18]) << 16)
        var damaged = good
        damaged[directory + 16] ^= 0xFF
        let path = folder.file("damaged.sysb")
        FileManager.default.createFile(atPath: path, contents: Data(damaged))
        #expect(throws: FormatError.self) { _ = try DebugFileFormatInspector().inspect(path: path) }
        // …while a stored file's facts (sentry-cli's assemble of a file the server has) come from the manifest alone.
        let facts = try DebugFileFormatInspector().inspectStored(path: path)
        #expect(facts.buildID == BuildID("abcd"))
        #expect(facts.kinds == [.sources])
        #expect(facts.architecture == "x86_64")
    }

    @Test func entriesThatShareTheirDataAreRefusedBeforeAnythingInflates() throws {
        let folder = try TempFolder("source-bundle-alias")
        // Given the issue's bundle: 128 directory entries naming one local entry of 8 MiB of zeros, 17 KB in all…
        let aliasing = Array(
            try Data(
                contentsOf: URL(
                    fileURLWithPath: try SourceBundles.crafted(
                        buildID: "abcd", size: 8 << 20, aliases: 128, in: folder))))
        #expect(aliasing.count < 20_000)
        // …opening it is refused, naming the problem (before: each alias inflated and CRC'd the 8 MiB again, 1 GiB).
        let error = try #require(throws: FormatError.self) { _ = try SourceBundle(MemoryByteSource(aliasing)) }
        #expect(error.message.contains("overlap"), "\(error)")
        // So is a local header that starts inside the previous entry's data…
        let overlapping = try SourceBundles.crafted(
            buildID: "abcd", files: 2, size: 4096, overlap: true, in: folder, name: "o.sysb")
        let overlapError = try #require(throws: FormatError.self) {
            _ = try SourceBundle(try FileByteSource(path: overlapping))
        }
        #expect(overlapError.message.contains("overlap"), "\(overlapError)")
        // …while the same writer's honest bundle of two files opens, and each file reads back.
        let honest = try SourceBundles.crafted(buildID: "abcd", files: 2, size: 4096, in: folder, name: "h.sysb")
        let bundle = try SourceBundle(try FileByteSource(path: honest))
        #expect(bundle.paths == ["/src/f0.c", "/src/f1.c"])
        #expect(try bundle.file(atPath: "/src/f1.c") == [UInt8](repeating: 0, count: 4096))
        #expect(try bundle.verifyFiles() == 2 * 4096)
    }

    @Test func anEntryRunningIntoTheCentralDirectoryOrTheNextEntryIsRefused() throws {
        let folder = try TempFolder("source-bundle-bounds")
        let manifest = Array(#"{"files":{"files/a.c":{"path":"/a.c"}},"code_id":"abcd"}"#.utf8)
        let good = try SourceBundles.python(
            [("files/a.c", Array("int a;\n".utf8), false), ("manifest.json", manifest, false)], in: folder)
        let eocd = good.count - 22
        let directory = 8 + Int(UInt32(good[eocd + 16]) | UInt32(good[eocd + 17]) << 8 | UInt32(good[eocd + 18]) << 16)
        // The first entry's compressed size grown by 40 bytes: its data would run into manifest.json's local header.
        var longer = good
        longer[directory + 20] &+= 40
        let error = try #require(throws: FormatError.self) { _ = try SourceBundle(MemoryByteSource(longer)) }
        #expect(error.message.contains("overlap"), "\(error)")
        // The same name twice in the directory.
        let twice = try SourceBundles.python(
            [
                ("files/a.c", Array("x".utf8), false), ("files/a.c", Array("y".utf8), false),
                ("manifest.json", manifest, false),
            ], in: folder)
        let named = try #require(throws: FormatError.self) { _ = try SourceBundle(MemoryByteSource(twice)) }
        #expect(named.message.contains("twice"), "\(named)")
        // A manifest listing more files than the limit allows entries (the archive itself within it).
        let listed = Array(
            #"{"files":{"files/a.c":{"path":"/a.c"},"files/b.c":{},"files/c.c":{}},"code_id":"abcd"}"#.utf8)
        let long = try SourceBundles.python(
            [("files/a.c", Array("int a;\n".utf8), false), ("manifest.json", listed, false)], in: folder)
        #expect(try SourceBundle(MemoryByteSource(long)).paths == ["/a.c"])
        let counted = try #require(throws: FormatError.self) {
            _ = try SourceBundle(MemoryByteSource(long), limits: SourceBundle.Limits(maxEntries: 2))
        }
        #expect(counted.message.contains("manifest.json lists more than 2 files"), "\(counted)")
    }

    @Test func theCacheParsesEachBundleOnceAndRemembersFailures() async throws {
        let folder = try TempFolder("source-bundle-cache")
        let many = try SourceBundles.crafted(buildID: "abcd", files: 2000, size: 16, in: folder)
        let cache = SourceBundleCache(pool: BlockingWorkPool(threads: 1))
        // Given a bundle of 2000 files, when two files are read…
        #expect(try await cache.file(atPath: "/src/f7.c", inBundleAt: many) == [UInt8](repeating: 0, count: 16))
        #expect(try await cache.file(atPath: "/src/f1999.c", inBundleAt: many) == [UInt8](repeating: 0, count: 16))
        #expect(try await cache.file(atPath: "/src/none.c", inBundleAt: many) == nil)
        // …its manifest was parsed once, also for requests that missed together.
        #expect(cache.opens == 1)
        let other = try SourceBundles.crafted(buildID: "abcd", files: 3, in: folder, name: "other.sysb")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await cache.file(atPath: "/src/f1.c", inBundleAt: other) } }
            try await group.waitForAll()
        }
        #expect(cache.opens == 2)
        // A damaged bundle fails the same way every time, parsed once too.
        let damaged = try SourceBundles.crafted(
            buildID: "abcd", size: 1 << 20, aliases: 4, in: folder, name: "alias.sysb")
        for _ in 0..<3 {
            await #expect(throws: FormatError.self) {
                _ = try await cache.file(atPath: "/src/f0.c", inBundleAt: damaged)
            }
        }
        #expect(cache.opens == 3)
        // Over its budget the cache keeps only the newest index: the first bundle is parsed again.
        let small = SourceBundleCache(pool: BlockingWorkPool(threads: 1), byteBudget: 1)
        _ = try await small.file(atPath: "/src/f0.c", inBundleAt: many)
        _ = try await small.file(atPath: "/src/f0.c", inBundleAt: other)
        _ = try await small.file(atPath: "/src/f0.c", inBundleAt: many)
        #expect(small.opens == 3)
    }

    @Test func thePoolRunsAtMostItsThreadsAtOnceAndInOrder() async throws {
        let pool = BlockingWorkPool(threads: 1)
        let running = Counter()
        let most = Counter()
        // Eight jobs at once on one thread: never two at a time, and every one answers.
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<8 {
                group.addTask {
                    try await pool.run {
                        running.increment()
                        most.raise(to: running.value)
                        usleep(2_000)
                        running.decrement()
                        return i
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.sorted() == Array(0..<8))
        #expect(most.value == 1)
        #expect(pool.load.running == 0 && pool.load.waiting == 0)
        // A job's error comes back to its caller.
        await #expect(throws: FormatError.self) { try await pool.run { throw FormatError(.invalidField, "x") } }
    }

    @Test func manifestsThatAreNotJSONOrLackTheBuildIDAreHandled() throws {
        let folder = try TempFolder("source-bundle-manifest")
        let notJSON = try SourceBundles.python([("manifest.json", Array("nope".utf8), false)], in: folder)
        expectRefused(notJSON, "manifest not JSON")
        let noManifest = try SourceBundles.python([("files/a.c", Array("x".utf8), false)], in: folder)
        expectRefused(noManifest, "no manifest")
        // No code_id: readable, but no build-id to file it under (the service refuses it).
        let noID = try SourceBundles.python([("manifest.json", Array(#"{"files":{}}"#.utf8), false)], in: folder)
        #expect(try SourceBundle(MemoryByteSource(noID)).manifest.codeID == nil)
        // A manifest naming an entry the archive lacks, or a path of `..` only: nothing to read, no error.
        let dangling = try SourceBundles.python(
            [
                (
                    "manifest.json",
                    Array(#"{"files":{"files/x.c":{"path":"/x.c"},"files/y":{"path":"../.."}},"code_id":"ab"}"#.utf8),
                    false
                )
            ],
            in: folder)
        let bundle = try SourceBundle(MemoryByteSource(dangling))
        #expect(try bundle.file(atPath: "/x.c") == nil)
        #expect(bundle.paths.isEmpty)
    }
}

/// A thread-safe counter for the locate closure.
final class Counter: @unchecked Sendable {
    // @unchecked: every access holds the lock.
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    func decrement() { lock.withLock { count -= 1 } }
    /// Makes the count at least `value`.
    func raise(to value: Int) { lock.withLock { count = max(count, value) } }
    var value: Int { lock.withLock { count } }
}
