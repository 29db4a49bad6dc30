import FaultlineCore
import Formats
import Foundation
import SymbolUpload
import TestSupport
import Testing

/// `symupload --include-sources`: the bundle of a real gcc `-g` build, checked by the real sentry-cli and by
/// Python's zipfile (an independent ZIP reader that verifies every CRC).
@Suite(.tags(.endToEnd, .sentryClients), .provisioned) struct SourceBundlerTests {
    /// A program whose code lines live in three files: its own, a header in a sub-folder, and a header that is
    /// deleted after the build (as generated sources are on CI machines).
    func build(_ folder: TempFolder) throws -> (binary: String, main: String, header: String, gone: String) {
        try FileManager.default.createDirectory(atPath: folder.file("include"), withIntermediateDirectories: true)
        let header = try folder.write("include/helper.h", "static inline int helper(int x) {\n    return x * 3;\n}\n")
        let gone = try folder.write("generated.h", "static inline int generated(int x) {\n    return x + 7;\n}\n")
        let main = try folder.write(
            "app.c",
            "#include \"include/helper.h\"\n#include \"generated.h\"\nint main(int argc, char **argv) {\n    (void)argv;\n    return helper(argc) + generated(argc);\n}\n"
        )
        let binary = folder.file("app")
        try Command.check("gcc", ["-g", "-O0", "-Wl,--build-id", "-o", binary, main], in: folder.path)
        try FileManager.default.removeItem(atPath: gone)
        return (binary, main, header, gone)
    }

    func scanned(_ path: String) throws -> LocalDebugFile {
        let (files, skipped) = DebugFileScanner.scan([path])
        #expect(skipped.isEmpty)
        return try #require(files.first)
    }

    @Test func bundlesTheSourcesHereAndSaysWhichAreNot() throws {
        let folder = try TempFolder()
        let program = try build(folder)
        let file = try scanned(program.binary)
        let out = try TempFolder()
        let bundle = try #require(try SourceBundler.bundle(of: file, in: out.path))
        let bundled = try #require(bundle.file)
        #expect(bundle.leftOut.isEmpty)
        #expect(bundle.included.contains(program.main))
        #expect(bundle.included.contains(program.header))
        #expect(!bundle.included.contains(program.gone))
        #expect(bundle.absent.contains(program.gone))
        #expect(bundled.facts.kinds == [.sources])
        #expect(bundled.facts.buildID == file.facts.buildID)

        // Python's zipfile reads it (CRCs checked) and finds the files byte for byte and the manifest.
        let script = """
            import io, json, sys, zipfile
            data = open(sys.argv[1], 'rb').read()
            assert data[:8] == b'SYSB\\x02\\x00\\x00\\x00', data[:8]
            z = zipfile.ZipFile(io.BytesIO(data))
            assert z.testzip() is None
            m = json.loads(z.read('manifest.json'))
            print(json.dumps({'code_id': m['code_id'], 'debug_id': m['debug_id'], 'object_name': m['object_name'],
                              'paths': sorted(f['path'] for f in m['files'].values()),
                              'main': z.read('files' + sys.argv[2]).decode()}))
            """
        let answer = try Command.check("python3", ["-c", script, bundled.path, program.main])
        struct Answer: Decodable {
            var code_id: String
            var debug_id: String
            var object_name: String
            var paths: [String]
            var main: String
        }
        let parsed = try JSONDecoder().decode(Answer.self, from: Data(answer.utf8))
        #expect(parsed.code_id == file.facts.buildID?.rawValue)
        #expect(try parsed.code_id == ELFFixtures.readelfBuildID(program.binary))
        #expect(parsed.object_name == "app")
        #expect(parsed.paths == bundle.included.sorted())
        #expect(parsed.main == (try String(contentsOfFile: program.main, encoding: .utf8)))

        // The real sentry-cli takes it for a source bundle of the same debug id as the binary.
        let check = try Command.check("sentry-cli", ["difutil", "check", "--json", bundled.path])
        #expect(check.contains("\"sourcebundle\""))
        #expect(check.contains(parsed.debug_id))
        let binaryCheck = try Command.check("sentry-cli", ["difutil", "check", "--json", program.binary])
        #expect(binaryCheck.contains(parsed.debug_id))
    }

    @Test func aSplitDebugFileNamesTheSameSources() throws {
        let folder = try TempFolder()
        let program = try build(folder)
        let debug = folder.file("app.debug")
        try Command.check("objcopy", ["--only-keep-debug", program.binary, debug])
        let out = try TempFolder()
        let fromBinary = try #require(try SourceBundler.bundle(of: try scanned(program.binary), in: out.path))
        let fromDebug = try #require(try SourceBundler.bundle(of: try scanned(debug), in: out.path))
        #expect(fromBinary.included == fromDebug.included)
    }

    @Test func limitsLeaveFilesOutAndSaySo() throws {
        let folder = try TempFolder()
        let program = try build(folder)
        let out = try TempFolder()
        let mainSize = try #require(try FileManager.default.attributesOfItem(atPath: program.main)[.size] as? Int)
        let bundle = try #require(
            try SourceBundler.bundle(
                of: try scanned(program.binary), in: out.path, limits: .init(maxFileBytes: mainSize - 1)))
        #expect(!bundle.included.contains(program.main))
        #expect(bundle.leftOut.contains { $0.path == program.main && $0.reason == .limit(.tooLarge(mainSize)) })
        #expect(bundle.leftOut.contains { $0.path == program.main && $0.reason.description.contains("larger than") })
        #expect(bundle.included.contains(program.header))
    }

    @Test func aBinaryWithoutDebugInformationHasNoBundle() throws {
        let folder = try TempFolder()
        let program = try build(folder)
        try Command.check("objcopy", ["--strip-debug", program.binary])
        let out = try TempFolder()
        let bundle = try #require(try SourceBundler.bundle(of: try scanned(program.binary), in: out.path))
        #expect(bundle.file == nil)
        #expect(bundle.included.isEmpty)
    }

    @Test func theWriterTakesOnlyAbsolutePathsAndEachOnce() throws {
        var writer = SourceBundleWriter(
            buildID: BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")!, objectName: "x", arch: "x86_64")
        #expect(try writer.add(path: "relative/a.c", contents: [1]) == .notAbsolute)
        #expect(try writer.add(path: "/src/a.c", contents: Array("int a;\n".utf8)) == nil)
        #expect(try writer.add(path: "/src/a.c", contents: Array("other\n".utf8)) == nil)
        #expect(writer.paths == ["/src/a.c"])
        #expect(SourceBundleWriter.entryName(ofPath: "/src/a.c") == "files/src/a.c")
        let bytes = try writer.finish()
        #expect(Array(bytes.prefix(4)) == Array("SYSB".utf8))
        // The end-of-central-directory record counts both entries (the file and the manifest), and its offset
        // counts from the start of the file, as sentry-cli writes it: the first central entry is right there.
        let end = bytes.count - 22
        #expect(Array(bytes[end..<(end + 4)]) == [0x50, 0x4b, 0x05, 0x06])
        #expect(bytes[end + 10] == 2)
        let directory =
            Int(bytes[end + 16]) | Int(bytes[end + 17]) << 8 | Int(bytes[end + 18]) << 16 | Int(bytes[end + 19]) << 24
        #expect(Array(bytes[directory..<(directory + 4)]) == [0x50, 0x4b, 0x01, 0x02])
        // The first local header is right after SYSB and the version.
        #expect(Array(bytes[8..<12]) == [0x50, 0x4b, 0x03, 0x04])
    }
}
