import Dashboard
import DataFolder
import FaultlineCore
import FaultlineHTTP
import Logging
import Pipeline
import SQLiteStorage
import ServiceLifecycle
import Synchronization

/// The server, assembled in one place: every service is built through its initialiser, once, from the settings and
/// the opened data (either engine), and nothing is set on a service afterwards. `faultline serve` runs it (`run`);
/// in-process tests drive the same `dependencies` and `configuration` through the router, without sockets.
///
/// One storage-pressure state serves ingest, the HTTP edge and every background writer; one change signal
/// (`RenderScheduler.Changes`) is told of every change the dashboard shows; the dashboard is rendered under a
/// `RenderLease` (always held with SQLite; with PostgreSQL the nodes take it in turn and the others announce their
/// changes to its holder).
public struct ServerAssembly: Sendable {
    /// The data the server runs on.
    public let data: Composition
    /// What the HTTP server listens on and serves.
    public let configuration: ServerConfiguration
    /// What the HTTP edge calls into.
    public let dependencies: AppDependencies<IngestService, AnyReportReader>
    /// The background services that run beside the HTTP server, in start order.
    public let services: [any Service]
    let webhooks: HTTPWebhookSender
    /// The port the server bound, for links in alerts when there is no public URL.
    let boundPort: PortBox

