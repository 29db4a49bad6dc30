import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Pipeline
import Synchronization
import Testing

/// The server as `faultline serve` assembles it (`ServerAssembly`): every service gets its dependencies through its
/// initialiser, so none can be left unguarded; the dashboard's pages go through one publisher; a server alone on its
/// SQLite data always holds the render lease.
@Suite struct ServerAssemblyTests {
    /// A server assembled over a new SQLite data folder; the dashboard rendered from `web` (nil: none).
    static func assemble(web: String?) throws -> (server: ServerAssembly, folder: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "faultline-assembly-\(UUID().uuidString)"
        ).path
        let data = try Composition(folder: folder)
        return (try ServerAssembly(settings: .init(port: 0, minFreeBytes: 0, webDirectory: web), data: data), folder)
    }

    @Test func everyBackgroundWriterPausesUnderTheEdgesStoragePressureState() async throws {
        // Given a server with a dashboard, on SQLite
        let (server, folder) = try Self.assemble(web: RenderCycleTests.webDirectory)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Then the HTTP edge and every background writer share one storage-pressure state (a service built without
        // it would go on writing into a full disk)
        let storage = try #require(server.dependencies.storage)
        let services = server.services
        let worker = try #require(services.lazy.compactMap { $0 as? SymbolicationWorker }.first)
        #expect(worker.storage === storage)
        #expect(worker.ingestActivity != nil, "the server's worker gives way to ingest")
        let scheduler = try #require(services.lazy.compactMap { $0 as? RenderScheduler }.first)
        let alerts = try #require(services.lazy.compactMap { $0 as? AlertService }.first)
        let webhooks = try #require(services.lazy.compactMap { $0 as? WebhookDispatcher }.first)
        let retention = try #require(services.lazy.compactMap { $0 as? RetentionService }.first)
        #expect(scheduler.storage === storage && alerts.storage === storage)
        #expect(webhooks.storage === storage && retention.storage === storage)
        #expect(services.contains { $0 is StorageAlertService } && services.contains { $0 is ChunkSweeper })
        let quotas = try #require(services.lazy.compactMap { $0 as? QuotaFlushService }.first)
        #expect(quotas.storage === storage)
        // And one server alone on its data needs neither node presence nor a shared render
        #expect(!services.contains { $0 is NodePresenceService || $0 is SharedDashboardService })
        #expect(services.count == 8)
        // And the dashboard's routes are there
        #expect(server.dependencies.issueListPage != nil && server.dependencies.searchPages != nil)
        #expect(server.dependencies.currentIssuePage != nil)
        try await server.data.close()
    }

    @Test func withoutTemplatesNothingIsRenderedAndTheLoginFormStillEscapes() async throws {
        // Given a server without the dashboard's templates
        let (server, folder) = try Self.assemble(web: nil)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Then no render scheduler runs and the rendered routes are left out
        #expect(!server.services.contains { $0 is RenderScheduler })
        #expect(server.dependencies.issueListPage == nil && server.dependencies.searchPages == nil)
        #expect(server.dependencies.currentIssuePage == nil)
        // And the plain login form escapes what the request put in it
        let app = buildApplication(
            configuration: server.configuration, dependencies: server.dependencies, logger: Logger(label: "test"))
        let body = try await app.test(.router) { client in
            try await client.execute(uri: "/login?next=%2Fapp%2F%22%3E%3Cscript%3Ex%3C%2Fscript%3E", method: .get) {
                response in
                #expect(response.status == .ok)
                return String(buffer: response.body)
            }
        }
        #expect(body.contains("Log in to Faultline"))
        #expect(!body.contains("<script>") && body.contains("&quot;&gt;&lt;script&gt;"))
        try await server.data.close()
    }

    @Test func aRenderThatStartedEarlierNeverOverwritesALaterRendersPage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "faultline-site-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let site = SitePublisher(root: folder)
        let read = { (path: String) in try String(contentsOfFile: folder + "/" + path, encoding: .utf8) }
        // Given a render cycle that started before a dashboard change, and the page rendered for that change
        let cycle = site.startRender()
        let afterChange = site.startRender()
        try afterChange("app/issues/1.html", "fresh")
        // When the cycle finishes later
        try cycle("app/issues/1.html", "stale")
        try cycle("app/index.html", "overview")
        // Then the newer page stays, and the cycle's other pages are published
        #expect(try read("app/issues/1.html") == "fresh")
        #expect(try read("app/index.html") == "overview")
        #expect(site.exists("app/index.html") && !site.exists("app/issues/2.html"))
        // And nothing is written outside the site
        #expect(throws: SitePublisherError.self) { try cycle("../outside.html", "x") }
        #expect(!FileManager.default.fileExists(atPath: folder + "/../outside.html"))
    }

    @Test func aServerAloneOnItsDataAlwaysHoldsTheRenderLease() async {
        let lease: any RenderLease = AlwaysHeldLease()
        #expect(lease.isHeld && lease.timesTaken == 1)
        let events = Mutex<[String]>([])
        await lease.run(
            onTaken: { events.withLock { $0.append("taken") } }, onLost: { events.withLock { $0.append("lost") } })
        #expect(events.withLock { $0 } == ["taken"])
        #expect(lease.isHeld && lease.timesTaken == 1)
    }
}
