import FaultlineCore
import Foundation
import SymbolUpload
import TestSupport
import Testing

/// `symupload` finding the debug files of an Apple build: a real Xcode-archive-shaped folder built with clang,
/// ld64.lld, dsymutil and llvm-lipo (`XcodeArchive`), read with the scanner `symupload` runs.
@Suite struct AppleScanTests {
    /// What the scanner found, in the shape of `XcodeArchive.Expected`.
    func found(_ files: [LocalDebugFile], under root: String) -> Set<XcodeArchive.Expected> {
        Set(
            files.flatMap { file in
                file.facts.kinds.map { kind in
                    XcodeArchive.Expected(
                        label: String(file.label.dropFirst(root.count + 1)), uuid: file.facts.buildID?.rawValue ?? "",
                        architecture: file.facts.architecture, kind: kind.rawValue, fileType: file.facts.fileType)
                }
            })
    }

    @Test func findsEveryDSYMAndBinaryOfAnArchiveWithItsUUIDAndKind() throws {
        // Given an archive with an app, a framework and a universal tool, each with its dSYM
        let archive = try XcodeArchive()

        // When it is scanned
        let (files, skipped) = DebugFileScanner.scan([archive.path])

        // Then every slice of every dSYM and binary is found once, keyed by its own LC_UUID (the universal files give
        // one file per architecture), dSYMs serving debuginfo and stripped binaries code
        #expect(found(files, under: archive.path) == Set(archive.expected), "\(files.map(\.label))")
        #expect(files.count == archive.expected.count)
        #expect(Set(files.compactMap(\.facts.buildID?.rawValue)) == archive.uuids)
        #expect(archive.uuids.count == 4)
        // A universal file's slices are byte ranges of it that do not overlap, each a whole Mach-O file
        let slices = files.filter { $0.path.hasSuffix("/Tool") }
        #expect(slices.count == 4 && slices.allSatisfy { $0.isSlice && $0.offset > 0 })
        for file in slices {
            let handle = try #require(FileHandle(forReadingAtPath: file.path))
            try handle.seek(toOffset: file.offset)
            #expect(handle.readData(ofLength: 4) == Data([0xcf, 0xfa, 0xed, 0xfe]), "\(file.label)")
        }
        // Nothing outside the archive was read, and the link inside it did not count twice
        #expect(!files.contains { $0.path.hasSuffix("/outside") || $0.path.hasSuffix("Kit-current") })
        // What is not a debug file is skipped quietly; the object file and the link out are named for -v
        let quiet = Dictionary(
            skipped.filter(\.quiet).map { ($0.path.replacingOccurrences(of: archive.path + "/", with: ""), $0.reason) },
            uniquingKeysWith: { a, _ in a })
        #expect(skipped.allSatisfy { $0.quiet }, "\(skipped)")
        #expect(quiet["Intermediates/shop.o"]?.contains("object file") == true, "\(quiet)")
        #expect(quiet["outside"]?.contains("a link out of the folder") == true, "\(quiet)")
        #expect(quiet["Info.plist"] == "not a debug file")
    }

    @Test func theUUIDIsTheOneAppleToolsPrint() throws {
        let archive = try XcodeArchive()
        let (files, _) = DebugFileScanner.scan([archive.path + "/dSYMs/Tool.dSYM"])
        // llvm-dwarfdump --uuid is the independent reading: "UUID: 4C4C…-… (arm64) path"
        let reference = try Command.check("llvm-dwarfdump-19", ["--uuid", archive.tool.dwarfFile]).split(
            separator: "\n"
        ).map {
            $0.split(separator: " ").prefix(3).joined(separator: " ")
        }
        let ours = files.map { "UUID: \($0.displayID) (\($0.facts.architecture))" }
        #expect(ours.sorted() == reference.sorted())
        #expect(files.allSatisfy { $0.displayID.count == 36 && $0.displayID == $0.displayID.uppercased() })
    }