    /// Builds the server over `data`.
    ///
    /// - Parameter logger: where the assembly says what it could not set up (the dashboard templates not found, a
    ///   test fault injected); each service logs under its own label.
    public init(settings: Settings, data: Composition, logger: Logger = Logger(label: "faultline")) throws {
        self.data = data
        let telemetry = data.telemetry
        configuration = Self.configuration(settings, siteDirectory: data.folder + "/site")
        let boundPort = PortBox()
        let (host, publicURL) = (settings.host, settings.publicURL)
        // Where people reach the server: `--public-url`, else the address it listens on (as alerts link to it).
        let serverURL: @Sendable () -> String? = { publicURL ?? boundPort.port.map { "http://\(host):\($0)/" } }
        let renderer = try settings.webDirectory.map {
            var renderer = try data.siteRenderer(webDirectory: $0)
            renderer.publicURL = serverURL
            return renderer
        }
        let storage = data.storagePressure(
            minFreeBytes: settings.minFreeBytes, freeSpace: settings.freeSpace,
            retryAfterSeconds: settings.storageRetryAfterSeconds)
        // Everything that changes what the dashboard shows says so here; without a dashboard nobody listens.
        let changes = RenderScheduler.Changes()
        let notify: @Sendable () -> Void
        if renderer != nil {
            notify = { changes.notify() }
        } else {
            notify = {}
        }

        var worker = try data.symbolicationWorker(
            logger: Logger(label: "faultline.symbolication"), onChange: notify, storage: storage, yieldToIngest: true)
        #if DEBUG
        if let faults = settings.workerFaults {
            logger.warning("FAULTLINE_TEST_ABORT_ON_BUILD_ID is set: symbolicating that build-id aborts the process")
            worker = worker.injectingFaults(faults)
        }
        #endif
        let lease = data.engine.renderLease()
        let scheduler = renderer.map { renderer in
            RenderScheduler(
                changes: changes, render: Self.render(data, with: renderer, under: lease), clock: data.clock,
                debounce: settings.renderDebounce, logger: Logger(label: "faultline.render"), telemetry: telemetry,
                storage: storage,
                // While the worker works off a backlog the dashboard is drawn once it is done (at most 2 s late), not
                // every debounce: renders took CPU from the backlog.
                holdWhile: worker.isBehind)
        }
        let debugFiles = try data.debugFileService(quotaBytes: settings.debugFileQuotaBytes)
        let chunkUploads = ChunkUploadService(
            chunks: try FileChunkStore(root: data.folder + "/chunks"), uploads: data.stores.difUploads,
            debugFiles: debugFiles,
            hasher: SHA1ChecksumHasher(), clock: data.clock, telemetry: telemetry)
        let mailer = try settings.smtp.map { try SMTPSender(settings: $0) }
        let alerts = AlertService(
            store: data.alertStore, projects: data.stores.projects, clock: data.clock,
            logger: Logger(label: "faultline.alerts"),
            telemetry: telemetry, interval: settings.alertInterval,
            publicURL: serverURL, onChange: notify,
            storage: storage,
            mail: mailer.map { AlertMailer(recipients: data.stores.alerts, sender: $0, fromName: $0.settings.fromName) }
        )
        let webhooks = HTTPWebhookSender()
        let spikeGuard = data.spikeGuard(ceiling: settings.eventCeiling)

        var services: [any Service] = []
        if let nodes = data.nodes { services.append(NodePresenceService(nodes: nodes, telemetry: telemetry)) }
        services.append(worker)
        if let scheduler {
            services.append(scheduler)
            if case .postgres = data.engine {
                // Several nodes: one renders at a time (the lease), every interval, into the folder they all serve.
                services.append(
                    SharedDashboardService(
                        lease: lease, scheduler: scheduler, interval: settings.sharedRenderInterval,
                        telemetry: telemetry,
                        changeMark: { try await data.changeMark() }))
            }
        }
        services.append(
            ChunkSweeper(uploads: chunkUploads, clock: data.clock, logger: Logger(label: "faultline.chunks")))
        services.append(alerts)
        services.append(
            StorageAlertService(
                storage: storage, alerts: alerts, clock: data.clock, logger: Logger(label: "faultline.alerts")))
        services.append(
            QuotaFlushService(
                spikeGuard: spikeGuard, store: data.stores.quotas, alerts: alerts, clock: data.clock,
                logger: Logger(label: "faultline.quotas"), interval: settings.quotaFlushInterval, storage: storage))
        services.append(
            WebhookDispatcher(
                store: data.alertStore, sender: webhooks,
                targets: data.webhookTargetPolicy(allowPrivate: settings.allowPrivateWebhooks),
                clock: data.clock, logger: Logger(label: "faultline.webhooks"), telemetry: telemetry,
                baseBackoff: settings.webhookBaseBackoffSeconds, idleDelay: settings.webhookIdleDelay, storage: storage,
                mailer: mailer)
        )
        services.append(
            data.retentionService(
                days: settings.retentionDays, samples: settings.retentionSamples,
                logger: Logger(label: "faultline.retention"), onChange: notify,
                storage: storage))
        // Single sign-on's callback is under the address people reach the server at (as alert links are).
        let singleSignOn = settings.singleSignOn.map { sso in
            let fetcher = HTTPOIDCFetcher()
            services.append(HTTPOIDCFetcher.Closer(fetcher: fetcher))
            return data.singleSignOn(sso, fetcher: fetcher) {
                serverURL().map { ($0.hasSuffix("/") ? String($0.dropLast()) : $0) + "/login/sso/callback" }
            }
        }
        // Alert mail rides the webhook outbox; digests have their own (docs/email.md).
        let links = Self.unsubscribeLinks(data)
        if let mailer {
            services.append(
                Self.digestService(data, mailer: mailer, settings: settings, links: links, serverURL: serverURL))
        }
        self.services = services
        self.webhooks = webhooks
        self.boundPort = boundPort
        var dependencies = Self.dependencies(
            data, renderer: renderer, storage: storage, spikeGuard: spikeGuard, debugFiles: debugFiles,
            chunkUploads: chunkUploads, singleSignOn: singleSignOn, onChange: notify)
        if mailer != nil {
            dependencies.unsubscribe = UnsubscribePages(
                links: links, store: data.stores.alerts, projects: data.stores.projects, people: data.stores.people,
                audit: data.audit, clock: data.clock)
        }
        self.dependencies = dependencies
    }

