import Foundation

/// A folder shaped like what `xcodebuild archive` writes (`Shop.xcarchive`), made of `AppleBuilds`' real files:
/// the app's and an embedded framework's dSYMs and stripped binaries, and a universal (arm64 + x86_64) command-line
/// tool with its universal dSYM. Beside the debug files lie what a real archive also holds and `symupload` must
/// pass over: plists, an asset file, an object file, a link to a file outside the archive, and a link inside it.
///
/// ```
/// Shop.xcarchive/Info.plist
/// Shop.xcarchive/dSYMs/Shop.app.dSYM/Contents/{Info.plist,Resources/DWARF/Shop}       app, arm64 iOS
/// Shop.xcarchive/dSYMs/Kit.framework.dSYM/Contents/{Info.plist,Resources/DWARF/Kit}   framework (dylib), arm64 iOS
/// Shop.xcarchive/dSYMs/Tool.dSYM/Contents/{Info.plist,Resources/DWARF/Tool}           universal: arm64 + x86_64 macOS
/// Shop.xcarchive/Products/Applications/Shop.app/{Shop,Info.plist,Assets.car}           Shop stripped
/// Shop.xcarchive/Products/Applications/Shop.app/Frameworks/Kit.framework/{Kit,Info.plist}
/// Shop.xcarchive/Products/usr/local/bin/Tool                                          universal executable
/// Shop.xcarchive/Products/usr/local/bin/Kit-current -> ../../../Applications/…/Kit    a link inside: counted once
/// Shop.xcarchive/Intermediates/shop.o                                                  an object file: skipped
/// Shop.xcarchive/outside -> (a Mach-O file outside the archive)                        never followed
/// ```
public struct XcodeArchive: Sendable {
    /// One debug file `symupload` must find.
    public struct Expected: Sendable, Hashable, CustomStringConvertible {
        /// Relative to the archive, with ` [arch]` for a slice of a universal file.
        public var label: String
        /// 32 lower-case hex digits.
        public var uuid: String
        public var architecture: String
        /// `debuginfo` or `executable`.
        public var kind: String
        /// `dsym`, `executable`, `dylib`.
        public var fileType: String
        public var description: String { "\(label) \(uuid) \(architecture) \(kind) \(fileType)" }

        public init(label: String, uuid: String, architecture: String, kind: String, fileType: String) {
            self.label = label
            self.uuid = uuid
            self.architecture = architecture
            self.kind = kind
            self.fileType = fileType
        }
    }

    /// The folder that holds `Shop.xcarchive` (removed when the last copy of this value goes).
    public let folder: TempFolder
    /// `…/Shop.xcarchive`.
    public let path: String
    public let app: AppleBuilds.Build
    public let framework: AppleBuilds.Build
    public let tool: AppleBuilds.FatBuild
    /// Every debug file in the archive, one per slice.
    public let expected: [Expected]
    /// The path of the file outside the archive that `outside` links to.
    public let outsideTarget: String

