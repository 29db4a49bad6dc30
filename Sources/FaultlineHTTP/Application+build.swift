import FaultlineCore
import Hummingbird
import Logging
import Pipeline
import ServiceLifecycle

/// Where and how the server listens.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Folder of the rendered static site, served at `/`.
    public var siteDirectory: String?
    public var limits: IngestLimits
    /// Most bytes one debug-file upload may have.
    public var maxDebugFileBytes: UInt64
    /// Serve `/buildid/…` without a token (symbols become readable by anyone who can reach the server).
    public var publicDebuginfod: Bool
    /// Serve the dashboard without the admin token (only for a server nobody else can reach).
    public var publicDashboard: Bool
    /// Read timeouts, the least body rate, the write deadline, the cap on open connections and each address's share.
    public var connections = ConnectionPolicy()
    /// The absolute base URL clients reach the server at (`https://faultline.example.com`), for URLs the
    /// server hands out (sentry-cli's chunk-upload URL). nil: sentry-cli gets a URL relative to the server it uses.
    public var publicURL: String?
    /// Let webhooks go to loopback, private and link-local addresses (`--allow-private-webhooks`); off by default,
    /// since whoever sets a webhook URL could otherwise make the server probe its own network.
    public var allowPrivateWebhooks: Bool = false
    /// Whether the dashboard is reached over https (the public URL is https): the session cookie is then `Secure`.
    public var servedOverHTTPS: Bool { publicURL?.lowercased().hasPrefix("https://") == true }
    public init(
        host: String = "127.0.0.1", port: Int = 8080, siteDirectory: String? = nil,
        limits: IngestLimits = IngestLimits(),
        maxDebugFileBytes: UInt64 = 4 << 30, publicDebuginfod: Bool = false, publicDashboard: Bool = false,
        publicURL: String? = nil, connections: ConnectionPolicy = ConnectionPolicy(), allowPrivateWebhooks: Bool = false
    ) {
        self.connections = connections
        self.allowPrivateWebhooks = allowPrivateWebhooks
        self.publicDashboard = publicDashboard
        self.publicURL = publicURL
        self.host = host
        self.port = port
        self.siteDirectory = siteDirectory
        self.limits = limits
        self.maxDebugFileBytes = maxDebugFileBytes
        self.publicDebuginfod = publicDebuginfod
    }
}