    /// Runs the server and its background services until SIGTERM or SIGINT, then shuts down gracefully (stops
    /// accepting, finishes requests in flight). Closing the data is the caller's (it opened it).
    ///
    /// - Parameter onRunning: called with the bound port once the server listens.
    public func run(logger: Logger, onRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) async throws
    {
        let boundPort = boundPort
        let app = buildApplication(
            configuration: configuration, dependencies: dependencies, logger: logger, services: services,
            onServerRunning: { port in
                boundPort.set(port)
                await onRunning(port)
            })
        try await app.runService()
        await webhooks.shutdown()
    }

    /// The HTTP server's configuration from `settings`, serving the rendered site from `siteDirectory`.
    public static func configuration(_ settings: Settings, siteDirectory: String) -> ServerConfiguration {
        ServerConfiguration(
            host: settings.host, port: settings.port, siteDirectory: siteDirectory, limits: settings.limits,
            maxDebugFileBytes: settings.maxDebugFileBytes, publicDebuginfod: settings.publicDebuginfod,
            publicDashboard: settings.publicDashboard, publicURL: settings.publicURL, connections: settings.connections,
            allowPrivateWebhooks: settings.allowPrivateWebhooks)
    }

    /// One render of the dashboard under `lease`. Only the holder renders (into the folder the nodes share); the
    /// others announce their changes to it (not at their start, which changed nothing: the first, full, render). The
    /// first render under a newly taken lease renders everything: another node rendered in between, and this node's
    /// ledger of issue pages knows nothing of what it wrote.
    static func render(_ data: Composition, with renderer: SiteRenderer, under lease: any RenderLease)
        -> RenderScheduler.Render
    {
        let mark = LeaseMark()
        return { since, stop in
            var since = since
            guard lease.isHeld else {
                if since != nil { try await data.announceChange() }
                return RenderScheduler.Outcome(pages: 0, complete: true)
            }
            let taken = lease.timesTaken
            if mark.value.exchange(taken, ordering: .acquiringAndReleasing) != taken { since = nil }
            let result = try await data.renderCycle(with: renderer, since: since, stop: stop)
            return RenderScheduler.Outcome(pages: result.pages, complete: result.complete)
        }
    }

    /// What the HTTP edge calls into. `onChange` is told about every change the dashboard shows.
    static func dependencies(
        _ data: Composition, renderer: SiteRenderer?, storage: DiskGuard, spikeGuard: SpikeGuard,
        debugFiles: DebugFileService, chunkUploads: ChunkUploadService, singleSignOn: SingleSignOnService? = nil,
        onChange: @escaping @Sendable () -> Void
    ) -> AppDependencies<IngestService, AnyReportReader> {
        let reader = data.reader
        let (insights, clock) = (data.insights, data.clock)
        let provider = singleSignOn?.configuration.displayName
        let loginPage: @Sendable (String?, String) -> String = { error, next in
            (try? renderer?.loginPage(error: error, next: next, singleSignOn: provider))
                ?? LoginFallback.html(error: error, next: next, singleSignOn: provider)
        }
        let refreshIssuePage: @Sendable (Project, IssueID) async throws -> Void = { project, issue in
            guard let renderer else { return }
            try await data.renderIssuePage(with: renderer, project: project, issue: issue)
        }
        var currentIssuePage: (@Sendable (ProjectSlug, IssueID) async throws -> String?)?
        var issueListPage: IssueListRendering?
        var searchPages: SearchPages?
        if let renderer {
            currentIssuePage = { slug, issue in
                guard try await data.currentIssuePage(with: renderer, slug: slug, issue: issue) == .absent else {
                    return nil
                }
                return try await data.missingIssuePage(with: renderer, slug: slug, issue: issue)
            }
            issueListPage = { project, request, token in
                try await renderer.issueListPage(
                    project: project, request: request, insights: insights, csrfToken: token, now: clock.now())
            }
            searchPages = data.searchPages(renderer)
        }
        var dependencies = AppDependencies(
            projects: data.projects,
            ingest: data.ingestService(storage: storage, spikeGuard: spikeGuard, onCommit: onChange),
            reader: reader, debugFiles: debugFiles, symbolication: data.symbolicationStore,
            metrics: data.metrics, telemetry: data.telemetry,
            health: { _ = try await reader.reports(matching: ReportQuery(project: nil, limit: 1)) },
            insights: insights, clientReports: data.stores.insights,
            issues: data.issueService(onChange: onChange),
            alerts: data.alertStore, clock: clock, loginPage: loginPage, refreshIssuePage: refreshIssuePage,
            currentIssuePage: currentIssuePage, adminSessions: data.adminSessions,
            webhookResolver: SystemHostResolver(),
            chunkUploads: chunkUploads, storage: storage, issueListPage: issueListPage, searchPages: searchPages,
            people: PeoplePages(
                people: data.people,
                invite: { login, error, csrf in
                    (try? renderer?.invitePage(login: login, error: error, csrf: csrf))
                        ?? LoginFallback.invite(login: login, error: error, csrf: csrf)
                }),
            singleSignOn: singleSignOn)
        dependencies.audit = data.audit
        dependencies.groupingRules = data.groupingRules
        dependencies.accounts = accountPages(data, renderer: renderer)
        dependencies.groupingPages = groupingPages(data, renderer: renderer)
        if let renderer { dependencies.settingsPage = { overview in settingsPage(renderer, overview) } }
        dependencies.quotaCounts = data.stores.quotas
        return dependencies
    }
}

