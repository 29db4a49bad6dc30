import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// The real elfutils debuginfod client against the real server: `debuginfod-find` and `eu-addr2line`
/// fetch symbols by build-id, authenticated with `DEBUGINFOD_HEADERS_FILE`.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct DebuginfodClientTests {
    @Test func elfutilsFetchesSymbolsFromTheServer() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("symbols", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let program = try BuiltProgram()
        for path in [program.debug, program.stripped] {
            let answer = try await http.send(
                .PUT, server.baseURL + "/api/v1/debug-files/\(program.buildID)",
                headers: [("Authorization", "Bearer \(project.upload)")],
                body: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(answer.status == 201)
        }

        let cache = try TempFolder("debuginfod-cache")
        let headers = try program.folder.write("headers", "Authorization: Bearer \(project.upload)\n")
        let environment = [
            "DEBUGINFOD_URLS": server.baseURL, "DEBUGINFOD_CACHE_PATH": cache.path, "DEBUGINFOD_HEADERS_FILE": headers,
        ]

        let debuginfo = try Command.run("debuginfod-find", ["debuginfo", program.buildID], environment: environment)
        #expect(debuginfo.status == 0, "\(debuginfo.err)")
        let fetched = debuginfo.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(FileManager.default.contentsEqual(atPath: fetched, andPath: program.debug))

        let executable = try Command.run("debuginfod-find", ["executable", program.buildID], environment: environment)
        #expect(executable.status == 0, "\(executable.err)")
        #expect(
            FileManager.default.contentsEqual(
                atPath: executable.out.trimmingCharacters(in: .whitespacesAndNewlines), andPath: program.stripped))

        // Without the token the server refuses (and the client reports failure).
        let anonymousCache = try TempFolder("debuginfod-cache")
        let anonymous = try Command.run(
            "debuginfod-find", ["debuginfo", program.buildID],
            environment: ["DEBUGINFOD_URLS": server.baseURL, "DEBUGINFOD_CACHE_PATH": anonymousCache.path])
        #expect(anonymous.status != 0)

        // eu-addr2line on the stripped binary finds function and line through the server, and agrees with
        // binutils' addr2line on the unstripped binary.
        let symbols = try Command.check("nm", [program.full])
        let line = try #require(symbols.split(separator: "\n").first { $0.hasSuffix(" process_order") })
        let address = "0x" + String(UInt64(line.split(separator: " ")[0], radix: 16)! + 4, radix: 16)
        let viaServer = try Command.run(
            "eu-addr2line", ["-f", "-e", program.stripped, address], environment: environment)
        #expect(viaServer.status == 0, "\(viaServer.err)")
        let reference = try Command.check("addr2line", ["-f", "-e", program.full, address])
        // eu-addr2line prints "inner inlined at FILE:LINE:COL in outer" and FILE:LINE:COL; addr2line prints the
        // innermost function and FILE:LINE. Both must name the same innermost function and line.
        let serverLines = viaServer.out.split(separator: "\n").map(String.init)
        let referenceLines = reference.split(separator: "\n").map(String.init)
        let serverFunction = serverLines.first?.components(separatedBy: " inlined at ").first
        #expect(serverFunction == referenceLines.first)
        #expect(serverLines.first?.hasSuffix("in process_order") == true || serverFunction == "process_order")
        let serverLocation = serverLines.last?.split(separator: "/").last.map {
            $0.split(separator: ":").prefix(2).joined(separator: ":")
        }
        #expect(serverLocation == referenceLines.last?.split(separator: "/").last.map(String.init))
        #expect(serverLocation?.hasPrefix("crashy.c:") == true)
    }
}
