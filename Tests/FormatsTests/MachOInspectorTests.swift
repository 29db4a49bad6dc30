import FaultlineCore
import Formats
import Foundation
import TestSupport
import Testing

/// The debug-file store's view of Mach-O files (`DebugFileFormatInspector`, `DebugFileSplitter`) on real files from
/// clang, ld64.lld-19, dsymutil-19 and llvm-lipo-19, and on hostile archives.
@Suite struct MachOInspectorTests {
    let inspector = DebugFileFormatInspector()

    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Splits `path` into files of `folder`; returns the pieces (nil: one debug file).
    func split(_ path: String, in folder: TempFolder, with splitter: DebugFileSplitter? = nil) throws
        -> [DebugFilePiece]?
    {
        var n = 0
        let newFile = { () throws -> TemporaryUpload in
            n += 1
            let path = folder.file("piece-\(n)")
            FileManager.default.createFile(atPath: path, contents: nil)
            return TemporaryUpload(path: path)
        }
        if let splitter { return try splitter.split(path: path, name: "upload", newFile: newFile) }
        return try inspector.split(path: path, name: "Universal", newFile: newFile)
    }

    @Test func aDSYMServesDebugInfoAndAStrippedExecutableCode() throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        let dsym = try inspector.inspect(path: build.dwarfFile)
        #expect(dsym.buildID?.rawValue == build.uuid)
        #expect(dsym.kinds == [.debuginfo])
        #expect(dsym.format == .macho && dsym.fileType == "dsym" && dsym.architecture == "arm64")
        #expect(dsym.features.contains("debug"))
        let stripped = try inspector.inspect(path: build.stripped)
        #expect(stripped.buildID?.rawValue == build.uuid)
        #expect(stripped.kinds == [.executable])
        #expect(stripped.fileType == "executable")
        #expect(DifObjectClass.of(dsym) == .dbg && DifObjectClass.of(stripped) == .exe)
        let dylib = try inspector.inspect(path: try AppleBuilds.build(.init(.c, .arm64, .iOS, dylib: true)).stripped)
        #expect(dylib.fileType == "dylib" && DifObjectClass.of(dylib) == .lib)
    }

    @Test func theFirstBytesGiveAThinImagesUUIDAndRefuseWhatIsNoDebugFile() throws {
        let build = try AppleBuilds.build(.init(.c, .x86_64, .macOS))
        let head = Array(try bytes(build.binary).prefix(64 << 10))
        #expect(try inspector.inspectHead(head)?.rawValue == build.uuid)
        let fat = try AppleBuilds.fat([.init(.c, .arm64, .iOS), .init(.c, .x86_64, .iOS)])
        #expect(try inspector.inspectHead(Array(try bytes(fat.binary).prefix(4096))) == nil)
        #expect(throws: DebugFileHeadError.neither) { try inspector.inspectHead(Array("#!/bin/sh\n".utf8)) }
        #expect(throws: (any Error).self) { try inspector.inspectHead([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52]) }  // a Java class
    }

    @Test func aFatFileSplitsIntoTheSlicesLipoExtracts() throws {
        let fat = try AppleBuilds.fat([.init(.c, .arm64, .iOS), .init(.c, .x86_64, .iOS)])
        let folder = try TempFolder("split")
        #expect(throws: (any Error).self) { try inspector.inspect(path: fat.dwarfFile) }  // stored one slice at a time
        let pieces = try #require(try split(fat.dwarfFile, in: folder))
        #expect(Set(pieces.compactMap(\.name)) == ["Universal (arm64)", "Universal (x86_64)"])
        for piece in pieces {
            let facts = try inspector.inspect(path: piece.upload.path)
            let arch = facts.architecture
            let thin = folder.file("lipo-\(arch)")
            try Command.check("llvm-lipo-19", [fat.dwarfFile, "-thin", arch, "-output", thin])
            #expect(try bytes(piece.upload.path) == (try bytes(thin)), "\(arch)")
            #expect(
                facts.buildID?.rawValue
                    == (try AppleBuilds.uuids(fat.dwarfFile)).first { $0.architecture == arch }?.uuid)
        }
        // A thin file is one debug file.
        #expect(try split(fat.slices[0].dwarfFile, in: folder) == nil)
    }

    @Test func archivesAreExpandedWithinTheirLimits() throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        let folder = try TempFolder("archive")
        func zip(_ name: String, _ entries: [(String, String)], _ extra: String = "") throws -> String {
            var script = "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n"
            for (entry, source) in entries {
                script += "    z.write(\(source.debugDescription), \(entry.debugDescription))\n"
            }
            script += extra
            try Command.check("python3", ["-c", script, folder.file(name)])
            return folder.file(name)
        }
        let good = try zip("good.zip", [("Shop.app.dSYM/Contents/Resources/DWARF/Shop", build.dwarfFile)])
        let pieces = try #require(try split(good, in: folder))
        #expect(pieces.count == 1 && pieces[0].name == "Shop.app.dSYM/Contents/Resources/DWARF/Shop")
        #expect(try bytes(pieces[0].upload.path) == (try bytes(build.dwarfFile)))

        // A bomb: 8 MiB of zeros deflate to a few KB; the total cap stops it before it is written out.
        let bomb = try zip("bomb.zip", [], "    z.writestr('zeros', bytes(8 << 20))\n")
        #expect(try FileManager.default.attributesOfItem(atPath: bomb)[.size] as? Int ?? 0 < 100_000)
        let small = DebugFileSplitter(limits: .init(maxEntryBytes: 1 << 20, maxTotalBytes: 2 << 20))
        #expect(throws: FormatError.self) { try split(bomb, in: folder, with: small) }

        // A damaged entry (its CRC-32 in the central directory changed) is refused, not stored.
        var damaged = try bytes(good)
        let directory = try #require(
            (0..<(damaged.count - 4)).last { damaged[$0..<($0 + 4)].elementsEqual([0x50, 0x4b, 0x01, 0x02]) })
        damaged[directory + 16] ^= 0xff
        let path = folder.file("damaged.zip")
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        #expect(throws: FormatError.self) { try split(path, in: folder) }
    }
}