/// Everything the HTTP edge calls into, built by the composition root (or a test).
public struct AppDependencies<Ingest: ReportIngesting, Reader: ReportReader>: Sendable {
    public let projects: ProjectService
    public let ingest: Ingest
    public let reader: Reader
    public let debugFiles: DebugFileService
    public let symbolication: any SymbolicationStore
    public let metrics: MetricsRegistry
    public let telemetry: Telemetry
    /// Throws when the server cannot serve (the database does not answer).
    public let health: @Sendable () async throws -> Void
    public let insights: any InsightsReader
    /// Dropped-event statistics from Sentry client reports.
    public let clientReports: any ClientReportReader
    public let issues: IssueService
    public let alerts: any AlertStore
    public let clock: any WallClock
    /// The account page and personal API tokens (issue #37); nil leaves `/account` out and the API takes no personal
    /// tokens.
    public var accounts: AccountPages?
    /// What spike protection counted (`QuotaCountStore`); nil leaves `GET /api/v1/quota-counts` and
    /// `GET /api/v1/issues/{id}/dropped` out.
    public var quotaCounts: (any QuotaCountStore)? = nil
    /// The dashboard's login form (error message, where to go after) — rendered by the Dashboard module.
    public let loginPage: @Sendable (_ error: String?, _ next: String) -> String
    /// Renders an issue's dashboard page now, after a change made from the dashboard, so the page the browser
    /// is sent back to shows it (a no-op without a renderer).
    public let refreshIssuePage: @Sendable (_ project: Project, _ issue: IssueID) async throws -> Void
    /// Makes an issue's page in the site folder current before it is served (rendered when its issue changed
    /// since the page was rendered); answers the HTML of a "does not exist (yet)" page when the issue has no issue
    /// and no page (served with a 404). Nil serves the site's files as they are.
    public let currentIssuePage: (@Sendable (_ project: ProjectSlug, _ issue: IssueID) async throws -> String?)?
    /// sentry-cli's chunk upload and assemble; nil leaves the `/api/0/` routes out.
    public let chunkUploads: ChunkUploadService?
    /// Dashboard login sessions and the failed-login limit.
    public let adminSessions: AdminSessionService
    /// Resolves webhook hosts, to refuse internal targets when alert settings change.
    public let webhookResolver: any HostResolving
    /// The storage-pressure state: while the disk is full, write routes are refused before their bodies are
    /// read and `/healthz` says `degraded: storage_full`. Nil: no such refusal.
    public let storage: DiskGuard?
    /// Renders the live issue lists (`GET /{slug}/list`); nil (no dashboard templates) leaves the route out.
    public let issueListPage: IssueListRendering?
    /// The dashboard's server-rendered search and event pages; nil leaves their routes out.
    public let searchPages: SearchPages?
    /// People and roles (password logins, invite links); nil: only the admin token signs in.
    public let people: PeoplePages?
    /// OpenID Connect single sign-on (`/login/sso`); nil leaves its routes out.
    public let singleSignOn: SingleSignOnService?
    /// Where changes made through the API and the dashboard's settings forms are recorded, and the settings page's
    /// trail is read from (``AuditTrail``); nil records nothing and leaves `GET /api/v1/audit` out.
    public var audit: (any AuditTrail)? = nil
    /// Projects' fingerprint rules and their dry run (`GET /api/v1/grouping/rules`, `POST /api/v1/grouping/try`); nil
    /// leaves them out.
    public var groupingRules: GroupingRulesService? = nil
    /// The fingerprint rules page (`/{slug}/settings/grouping`); nil (no dashboard templates) leaves it out.
    public var groupingPages: GroupingRulesPages? = nil
    /// The signed unsubscribe links of alert mail and digests (nil: no mail configured, no route).
    public var unsubscribe: UnsubscribePages? = nil
    /// Renders a project's settings page (`GET /{slug}/settings` and its forms); nil (no dashboard templates) leaves
    /// those routes out.
    public var settingsPage: (@Sendable (ProjectSettingsOverview) -> String)? = nil
    public init(
        projects: ProjectService, ingest: Ingest, reader: Reader, debugFiles: DebugFileService,
        symbolication: any SymbolicationStore, metrics: MetricsRegistry, telemetry: Telemetry,
        health: @escaping @Sendable () async throws -> Void, insights: any InsightsReader,
        clientReports: any ClientReportReader, issues: IssueService,
        alerts: any AlertStore, clock: any WallClock,
        loginPage: @escaping @Sendable (_ error: String?, _ next: String) -> String,
        refreshIssuePage: @escaping @Sendable (_ project: Project, _ issue: IssueID) async throws -> Void = { _, _ in },
        currentIssuePage: (@Sendable (_ project: ProjectSlug, _ issue: IssueID) async throws -> String?)? = nil,
        adminSessions: AdminSessionService, webhookResolver: any HostResolving,
        chunkUploads: ChunkUploadService? = nil, storage: DiskGuard? = nil, issueListPage: IssueListRendering? = nil,
        searchPages: SearchPages? = nil, people: PeoplePages? = nil, singleSignOn: SingleSignOnService? = nil
    ) {
        self.people = people
        self.singleSignOn = singleSignOn
        self.issueListPage = issueListPage
        self.searchPages = searchPages
        self.storage = storage
        self.adminSessions = adminSessions
        self.webhookResolver = webhookResolver
        self.chunkUploads = chunkUploads
        self.insights = insights
        self.clientReports = clientReports
        self.issues = issues
        self.alerts = alerts
        self.clock = clock
        self.loginPage = loginPage
        self.refreshIssuePage = refreshIssuePage
        self.currentIssuePage = currentIssuePage
        self.symbolication = symbolication
        self.projects = projects
        self.ingest = ingest
        self.reader = reader
        self.debugFiles = debugFiles
        self.metrics = metrics
        self.telemetry = telemetry
        self.health = health
    }
}

