import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Uploads are checked while they stream in (issue #9, finding 7), against the real server. What is
/// measured is how many bytes the server process wrote (`wchar` in `/proc/PID/io`: every `write(2)`, to disk
/// or socket), never time: a refused upload may cost a few pieces of 256 KiB, not the gigabyte it inflates to.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct DebugFileStreamingLimitTests {
    let http = HTTP(client: HTTPClient.shared)

    /// Bytes the process has passed to `write(2)` so far.
    static func written(_ pid: Int32) throws -> UInt64 {
        let io = try String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        let line = try #require(io.split(separator: "\n").first { $0.hasPrefix("wchar:") })
        return try #require(UInt64(line.split(separator: " ").last ?? ""))
    }

    /// `prefix` followed by `zeroMiB` MiB of zeros, gzip'd by the gzip tool (streamed: nothing this large is
    /// held in memory).
    static func gzipBomb(prefix: String?, zeroMiB: Int, in folder: TempFolder) throws -> [UInt8] {
        let out = folder.file("bomb-\(UUID().uuidString).gz")
        let head = prefix.map { "cat '\($0)'; " } ?? ""
        _ = try Command.check("sh", ["-c", "{ \(head)head -c \(zeroMiB << 20) /dev/zero; } | gzip -1 > '\(out)'"])
        return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    func put(_ server: ServerProcess, _ token: String, _ buildID: String, _ body: [UInt8], gzip: Bool) async throws
        -> HTTP.Answer
    {
        var headers = [("Authorization", "Bearer \(token)")]
        if gzip { headers.append(("Content-Encoding", "gzip")) }
        return try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)", headers: headers, body: body)
    }

    /// Sends `body` with `Transfer-Encoding: chunked` over a raw connection, looking for the answer between pieces
    /// (the server answers and closes before the body ends); nil when no answer came.
    func putChunked(_ server: ServerProcess, _ token: String, _ buildID: String, _ body: [UInt8]) async throws
        -> RawResponse?
    {
        let connection = try RawConnection(port: server.port)
        try connection.send(
            "PUT /api/v1/debug-files/\(buildID) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n")
        var offset = 0
        while offset < body.count {
            let piece = body[offset..<min(body.count, offset + (256 << 10))]
            do {
                try connection.send(Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10])
            } catch {
                break  // the server has answered and closed
            }
            offset += piece.count
            if let answer = try await connection.readResponse(within: .milliseconds(1)), answer.complete {
                return answer
            }
        }
        if offset >= body.count { try? connection.send("0\r\n\r\n") }
        return try await connection.readResponse(within: .seconds(30))
    }

    /// Sends the upload and returns the answer and how many bytes the server wrote meanwhile.
    func measured(_ server: ServerProcess, _ token: String, _ buildID: String, _ body: [UInt8], gzip: Bool = true)
        async throws
        -> (answer: HTTP.Answer, written: UInt64)
    {
        let before = try Self.written(server.pid)
        let answer = try await put(server, token, buildID, body, gzip: gzip)
        let after = try Self.written(server.pid)
        return (answer, after - before)
    }

    static func folderBytes(_ path: String) -> UInt64 {
        let files = FileManager.default
        return ((try? files.subpathsOfDirectory(atPath: path)) ?? []).reduce(0) { sum, sub in
            guard let attributes = try? files.attributesOfItem(atPath: path + "/" + sub),
                attributes[.type] as? FileAttributeType == .typeRegular
            else { return sum }
            return sum + ((attributes[.size] as? NSNumber)?.uint64Value ?? 0)
        }
    }

    @Test func aGzipBombIsRefusedFromItsFirstBytes() async throws {
        let scratch = try TempFolder("bomb")
        let program = try BuiltProgram()
        let other = try BuiltProgram(flags: ["-O0", "-g"])
        let zeros = try Self.gzipBomb(prefix: nil, zeroMiB: 1024, in: scratch)
        let lying = try Self.gzipBomb(prefix: other.full, zeroMiB: 256, in: scratch)
        #expect(zeros.count < 8 << 20)  // ~4.5 MiB on the wire, 1 GiB inflated
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("bombed", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        // 1 GiB of zeros: not ELF, answered after the first inflated piece.
        let bomb = try await measured(server, project.upload, program.buildID, zeros)
        #expect(bomb.answer.status == 400)
        #expect(bomb.answer.json["error"] as? String == "not_elf")
        #expect(bomb.written < 4 << 20, "wrote \(bomb.written) bytes")

        // A real ELF file of another build-id followed by 256 MiB of zeros: refused once its PT_NOTE has arrived.
        let mismatch = try await measured(server, project.upload, program.buildID, lying)
        #expect(mismatch.answer.status == 400)
        #expect(mismatch.answer.json["error"] as? String == "build_id_mismatch")
        #expect(mismatch.written < 4 << 20, "wrote \(mismatch.written) bytes")

        // Nothing is left behind, and the server still serves.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/debug-files/tmp").isEmpty)
        #expect(Self.folderBytes(folder + "/debug-files") == 0)
        #expect(try await http.send(.GET, server.baseURL + "/healthz").status == 200)
        #expect(
            try await put(
                server, project.upload, program.buildID,
                Payloads.gzip(Array(try Data(contentsOf: URL(fileURLWithPath: program.full)))), gzip: true
            ).status == 201)
    }

    @Test func theQuotaAndTheSizeLimitStopAnUploadAsBytesArrive() async throws {
        let scratch = try TempFolder("bomb")
        let program = try BuiltProgram()
        // A valid ELF file with the claimed build-id, then 256 MiB: passes every early check, so only the limits stop it.
        let padded = try Self.gzipBomb(prefix: program.full, zeroMiB: 256, in: scratch)

        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("quota", in: folder)
        let quotaServer = try await ServerProcess(folder: folder, arguments: ["--debug-file-quota-mb", "2"])
        defer { quotaServer.cleanUp() }
        let quota = try await measured(quotaServer, project.upload, program.buildID, padded)
        #expect(quota.answer.status == 413)
        #expect(quota.answer.json["error"] as? String == "quota_exceeded")
        #expect(quota.written < 6 << 20, "wrote \(quota.written) bytes")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/debug-files/tmp").isEmpty)
        _ = try await quotaServer.terminate()

        let sizeServer = try await ServerProcess(folder: folder, arguments: ["--max-debug-file-mb", "2"])
        defer { sizeServer.cleanUp() }
        let size = try await measured(sizeServer, project.upload, program.buildID, padded)
        #expect(size.answer.status == 413)
        #expect(size.answer.json["error"] as? String == "too_large")
        #expect(size.written < 6 << 20, "wrote \(size.written) bytes")
        // Uncompressed and chunked (no Content-Length to refuse up front): stopped at the limit as bytes arrive.
        var plain = Array(try Data(contentsOf: URL(fileURLWithPath: program.full)))
        plain += [UInt8](repeating: 0, count: 8 << 20)
        let before = try Self.written(sizeServer.pid)
        let raw = try #require(try await putChunked(sizeServer, project.upload, program.buildID, plain))
        let written = try Self.written(sizeServer.pid) - before
        #expect(raw.status == 413)
        #expect(raw.json["error"] as? String == "too_large")
        #expect(written < 6 << 20, "wrote \(written) bytes")
        #expect(Self.folderBytes(folder + "/debug-files") == 0)
    }
}