/// The lease count a render last ran under.
final class LeaseMark: Sendable {
    let value = Atomic<UInt64>(0)
}

/// The port the server bound (known only once it runs; port 0 picks one).
final class PortBox: Sendable {
    private let value = Mutex<Int?>(nil)
    func set(_ port: Int) { value.withLock { $0 = port } }
    var port: Int? { value.withLock { $0 } }
}

/// A plain login form, used when the dashboard templates are not available.
enum LoginFallback {
    /// The invite page without templates.
    static func invite(login: String?, error: String?, csrf: String) -> String {
        let esc = Markup.escape
        let form =
            login.map {
                """
                <p>Set a password for \(esc($0)).</p><form method="post"><input type="hidden" name="csrf" value="\(esc(csrf))">
                <label for="name">Your name</label><input id="name" name="name" type="text">
                <label for="password">Password</label><input id="password" name="password" type="password" required>
                <label for="confirm">Again</label><input id="confirm" name="confirm" type="password" required>
                <button type="submit">Set password</button></form>
                """
            } ?? "<p>This invite link is not valid, was used, or has expired.</p>"
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Set your password · Faultline</title></head>
            <body><main><h1>Set your password</h1>\(error.map { "<p role=\"alert\">\(esc($0))</p>" } ?? "")\(form)</main></body></html>
            """
    }

    /// - Parameter singleSignOn: the provider's name for a "Sign in with …" link, when single sign-on is on.
    static func html(error: String?, next: String, singleSignOn: String? = nil) -> String {
        let esc = Markup.escape
        let sso = singleSignOn.map {
            "<p><a href=\"/login/sso?next=\(esc(FormEncoding.component(next)))\">Sign in with \(esc($0))</a></p>"
        }
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Log in · Faultline</title></head><body><main><h1>Log in to Faultline</h1>
            \(error.map { "<p role=\"alert\">\(esc($0))</p>" } ?? "")\(sso ?? "")
            <form method="post" action="/login"><label for="login">E-mail or user name</label>
            <input id="login" name="login" type="text" autocomplete="username" required>
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required>
            <input type="hidden" name="next" value="\(esc(next))"><button type="submit">Log in</button></form>
            <form method="post" action="/login"><label for="token">Admin token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required>
            <input type="hidden" name="next" value="\(esc(next))"><button type="submit">Log in</button></form></main></body></html>
            """
    }
}
