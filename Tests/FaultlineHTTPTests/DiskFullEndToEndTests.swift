import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #15: a full disk is an answer (507 / Sentry 429 with `Retry-After`), never a 500; nothing acknowledged
/// is lost; ingest resumes by itself when space returns; the log says so once. The real binary on a real tmpfs.
@Suite(.serialized) struct DiskFullEndToEndTests {
    /// A 48 MiB tmpfs mounted for one test; unmounted by `unmount()` (called from a `defer`).
    struct SmallFileSystem {
        let mountPoint: String

        init(megabytes: Int) throws {
            mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-tmpfs-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            let status = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint])
            guard status == 0 else {
                try? FileManager.default.removeItem(atPath: mountPoint)
                throw TestFailure(
                    "cannot mount a \(megabytes) MiB tmpfs at \(mountPoint) (mount exited \(status)): this test needs root, as CI has")
            }
        }

        var available: UInt64 {
            var stats = statvfs()
            guard statvfs(mountPoint, &stats) == 0 else { return 0 }
            return UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
        }

        func unmount() {
            _ = Self.run("/bin/umount", ["-l", mountPoint])
            try? FileManager.default.removeItem(atPath: mountPoint)
        }

        static func run(_ tool: String, _ arguments: [String]) -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { return -1 }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// Floor 4 MiB: the floor refuses ingest before the disk is full. Floor 0: SQLite's real SQLITE_FULL does.
    @Test(arguments: [4, 0])
    func aFullDiskIsAnAnswerAndIngestResumesWhenSpaceReturns(floorMiB: Int) async throws {
        let fs = try SmallFileSystem(megabytes: 48)
        let logs = ServerProcess.newFolder()
        var server: ServerProcess?
        defer {
            server?.cleanUp()
            fs.unmount()
            for path in [logs + "-stdout.txt", logs + "-stderr.txt"] { try? FileManager.default.removeItem(atPath: path) }
        }
        let folder = fs.mountPoint + "/data"
        let project = try await ServerProcess.createProject("full", in: folder)
        server = try await ServerProcess(folder: folder, arguments: ["--min-free-mb", String(floorMiB)], logs: logs)
        let http = HTTP(client: HTTPClient.shared)

        // Leave ~12 MiB for the server; the filler is what the "operator" deletes later.
        let filler = fs.mountPoint + "/filler"
        let fillerBytes = Int(fs.available) - (12 << 20)
        #expect(fillerBytes > 0)
        #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: max(0, fillerBytes))))

        // Distinct, uncompressed reports until the disk is full.
        var acknowledged: [String] = []
        var next = 0
        var refusals = 0
        for _ in 0..<400 where refusals < 5 {
            let answer = try await http.postReports(server!.baseURL, key: project.ingest, Payloads.batch(next..<next + 50), gzip: false)
            next += 50
            switch answer.status {
            case 200, 201, 202:
                acknowledged += (answer.json["accepted"] as? [String]) ?? []
                acknowledged += (answer.json["duplicates"] as? [String]) ?? []
            case 507:
                refusals += 1
                #expect(Int(answer.headers.first(name: "Retry-After") ?? "") ?? 0 > 0)
                #expect(answer.json["error"] as? String == "storage_full")
            default:
                Issue.record("ingest answered \(answer.status) on a filling disk: \(String(decoding: answer.body, as: UTF8.self))")
                refusals = 5
            }
        }
        #expect(refusals == 5, "the disk never filled")
        #expect(!acknowledged.isEmpty)

        // While full: Sentry routes answer 429 with the headers SDKs understand, uploads 507, health says degraded.
        let sentry = try await http.send(
            .POST, server!.baseURL + "/api/\(project.id)/envelope/",
            headers: [("X-Sentry-Auth", "Sentry sentry_key=\(project.ingest)"), ("Content-Type", "application/x-sentry-envelope")],
            body: Array("{}\n{\"type\":\"event\"}\n{}\n".utf8))
        #expect(sentry.status == 429)
        #expect(Int(sentry.headers.first(name: "Retry-After") ?? "") ?? 0 > 0)
        #expect(sentry.headers.first(name: "X-Sentry-Rate-Limits")?.contains("storage_full") == true)
        let upload = try await http.send(
            .PUT, server!.baseURL + "/api/v1/debug-files/aba11aeff7e7e9e2e1bc84464f53a7e183a8930a",
            headers: [("Authorization", "Bearer \(project.upload)")], body: Array(repeating: 0, count: 4096))
        #expect(upload.status == 507)
        let health = try await http.send(.GET, server!.baseURL + "/healthz")
        #expect(health.status == 200)
        #expect(health.json["degraded"] as? String == "storage_full")
        let metrics = try await http.send(.GET, server!.baseURL + "/metrics")
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("faultline_storage_full 1"))

        // The operator frees space: ingest resumes without a restart.
        try FileManager.default.removeItem(atPath: filler)
        var resumed = false
        for _ in 0..<60 where !resumed {
            let answer = try await http.postReports(server!.baseURL, key: project.ingest, Payloads.batch(next..<next + 5), gzip: false)
            if answer.status == 200 || answer.status == 202 {
                resumed = true
                acknowledged += (answer.json["accepted"] as? [String]) ?? []
                next += 5
            } else {
                #expect(answer.status == 507)
                try await Task.sleep(for: .milliseconds(500))
            }
        }
        #expect(resumed, "ingest did not resume after space was freed")
        let healthAfter = try await http.send(.GET, server!.baseURL + "/healthz")
        #expect(healthAfter.json["degraded"] == nil)

        // Quiet logs: one line entering, one leaving (a few at most), no per-request errors.
        let log = server!.log
        let storageLines = log.split(separator: "\n").filter { $0.contains("storage full") }
        #expect(storageLines.count >= 2 && storageLines.count <= 4, "storage log lines: \(storageLines)")
        #expect(!log.contains("request failed"))
        #expect(!log.contains("step failed"))

        // Every acknowledged report survives a restart.
        _ = try await server!.terminate()
        server = try await ServerProcess(folder: folder, arguments: ["--min-free-mb", String(floorMiB)], logs: logs + "-2")
        defer { for path in [logs + "-2-stdout.txt", logs + "-2-stderr.txt"] { try? FileManager.default.removeItem(atPath: path) } }
        var missing: [String] = []
        for id in Set(acknowledged) {
            let answer = try await http.send(.GET, server!.baseURL + "/api/v1/reports/\(id)", headers: [("Authorization", "Bearer \(project.upload)")])
            if answer.status != 200 { missing.append(id) }
        }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(10))")
    }
}
