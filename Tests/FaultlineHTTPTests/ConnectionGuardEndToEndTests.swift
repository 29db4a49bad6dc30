import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue #9, finding 6 and the transport parts of finding 8, against the real `faultline` binary on 127.0.0.1:
/// read timeouts, the connection cap, declared lengths over the limit, malformed chunked framing, a forged
/// Host, the data folder's permissions, environment values that do not parse, and a quiet SIGTERM.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct ConnectionGuardEndToEndTests {
    /// A server with a short read timeout (1 s); the checks allow 10× that.
    static func server(_ folder: String, timeout: String = "1", extra: [String] = []) async throws -> ServerProcess {
        try await ServerProcess(folder: folder, arguments: ["--read-timeout-seconds", timeout] + extra)
    }

    /// glibc's malloc arenas are capped at one per core (at least two), as the soak in docs/performance.md measured,
    /// unless the operator chose a number with `MALLOC_ARENA_MAX`.
    @Test func mallocArenasAreCappedUnlessTheOperatorChoseANumber() async throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let capped = try await ServerProcess(folder: ServerProcess.newFolder())
        defer { capped.cleanUp() }
        #expect(capped.log.contains("malloc arenas: at most \(max(2, cores)) "))
        let chosen = try await ServerProcess(
            folder: ServerProcess.newFolder(), environment: ["MALLOC_ARENA_MAX": "3"])
        defer { chosen.cleanUp() }
        #expect(!chosen.log.contains("malloc arenas"))
    }

    @Test func halfAHeaderLineIsAnswered408AndClosed() async throws {
        let folder = ServerProcess.newFolder()
        let server = try await Self.server(folder)
        defer { server.cleanUp() }
        let connection = try RawConnection(port: server.port)
        try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaa")
        #expect(try await connection.readUntilClosed(within: .seconds(10)))
        let response = try #require(RawResponse(connection.received))
        #expect(response.status == 408)
        #expect(response.json["error"] as? String == "request_timeout")

        // Trickling a byte now and then does not keep a head alive: it must arrive whole within the timeout.
        let trickle = try RawConnection(port: server.port)
        try trickle.send("GET /healthz HTTP/1.1\r\n")
        var closed = false
        for _ in 0..<40 where !closed {
            try? trickle.send("X")
            closed = try await trickle.readUntilClosed(within: .milliseconds(250))
        }
        #expect(closed)
        #expect(RawResponse(trickle.received)?.status == 408)

        // The server still answers.
        let after = try RawConnection(port: server.port)
        try after.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try await after.readResponse(within: .seconds(10))?.status == 200)
    }

    @Test func aStalledBodyIsAnswered408AndClosed() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        let server = try await Self.server(folder)
        defer { server.cleanUp() }
        let connection = try RawConnection(port: server.port)
        try connection.send(
            "POST /api/v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(project.ingest)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"reports\"")
        #expect(try await connection.readUntilClosed(within: .seconds(10)))
        let response = try #require(RawResponse(connection.received))
        #expect(response.status == 408)
        #expect(response.headers["connection"] == "close")

        // An idle keep-alive connection is closed without an answer.
        let idle = try RawConnection(port: server.port)
        try idle.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try await idle.readResponse(within: .seconds(10))?.status == 200)
        let answered = idle.received.count
        #expect(try await idle.readUntilClosed(within: .seconds(10)))
        #expect(idle.received.count == answered)
    }

    @Test func pastTheConnectionCapANewConnectionGets503() async throws {
        let folder = ServerProcess.newFolder()
        // A long timeout: the idle connections stay until the test closes them.
        let server = try await Self.server(folder, timeout: "120", extra: ["--max-connections", "3"])
        defer { server.cleanUp() }
        var idle: [RawConnection] = []
        for _ in 0..<3 {
            // Each one answered once, so each is counted before the next is opened.
            let connection = try RawConnection(port: server.port)
            try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try await connection.readResponse(within: .seconds(10))?.status == 200)
            idle.append(connection)
        }
        let extra = try RawConnection(port: server.port)
        try extra.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try await extra.readUntilClosed(within: .seconds(10)))
        let refused = try #require(RawResponse(extra.received))
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        #expect(refused.json["error"] as? String == "too_many_connections")

        idle.removeAll()  // closes them
        var healthy = false
        for _ in 0..<100 where !healthy {
            let probe = try RawConnection(port: server.port)
            try probe.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            healthy = try await probe.readResponse(within: .seconds(10))?.status == 200
            if !healthy { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(healthy)
    }

    @Test func aDeclaredLengthOverTheLimitIsAnswered413BeforeTheBody() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        // The read timeout (60 s) is far longer than the wait below: a 413 can only come from the declared length.
        let server = try await Self.server(folder, timeout: "60")
        defer { server.cleanUp() }
        let routes: [(String, String)] = [
            ("POST /api/v1/reports", "Authorization: Bearer \(project.ingest)\r\nContent-Type: application/json"),
            (
                "POST /api/\(project.id)/envelope/?sentry_key=\(project.ingest)",
                "Content-Type: application/x-sentry-envelope"
            ),
            (
                "POST /api/0/organizations/o/chunk-upload/",
                "Authorization: Bearer \(project.upload)\r\nContent-Type: multipart/form-data; boundary=b"
            ),
            (
                "PUT /api/v1/debug-files/0123456789abcdef0123456789abcdef01234567",
                "Authorization: Bearer \(project.upload)"
            ),
        ]
        for (line, headers) in routes {
            let connection = try RawConnection(port: server.port)
            try connection.send(
                "\(line) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\nContent-Length: \(UInt64(1) << 50)\r\n\r\n0123456789"
            )
            let response = try #require(try await connection.readResponse(within: .seconds(20)), "\(line)")
            #expect(response.status == 413, "\(line)")
            #expect(
                (response.json["error"] as? String) == "too_large"
                    || (response.json["detail"] as? String)?.contains("limit") == true, "\(line)")
            // And the server does not wait for the rest: the connection ends.
            #expect(try await connection.readUntilClosed(within: .seconds(20)), "\(line)")
        }
        let exact = try RawConnection(port: server.port)
        try exact.send(
            "POST /api/v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(project.ingest)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 209715200\r\n\r\n0123456789")
        let response = try #require(try await exact.readResponse(within: .seconds(20)))
        #expect(response.status == 413)
        #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
    }

    @Test func aMalformedChunkSizeIs400() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        let server = try await Self.server(folder, timeout: "60")
        defer { server.cleanUp() }
        let connection = try RawConnection(port: server.port)
        try connection.send(
            "POST /api/v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(project.ingest)\r\n"
                + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"re\r\nzz\r\nports\r\n")
        let response = try #require(try await connection.readResponse(within: .seconds(20)))
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "malformed_http")
        #expect(!server.log.contains("\"level\":\"error\""))
    }

    @Test func chunkUploadOptionsDoNotEchoAForgedHost() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        let server = try await Self.server(folder, timeout: "60")
        defer { server.cleanUp() }
        let connection = try RawConnection(port: server.port)
        try connection.send(
            "GET /api/0/organizations/o/chunk-upload/ HTTP/1.1\r\nHost: evil.example:6666\r\n"
                + "Authorization: Bearer \(project.upload)\r\n\r\n")
        let response = try #require(try await connection.readResponse(within: .seconds(20)))
        #expect(response.status == 200)
        let body = String(decoding: response.body, as: UTF8.self)
        #expect(!body.contains("evil"))
        #expect(!body.contains("6666"))
        #expect(response.json["url"] as? String == "/organizations/o/chunk-upload/")
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    @Test func theDataFolderIsPrivate() async throws {
        // A folder from before: world-readable, as the umask made it.
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("app", in: folder)
        chmod(folder, 0o755)
        chmod(folder + "/site", 0o755)
        chmod(folder + "/faultline.sqlite", 0o644)
        let server = try await Self.server(folder, timeout: "60")
        defer { server.cleanUp() }
        for sub in ["", "/site", "/debug-files"] { #expect(Self.mode(folder + sub) == 0o700, "\(sub)") }
        for file in ["faultline.sqlite", "faultline.sqlite-wal", "faultline.sqlite-shm"] {
            #expect(Self.mode(folder + "/" + file) == 0o600, "\(file)")
        }

        // A new one is private from the start.
        let fresh = ServerProcess.newFolder()
        let second = try await Self.server(fresh, timeout: "60")
        defer { second.cleanUp() }
        #expect(Self.mode(fresh) == 0o700)
        #expect(Self.mode(fresh + "/faultline.sqlite") == 0o600)
    }

    @Test func environmentValuesThatDoNotParseAreErrorsNamingTheVariable() async throws {
        let folder = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cases: [(String, String)] = [
            ("FAULTLINE_PORT", "abc"), ("FAULTLINE_PORT", "70000"), ("FAULTLINE_MAX_CONNECTIONS", "0"),
            ("FAULTLINE_READ_TIMEOUT_SECONDS", "soon"), ("FAULTLINE_PUBLIC_DASHBOARD", "maybe"),
            ("FAULTLINE_RETENTION_DAYS", "1e3"), ("FAULTLINE_DURABILITY", "fast"), ("FAULTLINE_WEBHOOK_POLL_MS", "x"),
            ("FAULTLINE_MAX_CONNECTIONS_PER_ADDRESS", "0"), ("FAULTLINE_MIN_BODY_BYTES_PER_SECOND", "-1"),
        ]
        for (name, value) in cases {
            let result = try await ServerProcess.run(["serve", "--data", folder], environment: [name: value])
            #expect(result.status != 0, "\(name)=\(value)")
            #expect(result.err.contains(name), "\(name)=\(value): \(result.err)")
        }
        // `projects create` prints a DSN built from FAULTLINE_PORT: a bad one is an error there too.
        let create = try await ServerProcess.run(
            ["projects", "create", "app", "--data", folder], environment: ["FAULTLINE_PORT": "abc"])
        #expect(create.status != 0)
        #expect(create.err.contains("FAULTLINE_PORT"))
        // A flag still wins over a (valid) variable.
        let flag = try await ServerProcess.run(["serve", "--data", folder, "--max-connections", "0"])
        #expect(flag.status != 0)
        #expect(flag.err.contains("--max-connections"))
        let share = try await ServerProcess.run(["serve", "--data", folder, "--max-connections-per-address", "0"])
        #expect(share.status != 0)
        #expect(share.err.contains("--max-connections-per-address"))
    }

    @Test func sigtermLogsNothingAtErrorLevel() async throws {
        // The background services step every few milliseconds, so SIGTERM finds them mid-step (where a
        // cancelled database call throws CancellationError); three times, to catch each of them there.
        for round in 0..<3 {
            let folder = ServerProcess.newFolder()
            let project = try await ServerProcess.createProject("app", in: folder)
            let server = try await ServerProcess(
                folder: folder, arguments: ["--read-timeout-seconds", "60"],
                environment: [
                    "FAULTLINE_RENDER_DEBOUNCE_MS": "1", "FAULTLINE_ALERT_INTERVAL_MS": "2",
                    "FAULTLINE_WEBHOOK_POLL_MS": "1",
                ])
            defer { server.cleanUp() }
            // Some work for the background services, and an idle keep-alive connection.
            let connection = try RawConnection(port: server.port)
            let report = #"{"reports":[]}"#
            try connection.send(
                "POST /api/v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(project.ingest)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(report.utf8.count)\r\n\r\n\(report)")
            #expect(try await connection.readResponse(within: .seconds(20)) != nil)
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await server.terminate() == 0)
            let lines = server.log.split(separator: "\n")
            #expect(lines.contains { $0.contains("\"msg\":\"stopped\"") }, "round \(round)")
            let errors = lines.filter { $0.contains("\"level\":\"error\"") || $0.contains("\"level\":\"critical\"") }
            #expect(errors.isEmpty, "round \(round): \(errors)")
        }
    }
}