/// Builds the router: used by `faultline serve` and by the tests alike.
public func buildRouter<Ingest: ReportIngesting, Reader: ReportReader>(
    configuration: ServerConfiguration, dependencies: AppDependencies<Ingest, Reader>
) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    router.add(middleware: SecurityHeadersMiddleware<AppRequestContext>())
    router.add(middleware: ErrorMiddleware(telemetry: dependencies.telemetry, storage: dependencies.storage))
    if let storage = dependencies.storage {
        router.add(middleware: StoragePressureMiddleware(storage: storage))
    }
    if !configuration.publicDashboard {
        router.add(
            middleware: DashboardAuthMiddleware(
                projects: dependencies.projects, sessions: dependencies.adminSessions,
                people: dependencies.people?.people))
    }
    if let site = configuration.siteDirectory {
        router.add(
            middleware: SiteFilesMiddleware(
                folder: site, currentIssuePage: dependencies.currentIssuePage, projects: dependencies.projects))
    }
    router.addRoutes(
        LoginController(
            sessions: dependencies.adminSessions, people: dependencies.people?.people,
            secureCookie: configuration.servedOverHTTPS, page: dependencies.loginPage,
            secondFactor: dependencies.accounts
        )
        .endpoints)
    if let singleSignOn = dependencies.singleSignOn {
        router.addRoutes(
            SingleSignOnController(
                service: singleSignOn, sessions: dependencies.adminSessions,
                secureCookie: configuration.servedOverHTTPS, page: dependencies.loginPage
            ).endpoints)
    }
    if let people = dependencies.people {
        router.addRoutes(
            InviteController(
                pages: people, sessions: dependencies.adminSessions, secureCookie: configuration.servedOverHTTPS
            ).endpoints)
    }
    router.addRoutes(
        OperationsController(health: dependencies.health, metrics: dependencies.metrics, storage: dependencies.storage)
            .endpoints)
    router.addRoutes(
        IssueActionsController(
            issues: dependencies.issues, projects: dependencies.projects, refreshPage: dependencies.refreshIssuePage
        ).endpoints)
    if let render = dependencies.issueListPage {
        router.addRoutes(IssueListsController(render: render, projects: dependencies.projects).endpoints)
    }
    if let pages = dependencies.searchPages {
        router.addRoutes(SearchController(pages: pages, projects: dependencies.projects).endpoints)
    }
    if let accounts = dependencies.accounts {
        router.addRoutes(AccountController(pages: accounts).endpoints)
    }
    if let groupingPages = dependencies.groupingPages {
        router.addRoutes(GroupingRulesPageController(pages: groupingPages).endpoints)
    }
    if let unsubscribe = dependencies.unsubscribe {
        router.addRoutes(UnsubscribeController(pages: unsubscribe).endpoints)
    }
    if let render = dependencies.settingsPage, let people = dependencies.people {
        router.addRoutes(
            ProjectSettingsController(
                projects: dependencies.projects, people: people.people,
                alerts: AlertSettingsChange(
                    store: dependencies.alerts,
                    targets: WebhookTargetPolicy(
                        resolver: dependencies.webhookResolver, allowPrivate: configuration.allowPrivateWebhooks),
                    audit: dependencies.audit, clock: dependencies.clock),
                alertStore: dependencies.alerts, audit: dependencies.audit, clock: dependencies.clock,
                publicURL: configuration.publicURL, render: render
            ).endpoints)
    }
    let site = configuration.siteDirectory
    router.get("/") { _, _ in LandingPage.front(site: site) }
    let apiTokens = dependencies.accounts.map { PersonalTokenCheck(tokens: $0.accounts, routes: .api) }
    let uploadTokens = dependencies.accounts.map { PersonalTokenCheck(tokens: $0.accounts, routes: .upload) }

    let limits = configuration.limits
    let debugFiles = dependencies.debugFiles
    let sentry = SentryController(
        ingest: dependencies.ingest, projects: dependencies.projects, limits: limits,
        telemetry: dependencies.telemetry,
        clock: dependencies.clock, maxEnvelopeBytes: 20 << 20, maxAttachmentBytes: 5 << 20,
        minidumpQuota: { project, bytes in try await debugFiles.checkMinidumpQuota(project: project, adding: bytes) })
    router.addRoutes(sentry.endpoints)
    router.addRoutes(MinidumpController(sentry: sentry).endpoints)
    router.group("api/v1")
        .add(
            middleware: BearerAuthMiddleware(
                projects: dependencies.projects, accepts: [.ingest], failures: dependencies.adminSessions)
        )
        .group(context: IngestContext.self)
        .addRoutes(
            ReportsController(ingest: dependencies.ingest, limits: limits, telemetry: dependencies.telemetry).endpoints
        )
        .addRoutes(SessionsController(ingest: dependencies.ingest, limits: limits).endpoints)
        .addRoutes(SwiftCrashController(ingest: dependencies.ingest, limits: limits).endpoints)
        .addRoutes(AppleCrashController(ingest: dependencies.ingest, limits: limits).endpoints)
    router.group("api/v1")
        .add(
            middleware: BearerAuthMiddleware(
                projects: dependencies.projects, accepts: [.upload, .admin], failures: dependencies.adminSessions,
                personal: apiTokens)
        )
        .group(context: ReaderContext.self)
        .addRoutes(
            ReadController(
                reader: dependencies.reader, projects: dependencies.projects, symbolication: dependencies.symbolication,
                limits: limits
            ).endpoints
        )
        .addRoutes(
            InsightsController(
                insights: dependencies.insights, clientReports: dependencies.clientReports, issues: dependencies.issues,
                alerts: dependencies.alerts, projects: dependencies.projects, clock: dependencies.clock,
                webhookTargets: WebhookTargetPolicy(
                    resolver: dependencies.webhookResolver, allowPrivate: configuration.allowPrivateWebhooks),
                audit: dependencies.audit
            ).endpoints
        )
        .addRoutes(
            IssueMergeController(
                issues: dependencies.issues, insights: dependencies.insights, clock: dependencies.clock
            )
            .endpoints)
    if let quotaCounts = dependencies.quotaCounts {
        router.group("api/v1")
            .add(
                middleware: BearerAuthMiddleware(
                    projects: dependencies.projects, accepts: [.upload, .admin], failures: dependencies.adminSessions,
                    personal: apiTokens)
            )
            .group(context: ReaderContext.self)
            .addRoutes(
                QuotaCountsController(
                    insights: dependencies.insights, quotas: quotaCounts, projects: dependencies.projects,
                    clock: dependencies.clock
                ).endpoints)
    }
    if let groupingRules = dependencies.groupingRules {
        router.group("api/v1")
            .add(
                middleware: BearerAuthMiddleware(
                    projects: dependencies.projects, accepts: [.upload, .admin], failures: dependencies.adminSessions,
                    personal: apiTokens)
            )
            .group(context: ReaderContext.self)
            .addRoutes(GroupingRulesController(service: groupingRules, projects: dependencies.projects).endpoints)
    }
    if let audit = dependencies.audit {
        router.group("api/v1")
            .add(
                middleware: BearerAuthMiddleware(
                    projects: dependencies.projects, accepts: [.upload, .admin], failures: dependencies.adminSessions,
                    personal: apiTokens)
            )
            .group(context: ReaderContext.self)
            .addRoutes(AuditController(audit: audit, projects: dependencies.projects).endpoints)
    }
    router.group("api/v1")
        .add(
            middleware: BearerAuthMiddleware(
                projects: dependencies.projects, accepts: [.upload], failures: dependencies.adminSessions,
                personal: uploadTokens)
        )
        .add(middleware: DeclaredLengthMiddleware(limit: configuration.maxDebugFileBytes))
        .group(context: UploadContext.self)
        .addRoutes(
            DebugFilesController(service: dependencies.debugFiles, maxFileBytes: configuration.maxDebugFileBytes)
                .endpoints)
    if let chunkUploads = dependencies.chunkUploads {
        // sentry-cli (`debug-files upload`): the project's upload token is the auth token; errors in Sentry's shape.
        router.group("api/0")
            .add(middleware: SentryErrorMiddleware<AppRequestContext>(storage: dependencies.storage))
            .add(
                middleware: BearerAuthMiddleware(
                    projects: dependencies.projects, accepts: [.upload], failures: dependencies.adminSessions,
                    personal: uploadTokens)
            )
            .group(context: UploadContext.self)
            .addRoutes(
                SentryDebugFilesController(
                    service: chunkUploads, publicURL: configuration.publicURL,
                    maxFileBytes: configuration.maxDebugFileBytes
                ).endpoints)
    }
    if configuration.publicDebuginfod {
        router.addRoutes(
            DebuginfodController<AppRequestContext>(service: dependencies.debugFiles, scope: { _ in nil }).endpoints)
    } else {
        router.group()
            .add(
                middleware: BearerAuthMiddleware(
                    projects: dependencies.projects, accepts: [.upload, .admin], failures: dependencies.adminSessions,
                    personal: apiTokens)
            )
            .group(context: ReaderContext.self)
            .addRoutes(
                DebuginfodController<ReaderContext>(
                    service: dependencies.debugFiles,
                    scope: { context in
                        if case .project(let project) = context.scope { return project.id }
                        return nil
                    }
                ).endpoints)
    }
    return router
}

/// Builds the whole application (router + server configuration + background services).
public func buildApplication<Ingest: ReportIngesting, Reader: ReportReader>(
    configuration: ServerConfiguration, dependencies: AppDependencies<Ingest, Reader>, logger: Logger,
    services: [any Service] = [], onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    Application(
        router: buildRouter(configuration: configuration, dependencies: dependencies),
        server: .guardedHTTP1(policy: configuration.connections),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Faultline"),
        services: services,
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
        logger: logger)
}
