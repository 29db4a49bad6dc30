import FaultlineCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// sentry-cli's chunk upload and assemble through the real router, with real ELF files and a real SQLite file.
@Suite struct SentryChunkUploadRouteTests {
    static let boundary = "------------------------d74496d66958873e"

    /// The SHA-1 hex of `bytes`, computed by coreutils (an independent implementation).
    static func sha1(_ bytes: [UInt8]) throws -> String {
        let folder = try TempFolder("sha1")
        let file = folder.file("data")
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return String(try Command.check("sha1sum", [file]).prefix(40))
    }

    /// `aba11aef f7e7 e9e2 e1bc 8446…` → `ef1aa1ab-e7f7-e2e9-e1bc-8446…`, written out by hand.
    static func debugID(_ buildID: String) -> String {
        let h = Array(buildID)
        func swap(_ range: Range<Int>) -> String {
            stride(from: range.upperBound - 2, through: range.lowerBound, by: -2).map { String(h[$0..<($0 + 2)]) }
                .joined()
        }
        return "\(swap(0..<8))-\(swap(8..<12))-\(swap(12..<16))-\(String(h[16..<20]))-\(String(h[20..<32]))"
    }

    /// A multipart body with one part per chunk; `gzip` picks `file_gzip` or `file` per chunk.
    static func multipart(_ parts: [(name: String, filename: String, body: [UInt8])]) -> ByteBuffer {
        var out: [UInt8] = []
        for part in parts {
            out += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\"; filename=\"\(part.filename)\"\r\n"
                    .utf8)
            out += Array("Content-Type: application/octet-stream\r\n\r\n".utf8)
            out += part.body
            out += Array("\r\n".utf8)
        }
        out += Array("--\(boundary)--\r\n".utf8)
        return ByteBuffer(bytes: out)
    }

    static func chunkParts(_ file: [UInt8], size: Int) throws -> (
        parts: [(name: String, filename: String, body: [UInt8])], sums: [String]
    ) {
        var parts: [(name: String, filename: String, body: [UInt8])] = []
        var sums: [String] = []
        for (i, start) in stride(from: 0, to: file.count, by: size).enumerated() {
            let chunk = Array(file[start..<min(file.count, start + size)])
            let sum = try sha1(chunk)
            sums.append(sum)
            // Both encodings sentry-cli may use: gzip'd (the default) and plain (no compression offered).
            parts.append(i % 2 == 0 ? ("file_gzip", sum, Payloads.gzip(chunk)) : ("file", sum, chunk))
        }
        return (parts, sums)
    }

    func headers(_ app: TestApp, multipart: Bool = false) -> HTTPFields {
        var h = app.readHeaders
        if multipart {
            h[.contentType] = "multipart/form-data; boundary=\(Self.boundary)"
        } else {
            h[.contentType] = "application/json"
        }
        return h
    }

    func assembleBody(_ sum: String, name: String, debugID: String, chunks: [String]) -> ByteBuffer {
        let list = chunks.map { "\"\($0)\"" }.joined(separator: ",")
        return ByteBuffer(string: #"{"\#(sum)":{"name":"\#(name)","debug_id":"\#(debugID)","chunks":[\#(list)]}}"#)
    }

    @Test func optionsAreWhatSentryCLIReads() async throws {
        let app = try await TestApp()
        try await app.test { client in
            // Without a public URL the URL is relative to the API root sentry-cli uses (never the request's Host).
            try await client.execute(
                uri: "/api/0/organizations/acme/chunk-upload/", method: .get, headers: app.readHeaders
            ) { response in
                #expect(response.status == .ok)
                let json = response.json
                #expect(json["url"] as? String == "/organizations/acme/chunk-upload/")
                #expect(json["chunkSize"] as? Int == 8 << 20)
                #expect(json["chunksPerRequest"] as? Int == 64)
                #expect(json["maxRequestSize"] as? Int == 32 << 20)
                #expect(json["maxFileSize"] as? Int == 4 << 30)
                #expect((4...8).contains(json["concurrency"] as? Int ?? 0))
                #expect(json["hashAlgorithm"] as? String == "sha1")
                #expect(json["compression"] as? [String] == ["gzip"])
                #expect((json["accept"] as? [String])?.contains("debug_files") == true)
            }
            // An organization name that would change the URL is refused.
            try await client.execute(
                uri: "/api/0/organizations/a%2Fb/chunk-upload/", method: .get, headers: app.readHeaders
            ) { response in
                #expect(response.status == .notFound)
                #expect(response.json["detail"] is String)
            }
        }
        let behindProxy = try await TestApp(publicURL: "https://symbols.example.com/")
        try await behindProxy.test { client in
            try await client.execute(
                uri: "/api/0/organizations/o/chunk-upload", method: .get, headers: behindProxy.readHeaders
            ) { response in
                #expect(
                    response.json["url"] as? String == "https://symbols.example.com/api/0/organizations/o/chunk-upload/"
                )
            }
            try await client.execute(uri: "/api/0/", method: .get, headers: behindProxy.readHeaders) { response in
                #expect(response.status == .ok)
                #expect(
                    (response.json["auth"] as? [String: Any])?["scopes"] as? [String] == [
                        "project:read", "project:releases", "project:write",
                    ])
            }
        }
    }

    @Test func refusalsAreSentryShapedDetails() async throws {
        let app = try await TestApp()
        try await app.test { client in
            try await client.execute(uri: "/api/0/organizations/o/chunk-upload/", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect((response.json["detail"] as? String)?.contains("SENTRY_AUTH_TOKEN") == true)
            }
            // The ingest key is not an upload token; a wrong token neither.
            for token in [app.credentials.ingestKey, "sntryu_nope"] {
                try await client.execute(
                    uri: "/api/0/organizations/o/chunk-upload/", method: .get,
                    headers: [.authorization: "Bearer \(token)"]
                ) { response in
                    #expect(response.status == .unauthorized)
                    #expect(response.json["detail"] is String)
                }
            }
            let other = assembleBody(String(repeating: "a", count: 40), name: "x", debugID: "x", chunks: [])
            try await client.execute(
                uri: "/api/0/projects/o/other/files/difs/assemble/", method: .post, headers: headers(app), body: other
            ) { response in
                #expect(response.status == .notFound)
                #expect((response.json["detail"] as? String)?.contains("belongs to project app") == true)
            }
            for bad in [
                #"{"nothex":{"name":"x","chunks":[]}}"#,
                #"{"\#(String(repeating: "a", count: 40))":{"name":"x","chunks":["../x"]}}"#, "[]",
            ] {
                try await client.execute(
                    uri: "/api/0/projects/o/app/files/difs/assemble/", method: .post, headers: headers(app),
                    body: ByteBuffer(string: bad)
                ) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                    #expect(response.json["detail"] is String)
                }
            }
        }
    }

    @Test func chunksAreCheckedAndRefusedWithADetail() async throws {
        let app = try await TestApp()
        let chunk = Array("hello chunk".utf8)
        let sum = try Self.sha1(chunk)
        try await app.test { client in
            let upload = "/api/0/organizations/o/chunk-upload/"
            // A chunk under the wrong name.
            let lying = Self.multipart([("file_gzip", String(repeating: "0", count: 40), Payloads.gzip(chunk))])
            try await client.execute(uri: upload, method: .post, headers: headers(app, multipart: true), body: lying) {
                response in
                #expect(response.status == .badRequest)
                #expect((response.json["detail"] as? String)?.contains(sum) == true)
            }
            // Not multipart, a filename that is not a checksum, an unknown field, a truncated body, bad gzip.
            try await client.execute(uri: upload, method: .post, headers: headers(app), body: ByteBuffer(string: "{}"))
            { response in
                #expect(response.status == .unsupportedMediaType)
                #expect(response.json["detail"] is String)
            }
            let cases: [(ByteBuffer, HTTPResponse.Status)] = [
                (Self.multipart([("file", "../../etc/passwd", chunk)]), .badRequest),
                (Self.multipart([("metadata", sum, chunk)]), .badRequest),
                (
                    ByteBuffer(
                        string:
                            "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(sum)\"\r\n\r\nhel"
                    ), .badRequest
                ),
                (Self.multipart([("file_gzip", sum, [0x1f, 0x8b, 1, 2, 3])]), .badRequest),
                // A gzip bomb stops at the chunk size.
                (
                    Self.multipart([("file_gzip", sum, Payloads.gzip([UInt8](repeating: 0, count: (8 << 20) + 1)))]),
                    .contentTooLarge
                ),
            ]
            for (body, status) in cases {
                try await client.execute(uri: upload, method: .post, headers: headers(app, multipart: true), body: body)
                { response in
                    #expect(response.status == status)
                    #expect(response.json["detail"] is String)
                }
            }
            // A good one.
            try await client.execute(
                uri: upload, method: .post, headers: headers(app, multipart: true),
                body: Self.multipart([("file_gzip", sum, Payloads.gzip(chunk))])
            ) { response in
                #expect(response.status == .ok)
            }
        }
        #expect(FileManager.default.fileExists(atPath: app.folder + "/chunks/1/\(sum.prefix(2))/\(sum)"))
    }

    @Test func assemblingARealELFFileStoresItLikeSymupload() async throws {
        let app = try await TestApp()
        let program = try BuiltProgram(flags: ["-O2", "-g", "-fPIE", "-pie"])
        let full = Array(try Data(contentsOf: URL(fileURLWithPath: program.full)))
        let debug = Array(try Data(contentsOf: URL(fileURLWithPath: program.debug)))
        let fullSum = try Self.sha1(full)
        let debugSum = try Self.sha1(debug)
        let debugID = Self.debugID(program.buildID)
        let (parts, sums) = try Self.chunkParts(full, size: 4096)
        #expect(sums.count > 2)

        try await app.test { client in
            let assemble = "/api/0/projects/o/app/files/difs/assemble/"
            let ask = assembleBody(fullSum, name: "/build/out/crashy", debugID: debugID, chunks: sums)
            // Given no chunks, every chunk is asked for.
            try await client.execute(uri: assemble, method: .post, headers: headers(app), body: ask) { response in
                #expect(response.status == .ok)
                let file = response.json[fullSum] as? [String: Any]
                #expect(file?["state"] as? String == "not_found")
                #expect(file?["missingChunks"] as? [String] == sums)
                #expect(file?.keys.contains("detail") == true)  // null, not absent
            }
            try await client.execute(
                uri: "/api/0/organizations/o/chunk-upload/", method: .post, headers: headers(app, multipart: true),
                body: Self.multipart(parts)
            ) { response in
                #expect(response.status == .ok)
            }
            // Then the file is assembled, verified and described the way Sentry does.
            try await client.execute(uri: assemble, method: .post, headers: headers(app), body: ask) { response in
                let file = response.json[fullSum] as? [String: Any]
                #expect(file?["state"] as? String == "ok", "\(String(buffer: response.body))")
                #expect(file?["missingChunks"] as? [String] == [])
                let dif = try #require(file?["dif"] as? [String: Any])
                #expect(dif["debugId"] as? String == debugID)
                #expect(dif["uuid"] as? String == debugID)
                #expect(dif["codeId"] as? String == program.buildID)
                #expect(dif["cpuName"] as? String == "x86_64")
                #expect(dif["objectName"] as? String == "crashy")
                #expect(dif["symbolType"] as? String == "elf")
                #expect(dif["sha1"] as? String == fullSum)
                #expect(dif["size"] as? Int == full.count)
                #expect((dif["headers"] as? [String: String])?["Content-Type"] == "application/octet-stream")
                #expect(
                    (dif["dateCreated"] as? String)?.range(
                        of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$"#, options: .regularExpression) != nil)
                let data = dif["data"] as? [String: Any]
                #expect(data?["type"] as? String == "lib")  // PIE is ET_DYN, as sentry-cli itself says
                #expect(data?["features"] as? [String] == ["symtab", "debug", "unwind"])
            }
            // The same store as symupload's uploads: both kinds, listed by the v1 API.
            try await client.execute(uri: "/api/v1/debug-files", method: .get, headers: app.readHeaders) { response in
                let files = response.json["files"] as? [[String: Any]] ?? []
                #expect(Set(files.compactMap { $0["kind"] as? String }) == ["debuginfo", "executable"])
                #expect(files.allSatisfy { $0["build_id"] as? String == program.buildID })
                #expect(Set(files.compactMap { $0["name"] as? String }) == ["crashy"])
            }
            // Asked again: answered from the record, no chunks needed (they were removed).
            try await client.execute(uri: assemble, method: .post, headers: headers(app), body: ask) { response in
                #expect((response.json[fullSum] as? [String: Any])?["state"] as? String == "ok")
            }
            #expect(
                (try? FileManager.default.subpathsOfDirectory(atPath: app.folder + "/chunks/1"))?.filter {
                    $0.count > 3
                }.isEmpty ?? true)

            // symupload's way, for the split debug file: it replaces the project's debuginfo (newest wins).
            try await client.execute(
                uri: "/api/v1/debug-files/\(program.buildID)?name=crashy.debug", method: .put, headers: app.readHeaders,
                body: ByteBuffer(bytes: debug)
            ) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: "/api/v1/debug-files", method: .get, headers: app.readHeaders) { response in
                let files = response.json["files"] as? [[String: Any]] ?? []
                #expect(Set(files.compactMap { $0["name"] as? String }) == ["crashy", "crashy.debug"])
            }
            // The split debug file, uploaded with symupload, is recognised by its checksum: nothing to send.
            let debugSums = stride(from: 0, to: debug.count, by: 8 << 20).map { _ in debugSum }  // one chunk: the file itself
            try await client.execute(
                uri: assemble, method: .post, headers: headers(app),
                body: assembleBody(debugSum, name: "crashy.debug", debugID: debugID, chunks: debugSums)
            ) { response in
                let file = response.json[debugSum] as? [String: Any]
                #expect(file?["state"] as? String == "ok", "\(String(buffer: response.body))")
                let dif = file?["dif"] as? [String: Any]
                #expect((dif?["data"] as? [String: Any])?["type"] as? String == "dbg")
                #expect((dif?["data"] as? [String: Any])?["features"] as? [String] == ["symtab", "debug"])
            }
        }
    }

    @Test func aFileThatIsNotELFFailsWithADetail() async throws {
        let app = try await TestApp()
        let text = Array("SYSB not an ELF file at all".utf8)
        let sum = try Self.sha1(text)
        try await app.test { client in
            try await client.execute(
                uri: "/api/0/organizations/o/chunk-upload/", method: .post, headers: headers(app, multipart: true),
                body: Self.multipart([("file", sum, text)])
            ) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(
                uri: "/api/0/projects/o/app/files/difs/assemble/", method: .post, headers: headers(app),
                body: assembleBody(
                    sum, name: "bundle.src.zip", debugID: "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1", chunks: [sum])
            ) { response in
                let file = response.json[sum] as? [String: Any]
                #expect(file?["state"] as? String == "error")
                #expect((file?["detail"] as? String)?.contains("not an ELF or Mach-O file") == true)
                #expect(file?["dif"] == nil)
            }
        }
    }

    // MARK: issue #39 (5): a file is planned before a byte of it is written

    /// Bytes of every file under a data folder's debug-file store (blobs, and uploads being written).
    static func storedBytes(_ dataFolder: String) -> UInt64 {
        let root = dataFolder + "/debug-files"
        var total: UInt64 = 0
        for path in (try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? [] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: root + "/" + path)
            if attributes?[.type] as? FileAttributeType == .typeRegular {
                total += (attributes?[.size] as? UInt64) ?? 0
            }
        }
        return total
    }

    /// A real ELF file padded with `fill` to 1 MiB: its copies one after another still read as that ELF file.
    static func paddedELF(_ program: BuiltProgram, fill: UInt8 = 0) throws -> [UInt8] {
        let elf = Array(try Data(contentsOf: URL(fileURLWithPath: program.full)))
        return elf + [UInt8](repeating: fill, count: (1 << 20) - elf.count)
    }

    /// The SHA-1 hex of `chunk` repeated `times` times, computed by coreutils without holding the file.
    static func sha1(of chunk: [UInt8], times: Int) throws -> String {
        let folder = try TempFolder("sha1")
        try Data(chunk).write(to: URL(fileURLWithPath: folder.file("chunk")))
        return String(
            try Command.check("sh", ["-c", "for i in $(seq \(times)); do cat chunk; done | sha1sum"], in: folder.path)
                .prefix(40))
    }

    func uploadChunks(_ client: any TestClientProtocol, _ app: TestApp, _ chunks: [[UInt8]]) async throws -> [String] {
        var parts: [(name: String, filename: String, body: [UInt8])] = []
        for chunk in chunks { parts.append(("file_gzip", try Self.sha1(chunk), Payloads.gzip(chunk))) }
        try await client.execute(
            uri: "/api/0/organizations/o/chunk-upload/", method: .post, headers: headers(app, multipart: true),
            body: Self.multipart(parts)
        ) { response in
            #expect(response.status == .ok)
        }
        return parts.map(\.filename)
    }

    /// Assembles one file; returns its answer (`{state, missingChunks, detail, dif?}`).
    func assembleOne(_ client: any TestClientProtocol, _ app: TestApp, _ sum: String, chunks: [String]) async throws
        -> [String: Any]
    {
        try await client.execute(
            uri: "/api/0/projects/o/app/files/difs/assemble/", method: .post, headers: headers(app),
            body: assembleBody(sum, name: "crashy", debugID: "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1", chunks: chunks)
        ) { response in
            #expect(response.status == .ok)
            return response.json[sum] as? [String: Any] ?? [:]
        }
    }

    @Test func oneChunkListedManyTimesIsRefusedBeforeAnythingIsWritten() async throws {
        let app = try await TestApp()
        let program = try BuiltProgram(flags: ["-O2", "-g", "-fPIE", "-pie"])
        // Given one 1 MiB chunk (a real ELF file padded with zeros: 12 KB gzip'd) listed 64 times: a valid 64 MiB ELF
        // file that the server would have written, hashed and stored, 5,000 times what was sent.
        let chunk = try Self.paddedELF(program)
        #expect(Payloads.gzip(chunk).count < 64 << 10)
        let fileSum = try Self.sha1(of: chunk, times: 64)
        try await app.test { client in
            let sums = try await uploadChunks(client, app, [chunk])
            let before = Self.storedBytes(app.folder)

            // When it is assembled, then it is refused, as sentry-cli expects an error (state, detail, no chunks to send)…
            let file = try await assembleOne(client, app, fileSum, chunks: Array(repeating: sums[0], count: 64))
            #expect(file["state"] as? String == "error", "\(file)")
            #expect((file["detail"] as? String)?.contains("listed 64 times") == true, "\(file)")
            #expect(file["missingChunks"] as? [String] == [])
            #expect(file["dif"] == nil)
            // …and nothing was written: the store is as it was, no file is listed.
            #expect(Self.storedBytes(app.folder) == before)
            try await client.execute(uri: "/api/v1/debug-files", method: .get, headers: app.readHeaders) { response in
                #expect((response.json["files"] as? [[String: Any]])?.isEmpty == true)
            }

            // The same chunk as the file it honestly is (listed once) is stored: the list was refused, not the bytes.
            let honest = try await assembleOne(client, app, sums[0], chunks: sums)
            #expect(honest["state"] as? String == "ok", "\(honest)")
            #expect((honest["dif"] as? [String: Any])?["size"] as? Int == 1 << 20)
            #expect(Self.storedBytes(app.folder) >= before + (1 << 20))
        }
    }

    @Test func theFirstBytesAndTheQuotaAreCheckedBeforeAnythingIsWritten() async throws {
        let app = try await TestApp(debugFileQuota: 3 << 20)
        let program = try BuiltProgram(flags: ["-O2", "-g", "-fPIE", "-pie"])
        let elf = try Self.paddedELF(program)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        let fillers = (1...3).map { [UInt8](repeating: UInt8($0), count: 1 << 20) }
        try await app.test { client in
            let sums = try await uploadChunks(client, app, [elf, zeros] + fillers)
            let before = Self.storedBytes(app.folder)

            // Zeros (a gzip bomb's favourite) do not begin an ELF file or a source bundle: refused from their first bytes.
            let notELF = try await assembleOne(
                client, app, try Self.sha1(of: zeros, times: 2), chunks: [sums[1], sums[1]])
            #expect(notELF["state"] as? String == "error", "\(notELF)")
            #expect((notELF["detail"] as? String)?.contains("not an ELF or Mach-O file") == true, "\(notELF)")
            #expect(Self.storedBytes(app.folder) == before)

            // 4 MiB listed against a 3 MiB quota: refused from the listed sizes, naming the quota.
            let four = elf + fillers.joined()
            let overQuota = try await assembleOne(client, app, try Self.sha1(four), chunks: [sums[0]] + sums[2...])
            #expect(overQuota["state"] as? String == "error", "\(overQuota)")
            #expect((overQuota["detail"] as? String)?.contains("quota") == true, "\(overQuota)")
            #expect(Self.storedBytes(app.folder) == before)

            // A legitimate file of two chunks within the quota is assembled and stored.
            let two = elf + fillers[0]
            let stored = try await assembleOne(client, app, try Self.sha1(two), chunks: [sums[0], sums[2]])
            #expect(stored["state"] as? String == "ok", "\(stored)")
            #expect((stored["dif"] as? [String: Any])?["codeId"] as? String == program.buildID)
            #expect(Self.storedBytes(app.folder) >= before + (2 << 20))
        }
    }
}