    @Test func checkListsWhatIsMissingByUUIDArchitectureAndFile() throws {
        // Given the app without its dSYM (only the stripped binaries of the archive's Products folder)
        let archive = try XcodeArchive()
        let (files, _) = DebugFileScanner.scan([archive.path + "/Products"])

        // When planned against a server that has nothing
        let plan = UploadPlan(files: files, missing: UploadPlan.wants(files))

        // Then each UUID without a dSYM is a problem spelled the way Xcode and Crashlytics spell it
        let problems = plan.problems.map(\.description)
        #expect(problems.count == 4, "\(problems)")
        let shop = XcodeArchive.appleSpelling(archive.app.uuid)
        let binary = archive.path + "/Products/Applications/Shop.app/Shop"
        #expect(problems.contains("UUID \(shop) (arm64): no dSYM among the files given (\(binary))"), "\(problems)")
        for slice in archive.tool.slices {
            #expect(
                problems.contains {
                    $0.hasPrefix("UUID \(XcodeArchive.appleSpelling(slice.uuid)) (\(slice.request.architecture))")
                })
        }
    }

    @Test func theWalkIsBoundedAndSaysWhereItStopped() throws {
        let archive = try XcodeArchive()
        let few = DebugFileScanner.scan([archive.path], limits: .init(maxEntries: 5))
        #expect(few.skipped.contains { !$0.quiet && $0.reason.contains("stopped after 5 entries") })
        let shallow = DebugFileScanner.scan([archive.path], limits: .init(maxDepth: 2))
        // dSYMs/X.dSYM/Contents is three levels down: the DWARF files are beyond the bound, the walk says so
        #expect(!shallow.files.contains { $0.facts.fileType == "dsym" })
        #expect(shallow.skipped.contains { !$0.quiet && $0.reason.contains("folders deep") })
    }

    @Test func aLinkGivenOnTheCommandLineIsFollowed() throws {
        let archive = try XcodeArchive()
        // The caller named the link: it is read wherever it leads (only links met in a walk stay inside)
        let (files, _) = DebugFileScanner.scan([archive.path + "/outside"])
        #expect(files.map(\.facts.buildID?.rawValue) == [archive.framework.uuid])
    }

    @Test func aZipOfDSYMsGivesEveryImageInItWithItsUUID() throws {
        // Given App Store Connect's zip of the archive's dSYMs (the universal one among them)
        let archive = try XcodeArchive()
        let zip = try archive.appStoreConnectZip()
        let scratch = try TempFolder("symupload-scratch")

        // When it is scanned
        let (files, skipped) = DebugFileScanner.scan([zip], scratch: scratch.path)

        // Then each slice of each dSYM in it is a debug file, read from a copy in the scratch folder, labelled with
        // the zip and the entry, and listed on the server under the bundle's name
        let dSYMs = archive.expected.filter { $0.fileType == "dsym" }
        #expect(
            Set(
                files.map {
                    "\($0.facts.buildID?.rawValue ?? "") \($0.facts.architecture) \($0.facts.kinds.map(\.rawValue))"
                })
                == Set(dSYMs.map { "\($0.uuid) \($0.architecture) [\"debuginfo\"]" }),
            "\(files.map(\.label)) \(skipped)")
        #expect(
            files.allSatisfy {
                $0.path.hasPrefix(scratch.path + "/") && $0.label.hasPrefix(zip + ": ")
                    && $0.uploadName.hasSuffix(".dSYM")
            })
        #expect(files.allSatisfy { $0.offset == 0 && !$0.isSlice })
        #expect(skipped.allSatisfy { $0.quiet }, "\(skipped)")

        // A zip met in a walk is read only when its name says it holds dSYMs
        try FileManager.default.copyItem(atPath: zip, toPath: archive.folder.file("Shop.xcarchive/Products/assets.zip"))
        let walked = DebugFileScanner.scan([archive.path + "/Products"], scratch: scratch.path)
        #expect(
            walked.skipped.contains {
                $0.quiet && $0.path.hasSuffix("assets.zip") && $0.reason.contains("without dSYM in its name")
            })
        #expect(!walked.files.contains { $0.facts.kinds.contains(.debuginfo) })
    }

    @Test func aDamagedZipIsNamedNotFatal() throws {
        let folder = try TempFolder("symupload-zip")
        let archive = try XcodeArchive()
        let zip = try archive.appStoreConnectZip()
        // The first half of a real zip: the central directory is gone
        let bytes = try Data(contentsOf: URL(fileURLWithPath: zip))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: folder.file("cut-dSYMs.zip")))
        let (files, skipped) = DebugFileScanner.scan([folder.path], scratch: folder.path)
        #expect(files.isEmpty)
        #expect(
            skipped.contains {
                !$0.quiet && $0.path.hasSuffix("cut-dSYMs.zip") && $0.reason.hasPrefix("not a readable zip of dSYMs")
            },
            "\(skipped)")
    }

    @Test func aFIFONamedOnTheCommandLineIsNeverOpened() throws {
        // Opening a FIFO for reading would wait for a writer forever
        let folder = try TempFolder("symupload-fifo")
        try Command.check("mkfifo", [folder.file("pipe")])
        let (files, skipped) = DebugFileScanner.scan([folder.file("pipe"), folder.path])
        #expect(files.isEmpty)
        #expect(
            skipped.contains { $0.path == folder.file("pipe") && !$0.quiet && $0.reason == "not a regular file" },
            "\(skipped)")
        #expect(skipped.contains { $0.path == folder.file("pipe") && $0.quiet }, "\(skipped)")
    }

    @Test func aDerivedDataFolderWithAMacOSFrameworkGivesEachFileOnce() throws {
        // Given DerivedData's layout: products with their dSYMs, intermediates full of object files, and a macOS
        // framework whose top-level binary is a link through Versions/Current (a link to a folder) to Versions/A
        let archive = try XcodeArchive()
        let data = try TempFolder("DerivedData")
        let products = data.file("Shop-abc/Build/Products/Release")
        let fm = FileManager.default
        try fm.createDirectory(atPath: products + "/Kit.framework/Versions/A", withIntermediateDirectories: true)
        try fm.createDirectory(
            atPath: data.file("Shop-abc/Build/Intermediates.noindex/Shop.build/Objects-normal/arm64"),
            withIntermediateDirectories: true)
        try fm.copyItem(atPath: archive.path + "/dSYMs/Tool.dSYM", toPath: products + "/Tool.dSYM")
        try fm.copyItem(atPath: archive.tool.binary, toPath: products + "/Tool")
        try fm.copyItem(atPath: archive.framework.stripped, toPath: products + "/Kit.framework/Versions/A/Kit")
        try fm.createSymbolicLink(atPath: products + "/Kit.framework/Versions/Current", withDestinationPath: "A")
        try fm.createSymbolicLink(atPath: products + "/Kit.framework/Kit", withDestinationPath: "Versions/Current/Kit")
        try fm.copyItem(
            atPath: archive.path + "/Intermediates/shop.o",
            toPath: data.file("Shop-abc/Build/Intermediates.noindex/Shop.build/Objects-normal/arm64/shop.o"))

        // When DerivedData is scanned whole
        let (files, skipped) = DebugFileScanner.scan([data.path])

        // Then the tool's two slices come from its dSYM and its binary, the framework once, nothing from the objects
        let ids = files.map { "\($0.facts.buildID?.rawValue ?? "") \($0.facts.fileType)" }
        #expect(ids.count == 5, "\(files.map(\.label))")
        #expect(
            Set(ids)
                == Set(
                    archive.tool.slices.flatMap { ["\($0.uuid) dsym", "\($0.uuid) executable"] } + [
                        "\(archive.framework.uuid) dylib"
                    ]))
        #expect(
            skipped.contains {
                $0.quiet && $0.path.hasSuffix("/Versions/Current") && $0.reason.contains("a link to a folder")
            }, "\(skipped)")
        #expect(skipped.contains { $0.quiet && $0.path.hasSuffix("shop.o") })
    }
}
