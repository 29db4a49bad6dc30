import FaultlineCore
import Foundation
import SymbolUpload
import TestSupport
import Testing

/// `symupload --include-sources` bundles only files under the source roots (issue #39.8): a line table can name
/// `/proc/self/environ`, `/etc/passwd` or a link out of the tree, and whatever is bundled is served.
@Suite struct SourceRootsTests {
    func scanned(_ path: String) throws -> LocalDebugFile {
        try #require(DebugFileScanner.scan([path]).files.first)
    }

    /// The names and contents of a bundle's files, read by Python's zipfile (CRCs checked).
    func entries(_ bundle: String) throws -> [String: String] {
        let script = """
            import io, json, sys, zipfile
            z = zipfile.ZipFile(io.BytesIO(open(sys.argv[1], 'rb').read()[8:]))
            assert z.testzip() is None
            m = json.loads(z.read('manifest.json'))
            print(json.dumps({f['path']: z.read(name).decode('utf-8', 'replace') for name, f in m['files'].items()}))
            """
        let out = try Command.check("python3", ["-c", script, bundle])
        return try JSONDecoder().decode([String: String].self, from: Data(out.utf8))
    }

    @Test func aLineTableNamingSecretsGetsOnlyTheRealSources() throws {
        // Given a build whose line tables name /proc/self/environ, /etc/passwd, a link out of the tree, a sibling
        // folder, a link to /dev/null and a FIFO beside its real sources…
        let tree = try HostileSourceTree()
        let out = try TempFolder()
        // …when it is bundled with no root but its compilation directory…
        let bundle = try #require(try SourceBundler.bundle(of: try scanned(tree.binary), in: out.path))
        // …then the bundle holds the real sources only, read through the link that stays in the tree.
        #expect(bundle.included.sorted() == tree.real.sorted())
        let files = try entries(try #require(bundle.file).path)
        #expect(Set(files.keys) == Set(tree.real))
        let inner = try String(contentsOfFile: tree.sources + "/include/real_inner.h", encoding: .utf8)
        #expect(files[tree.sources + "/inner.h"] == inner)
        let everything = files.values.joined()
        #expect(!everything.contains("root:x:0:0"))
        #expect(!everything.contains("0x5ec2e7"))
        #expect(!everything.contains("PATH="))
        // And the report names every other file with its reason.
        let reasons = Dictionary(uniqueKeysWithValues: bundle.leftOut.map { ($0.path, $0.reason) })
        #expect(Set(reasons.keys) == Set(tree.hostile), "\(bundle.leftOut)")
        #expect(reasons["/proc/self/environ"] == .systemTree("/proc"))
        #expect(reasons["/etc/passwd"] == .outsideRoots)
        let target = URL(fileURLWithPath: tree.secret).resolvingSymlinksInPath().path
        #expect(reasons[tree.sources + "/escape.h"] == .linkOutOfRoots(target))
        #expect(reasons[tree.sources + "/../src-evil/evil.h"] == .outsideRoots)
        #expect(reasons[tree.sources + "/null"] == .systemTree("/dev"))
        #expect(reasons[tree.sources + "/fifo"] == .notRegularFile)
        let environ = bundle.leftOut.first { $0.path == "/proc/self/environ" }
        #expect(environ?.description == "/proc/self/environ (under /proc, never bundled)")
        #expect(bundle.refusedRoots.isEmpty)
    }

    @Test func anExplicitRootTakesWhatItHoldsAndNeverASystemFile() throws {
        let tree = try HostileSourceTree()
        let out = try TempFolder()
        // Given the whole folder as a root (the tree, the sibling folder and the link's target are all under it)…
        var roots = SourceRoots()
        try roots.addExplicit(tree.folder.path)
        let bundle = try #require(try SourceBundler.bundle(of: try scanned(tree.binary), in: out.path, roots: roots))
        // …the link's target and the sibling folder's header are in; /proc, /etc, /dev and the FIFO still are not.
        let beside = [tree.sources + "/escape.h", tree.sources + "/../src-evil/evil.h"]
        #expect(Set(bundle.included) == Set(tree.real + beside))
        let never = ["/proc/self/environ", "/etc/passwd", tree.sources + "/null", tree.sources + "/fifo"]
        #expect(Set(bundle.leftOut.map(\.path)) == Set(never))
    }

    @Test func aCompilationDirectoryOfSlashIsNoRoot() throws {
        // Given a program compiled from / (its unit's DW_AT_comp_dir is "/")…
        let folder = try TempFolder()
        let main = try folder.write("app.c", "int main(void) {\n    return 0;\n}\n")
        let binary = folder.file("app")
        try Command.check("gcc", ["-g", "-O0", "-Wl,--build-id", "-o", binary, main], in: "/")
        let out = try TempFolder()
        // …nothing is taken on its say-so: / is refused as a root, and the source is outside every root.
        let bundle = try #require(try SourceBundler.bundle(of: try scanned(binary), in: out.path))
        #expect(bundle.file == nil)
        #expect(bundle.refusedRoots == [.init(path: "/", reason: "a system folder")])
        #expect(bundle.leftOut == [.init(path: main, reason: .outsideRoots)])
        // With the folder given as a root, the source is bundled.
        var roots = SourceRoots()
        try roots.addExplicit(folder.path)
        let rooted = try #require(try SourceBundler.bundle(of: try scanned(binary), in: out.path, roots: roots))
        #expect(rooted.included == [main])
        #expect(rooted.file != nil)
    }

    @Test func rootsCompareWholeComponents() throws {
        let folder = try TempFolder()
        for sub in ["app", "app-evil", "app/deep"] {
            try FileManager.default.createDirectory(atPath: folder.file(sub), withIntermediateDirectories: true)
        }
        var roots = SourceRoots()
        try roots.addExplicit(folder.file("app") + "/")
        let app = try #require(roots.folders.first)
        #expect(roots.root(containing: app + "/deep/x.c") == app)
        #expect(roots.root(containing: app) == app)
        #expect(roots.root(containing: app + "-evil/x.c") == nil)
        #expect(roots.root(containing: (app as NSString).deletingLastPathComponent) == nil)
        #expect(roots.root(containing: "relative/x.c") == nil)
    }

    @Test func compilationDirectoriesThatHoldTooMuchAreRefused() throws {
        let home = try TempFolder("home")
        var roots = SourceRoots()
        #expect(roots.addCompilationDirectory("/", home: nil) == "a system folder")
        #expect(roots.addCompilationDirectory("/usr", home: nil) == "a system folder")
        #expect(roots.addCompilationDirectory("/usr/../etc/", home: nil) == "a system folder")
        #expect(roots.addCompilationDirectory("/proc/self/cwd", home: nil) == "inside /proc")
        #expect(roots.addCompilationDirectory("/etc/ssh", home: nil) == "inside /etc")
        #expect(roots.addCompilationDirectory(home.path, home: home.path) == "the home directory")
        #expect(roots.addCompilationDirectory("relative/dir", home: nil) == "not an absolute path")
        #expect(roots.addCompilationDirectory("/no/such/folder/here", home: nil) == "not a folder on this machine")
        #expect(roots.folders.isEmpty)
        #expect(roots.addCompilationDirectory(home.path, home: nil) == nil)
        #expect(roots.folders.count == 1)
    }

    @Test func explicitRootsMustBeFoldersAndNeverSlashOrSystemTrees() throws {
        var roots = SourceRoots()
        #expect(throws: UploadError.self) { try roots.addExplicit("/") }
        #expect(throws: UploadError.self) { try roots.addExplicit("/proc") }
        #expect(throws: UploadError.self) { try roots.addExplicit("/dev/") }
        #expect(throws: UploadError.self) { try roots.addExplicit("/no/such/folder/here") }
        let folder = try TempFolder()
        let file = try folder.write("a.c", "int a;\n")
        #expect(throws: UploadError.self) { try roots.addExplicit(file) }
        #expect(roots.folders.isEmpty)
    }
}
