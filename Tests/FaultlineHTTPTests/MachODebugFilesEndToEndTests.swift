import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Mach-O debug files in the real server's store (issue #32), with real files from clang, ld64.lld-19, dsymutil-19
/// and llvm-lipo-19 (`AppleBuilds`): thin files by `PUT`, fat files and ZIPs of dSYMs split by `POST`, each slice
/// stored under its own LC_UUID, served back byte for byte by debuginfod, isolated per project, within the quota,
/// and hostile or foreign bytes refused with a 400 that names what is wrong.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct MachODebugFilesEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    static let thin = AppleBuilds.Request(.c, .arm64, .iOS)
    static let fatSlices = [AppleBuilds.Request(.c, .arm64, .iOS), AppleBuilds.Request(.c, .x86_64, .iOS)]

    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    func put(_ server: ServerProcess, _ token: String, _ buildID: String, _ body: [UInt8], name: String = "file")
        async throws -> HTTP.Answer
    {
        try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)?name=\(name)",
            headers: [("Authorization", "Bearer \(token)")], body: body)
    }

    func post(_ server: ServerProcess, _ token: String, _ body: [UInt8], name: String = "upload") async throws
        -> HTTP.Answer
    {
        try await http.send(
            .POST, server.baseURL + "/api/v1/debug-files?name=\(name)", headers: [("Authorization", "Bearer \(token)")],
            body: body)
    }

    func get(_ server: ServerProcess, _ token: String, _ path: String) async throws -> HTTP.Answer {
        try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(token)")])
    }

    func files(_ server: ServerProcess, _ token: String) async throws -> [[String: Any]] {
        try await get(server, token, "/api/v1/debug-files").json["files"] as? [[String: Any]] ?? []
    }

    /// `(build_id, kind) → sha256` of a project's stored files.
    func rows(_ server: ServerProcess, _ token: String) async throws -> [String: String] {
        var out: [String: String] = [:]
        for file in try await files(server, token) {
            out["\(file["build_id"] as? String ?? "?") \(file["kind"] as? String ?? "?")"] = file["sha256"] as? String
        }
        return out
    }

    static func sha256(_ path: String) throws -> String { String(try Command.check("sha256sum", [path]).prefix(64)) }

    /// The thin slice of `arch` that llvm-lipo-19 extracts from a fat file.
    static func thinSlice(_ fat: String, _ arch: String, in folder: TempFolder) throws -> String {
        let out = folder.file("\(URL(fileURLWithPath: fat).lastPathComponent)-\(arch)")
        try Command.check("llvm-lipo-19", [fat, "-thin", arch, "-output", out])
        return out
    }

    @Test func aDSYMAndAStrippedExecutableKeepTheirOwnRowsInEitherOrder() async throws {
        let build = try AppleBuilds.build(Self.thin)
        let folder = ServerProcess.newFolder()
        let first = try await ServerProcess.createProject("dsym-first", in: folder)
        let second = try await ServerProcess.createProject("exe-first", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let dsym = try bytes(build.dwarfFile)
        let stripped = try bytes(build.stripped)

        // Given one project uploads the dSYM then the stripped executable, and the other the other way round…
        for (token, order) in [(first.upload, [dsym, stripped]), (second.upload, [stripped, dsym])] {
            for body in order {
                let answer = try await put(server, token, build.uuid, body)
                #expect(answer.status == 201, "\(answer.json)")
            }
        }
        // …both end with the dSYM serving debuginfo and the executable serving executable: neither displaced the other.
        let expected = [
            "\(build.uuid) debuginfo": try Self.sha256(build.dwarfFile),
            "\(build.uuid) executable": try Self.sha256(build.stripped),
        ]
        for token in [first.upload, second.upload] {
            #expect(try await rows(server, token) == expected)
            let listed = try await files(server, token)
            #expect(Set(listed.compactMap { $0["file_type"] as? String }) == ["dsym", "executable"])
            #expect(listed.allSatisfy { $0["architecture"] as? String == "arm64" })
            // debuginfod answers with the very bytes uploaded.
            #expect(try await get(server, token, "/buildid/\(build.uuid)/debuginfo").body == dsym)
            #expect(try await get(server, token, "/buildid/\(build.uuid)/executable").body == stripped)
        }
        // debuginfod's sections by their ELF names: the dSYM's DWARF, the executable's code (as llvm-objcopy dumps them).
        let scratch = try TempFolder("sections")
        try Command.check(
            "llvm-objcopy-19",
            [
                "--dump-section", "__DWARF,__debug_info=" + scratch.file("info"), "--dump-section",
                "__DWARF,__debug_str_offs=" + scratch.file("offs"),
                build.dwarfFile, scratch.file("junk1"),
            ])
        try Command.check(
            "llvm-objcopy-19",
            ["--dump-section", "__TEXT,__text=" + scratch.file("text"), build.stripped, scratch.file("junk2")])
        #expect(
            try await get(server, first.upload, "/buildid/\(build.uuid)/section/.debug_info").body
                == (try bytes(scratch.file("info"))))
        #expect(
            try await get(server, first.upload, "/buildid/\(build.uuid)/section/.debug_str_offsets").body
                == (try bytes(scratch.file("offs"))))
        #expect(
            try await get(server, first.upload, "/buildid/\(build.uuid)/section/__text").body
                == (try bytes(scratch.file("text"))))
        #expect(try await get(server, first.upload, "/buildid/\(build.uuid)/section/.debug_nothing").status == 404)
        // Another UUID in the path is refused from the load commands in the first bytes.
        let other = (build.uuid.hasPrefix("0") ? "1" : "0") + build.uuid.dropFirst()
        let wrong = try await put(server, first.upload, other, dsym)
        #expect(wrong.status == 400 && wrong.json["error"] as? String == "build_id_mismatch", "\(wrong.json)")
        #expect((wrong.json["message"] as? String)?.contains("LC_UUID") == true, "\(wrong.json)")
    }

    @Test func aFatUploadIsStoredOneSliceAFile() async throws {
        let fat = try AppleBuilds.fat(Self.fatSlices)
        let uuids = try AppleBuilds.uuids(fat.dwarfFile)
        #expect(uuids.count == 2)
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("fat", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let scratch = try TempFolder("fat-slices")

        // When the fat dSYM is posted…
        let answer = try await post(server, project.upload, try bytes(fat.dwarfFile), name: "Universal")
        #expect(answer.status == 201, "\(answer.json)")
        let stored = try #require(answer.json["files"] as? [[String: Any]])
        // …the answer lists one debuginfo row per slice, under each slice's own UUID and architecture.
        #expect(Set(stored.compactMap { $0["build_id"] as? String }) == Set(uuids.map(\.uuid)))
        #expect(Set(stored.compactMap { $0["architecture"] as? String }) == ["arm64", "x86_64"])
        #expect(stored.allSatisfy { $0["kind"] as? String == "debuginfo" && $0["file_type"] as? String == "dsym" })
        #expect(Set(stored.compactMap { $0["name"] as? String }) == ["Universal (arm64)", "Universal (x86_64)"])
        // debuginfod serves each slice as the thin file llvm-lipo extracts.
        for (arch, uuid) in uuids {
            let thin = try Self.thinSlice(fat.dwarfFile, arch, in: scratch)
            let served = try await get(server, project.upload, "/buildid/\(uuid)/debuginfo")
            #expect(served.status == 200)
            #expect(served.body == (try bytes(thin)), "\(arch)")
            // Another project sees none of it.
            #expect(try await get(server, other.upload, "/buildid/\(uuid)/debuginfo").status == 404)
        }
        #expect(try await files(server, other.upload).isEmpty)

        // PUT takes a fat file too, when one of its slices has the claimed build-id…
        let executables = try AppleBuilds.uuids(fat.binary)
        let claimed = try #require(executables.first { $0.architecture == "arm64" }?.uuid)
        let put = try await put(server, other.upload, claimed, try bytes(fat.binary), name: "Universal")
        #expect(put.status == 201, "\(put.json)")
        #expect((put.json["files"] as? [[String: Any]])?.count == 2)
        #expect(Set(try await files(server, other.upload).compactMap { $0["kind"] as? String }) == ["executable"])
        // …and refuses it, storing nothing, when none has.
        let third = try await ServerProcess.createProject("third", in: folder)
        let refused = try await self.put(
            server, third.upload, String(repeating: "ab", count: 16), try bytes(fat.binary))
        #expect(refused.status == 400 && refused.json["error"] as? String == "build_id_mismatch", "\(refused.json)")
        #expect(try await files(server, third.upload).isEmpty)
    }

    @Test func aZipOfDSYMsIsExpandedAndEachImageStored() async throws {
        let thin = try AppleBuilds.build(.init(.c, .arm64, .macOS))  // not one of the fat file's slices
        let fat = try AppleBuilds.fat(Self.fatSlices)
        let scratch = try TempFolder("dsyms-zip")
        let zip = scratch.file("dSYMs.zip")
        // As App Store Connect packs them: one folder per dSYM, deflated, with the plists beside the DWARF files.
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("Shop.app.dSYM/Contents/Info.plist", "<plist/>")
                z.write(sys.argv[2], "Shop.app.dSYM/Contents/Resources/DWARF/Shop")
                z.write(sys.argv[3], "Universal.framework.dSYM/Contents/Resources/DWARF/Universal")
            """
        try Command.check("python3", ["-c", script, zip, thin.dwarfFile, fat.dwarfFile])
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("zip", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        let answer = try await post(server, project.upload, try bytes(zip), name: "dSYMs.zip")
        #expect(answer.status == 201, "\(answer.json)")
        let expected = Set([thin.uuid] + (try AppleBuilds.uuids(fat.dwarfFile)).map(\.uuid))
        #expect(expected.count == 3)
        let stored = try #require(answer.json["files"] as? [[String: Any]])
        #expect(Set(stored.compactMap { $0["build_id"] as? String }) == expected)
        #expect(stored.contains { $0["name"] as? String == "Shop.app.dSYM/Contents/Resources/DWARF/Shop" })
        #expect(
            try await get(server, project.upload, "/buildid/\(thin.uuid)/debuginfo").body == (try bytes(thin.dwarfFile))
        )

        // A ZIP with no Mach-O in it is refused, naming why.
        let empty = scratch.file("empty.zip")
        try Command.check(
            "python3",
            [
                "-c",
                "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z: z.writestr('README', 'x' * 100)",
                empty,
            ])
        let refused = try await post(server, project.upload, try bytes(empty))
        #expect(
            refused.status == 400 && (refused.json["message"] as? String)?.contains("no Mach-O") == true,
            "\(refused.json)")
    }

    @Test func theQuotaHoldsForEverySlice() async throws {
        let fat = try AppleBuilds.fat(Self.fatSlices)
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("quota", in: folder)
        let server = try await ServerProcess(folder: folder, arguments: ["--debug-file-quota-mb", "0"])
        defer { server.cleanUp() }
        let answer = try await post(server, project.upload, try bytes(fat.dwarfFile))
        #expect(answer.status == 413, "\(answer.json)")
        #expect(answer.json["error"] as? String == "quota_exceeded")
        #expect(try await files(server, project.upload).isEmpty)
    }

    @Test func foreignAndHostileBytesAreRefusedNamingWhatIsWrong() async throws {
        let build = try AppleBuilds.build(Self.thin)
        let fat = try AppleBuilds.fat(Self.fatSlices)
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("hostile", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let dsym = try bytes(build.dwarfFile)
        let fatBytes = try bytes(fat.dwarfFile)

        // Neither ELF nor Mach-O: refused from the first bytes, with the compatible code.
        for answer in [
            try await post(server, project.upload, Array("#!/bin/sh\necho hi\n".utf8)),
            try await put(server, project.upload, build.uuid, Array(repeating: 0, count: 1 << 16)),
        ] {
            #expect(answer.status == 400 && answer.json["error"] as? String == "not_elf", "\(answer.json)")
            #expect(
                (answer.json["message"] as? String)?.contains("not an ELF or Mach-O file") == true, "\(answer.json)")
        }

        var huge = dsym  // ncmds past the reader's bound
        huge.replaceSubrange(16..<20, with: [0xff, 0xff, 0xff, 0x7f])
        let cut = Array(dsym.prefix(dsym.count / 3))  // sections past the end
        var overlapping = fatBytes  // the second slice starts where the first does
        overlapping.replaceSubrange(36..<40, with: overlapping[16..<20])
        var nested = fatBytes  // a fat file inside the fat file
        let firstSlice = Int(
            UInt32(fatBytes[16]) << 24 | UInt32(fatBytes[17]) << 16 | UInt32(fatBytes[18]) << 8 | UInt32(fatBytes[19]))
        nested.replaceSubrange(firstSlice..<(firstSlice + 8), with: fatBytes[0..<8])
        for (label, body, says) in [
            ("ncmds", huge, "load commands"), ("truncated", cut, "truncated Mach-O file"),
            ("overlap", overlapping, "overlap"),
            ("nested", nested, "a fat file inside fat architecture"),
        ] {
            let answer = try await post(server, project.upload, body, name: label)
            #expect(answer.status == 400, "\(label): \(answer.json)")
            #expect(answer.json["error"] as? String == "not_elf", "\(label): \(answer.json)")
            #expect((answer.json["message"] as? String)?.contains(says) == true, "\(label): \(answer.json)")
        }
        #expect(try await files(server, project.upload).isEmpty)
    }
    @Test func sentryCLIUploadsFatDSYMsAndExecutablesOneSliceAFile() async throws {
        let tool = try #require(
            SentryCLIEndToEndTests.sentryCLI, "sentry-cli is not installed (tools/test installs it with pip)")
        let fat = try AppleBuilds.fat(Self.fatSlices)
        let tree = try TempFolder("sentry-cli-macho")
        try FileManager.default.createDirectory(atPath: tree.file("bin"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fat.dSYMBundle, toPath: tree.file("bin/Universal.dSYM"))
        try FileManager.default.copyItem(atPath: fat.binary, toPath: tree.file("bin/Universal"))
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ios", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        // When sentry-cli uploads the dSYM bundle and the universal executable…
        func upload() throws -> (status: Int32, output: String) {
            let environment = SentryCLIEndToEndTests.quiet.merging([
                "SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": project.upload,
            ]) { $1 }
            let run = try Command.run(
                tool, ["debug-files", "upload", "--org", "o", "--project", "ios", "--wait", "bin"], in: tree.path,
                environment: environment)
            return (run.status, run.out + run.err)
        }
        let run = try upload()
        #expect(run.status == 0, "\(run.output)\n\(server.log.suffix(3000))")
        // …every slice of both ends `OK` under its own UUID, as sentry-cli spells it (lower-case, hyphenated).
        let dsyms = try AppleBuilds.uuids(fat.dwarfFile)
        let executables = try AppleBuilds.uuids(fat.binary)
        for (arch, uuid) in dsyms + executables {
            #expect(run.output.contains("OK \(Self.hyphenated(uuid))"), "\(arch) \(uuid): \(run.output)")
        }
        // The server holds one thin file per slice: the dSYMs' for debuginfo, the executable's for executable.
        var expected: Set<String> = []
        for (_, uuid) in dsyms { expected.insert("\(uuid) debuginfo") }
        for (_, uuid) in executables { expected.insert("\(uuid) executable") }
        #expect(Set(try await rows(server, project.upload).keys) == expected)
        let scratch = try TempFolder("sentry-cli-thin")
        for (arch, uuid) in dsyms {
            let served = try await get(server, project.upload, "/buildid/\(uuid)/debuginfo")
            #expect(served.body == (try bytes(try Self.thinSlice(fat.dwarfFile, arch, in: scratch))), "\(arch)")
        }
        // A second run finds every slice on the server.
        let again = try upload()
        #expect(again.status == 0 && again.output.contains("Nothing to upload"), "\(again.output)")
    }

    @Test func sentryCLIRecognisesADSYMStoredByPUTAndSendsNothing() async throws {
        let tool = try #require(
            SentryCLIEndToEndTests.sentryCLI, "sentry-cli is not installed (tools/test installs it with pip)")
        let build = try AppleBuilds.build(.init(.cpp, .arm64, .iOS))
        let tree = try TempFolder("sentry-cli-known")
        try FileManager.default.createDirectory(atPath: tree.file("bin"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: build.dSYMBundle, toPath: tree.file("bin/Shop.dSYM"))
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("known", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        // Given the dSYM was stored by a PUT (symupload's way)…
        let stored = try await put(server, project.upload, build.uuid, try bytes(build.dwarfFile), name: "Shop")
        #expect(stored.status == 201, "\(stored.json)")
        // …sentry-cli, offered the same file, finds it on the server by its debug id and SHA-1: no chunk is sent.
        let environment = SentryCLIEndToEndTests.quiet.merging([
            "SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": project.upload,
        ]) { $1 }
        let run = try Command.run(
            tool, ["debug-files", "upload", "--org", "o", "--project", "known", "--wait", "bin"], in: tree.path,
            environment: environment)
        #expect(run.status == 0, "\(run.out)\(run.err)")
        #expect((run.out + run.err).contains("Found 1 debug information file"), "\(run.out)\(run.err)")
        #expect((run.out + run.err).contains("Nothing to upload"), "\(run.out)\(run.err)")
        #expect(try await SentryCLIEndToEndTests().metric(server, "faultline_chunk_upload_requests_total") == 0)
        #expect(try await files(server, project.upload).count == 1)
    }

    /// `4c4c44c1-5555-3144-a18d-19088842705b` from 32 hex digits.
    static func hyphenated(_ hex: String) -> String {
        let h = Array(hex)
        return [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map { String($0) }.joined(separator: "-")
    }
}
