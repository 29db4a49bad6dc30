import Foundation
import SymbolUpload
import TestSupport
import Testing

/// Issue #35 (README friction): the paths `symupload` prints are the folder it was given joined once, even when the
/// folder was written with a doubled slash (`"$OUT/"` with `OUT=build/`).
@Suite struct ScannedPathTests {
    @Test func aFolderWrittenWithDoubledSlashesIsShownWithSingleOnes() throws {
        // Given a build folder holding one ELF executable with a build-id (compiled here)…
        let folder = try TempFolder("symupload-paths")
        let source = folder.file("m.c")
        try "int main(void) { return 0; }\n".write(toFile: source, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder.file("build"), withIntermediateDirectories: true)
        let built = try Command.run("gcc", ["-g", "-Wl,--build-id", "-o", folder.file("build/app"), source])
        #expect(built.status == 0, "\(built.err)")

        // When it is scanned as `build//` and as `build///`…
        for written in [folder.file("build") + "//", folder.file("build") + "///"] {
            let (files, skipped) = DebugFileScanner.scan([written])
            // Then the file is found once and named with one slash before it.
            #expect(skipped.isEmpty, "\(skipped)")
            #expect(files.map(\.label) == [folder.file("build/app")])
            #expect(files.allSatisfy { !$0.label.contains("//") })
        }
    }
}
