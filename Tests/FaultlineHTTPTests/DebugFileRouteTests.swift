import FaultlineCore
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

/// A gcc-built program, its split debug file and its stripped executable.
struct BuiltProgram {
    let folder: TempFolder
    let full: String
    let debug: String
    let stripped: String
    let buildID: String

    init(flags: [String] = ["-O2", "-g"]) throws {
        folder = try TempFolder("faultline-elf")
        full = try ELFFixtures.compileC(ELFFixtures.crashyC, name: "crashy", in: folder, flags: flags)
        debug = folder.file("crashy.debug")
        stripped = folder.file("crashy.stripped")
        try Command.check("objcopy", ["--only-keep-debug", full, debug])
        try Command.check("objcopy", ["--strip-debug", "--strip-unneeded", full, stripped])
        buildID = try ELFFixtures.readelfBuildID(full) ?? ""
    }

    static func bytes(_ path: String) throws -> ByteBuffer {
        ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

@Suite struct DebugFileRouteTests {
    /// The SHA-256 hex of a file, computed by coreutils (an independent implementation).
    static func sha256(_ path: String) throws -> String {
        String(try Command.check("sha256sum", [path]).prefix(64))
    }

    @Test func uploadsAreVerifiedStoredAndReportedMissingUntilThen() async throws {
        let app = try await TestApp()
        let program = try BuiltProgram()
        let missingBody = ByteBuffer(
            string: #"{"files":[{"build_id":"\#(program.buildID)","kinds":["debuginfo","executable"]}]}"#)
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/debug-files/missing", method: .post, headers: app.readHeaders, body: missingBody
            ) { response in
                #expect(response.status == .ok)
                let missing = response.json["missing"] as? [[String: Any]]
                #expect(missing?.first?["kinds"] as? [String] == ["debuginfo", "executable"])
            }
            // The split debug file serves debuginfo only.
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)?name=crashy.debug", method: .put, headers: app.readHeaders,
                body: try BuiltProgram.bytes(program.debug)
            ) { response in
                #expect(response.status == .created)
                let files = response.json["files"] as? [[String: Any]]
                #expect(files?.map { $0["kind"] as? String } == ["debuginfo"])
                #expect(files?.first?["features"] as? [String] == ["symtab", "debug"])
                #expect(files?.first?["architecture"] as? String == "x86_64")
                #expect(files?.first?["sha256"] as? String == (try? DebugFileRouteTests.sha256(program.debug)))
                #expect(
                    files?.first?["size"] as? Int == (try? Data(contentsOf: URL(fileURLWithPath: program.debug)).count))
            }
            try await client.execute(
                uri: "/api/v1/debug-files/missing", method: .post, headers: app.readHeaders, body: missingBody
            ) { response in
                #expect((response.json["missing"] as? [[String: Any]])?.first?["kinds"] as? [String] == ["executable"])
            }
            // The stripped executable, gzip'd on the wire.
            var gzipped = app.readHeaders
            gzipped[.contentEncoding] = "gzip"
            let stripped = Payloads.gzip(Array(try Data(contentsOf: URL(fileURLWithPath: program.stripped))))
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)", method: .put, headers: gzipped,
                body: ByteBuffer(bytes: stripped)
            ) { response in
                #expect(response.status == .created)
                #expect((response.json["files"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["executable"])
            }
            try await client.execute(
                uri: "/api/v1/debug-files/missing", method: .post, headers: app.readHeaders, body: missingBody
            ) { response in
                #expect((response.json["missing"] as? [Any])?.isEmpty == true)
            }
            try await client.execute(uri: "/api/v1/debug-files", method: .get, headers: app.readHeaders) { response in
                #expect((response.json["files"] as? [Any])?.count == 2)
            }
        }
        // Stored by content hash on disk, byte for byte.
        let sum = try DebugFileRouteTests.sha256(program.debug)
        let onDisk = "\(app.folder)/debug-files/blobs/\(sum.prefix(2))/\(sum)"
        #expect(FileManager.default.contentsEqual(atPath: onDisk, andPath: program.debug))
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(app.folder)/debug-files/tmp").isEmpty)
    }

    @Test func badUploadsAreRefusedCleanly() async throws {
        let app = try await TestApp()
        let program = try BuiltProgram()
        let other = try BuiltProgram(flags: ["-O0", "-g"])
        let noID = try ELFFixtures.compileC(
            ELFFixtures.crashyC, name: "noid", in: program.folder, flags: ["-g", "-Wl,--build-id=none"])
        var truncated = try BuiltProgram.bytes(program.debug)
        truncated.moveWriterIndex(to: 200)
        let cases: [(String, ByteBuffer, HTTPResponse.Status, String)] = [
            (program.buildID, ByteBuffer(string: "#!/bin/sh\necho not elf\n"), .badRequest, "not_elf"),
            (program.buildID, truncated, .badRequest, "not_elf"),
            (program.buildID, try BuiltProgram.bytes(other.full), .badRequest, "build_id_mismatch"),
            (program.buildID, try BuiltProgram.bytes(noID), .badRequest, "no_build_id"),
            ("xyz", try BuiltProgram.bytes(program.full), .badRequest, "invalid_field"),
        ]
        try await app.test { client in
            for (id, body, status, code) in cases {
                try await client.execute(
                    uri: "/api/v1/debug-files/\(id)", method: .put, headers: app.readHeaders, body: body
                ) { response in
                    #expect(response.status == status)
                    #expect(response.json["error"] as? String == code)
                }
            }
            // Ingest keys cannot upload.
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)", method: .put, headers: app.ingestHeaders,
                body: try BuiltProgram.bytes(program.full)
            ) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(app.folder)/debug-files/tmp").isEmpty)
        #expect(try await app.root.debugFileService(quotaBytes: 1).list(project: app.credentials.project).isEmpty)
    }

    @Test func theQuotaIsEnforced() async throws {
        let program = try BuiltProgram()
        let size = UInt64(try BuiltProgram.bytes(program.debug).readableBytes)
        let app = try await TestApp(debugFileQuota: size + size / 2)
        try await app.test { client in
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)", method: .put, headers: app.readHeaders,
                body: try BuiltProgram.bytes(program.debug)
            ) { #expect($0.status == .created) }
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)", method: .put, headers: app.readHeaders,
                body: try BuiltProgram.bytes(program.stripped)
            ) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.json["error"] as? String == "quota_exceeded")
            }
            // Uploading what is already stored again costs nothing and succeeds.
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)", method: .put, headers: app.readHeaders,
                body: try BuiltProgram.bytes(program.debug)
            ) { #expect($0.status == .created) }
        }
    }

    @Test func debuginfodRoutesServeFilesAndSectionsBehindTheToken() async throws {
        let app = try await TestApp()
        let program = try BuiltProgram()
        let id = program.buildID
        let debugBytes = try Data(contentsOf: URL(fileURLWithPath: program.debug))
        let strippedBytes = try Data(contentsOf: URL(fileURLWithPath: program.stripped))
        try Command.check(
            "objcopy",
            [
                "--dump-section", ".debug_info=" + program.folder.file("info.bin"), program.debug,
                program.folder.file("scratch"),
            ])
        let infoBytes = try Data(contentsOf: URL(fileURLWithPath: program.folder.file("info.bin")))
        try await app.test { client in
            for path in [program.debug, program.stripped] {
                try await client.execute(
                    uri: "/api/v1/debug-files/\(id)", method: .put, headers: app.readHeaders,
                    body: try BuiltProgram.bytes(path)
                ) { #expect($0.status == .created) }
            }
            try await client.execute(uri: "/buildid/\(id)/debuginfo", method: .get) {
                #expect($0.status == .unauthorized)
            }
            for headers in [app.readHeaders, app.adminHeaders] {
                try await client.execute(uri: "/buildid/\(id)/debuginfo", method: .get, headers: headers) { response in
                    #expect(response.status == .ok)
                    #expect(Data(response.body.readableBytesView) == debugBytes)
                }
            }
            try await client.execute(uri: "/buildid/\(id)/executable", method: .get, headers: app.readHeaders) {
                response in
                #expect(Data(response.body.readableBytesView) == strippedBytes)
            }
            try await client.execute(uri: "/buildid/\(id)/section/.debug_info", method: .get, headers: app.readHeaders)
            { response in
                #expect(response.status == .ok)
                #expect(!infoBytes.isEmpty)
                #expect(Data(response.body.readableBytesView) == infoBytes)
            }
            try await client.execute(uri: "/buildid/\(id)/section/.nothing", method: .get, headers: app.readHeaders) {
                #expect($0.status == .notFound)
            }
            try await client.execute(
                uri: "/buildid/\(String(repeating: "ab", count: 20))/debuginfo", method: .get, headers: app.readHeaders
            ) {
                #expect($0.status == .notFound)
            }
        }
    }
}
