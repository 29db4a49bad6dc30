import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport

/// The real `faultline` binary, run as a child process on a temp data folder and a free loopback port.
final class ServerProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched by the test that owns this object, never concurrently.
    let folder: String
    let process: ChildProcess
    let port: Int
    let stdoutPath: String
    let stderrPath: String

    /// The built `faultline` executable: `FAULTLINE_BIN`, else beside the test bundle, else `.build/debug`.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["FAULTLINE_BIN"] { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "faultline"
        ).path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/faultline").path
    }

    static func newFolder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("faultline-e2e-\(UUID().uuidString)").path
    }

    /// Runs a CLI command to completion.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        status: Int32, out: String, err: String
    ) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Small outputs: read after exit (the pipe buffer holds them).
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        let o = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, o, e)
    }

    /// Creates a project in `folder` with the CLI; returns (ingest key, upload token, project id).
    static func createProject(_ slug: String, in folder: String, extra: [String] = []) async throws -> (
        ingest: String, upload: String, id: Int
    ) {
        let result = try await run(["projects", "create", slug, "--data", folder, "--json"] + extra)
        guard result.status == 0,
            let json = try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any],
            let ingest = json["ingest_key"] as? String, let upload = json["upload_token"] as? String,
            let id = json["id"] as? Int
        else { throw TestFailure("projects create failed: \(result)") }
        return (ingest, upload, id)
    }

    /// Starts `faultline serve` and waits until it listens.
    /// - Parameter logs: where the server's stdout/stderr files go (default: beside `folder`); a test on a small
    ///   file system keeps them off it.
    init(folder: String, arguments: [String] = [], environment: [String: String] = [:], logs: String? = nil)
        async throws
    {
        self.folder = folder
        stdoutPath = (logs ?? folder) + "-stdout.txt"
        stderrPath = (logs ?? folder) + "-stderr.txt"
        FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["serve", "--data", folder, "--port", "0", "--host", "127.0.0.1"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
        // The server prints "Faultline listening on http://127.0.0.1:PORT/" once it accepts connections.
        let deadline = ContinuousClock.now + .seconds(60) * waitMargin
        var found: Int?
        while found == nil, ContinuousClock.now < deadline, process.isRunning {
            let text = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"listening on http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression) {
                found = Int(text[range].split(separator: ":").last!.dropLast())
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        guard let found else {
            process.terminate()
            throw TestFailure(
                "server did not start: \((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")")
        }
        port = found
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var pid: Int32 { process.processIdentifier }
    var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    /// The exit status, once the process has exited.
    var exitStatus: Int32 { process.terminationStatus }

    /// `kill -9`: no chance to flush or close anything.
    func kill9() async throws {
        kill(process.processIdentifier, SIGKILL)
        try await waitForExit()
    }

    /// SIGTERM, then wait; returns the exit status.
    func terminate() async throws -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        try await waitForExit()
        return process.terminationStatus
    }

    func waitForExit(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw TestFailure("server did not exit") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The process's peak resident memory (VmHWM) in bytes, from /proc.
    func peakMemoryBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kb = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kb * 1024
    }

    func cleanUp() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for path in [folder, stdoutPath, stderrPath] { try? FileManager.default.removeItem(atPath: path) }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A small HTTP helper over AsyncHTTPClient for the end-to-end tests.
struct HTTP {
    let client: HTTPClient

    struct Answer {
        let status: Int
        let headers: HTTPHeaders
        let body: [UInt8]
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    }

    /// Sends one request. A GET or HEAD that meets `remoteConnectionClosed` is sent once more: the pooled keep-alive
    /// connection it went out on was closed by the server as idle (its read timeout) at that moment, a race every
    /// HTTP client meets and retries; a request that changes something is never sent twice.
    func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        timeout: TimeAmount = .seconds(60)
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: timeout)
        } catch let error as HTTPClientError where error == .remoteConnectionClosed && [.GET, .HEAD].contains(method) {
            response = try await client.execute(request, timeout: timeout)
        }
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Answer(
            status: Int(response.status.code), headers: response.headers, body: Array(bytes.readableBytesView))
    }

    func postReports(
        _ base: String, key: String, _ text: String, gzip: Bool = true,
        timeout: TimeAmount = .seconds(60)
    ) async throws -> Answer {
        var headers = [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")]
        if gzip { headers.append(("Content-Encoding", "gzip")) }
        return try await send(
            .POST, base + "/api/v1/reports", headers: headers,
            body: gzip ? Payloads.gzip(Array(text.utf8)) : Array(text.utf8),
            timeout: timeout)
    }
}
