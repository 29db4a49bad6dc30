import AsyncHTTPClient
import DataFolder
import FaultlineApp
import FaultlineCore
import FaultlineSDK
import Foundation
import NIOCore
import NIOHTTP1
import SQLiteStorage
import Synchronization
import TestSupport
import Testing

/// Issue #15: a full disk is an answer (507 / Sentry 429 with `Retry-After`), never a 500; nothing acknowledged
/// is lost; ingest resumes by itself when space returns; the log says so once. The real binary on a real tmpfs.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct DiskFullEndToEndTests {
    /// A 48 MiB tmpfs mounted for one test; unmounted by `unmount()` (called from a `defer`).
    struct SmallFileSystem {
        let mountPoint: String

        init(megabytes: Int) throws {
            mountPoint =
                FileManager.default.temporaryDirectory.appendingPathComponent("faultline-tmpfs-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            let status = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint])
            guard status == 0 else {
                try? FileManager.default.removeItem(atPath: mountPoint)
                throw TestFailure(
                    "cannot mount a \(megabytes) MiB tmpfs at \(mountPoint) (mount exited \(status)): this test needs root, as CI has"
                )
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
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { return -1 }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// The least free space seen on a file system, sampled every few milliseconds by a thread until `stop()`.
    final class FreeSpaceSampler: Sendable {
        struct Seen { var least = UInt64.max; var samples = 0; var stopped = false }
        let seen = Mutex(Seen())

        init(_ fs: SmallFileSystem) {
            let path = fs.mountPoint
            Thread.detachNewThread { [self] in
                while !seen.withLock({ $0.stopped }) {
                    var stats = statvfs()
                    if statvfs(path, &stats) == 0 {
                        let free = UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
                        seen.withLock {
                            $0.least = min($0.least, free); $0.samples += 1
                        }
                    }
                    usleep(5000)
                }
            }
        }

        var least: UInt64 { seen.withLock { $0.least } }
        var samples: Int { seen.withLock { $0.samples } }
        func stop() { seen.withLock { $0.stopped = true } }
    }

    /// Services fast enough that alerts, renders and webhook deliveries happen within the test.
    static let fastServices = [
        "FAULTLINE_RENDER_DEBOUNCE_MS": "200", "FAULTLINE_ALERT_INTERVAL_MS": "300",
        "FAULTLINE_WEBHOOK_BACKOFF_MS": "300",
        "FAULTLINE_WEBHOOK_POLL_MS": "100",
    ]

    /// Floor 4 MiB: the floor refuses ingest before the disk is full. Floor 0: SQLite's real SQLITE_FULL does.
    @Test(arguments: [4, 0])
    func aFullDiskIsAnAnswerAndIngestResumesWhenSpaceReturns(floorMiB: Int) async throws {
        let fs = try SmallFileSystem(megabytes: 48)
        let logs = ServerProcess.newFolder()
        var server: ServerProcess?
        let receiver = try await WebhookReceiver()
        defer {
            receiver.stop()
            server?.cleanUp()
            fs.unmount()
            for path in [logs + "-stdout.txt", logs + "-stderr.txt"] {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
        let folder = fs.mountPoint + "/data"
        let project = try await ServerProcess.createProject("full", in: folder)
        // The operator's webhook (on loopback: both the CLI and the server are told internal targets are fine).
        let configured = try await ServerProcess.run(
            ["alerts", "configure", "full", "--webhook", receiver.url, "--allow-private-webhooks", "--data", folder])
        #expect(configured.status == 0, "\(configured.err)")
        server = try await ServerProcess(
            folder: folder, arguments: ["--min-free-mb", String(floorMiB), "--allow-private-webhooks"],
            environment: Self.fastServices,
            logs: logs)
        let http = HTTP(client: HTTPClient.shared)

        // Leave ~12 MiB for the server; the filler is what the "operator" deletes later.
        let filler = fs.mountPoint + "/filler"
        let fillerBytes = Int(fs.available) - (12 << 20)
        #expect(fillerBytes > 0)
        #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: max(0, fillerBytes))))

        // From here on, the least free space the file system ever had (the filler is the only write not the server's).
        let sampler = FreeSpaceSampler(fs)
        defer { sampler.stop() }

        // Distinct, uncompressed reports until the disk is full.
        var acknowledged: [String] = []
        var next = 0
        var refusals = 0
        for _ in 0..<400 where refusals < 5 {
            let answer = try await http.postReports(
                server!.baseURL, key: project.ingest, Payloads.batch(next..<next + 50), gzip: false)
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
                Issue.record(
                    "ingest answered \(answer.status) on a filling disk: \(String(decoding: answer.body, as: UTF8.self))"
                )
                refusals = 5
            }
        }
        #expect(refusals == 5, "the disk never filled")
        #expect(!acknowledged.isEmpty)

        // While full: Sentry routes answer 429 with the headers SDKs understand, uploads 507, health says degraded.
        let sentry = try await http.send(
            .POST, server!.baseURL + "/api/\(project.id)/envelope/",
            headers: [
                ("X-Sentry-Auth", "Sentry sentry_key=\(project.ingest)"),
                ("Content-Type", "application/x-sentry-envelope"),
            ],
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

        // The operator is told while ingest is refused when the floor left room for it (floor > 0); with floor 0
        // not even the alert fits, and it is kept until space returns (checked below).
        func storageAlerts(_ kind: String) -> [[String: Any]] {
            receiver.received.filter { (($0["alert"] as? [String: Any])?["kind"] as? String) == kind }
        }
        if floorMiB > 0 {
            #expect(
                // Generous: under CI's parallel load this test takes minutes, and ~900 new-issue alerts are queued.
                try await eventually(timeout: .seconds(60)) { !storageAlerts("storage_full").isEmpty },
                "no storage_full alert while full; \(receiver.received.count) webhooks received; the server's log ends: \(server!.log.suffix(3000))"
            )
            // Let the background work on what was accepted run as far as it may (renders, grouping, webhooks).
            try await Task.sleep(for: .seconds(3))
            // A floor that holds: ingest stops at the floor F, background writers at F/2 (checked before each step);
            // what one step writes after its check (a WAL frame batch, a few rendered pages) stays well under F/4
            // here, so the disk keeps at least F/4 free and never reaches 100 % from the server's own writes.
            let least = sampler.least
            #expect(sampler.samples > 10)
            #expect(
                least >= UInt64(floorMiB) << 18, "free space fell to \(least) bytes with a floor of \(floorMiB) MiB")
        }
        sampler.stop()

        // The operator frees space: ingest resumes without a restart.
        try FileManager.default.removeItem(atPath: filler)
        var resumed = false
        for _ in 0..<60 where !resumed {
            let answer = try await http.postReports(
                server!.baseURL, key: project.ingest, Payloads.batch(next..<next + 5), gzip: false)
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

        // The operator hears of it once per entry, and that space returned (both kept for delivery when space
        // returns when they could not be written while full).
        // The disk may have been entered more than once while full (floor 0: a checkpoint on entry can free enough
        // to leave for a moment), each entry with its own alert: wait for as many as the log has entries, not for
        // the first, whose delivery can come before the later ones'.
        let entries = server!.log.split(separator: "\n").filter { $0.contains("storage full:") }.count
        func alertIDs(_ alerts: [[String: Any]]) -> Set<Int> {
            Set(alerts.compactMap { ($0["alert"] as? [String: Any])?["id"] as? Int })
        }
        #expect(
            try await eventually {
                alertIDs(storageAlerts("storage_full")).count >= entries && !storageAlerts("storage_ok").isEmpty
            })
        let fullAlerts = storageAlerts("storage_full")
        // Delivery is at least once (a POST whose answer timed out is sent again; receivers dedupe by the alert's
        // id): one alert per entry, whatever the deliveries.
        let fullAlertIDs = alertIDs(fullAlerts)
        #expect(
            fullAlertIDs.count == entries,
            "\(fullAlertIDs.count) storage_full alerts (\(fullAlerts.count) deliveries) for \(entries) entries")
        #expect((fullAlerts.first?["text"] as? String)?.contains("Storage full") == true)
        #expect((fullAlerts.first?["alert"] as? [String: Any])?["project"] as? String == "full")

        // Quiet logs: one line entering, one leaving (a few at most), no per-request errors.
        let log = server!.log
        let storageLines = log.split(separator: "\n").filter { $0.contains("storage full") }
        #expect(storageLines.count >= 2 && storageLines.count <= 4, "storage log lines: \(storageLines)")
        #expect(!log.contains("request failed"))
        #expect(!log.contains("step failed"))

        // Every acknowledged report survives a restart.
        _ = try await server!.terminate()
        server = try await ServerProcess(
            folder: folder, arguments: ["--min-free-mb", String(floorMiB), "--allow-private-webhooks"],
            logs: logs + "-2")
        defer {
            for path in [logs + "-2-stdout.txt", logs + "-2-stderr.txt"] {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
        var missing: [String] = []
        for id in Set(acknowledged) {
            let answer = try await http.send(
                .GET, server!.baseURL + "/api/v1/reports/\(id)",
                headers: [("Authorization", "Bearer \(project.upload)")])
            if answer.status != 200 { missing.append(id) }
        }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(10))")
    }

    /// The relief valve: reports past the retention period fill the disk until ingest is refused; a server whose
    /// retention is shorter gives their space back to the file system by itself (pruned, then vacuumed), and ingest
    /// resumes without anyone deleting a file. Reports inside the retention period are kept. The first server's
    /// clock is three days behind (a debug-build switch), so what it stored is three days old for the second.
    @Test func retentionPastItsPeriodGivesSpaceBackAndIngestResumesByItself() async throws {
        let fs = try SmallFileSystem(megabytes: 48)
        let logs = ServerProcess.newFolder()
        var server: ServerProcess?
        defer {
            server?.cleanUp()
            fs.unmount()
            for suffix in ["", "-2"] {
                for path in [logs + suffix + "-stdout.txt", logs + suffix + "-stderr.txt"] {
                    try? FileManager.default.removeItem(atPath: path)
                }
            }
        }
        let folder = fs.mountPoint + "/data"
        let project = try await ServerProcess.createProject("valve", in: folder)
        let filler = fs.mountPoint + "/filler"
        #expect(
            FileManager.default.createFile(
                atPath: filler, contents: Data(count: max(0, Int(fs.available) - (28 << 20)))))
        let http = HTTP(client: HTTPClient.shared)

        // Three days ago: distinct reports until the 8 MiB floor refuses them.
        server = try await ServerProcess(
            folder: folder, arguments: ["--min-free-mb", "8"],
            environment: ["FAULTLINE_TEST_CLOCK_OFFSET_S": "-259200"], logs: logs)
        var old: [String] = []
        var next = 0
        var refused = false
        for _ in 0..<400 where !refused {
            let answer = try await http.postReports(
                server!.baseURL, key: project.ingest, Payloads.batch(next..<next + 50), gzip: false)
            next += 50
            if answer.status == 507 {
                refused = true
            } else {
                #expect(answer.status == 200 || answer.status == 202, "\(answer.status)")
                old += (answer.json["accepted"] as? [String]) ?? []
            }
        }
        #expect(refused, "the disk never filled")
        #expect(old.count > 100)
        _ = try await server!.terminate()
        let fullFree = fs.available
        #expect(fullFree < 16 << 20, "\(fullFree) bytes free")

        // Today, with a two-day retention and a floor above what is free (the server stopping gave its WAL back): the
        // server starts refusing ingest, the old reports go, their space returns, ingest answers again. (Samples off:
        // by default each issue would keep its first and latest old report, RetentionSamplesConformanceTests.)
        let floor = Int(fullFree >> 20) + 2
        server = try await ServerProcess(
            folder: folder,
            arguments: ["--min-free-mb", String(floor), "--retention-days", "2", "--retention-samples-per-issue", "0"],
            logs: logs + "-2")
        var fresh: [String] = []
        #expect(
            try await eventually(timeout: .seconds(60)) {
                let answer = try await http.postReports(
                    server!.baseURL, key: project.ingest, Payloads.batch(next..<next + 5), gzip: false)
                next += 5
                fresh += (answer.json["accepted"] as? [String]) ?? []
                return answer.status == 200 || answer.status == 202
            }, "ingest did not resume")
        // Left with the margin (4 MiB above the floor): at least 6 MiB came back, as the server measured when it left
        // the state (the server's own writes since then, e.g. its WAL back to its usual size, use some of it again).
        let left = server!.log.split(separator: "\n").first { $0.contains("storage full no more") }
        let freeWhenLeft = left.flatMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["free_bytes"] as? String
        }.flatMap { UInt64($0) }
        #expect(
            (freeWhenLeft ?? 0) > UInt64(floor + 4) << 20,
            "\(fullFree) → \(freeWhenLeft.map(String.init) ?? "?") bytes free")
        #expect(fs.available > fullFree, "\(fullFree) → \(fs.available) bytes free")
        // Ingest resumes as soon as enough space came back, which can be before the pass has pruned all it will and
        // logged what it did.
        #expect(try await eventually { server!.log.contains("retention pruned") }, "\(server!.log)")
        let log = server!.log
        #expect(log.contains("storage full:") && log.contains("storage full no more"), "\(log)")
        #expect(FileManager.default.fileExists(atPath: filler))  // nobody freed space by hand

        // The old reports are gone, the new ones are there.
        for id in old.prefix(5) {
            let answer = try await http.send(
                .GET, server!.baseURL + "/api/v1/reports/\(id)",
                headers: [("Authorization", "Bearer \(project.upload)")])
            #expect(answer.status == 404)
        }
        #expect(!fresh.isEmpty)
        for id in fresh {
            let answer = try await http.send(
                .GET, server!.baseURL + "/api/v1/reports/\(id)",
                headers: [("Authorization", "Bearer \(project.upload)")])
            #expect(answer.status == 200)
        }
    }

    /// A server on a 48 MiB tmpfs with an 8 MiB floor whose disk a filler has brought under the floor (4 MiB
    /// free): every ingest is refused until `filler` is deleted. `Retry-After` is 3 s so that clients come back soon.
    struct FullServer {
        let fs: SmallFileSystem
        let server: ServerProcess
        let project: (ingest: String, upload: String, id: Int)
        let filler: String
        var dsn: String { "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)" }

        init() async throws {
            fs = try SmallFileSystem(megabytes: 48)
            do {
                let folder = fs.mountPoint + "/data"
                project = try await ServerProcess.createProject("shop", in: folder)
                server = try await ServerProcess(
                    folder: folder, arguments: ["--min-free-mb", "8"],
                    environment: Self.environment)
                filler = fs.mountPoint + "/filler"
                let bytes = Int(fs.available) - (4 << 20)
                guard bytes > 0, FileManager.default.createFile(atPath: filler, contents: Data(count: bytes)) else {
                    throw TestFailure("cannot write the filler (\(bytes) bytes)")
                }
            } catch {
                fs.unmount()
                throw error
            }
        }

        static let environment = DiskFullEndToEndTests.fastServices.merging(["FAULTLINE_STORAGE_RETRY_AFTER_S": "3"]) {
            $1
        }

        func freeSpace() throws { try FileManager.default.removeItem(atPath: filler) }

        func cleanUp() {
            server.cleanUp()
            fs.unmount()
        }
    }

    /// The real sentry-sdk (PyPI) against a full server: it reads the 429's `X-Sentry-Rate-Limits`, backs off
    /// (sends nothing more while told to wait, counting what it drops as `ratelimit_backoff`), and once space is
    /// back and the wait is over it sends again, with its client report, which the server counts.
    @Test func theSentrySDKBacksOffAndItsClientReportIsCountedOnceSpaceReturns() async throws {
        let s = try await FullServer()
        defer { s.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent(
            "faultline-space-back-\(UUID().uuidString)"
        ).path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sentry-full-\(UUID().uuidString).txt"
        ).path
        FileManager.default.createFile(atPath: output, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: marker)
            try? FileManager.default.removeItem(atPath: output)
        }
        let python = ChildProcess()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", SentrySDKEndToEndTests.script, s.dsn, "full", "6", marker]
        python.standardOutput = FileHandle(forWritingAtPath: output)
        python.standardError = FileHandle.nullDevice
        python.standardInput = FileHandle.nullDevice
        try python.run()
        defer { if python.isRunning { python.terminate() } }
        func printed() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

        // While full: the SDK was told to wait, and stopped sending (one 429, the rest dropped on its side).
        #expect(await eventually(timeout: .seconds(60)) { printed().contains("disabled:") }, "\(printed())")
        let disabled =
            printed().split(separator: "\n").first { $0.hasPrefix("disabled:") }?.dropFirst(9).split(separator: ",")
            ?? []
        #expect(disabled.contains("None"), "the SDK did not back off every category: \(disabled)")  // no categories: all
        let refused = try await metric(
            http, s, #"faultline_http_requests_total{route="/api/{project_id}/envelope",status="429"}"#)
        #expect(refused >= 1)
        #expect(refused < 6, "the SDK kept sending while told to wait")

        // Space returns; the SDK comes back after Retry-After, with the event and its client report.
        try s.freeSpace()
        FileManager.default.createFile(atPath: marker, contents: nil)
        #expect(await eventually(timeout: .seconds(60)) { !python.isRunning })
        #expect(printed().contains("sent"))
        let reports = try await http.send(
            .GET, s.server.baseURL + "/api/v1/reports", headers: [("Authorization", "Bearer \(s.project.upload)")])
        let stored = (reports.json["reports"] as? [[String: Any]]) ?? []
        #expect(stored.count == 1, "only the event sent after space returned is stored: \(stored.count)")
        #expect(
            try await eventually {
                let answer = try await http.send(
                    .GET, s.server.baseURL + "/api/v1/dropped-events",
                    headers: [("Authorization", "Bearer \(s.project.upload)")])
                let rows = answer.json["dropped"] as? [[String: Any]] ?? []
                let backedOff = rows.filter {
                    $0["reason"] as? String == "ratelimit_backoff" && $0["category"] as? String == "error"
                }
                .compactMap { $0["quantity"] as? Int }.reduce(0, +)
                return backedOff >= 6 - refused && backedOff <= 6
            }, "the SDK's ratelimit_backoff client report was not counted")
    }

    /// Our Swift SDK keeps its queued reports while the server answers 507 (with `Retry-After`) and delivers each
    /// once after space returns.
    @Test func theSwiftSDKKeepsItsReportsAndDeliversThemOnceSpaceReturns() async throws {
        let s = try await FullServer()
        defer { s.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let sdk = SDKDeliveryEndToEndTests()
        let folder = try TempFolder("sdk-full")
        let queue = try DeliveryQueue(directory: folder.path)
        let ctx = sdk.context(session: "full", user: "u")
        let ids = (60..<65).map(sdk.eventID)
        for id in ids { try queue.enqueue(kind: .nonfatal, id: id, json: sdk.nonFatal(id, ctx)) }
        let recorder = SDKDeliveryEndToEndTests.Recorder()
        let dsn = try DSN(s.dsn)
        let uploader = Uploader(dsn: dsn, queue: queue, transport: recorder, policy: SDKDeliveryEndToEndTests.quick)
        let drained = Task { await uploader.drain(deadline: .now + .seconds(120)) }

        // While full: 507s, and every report stays queued.
        #expect(await eventually(timeout: .seconds(60)) { recorder.statuses.filter { $0 == 507 }.count >= 2 })
        #expect(queue.pending().count == ids.count)
        #expect(!recorder.statuses.contains { (200..<300).contains($0) })

        try s.freeSpace()
        #expect(await drained.value)
        #expect(queue.pending().isEmpty)
        #expect(recorder.statuses.filter { (200..<300).contains($0) }.count == ids.count)
        #expect(Set(recorder.statuses).isSubset(of: [202, 507]), "\(recorder.statuses)")
        for id in ids {
            let answer = try await http.send(
                .GET, s.server.baseURL + "/api/v1/reports/\(id)",
                headers: [("Authorization", "Bearer \(s.project.upload)")])
            #expect(answer.status == 200, "report \(id) was not delivered")
        }
    }

    func metric(_ http: HTTP, _ s: FullServer, _ line: String) async throws -> Int {
        let text = String(decoding: try await http.send(.GET, s.server.baseURL + "/metrics").body, as: UTF8.self)
        return text.split(separator: "\n").first { $0.hasPrefix(line + " ") }.flatMap {
            Int($0.split(separator: " ").last ?? "")
        } ?? 0
    }

    /// Plain file writes (not SQLite) that meet a full disk fail with errors the storage-pressure state recognises
    /// (`StorageError.isDiskFull`, the server's `isDiskFull`): the rendered site's pages, a debug-file upload's
    /// `FileHandle`, sentry-cli's chunks, a `Data` written anywhere. Real writes on a real full tmpfs.
    @Test func plainFileWritesOnAFullDiskAreRecognisedAsDiskFull() throws {
        let fs = try SmallFileSystem(megabytes: 8)
        defer { fs.unmount() }
        let filler = fs.mountPoint + "/filler"
        #expect(
            FileManager.default.createFile(
                atPath: filler, contents: Data(count: max(0, Int(fs.available) - (64 << 10)))))
        let big = Data(count: 1 << 20)

        do {
            try big.write(to: URL(fileURLWithPath: fs.mountPoint + "/data.bin"))
            Issue.record("a 1 MiB write fitted in 64 KiB")
        } catch {
            #expect(StorageError.isDiskFull(error), "Data.write: \(String(reflecting: error))")
        }
        do {
            let path = fs.mountPoint + "/handle.bin"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            for _ in 0..<4 { try handle.write(contentsOf: big) }
            Issue.record("4 MiB fitted in 64 KiB")
        } catch {
            #expect(StorageError.isDiskFull(error), "FileHandle.write: \(String(reflecting: error))")
        }
        do {
            try SitePublisher(root: fs.mountPoint + "/site").write(
                "shop/index.html", String(repeating: "x", count: 1 << 20))
            Issue.record("a 1 MiB page fitted in 64 KiB")
        } catch {
            #expect(StorageError.isDiskFull(error), "SitePublisher: \(String(reflecting: error))")
        }
        // What the failed page write had written is given back: no temporary file keeps the space.
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: fs.mountPoint + "/site/shop")) ?? []
        #expect(leftovers.isEmpty, "\(leftovers)")
        do {
            let chunks = try FileChunkStore(root: fs.mountPoint + "/chunks")
            _ = try chunks.put(
                ChunkChecksum(String(repeating: "a", count: 40))!, bytes: Array(big), project: ProjectID(1))
            Issue.record("a 1 MiB chunk fitted in 64 KiB")
        } catch {
            #expect(StorageError.isDiskFull(error), "FileChunkStore: \(String(reflecting: error))")
        }
        // Not every failed write is a full disk.
        #expect(!StorageError.isDiskFull(CocoaError(.fileWriteNoPermission)))
        #expect(!StorageError.isDiskFull(StorageError(.openFailed, "no")))
    }

    /// With no floor, a debug-file upload that meets a full disk mid-file is a 507 with `Retry-After` (not a 500),
    /// enters the state (health degraded, one log line), and uploads work again once space returns.
    @Test func aDebugFileUploadThatFillsTheDiskIsA507() async throws {
        let fs = try SmallFileSystem(megabytes: 48)
        defer { fs.unmount() }
        let folder = fs.mountPoint + "/data"
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(
            folder: folder, arguments: ["--min-free-mb", "0"], environment: FullServer.environment)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let elf = Array(try Data(contentsOf: URL(fileURLWithPath: "/bin/bash")))
        let notes = try Command.run("readelf", ["-n", "/bin/bash"]).out
        let buildID = try #require(
            notes.split(separator: "\n").first { $0.contains("Build ID:") }?.split(separator: " ").last)
        let url = server.baseURL + "/api/v1/debug-files/\(buildID)"
        let filler = fs.mountPoint + "/filler"
        #expect(
            FileManager.default.createFile(
                atPath: filler, contents: Data(count: max(0, Int(fs.available) - (256 << 10)))))
        #expect(elf.count > 1 << 20)

        let upload = try await http.send(.PUT, url, headers: [("Authorization", "Bearer \(project.upload)")], body: elf)
        #expect(upload.status == 507, "\(upload.status): \(String(decoding: upload.body, as: UTF8.self))")
        #expect(Int(upload.headers.first(name: "Retry-After") ?? "") == 3)
        #expect(upload.json["error"] as? String == "storage_full")
        #expect(try await http.send(.GET, server.baseURL + "/healthz").json["degraded"] as? String == "storage_full")
        // Refused before the body now: the same answer, no second log line.
        #expect(
            try await http.send(.PUT, url, headers: [("Authorization", "Bearer \(project.upload)")], body: elf).status
                == 507)

        try FileManager.default.removeItem(atPath: filler)
        var stored = 0
        for _ in 0..<40 where stored == 0 {
            let again = try await http.send(
                .PUT, url, headers: [("Authorization", "Bearer \(project.upload)")], body: elf)
            if again.status == 200 || again.status == 201 {
                stored = again.status
            } else {
                #expect(again.status == 507)
                try await Task.sleep(for: .milliseconds(250))
            }
        }
        #expect(stored != 0, "the upload was not accepted after space returned")
        let log = server.log
        #expect(log.split(separator: "\n").filter { $0.contains("storage full:") }.count == 1, "\(log)")
        #expect(!log.contains("request failed"))
    }
}
