import Foundation
import TestSupport
import Testing

/// The upload commands of docs/apple.md, run as written with bash against the real server: every ```sh block that
/// runs `symupload`, `sentry-cli` or the Run Script phase's `upload-dsyms.sh`, in a folder that holds what the text names (`build/Shop.xcarchive`,
/// `~/Downloads/appDsyms.zip`, Xcode's `$DWARF_DSYM_FOLDER_PATH`), with the real `symupload` and sentry-cli 3.8.2 on
/// PATH. Only the server's address is replaced; the upload token comes from `$FAULTLINE_UPLOAD_TOKEN`, as the
/// text says.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct AppleDocExamplesTests {
    static let document = DocumentedExamplesTests.root + "/docs/apple.md"

    /// The ```sh blocks of `text` that run symupload or sentry-cli: (first line number, text).
    static func uploadBlocks(_ text: String) -> [(line: Int, script: String)] {
        var blocks: [(Int, String)] = []
        var current: (Int, [String])?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = current {
                if trimmed.hasPrefix("```") {
                    blocks.append((open.0, open.1.joined(separator: "\n")))
                    current = nil
                } else {
                    current!.1.append(line)
                }
            } else if trimmed == "```sh" {
                current = (index + 2, [])
            }
        }
        return blocks.filter {
            $0.1.contains("symupload ") || $0.1.contains("sentry-cli ") || $0.1.contains("upload-dsyms.sh")
        }
    }

    @Test func everyUploadCommandInAppleMdWorksAsWritten() async throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        let blocks = Self.uploadBlocks(text)
        // The Run Script phase (tools/xcode/upload-dsyms.sh), the Linux CI step and the zip (symupload)
        #expect(blocks.count == 3, "\(blocks.map(\.line))")
        let archive = try XcodeArchive()
        let zip = try archive.appStoreConnectZip()
        let tools = try TempFolder("apple-doc-tools")
        try FileManager.default.createSymbolicLink(
            atPath: tools.file("symupload"), withDestinationPath: SymuploadEndToEndTests.binary)

        for block in blocks {
            // Given a fresh server and project `shop`, and a folder laid out as the text says
            let folder = ServerProcess.newFolder()
            let project = try await ServerProcess.createProject("shop", in: folder)
            let server = try await ServerProcess(folder: folder)
            defer { server.cleanUp() }
            let work = try TempFolder("apple-doc")
            try FileManager.default.createDirectory(atPath: work.file("build"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: archive.path, toPath: work.file("build/Shop.xcarchive"))
            // Xcode's ${DWARF_DSYM_FOLDER_PATH} is the products folder: the app bundle beside the dSYMs
            let products = work.file("DerivedData/Build/Products/Release-iphoneos")
            try archive.buildProducts(at: products)
            // The Run Script phase runs the app repository's copy of tools/xcode/upload-dsyms.sh.
            try FileManager.default.createDirectory(
                atPath: work.file("Shop/scripts"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: AppleXcodeBuildPhaseTests.script, toPath: work.file("Shop/scripts/upload-dsyms.sh"))
            try FileManager.default.createDirectory(
                atPath: work.file("home/Downloads"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: zip, toPath: work.file("home/Downloads/appDsyms.zip"))
            let environment = [
                "PATH": tools.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                "HOME": work.file("home"), "FAULTLINE_UPLOAD_TOKEN": project.upload,
                "DWARF_DSYM_FOLDER_PATH": products, "SRCROOT": work.file("Shop"), "CONFIGURATION": "Release",
                "DWARF_DSYM_FILE_NAME": "Shop.app.dSYM", "DEBUG_INFORMATION_FORMAT": "dwarf-with-dsym",
            ]
            let script =
                "set -euo pipefail\n"
                + block.script.replacingOccurrences(of: "https://crash.example.com", with: server.baseURL)

            // When the block runs
            let result = try Command.run("bash", ["-c", script], in: work.path, environment: environment)

            // Then it succeeds and the server holds the dSYM of every UUID of the files it named
            #expect(result.status == 0, "apple.md:\(block.line): exit \(result.status)\n\(result.out)\n\(result.err)")
            let stored = try await SymuploadEndToEndTests().listed(server, project.upload)
            let debuginfo = Set(
                stored.filter { $0["kind"] as? String == "debuginfo" }.compactMap { $0["build_id"] as? String })
            #expect(debuginfo == archive.uuids, "apple.md:\(block.line): \(stored)")
        }
    }
}