    public init() throws {
        app = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        framework = try AppleBuilds.build(.init(.cpp, .arm64, .iOS, dylib: true))
        tool = try AppleBuilds.fat([.init(.c, .arm64, .macOS), .init(.c, .x86_64, .macOS)])
        let folder = try TempFolder("xcarchive")
        let path = folder.file("Shop.xcarchive")
        self.folder = folder
        self.path = path
        let fm = FileManager.default
        func copy(_ from: String, _ to: String) throws {
            try fm.createDirectory(
                atPath: URL(fileURLWithPath: path + "/" + to).deletingLastPathComponent().path,
                withIntermediateDirectories: true)
            try fm.copyItem(atPath: from, toPath: path + "/" + to)
        }
        func write(_ text: String, _ to: String) throws {
            try fm.createDirectory(
                atPath: URL(fileURLWithPath: path + "/" + to).deletingLastPathComponent().path,
                withIntermediateDirectories: true)
            try text.write(toFile: path + "/" + to, atomically: true, encoding: .utf8)
        }
        let plist = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict/></plist>\n"
        try write(plist, "Info.plist")
        let dwarf = "Contents/Resources/DWARF/"
        for (bundle, file, name) in [
            ("Shop.app.dSYM", app.dwarfFile, "Shop"), ("Kit.framework.dSYM", framework.dwarfFile, "Kit"),
            ("Tool.dSYM", tool.dwarfFile, "Tool"),
        ] {
            try copy(file, "dSYMs/\(bundle)/\(dwarf)\(name)")
            try write(plist, "dSYMs/\(bundle)/Contents/Info.plist")
        }
        let appFolder = "Products/Applications/Shop.app/"
        try copy(app.stripped, appFolder + "Shop")
        try write(plist, appFolder + "Info.plist")
        try write("not a debug file", appFolder + "Assets.car")
        try copy(framework.stripped, appFolder + "Frameworks/Kit.framework/Kit")
        try write(plist, appFolder + "Frameworks/Kit.framework/Info.plist")
        try copy(tool.binary, "Products/usr/local/bin/Tool")
        try fm.createSymbolicLink(
            atPath: path + "/Products/usr/local/bin/Kit-current",
            withDestinationPath: "../../../Applications/Shop.app/Frameworks/Kit.framework/Kit")
        let object = URL(fileURLWithPath: app.binary).deletingLastPathComponent().appendingPathComponent("shop.o").path
        try copy(object, "Intermediates/shop.o")
        let outsideTarget = folder.file("elsewhere/Outside")
        self.outsideTarget = outsideTarget
        try fm.createDirectory(atPath: folder.file("elsewhere"), withIntermediateDirectories: true)
        try fm.copyItem(atPath: framework.binary, toPath: outsideTarget)
        try fm.createSymbolicLink(atPath: path + "/outside", withDestinationPath: outsideTarget)

        let archs = try AppleBuilds.uuids(tool.dwarfFile)
        var expected = [
            Expected(
                label: "dSYMs/Shop.app.dSYM/\(dwarf)Shop", uuid: app.uuid, architecture: "arm64", kind: "debuginfo",
                fileType: "dsym"),
            Expected(
                label: "dSYMs/Kit.framework.dSYM/\(dwarf)Kit", uuid: framework.uuid, architecture: "arm64",
                kind: "debuginfo",
                fileType: "dsym"),
            Expected(
                label: appFolder + "Shop", uuid: app.uuid, architecture: "arm64", kind: "executable",
                fileType: "executable"),
            Expected(
                label: appFolder + "Frameworks/Kit.framework/Kit", uuid: framework.uuid, architecture: "arm64",
                kind: "executable", fileType: "dylib"),
        ]
        for (architecture, uuid) in archs {
            expected.append(
                Expected(
                    label: "dSYMs/Tool.dSYM/\(dwarf)Tool [\(architecture)]", uuid: uuid, architecture: architecture,
                    kind: "debuginfo", fileType: "dsym"))
            expected.append(
                Expected(
                    label: "Products/usr/local/bin/Tool [\(architecture)]", uuid: uuid, architecture: architecture,
                    kind: "executable", fileType: "executable"))
        }
        self.expected = expected
    }

    /// The distinct UUIDs of the archive (one per slice): app, framework, and the tool's two.
    public var uuids: Set<String> { Set(expected.map(\.uuid)) }

    /// Zips the archive's `dSYMs` folder the way App Store Connect hands them out (`appDsyms.zip`: one
    /// `<UUID>.dSYM` bundle per entry folder, named by the UUID) with Info-ZIP's `zip`; returns the zip's path.
    public func appStoreConnectZip() throws -> String {
        let staging = folder.file("asc")
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        for (bundle, name) in [("Shop.app.dSYM", "Shop"), ("Kit.framework.dSYM", "Kit"), ("Tool.dSYM", "Tool")] {
            let uuid = try AppleBuilds.uuid(path + "/dSYMs/\(bundle)/Contents/Resources/DWARF/\(name)")
            let target = staging + "/" + Self.appleSpelling(uuid) + ".dSYM"
            try FileManager.default.copyItem(atPath: path + "/dSYMs/\(bundle)", toPath: target)
        }
        let zip = folder.file("appDsyms.zip")
        try Command.check("zip", ["-q", "-r", "-X", zip, "."], in: staging)
        try FileManager.default.removeItem(atPath: staging)
        return zip
    }

    /// Lays out at `folder` what Xcode's `${DWARF_DSYM_FOLDER_PATH}` (a DerivedData `Build/Products/Release-iphoneos`
    /// folder) holds after a build: the app bundle beside the dSYMs of the app, its framework and the tool.
    public func buildProducts(at folder: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try fm.copyItem(atPath: path + "/Products/Applications/Shop.app", toPath: folder + "/Shop.app")
        for dSYM in try fm.contentsOfDirectory(atPath: path + "/dSYMs") {
            try fm.copyItem(atPath: path + "/dSYMs/" + dSYM, toPath: folder + "/" + dSYM)
        }
    }

    /// 32 hex digits as an upper-case hyphenated UUID.
    public static func appleSpelling(_ uuid: String) -> String {
        let h = Array(uuid.uppercased())
        guard h.count == 32 else { return uuid }
        return [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map { String($0) }.joined(separator: "-")
    }
}
