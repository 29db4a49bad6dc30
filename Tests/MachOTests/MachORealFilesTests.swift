import FaultlineCore
import Foundation
import TestSupport
import Testing

@testable import MachO

/// The reader on real files: built by clang, linked by ld64.lld-19, dSYMs by dsymutil-19, fat files by llvm-lipo-19,
/// and every fact checked against what the LLVM tools print (`AppleBuilds` reads them with llvm-dwarfdump/objdump/nm).
@Suite struct MachORealFilesTests {
    @Test func aThinExecutableHasItsUUIDTextAndSymbols() throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        let file = try FileBytes(build.binary)
        let slices = try file.slices()
        #expect(slices.count == 1)
        #expect(slices[0].architecture == "arm64")
        #expect(slices[0].offset == 0 && slices[0].size == file.size)

        let image = try file.image(slices[0])
        #expect(image.fileType == .executable)
        #expect(image.buildID?.rawValue == build.uuid)
        #expect(image.textVMAddr == build.textVMAddr)
        let text = try #require(image.section("__TEXT", "__text"))
        #expect(text.address == build.text.lowerBound)
        #expect(text.address + text.size == build.text.upperBound)
        #expect(image.hasCode)
        #expect(!image.hasDebugInfo)  // the DWARF stays in the object file; the dSYM gathers it
        #expect(image.features.contains("symtab"))
        #expect(image.platform == "ios" && image.minOS == "15.0")
        #expect(
            image.uuidString
                == build.uuid.uppercased().replacingOccurrences(
                    of: #"^(.{8})(.{4})(.{4})(.{4})(.{12})$"#, with: "$1-$2-$3-$4-$5", options: .regularExpression))

        // Every function llvm-nm lists is in the symbol table at the same address.
        let symbols = try image.symbols(read: file.read)
        for function in build.functions {
            #expect(
                symbols.contains {
                    $0.name == function.symbol && $0.value == function.address && $0.isDefinedInSection
                },
                "\(function.symbol)")
        }
        // The section's bytes are the file's bytes at its offset.
        let bytes = try image.bytes(of: text, maxBytes: 1 << 20, read: file.read)
        #expect(bytes == Array(file.bytes[Int(text.fileOffset)..<Int(text.fileOffset + text.size)]))
        #expect(throws: MachOError.self) { try image.bytes(of: text, maxBytes: 3, read: file.read) }
    }

    @Test func aDSYMServesDebugInfoAndNoCode() throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS, dwarf: 5))
        let file = try FileBytes(build.dwarfFile)
        let image = try file.image(try #require(try file.slices().first))
        #expect(image.fileType == .dsym)
        #expect(image.buildID?.rawValue == build.uuid)
        #expect(image.hasDebugInfo)
        #expect(!image.hasCode)  // a dSYM keeps __TEXT's sections with no bytes
        #expect(image.section("__TEXT", "__text")?.hasFileData == false)
        #expect(image.features.contains("debug"))
        // DWARF 5's .debug_str_offsets, cut to Mach-O's 16-byte field.
        #expect(image.section("__DWARF", "__debug_str_offs")?.hasFileData == true)
        #expect(image.textVMAddr == build.textVMAddr)
    }

    @Test func aStrippedExecutableKeepsItsUUIDAndCode() throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        let file = try FileBytes(build.stripped)
        let image = try file.image(try #require(try file.slices().first))
        #expect(image.buildID?.rawValue == build.uuid)
        #expect(image.hasCode && !image.hasDebugInfo)
        let symbols = try image.symbols(read: file.read)
        #expect(!symbols.contains { $0.type & 0xe0 != 0 })  // no debug map (stabs) left
    }

    @Test(arguments: [
        AppleBuilds.Request(.c, .x86_64, .macOS), AppleBuilds.Request(.c, .arm64e, .iOS),
        AppleBuilds.Request(.c, .arm64, .macOS, dwarf: 4),
    ])
    func architecturesAndPlatformsAreNamed(_ request: AppleBuilds.Request) throws {
        let build = try AppleBuilds.build(request)
        for path in [build.binary, build.dwarfFile] {
            let file = try FileBytes(path)
            let slice = try #require(try file.slices().first)
            #expect(slice.architecture == request.architecture.rawValue)
            let image = try file.image(slice)
            #expect(image.buildID?.rawValue == build.uuid)
            #expect(image.platform == request.platform.rawValue)
            #expect(image.minOS == (request.platform == .iOS ? "15.0" : "11.0"))
        }
    }

    @Test func aDylibHasItsInstallNameAndTextAtZero() throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS, dylib: true))
        let file = try FileBytes(build.binary)
        let image = try file.image(try #require(try file.slices().first))
        #expect(image.fileType == .dylib)
        #expect(image.installName == "@rpath/libShop.dylib")
        #expect(image.textVMAddr == 0)
    }

    @Test func anObjectFileNamesItsSectionsBySegment() throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        let object = URL(fileURLWithPath: build.binary).deletingLastPathComponent().path + "/shop.o"
        let file = try FileBytes(object)
        let image = try file.image(try #require(try file.slices().first))
        #expect(image.fileType == .object)
        #expect(image.segments.count == 1 && image.segments[0].name == "")
        #expect(image.hasDebugInfo && image.hasCode)
        #expect(image.buildID == nil)  // ld64.lld gives the UUID; an object has none
    }

    @Test func aFatBinaryAndAFatDSYMSplitIntoTheirSlices() throws {
        let fat = try AppleBuilds.fat([.init(.c, .arm64, .iOS), .init(.c, .x86_64, .iOS)])
        for path in [fat.binary, fat.dwarfFile] {
            let file = try FileBytes(path)
            let slices = try file.slices()
            #expect(slices.map(\.architecture).sorted() == ["arm64", "x86_64"])  // llvm-lipo orders them its own way
            #expect(slices.allSatisfy { $0.offset > 0 && $0.offset + $0.size <= file.size })
            let expected = try AppleBuilds.uuids(path)
            for slice in slices {
                let image = try file.image(slice)
                #expect(image.buildID?.rawValue == expected.first { $0.architecture == slice.architecture }?.uuid)
            }
        }
        // The fat binary's slices are the thin files byte for byte.
        let file = try FileBytes(fat.binary)
        for slice in try file.slices() {
            let thin = try #require(fat.slices.first { $0.request.architecture.rawValue == slice.architecture })
            #expect(
                Array(file.bytes[Int(slice.offset)..<Int(slice.offset + slice.size)])
                    == (try FileBytes(thin.binary).bytes))
        }
    }
}

/// A file's bytes in memory, read the way Formats and Symbolication read files.
struct FileBytes {
    let bytes: [UInt8]
    init(_ path: String) throws { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    var size: UInt64 { UInt64(bytes.count) }
    var read: MachOReadBytes { memoryReader(bytes) }
    func slices() throws -> [MachOSlice] { try MachOContainer.slices(size: size, read: read) }
    func image(_ slice: MachOSlice) throws -> MachOImage { try MachOImage.read(slice: slice, read: read) }
}
