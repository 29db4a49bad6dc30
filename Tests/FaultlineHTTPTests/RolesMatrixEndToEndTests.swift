import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Foundation
import Hummingbird
import Logging
import Testing

/// Issue #37's promise, "one person never does more than their role allows", over every route the server registers:
/// one real `faultline serve` on 127.0.0.1 and its SQLite file, every route of its router (read from the router the
/// server is built with, so a new route without a row here fails the test) tried by every principal: no credentials,
/// the project's ingest key and upload token, the admin token, a viewer, member, admin and owner of the project and an
/// admin of another project, each with their session and with personal tokens of every scope their role allows, and a
/// removed person's session and token.
///
/// Every refused request is answered with the status of ``expected(_:_:)`` and leaves the database as it was (a dump
/// of every table compared, per route). Every allowed request reaches its handler (the route's own answer, which for a
/// few routes is a 400 for a body made invalid on purpose so that the allowed half changes little). Each request comes
/// from its own loopback address, so the per-address limit on failed credentials never answers in place of the rule.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct RolesMatrixEndToEndTests {
    /// How a route decides who may use it.
    enum Level: String {
        /// Anyone: the route authenticates what it is sent by itself (login, invite, unsubscribe links).
        case open
        /// The project's ingest key only (as a bearer header).
        case ingest
        /// The project's ingest key only, as a Sentry DSN key.
        case sentryIngest
        /// The read API: upload and admin tokens, personal tokens whose scope reads, of people of the project.
        case read
        /// The API's issue changes: upload and admin tokens; personal `write:issues`/`admin` tokens of members up.
        case issues
        /// Project settings through the API: the admin token; personal `admin` tokens of the project's admins, owners.
        case settings
        /// Debug-file uploads: upload tokens; personal `upload:symbols`/`admin` tokens of members up.
        case upload
        /// A dashboard page of the project: sessions of its people, the admin token.
        case page
        /// A dashboard page of no project (the front page): every session, the admin token.
        case anyPage
        /// A dashboard form that changes an issue: sessions of members up (with their CSRF token).
        case issueForm
        /// A dashboard form that changes nothing (a dry run): sessions of the project's people (with their CSRF token).
        case readForm
        /// A dashboard form that changes the project's settings or members: sessions of its admins and owners.
        case settingsForm
        /// The signed-in person's own account page.
        case accountPage
        /// A form of the signed-in person's own account (their session and CSRF token).
        case accountForm
    }

    /// The people of the matrix: `outsider` is an admin of the other project; `removed` was a member of this one, signed
    /// in and made a token, and was removed while the server ran.
    enum Role: String, CaseIterable { case viewer, member, admin, owner, outsider, removed }

    /// Who sends a request.
    enum Principal: Hashable, CustomStringConvertible {
        case nobody, ingest, upload, adminToken
        case session(Role)
        case token(Role, TokenScope)

        var description: String {
            switch self {
            case .nobody: "no credentials"
            case .ingest: "ingest key"
            case .upload: "upload token"
            case .adminToken: "admin token"
            case .session(let role): "\(role) session"
            case .token(let role, let scope): "\(role) token \(scope.rawValue)"
            }
        }
    }

    /// Every principal of the matrix: the tokens are every scope each role may hold (never above it).
    static let principals: [Principal] =
        [.nobody, .ingest, .upload, .adminToken] + Role.allCases.map { .session($0) } + [
            .token(.viewer, .read), .token(.member, .read), .token(.member, .writeIssues),
            .token(.member, .uploadSymbols), .token(.admin, .read), .token(.admin, .writeIssues),
            .token(.admin, .uploadSymbols), .token(.admin, .admin), .token(.owner, .read), .token(.owner, .admin),
            .token(.outsider, .admin), .token(.removed, .writeIssues),
        ]

    /// The answer `principal` gets on a route of `level`: nil when allowed, else the refusal's status.
    static func expected(_ level: Level, _ principal: Principal) -> Int? {
        switch (level, principal) {
        case (.open, _): return nil
        case (_, .session(.removed)), (_, .token(.removed, _)): return 401
        case (.ingest, .ingest), (.sentryIngest, .ingest): return nil
        case (.ingest, _), (.sentryIngest, _): return 401
        case (.read, .upload), (.read, .adminToken), (.issues, .upload), (.issues, .adminToken): return nil
        case (.settings, .adminToken), (.upload, .upload): return nil
        case (.settings, .upload): return 403
        case (.read, .token(.outsider, _)), (.issues, .token(.outsider, _)), (.settings, .token(.outsider, _)),
            (.upload, .token(.outsider, _)):
            return 404
        case (.read, .token(_, let scope)): return scope == .uploadSymbols ? 403 : nil
        case (.issues, .token(_, let scope)): return scope == .writeIssues || scope == .admin ? nil : 403
        case (.settings, .token(let role, let scope)): return scope == .admin && role >= .admin ? nil : 403
        case (.upload, .token(_, let scope)): return scope == .uploadSymbols || scope == .admin ? nil : 403
        case (.read, _), (.issues, _), (.settings, _), (.upload, _): return 401
        case (.page, .adminToken), (.anyPage, .adminToken), (.accountPage, .adminToken): return nil
        case (.page, .session(.outsider)): return 404
        case (.page, .session), (.anyPage, .session), (.accountPage, .session), (.accountForm, .session): return nil
        case (.issueForm, .session(let role)): return role == .outsider ? 404 : role == .viewer ? 403 : nil
        case (.readForm, .session(let role)): return role == .outsider ? 404 : nil
        case (.settingsForm, .session(let role)): return role == .outsider ? 404 : role < .admin ? 403 : nil
        case (.issueForm, .adminToken), (.readForm, .adminToken), (.settingsForm, .adminToken),
            (.accountForm, .adminToken):
            return 403
        case (.page, _), (.anyPage, _), (.issueForm, _), (.readForm, _), (.settingsForm, _), (.accountPage, _),
            (.accountForm, _):
            return 401
        }
    }

    /// One route of the router, as the matrix tries it.
    struct Route {
        /// `METHOD /path/{param}` as the router names it.
        var name: String
        /// What this row tries of a route whose rule depends on the request (a form's button); nil for most.
        var variant: String? = nil
        var label: String { name + (variant.map { " (\($0))" } ?? "") }
        var level: Level
        /// The concrete path (query included) tried.
        var path: String
        /// The body; `{csrf}` is replaced by the principal's CSRF token (a wrong one for non-sessions).
        var body: String = ""
        var contentType: String = "application/json"
        /// What an allowed principal gets (the handler's answer).
        var allowed: Set<Int> = [200]
        /// The allowed answer is an HTML page (the account page showing a mistake), never a JSON refusal.
        var allowedPage = false
        /// What the allowed answer says, where its status alone could be a refusal's (the handler's own 404).
        var allowedSays: String? = nil
        /// The same route aimed at the other project's issue or event (or another person's token) from this project's
        /// path: every principal allowed above gets 404 and nothing changes. Path and body; nil: no such variant.
        var foreign: (path: String, body: String)? = nil
    }

    /// Values the route table fills its paths and bodies with.
    struct Fixture {
        var issue: Int
        var event: String
        /// The other project's issue and event, and a token of a person of the other project only.
        var foreignIssue: Int
        var foreignEvent: String
        var foreignToken: Int
        /// A person of the other project only.
        var foreignPerson: Int
        /// The viewer (whose role the settings forms try to change).
        var viewer: Int
        var build = "b1d0000000000000000000000000000000000001"
        var invite = String(repeating: "a", count: 64)
        var unsubscribe = "v1.1.1.0.deadbeef"
    }

    /// The table: one row per route of the router, with the request it is tried with.
    static func table(_ f: Fixture) -> [Route] {
        let q = "?project=shop"
        let i = f.issue
        let form = "application/x-www-form-urlencoded"
        return [
            // Open routes: each checks what it is sent by itself.
            Route(name: "GET /", level: .anyPage, path: "/"),
            Route(name: "GET /healthz", level: .open, path: "/healthz"),
            Route(name: "GET /metrics", level: .open, path: "/metrics"),
            Route(name: "GET /login", level: .open, path: "/login"),
            Route(
                name: "POST /login", level: .open, path: "/login", body: "login=x&password=y", contentType: form,
                allowed: [401]),
            Route(name: "POST /logout", level: .open, path: "/logout", contentType: form, allowed: [303]),
            Route(name: "GET /logout", level: .open, path: "/logout", allowed: [200, 303]),
            Route(name: "GET /login/sso", level: .open, path: "/login/sso", allowed: [502, 503]),
            Route(name: "GET /login/sso/callback", level: .open, path: "/login/sso/callback", allowed: [400, 401]),
            Route(name: "GET /invite/{secret}", level: .open, path: "/invite/\(f.invite)", allowed: [404]),
            Route(
                name: "POST /invite/{secret}", level: .open, path: "/invite/\(f.invite)", body: "csrf=0",
                contentType: form, allowed: [403, 404]),
            Route(
                name: "GET /unsubscribe/{token}", level: .open, path: "/unsubscribe/\(f.unsubscribe)",
                allowed: [400, 404]),
            Route(
                name: "POST /unsubscribe/{token}", level: .open, path: "/unsubscribe/\(f.unsubscribe)",
                contentType: form, allowed: [400, 404]),
            // Ingest.
            Route(
                name: "POST /api/v1/reports", level: .ingest, path: "/api/v1/reports", body: "[]", allowed: [202, 400]),
            Route(
                name: "POST /api/v1/sessions", level: .ingest, path: "/api/v1/sessions", body: "[]",
                allowed: [202, 400]),
            Route(
                name: "POST /api/v1/crashes/swift", level: .ingest, path: "/api/v1/crashes/swift", body: "x",
                allowed: [400]),
            Route(
                name: "POST /api/v1/crashes/apple", level: .ingest, path: "/api/v1/crashes/apple", body: "x",
                allowed: [400]),
            Route(
                name: "POST /api/{project_id}/envelope", level: .sentryIngest, path: "/api/1/envelope", body: "x",
                allowed: [400]),
            Route(
                name: "POST /api/{project_id}/store", level: .sentryIngest, path: "/api/1/store", body: "x",
                allowed: [400]),
            Route(
                name: "POST /api/{project_id}/minidump", level: .sentryIngest, path: "/api/1/minidump", body: "x",
                allowed: [400]),
            // The read API.
            Route(name: "GET /api/v1/reports", level: .read, path: "/api/v1/reports\(q)"),
            Route(
                name: "GET /api/v1/reports/{event_id}", level: .read, path: "/api/v1/reports/\(f.event)\(q)",
                foreign: ("/api/v1/reports/\(f.foreignEvent)\(q)", "")),
            Route(
                name: "GET /api/v1/issues/{id}/reports", level: .read, path: "/api/v1/issues/\(i)/reports\(q)",
                foreign: ("/api/v1/issues/\(f.foreignIssue)/reports\(q)", "")),
            Route(name: "GET /api/v1/missing-debug-files", level: .read, path: "/api/v1/missing-debug-files\(q)"),
            Route(name: "GET /api/v1/issues", level: .read, path: "/api/v1/issues\(q)"),
            Route(
                name: "GET /api/v1/issues/{id}", level: .read, path: "/api/v1/issues/\(i)\(q)",
                foreign: ("/api/v1/issues/\(f.foreignIssue)\(q)", "")),
            Route(name: "GET /api/v1/health", level: .read, path: "/api/v1/health\(q)"),
            Route(name: "GET /api/v1/releases", level: .read, path: "/api/v1/releases\(q)"),
            Route(name: "GET /api/v1/releases/{release}/gate", level: .read, path: "/api/v1/releases/1.0/gate\(q)"),
            Route(name: "GET /api/v1/top-issues", level: .read, path: "/api/v1/top-issues\(q)"),
            Route(name: "GET /api/v1/alerts", level: .read, path: "/api/v1/alerts\(q)"),
            Route(name: "GET /api/v1/alert-settings", level: .read, path: "/api/v1/alert-settings\(q)"),
            Route(name: "GET /api/v1/dropped-events", level: .read, path: "/api/v1/dropped-events\(q)"),
            Route(
                name: "GET /api/v1/issues/{id}/merged", level: .read, path: "/api/v1/issues/\(i)/merged\(q)",
                foreign: ("/api/v1/issues/\(f.foreignIssue)/merged\(q)", "")),
            Route(name: "GET /api/v1/quota-counts", level: .read, path: "/api/v1/quota-counts\(q)"),
            Route(
                name: "GET /api/v1/issues/{id}/dropped", level: .read, path: "/api/v1/issues/\(i)/dropped\(q)",
                foreign: ("/api/v1/issues/\(f.foreignIssue)/dropped\(q)", "")),
            Route(name: "GET /api/v1/grouping/rules", level: .read, path: "/api/v1/grouping/rules\(q)"),
            Route(
                name: "GET /buildid/{build_id}/debuginfo", level: .read, path: "/buildid/\(f.build)/debuginfo\(q)",
                allowed: [404], allowedSays: "for build-id"),
            Route(
                name: "GET /buildid/{build_id}/executable", level: .read,
                path: "/buildid/\(f.build)/executable\(q)", allowed: [404], allowedSays: "for build-id"),
            Route(
                name: "GET /buildid/{build_id}/section/{section}", level: .read,
                path: "/buildid/\(f.build)/section/.text\(q)", allowed: [404], allowedSays: "for build-id"),
            Route(
                name: "GET /buildid/{build_id}/source/**", level: .read, path: "/buildid/\(f.build)/source/a.c\(q)",
                allowed: [404], allowedSays: "for build-id"),
            // The API's issue changes (bodies that fail after the checks: nothing is merged).
            Route(
                name: "PATCH /api/v1/issues/{id}", level: .issues, path: "/api/v1/issues/\(i)\(q)",
                body: #"{"status":"open"}"#,
                foreign: ("/api/v1/issues/\(f.foreignIssue)\(q)", #"{"status":"closed"}"#)),
            Route(
                name: "POST /api/v1/issues/{id}/merge", level: .issues, path: "/api/v1/issues/\(i)/merge\(q)",
                body: #"{"issues":[0]}"#, allowed: [400],
                foreign: ("/api/v1/issues/\(i)/merge\(q)", #"{"issues":[\#(f.foreignIssue)]}"#)),
            Route(
                name: "POST /api/v1/issues/{id}/unmerge", level: .issues, path: "/api/v1/issues/\(i)/unmerge\(q)",
                body: #"{"fingerprint":"00"}"#, allowed: [400],
                foreign: ("/api/v1/issues/\(f.foreignIssue)/unmerge\(q)", #"{"fingerprint":"v3:0000000000000000"}"#)),
            // The rules' dry run changes nothing: a read (decision 0075).
            Route(
                name: "POST /api/v1/grouping/try", level: .read, path: "/api/v1/grouping/try\(q)",
                body: "error.type:x ->", allowed: [400]),
            // Settings.
            Route(
                name: "PUT /api/v1/alert-settings", level: .settings, path: "/api/v1/alert-settings\(q)",
                body: #"{"new_issue_cap": 999}"#),
            Route(
                name: "PUT /api/v1/grouping/rules", level: .settings, path: "/api/v1/grouping/rules\(q)",
                body: "error.type:x ->", allowed: [400]),
            Route(name: "GET /api/v1/audit", level: .settings, path: "/api/v1/audit\(q)"),
            // Debug-file uploads (the native API and sentry-cli's).
            Route(
                name: "PUT /api/v1/debug-files/{build_id}", level: .upload, path: "/api/v1/debug-files/\(f.build)\(q)",
                body: "not an ELF file", contentType: "application/octet-stream", allowed: [400, 415, 422]),
            Route(
                name: "POST /api/v1/debug-files", level: .upload, path: "/api/v1/debug-files\(q)",
                body: "not an ELF file", contentType: "application/octet-stream", allowed: [400, 415, 422]),
            Route(
                name: "POST /api/v1/debug-files/missing", level: .upload, path: "/api/v1/debug-files/missing\(q)",
                body: #"{"files": [{"build_id": "abcd", "kinds": ["debuginfo"]}]}"#),
            Route(name: "GET /api/v1/debug-files", level: .upload, path: "/api/v1/debug-files\(q)"),
            Route(name: "GET /api/0", level: .upload, path: "/api/0/?project=shop"),
            Route(
                name: "GET /api/0/organizations/{org}/chunk-upload", level: .upload,
                path: "/api/0/organizations/shop/chunk-upload/"),
            Route(
                name: "POST /api/0/organizations/{org}/chunk-upload", level: .upload,
                path: "/api/0/organizations/shop/chunk-upload/", body: "x", contentType: "multipart/form-data",
                allowed: [400]),
            Route(
                name: "POST /api/0/projects/{org}/{project}/files/difs/assemble", level: .upload,
                path: "/api/0/projects/shop/shop/files/difs/assemble/", body: "{}"),
            // The dashboard's pages and forms.
            Route(name: "GET /{slug}/list", level: .page, path: "/shop/list"),
            Route(name: "GET /{slug}/search", level: .page, path: "/shop/search?q=boom"),
            Route(
                name: "GET /{slug}/events/{event}", level: .page, path: "/shop/events/\(f.event)",
                foreign: ("/shop/events/\(f.foreignEvent)", "")),
            Route(
                name: "POST /{slug}/issues/{id}/status", level: .issueForm, path: "/shop/issues/\(i)/status",
                body: "csrf={csrf}&status=open", contentType: form, allowed: [303],
                foreign: ("/shop/issues/\(f.foreignIssue)/status", "csrf={csrf}&status=closed")),
            Route(
                name: "POST /{slug}/issues/{id}/note", level: .issueForm, path: "/shop/issues/\(i)/note",
                body: "csrf={csrf}&note=allowed", contentType: form, allowed: [303],
                foreign: ("/shop/issues/\(f.foreignIssue)/note", "csrf={csrf}&note=sneaky")),
            Route(
                name: "POST /{slug}/issues/{id}/tracker", level: .issueForm, path: "/shop/issues/\(i)/tracker",
                body: "csrf={csrf}&tracker_url=", contentType: form, allowed: [303],
                foreign: (
                    "/shop/issues/\(f.foreignIssue)/tracker", "csrf={csrf}&tracker_url=https%3A%2F%2Fexample.com%2F1"
                )),
            Route(
                name: "POST /{slug}/issues/{id}/merge", level: .issueForm, path: "/shop/issues/\(i)/merge",
                body: "csrf={csrf}&issues=x", contentType: form, allowed: [400],
                foreign: ("/shop/issues/\(i)/merge", "csrf={csrf}&issues=\(f.foreignIssue)")),
            Route(
                name: "POST /{slug}/issues/{id}/unmerge", level: .issueForm, path: "/shop/issues/\(i)/unmerge",
                body: "csrf={csrf}&fingerprint=x", contentType: form, allowed: [400],
                foreign: ("/shop/issues/\(f.foreignIssue)/unmerge", "csrf={csrf}&fingerprint=v3%3A0000000000000000")),
            Route(
                name: "POST /{slug}/issues/merge", level: .issueForm, path: "/shop/issues/merge",
                body: "csrf={csrf}&issues=x", contentType: form, allowed: [400],
                foreign: ("/shop/issues/merge", "csrf={csrf}&issues=\(i)&issues=\(f.foreignIssue)")),
            Route(name: "GET /{slug}/settings", level: .page, path: "/shop/settings"),
            Route(name: "GET /{slug}/settings/grouping", level: .page, path: "/shop/settings/grouping"),
            Route(
                name: "POST /{slug}/settings/grouping", variant: "do=try", level: .readForm,
                path: "/shop/settings/grouping", body: "csrf={csrf}&do=try&days=x&rules=", contentType: form,
                allowed: [400]),
            Route(
                name: "POST /{slug}/settings/grouping", variant: "do=apply", level: .settingsForm,
                path: "/shop/settings/grouping", body: "csrf={csrf}&do=apply&rules=error.type%3Ax+-%3E",
                contentType: form, allowed: [400]),
            Route(
                name: "POST /{slug}/settings/members/invite", level: .settingsForm,
                path: "/shop/settings/members/invite", body: "csrf={csrf}&login=&role=viewer", contentType: form,
                allowed: [400]),
            Route(
                name: "POST /{slug}/settings/members/{id}/role", level: .settingsForm,
                path: "/shop/settings/members/\(f.viewer)/role", body: "csrf={csrf}&role=viewer", contentType: form,
                allowed: [303],
                foreign: ("/shop/settings/members/\(f.foreignPerson)/role", "csrf={csrf}&role=viewer")),
            Route(
                name: "POST /{slug}/settings/members/{id}/remove", level: .settingsForm,
                path: "/shop/settings/members/999999/remove", body: "csrf={csrf}", contentType: form, allowed: [404],
                allowedSays: "has no role in",
                foreign: ("/shop/settings/members/\(f.foreignPerson)/remove", "csrf={csrf}")),
            Route(
                name: "POST /{slug}/settings/alerts", level: .settingsForm, path: "/shop/settings/alerts",
                body: "csrf={csrf}&velocity_threshold_percent=x", contentType: form, allowed: [400]),
            Route(
                name: "POST /{slug}/settings/targets", level: .settingsForm, path: "/shop/settings/targets",
                body: "csrf={csrf}&crash_free_users_target=x", contentType: form, allowed: [400]),
            Route(
                name: "POST /{slug}/settings/privacy", level: .settingsForm, path: "/shop/settings/privacy",
                body: "csrf={csrf}&scrub_fields=%00", contentType: form, allowed: [303, 400]),
            Route(
                name: "POST /{slug}/settings/in-app", level: .settingsForm, path: "/shop/settings/in-app",
                body: "csrf={csrf}&rules=%00", contentType: form, allowed: [303, 400]),
            // Refused bodies (400): an allowed rotation would replace the keys the other rows use.
            Route(
                name: "POST /{slug}/settings/keys/ingest", level: .settingsForm, path: "/shop/settings/keys/ingest",
                body: "csrf={csrf}&keep_old_days=x", contentType: form, allowed: [400]),
            Route(
                name: "POST /{slug}/settings/keys/upload", level: .settingsForm, path: "/shop/settings/keys/upload",
                body: "csrf={csrf}", contentType: form, allowed: [400]),
            Route(name: "GET /account", level: .accountPage, path: "/account", allowed: [200, 303]),
            Route(
                name: "POST /account/tokens", level: .accountForm, path: "/account/tokens",
                body: "csrf={csrf}&name=&scope=read", contentType: form, allowed: [400]),
            Route(
                name: "POST /account/tokens/{id}/revoke", level: .accountForm, path: "/account/tokens/999999/revoke",
                body: "csrf={csrf}", contentType: form, allowed: [404], allowedSays: "you have no token",
                foreign: ("/account/tokens/\(f.foreignToken)/revoke", "csrf={csrf}")),
            Route(
                name: "POST /account/alerts", level: .accountForm, path: "/account/alerts",
                body: "csrf={csrf}&project=nope", contentType: form, allowed: [400, 404]),
            Route(
                name: "POST /account/password", level: .accountForm, path: "/account/password",
                body: "csrf={csrf}&current=wrong&password=a&confirm=b", contentType: form, allowed: [400]),
            Route(
                name: "POST /account/totp/begin", level: .accountForm, path: "/account/totp/begin",
                body: "csrf={csrf}", contentType: form),
            // A wrong code or password: the account page again, saying so (403, but the page, not a refusal).
            Route(
                name: "POST /account/totp/confirm", level: .accountForm, path: "/account/totp/confirm",
                body: "csrf={csrf}&code=000000", contentType: form, allowed: [403], allowedPage: true),
            Route(
                name: "POST /account/totp/remove", level: .accountForm, path: "/account/totp/remove",
                body: "csrf={csrf}&password=wrong", contentType: form, allowed: [403], allowedPage: true),
        ]
    }

    /// The routes of the router `faultline serve` builds with every optional part on (the dashboard, people, single
    /// sign-on, mail): assembled in-process over a scratch data folder, as `ServerAssembly` builds it for `serve`.
    static func registeredRoutes() async throws -> [String] {
        let folder = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let data = try Composition(folder: folder)
        var settings = ServerAssembly.Settings(port: 0, minFreeBytes: 0, webDirectory: RenderCycleTests.webDirectory)
        settings.singleSignOn = SingleSignOnConfiguration(
            issuer: "http://127.0.0.1:9", clientID: "faultline", clientSecret: "secret")
        settings.smtp = SMTPSettings(
            host: "127.0.0.1", port: 9, security: .none, username: nil, password: nil,
            from: try #require(MailAddress("faultline@example.com")))
        let server = try ServerAssembly(settings: settings, data: data, logger: Logger(label: "test"))
        let router = buildRouter(configuration: server.configuration, dependencies: server.dependencies)
        let names = router.routes.map(\.description)
        try await data.close()
        return names
    }

    /// The server's arguments and environment that turn on every optional part (single sign-on toward a port where
    /// nothing listens, mail toward another).
    static let serveArguments = [
        "--allow-private-webhooks", "--oidc-issuer", "http://127.0.0.1:9", "--oidc-client-id", "faultline",
        "--oidc-name", "Nowhere",
    ]
    static let serveEnvironment = InsightsEndToEndTests.fastServices.merging([
        "FAULTLINE_OIDC_CLIENT_SECRET": "secret", "FAULTLINE_MAIL_FROM": "faultline@example.com",
        "FAULTLINE_SMTP_HOST": "127.0.0.1", "FAULTLINE_SMTP_PORT": "9", "FAULTLINE_SMTP_SECURITY": "none",
    ]) { $1 }

    /// Every table of the database, as `sqlite3 .dump` prints it, but for personal tokens' last use (a refused
    /// request may not change anything else; a token's use is recorded on every request it authenticates).
    static func snapshot(_ folder: String) throws -> String {
        let dump = try PeopleEndToEndTests.sqlite(folder, ".dump")
        let kept = dump.split(separator: "\n").filter { !$0.hasPrefix("INSERT INTO personal_tokens") }
        let tokens = try PeopleEndToEndTests.sqlite(
            folder, "SELECT id, person_id, name, token_hash, scopes, created_at, expires_at FROM personal_tokens")
        return kept.joined(separator: "\n") + "\n" + tokens
    }

    /// The credentials of every principal, and each session's CSRF token.
    struct Credentials {
        var ingest: String
        var upload: String
        var admin: String
        var cookies: [Role: String] = [:]
        var csrf: [Role: String] = [:]
        var tokens: [Principal: String] = [:]

        /// The headers `principal` sends on `route`, and its query for a Sentry DSN key.
        func headers(_ principal: Principal, route: Route) -> (headers: [(String, String)], query: String?) {
            switch principal {
            case .nobody: return ([], nil)
            case .ingest:
                if route.level == .sentryIngest { return ([], "sentry_key=\(ingest)") }
                return ([("Authorization", "Bearer \(ingest)")], nil)
            case .upload: return ([("Authorization", "Bearer \(upload)")], nil)
            case .adminToken: return ([("Authorization", "Bearer \(admin)")], nil)
            case .session(let role): return ([("Cookie", cookies[role] ?? "")], nil)
            case .token: return ([("Authorization", "Bearer \(tokens[principal] ?? "")")], nil)
            }
        }

        func body(_ principal: Principal, route: Route) -> String {
            var token = String(repeating: "0", count: 64)
            if case .session(let role) = principal, let own = csrf[role] { token = own }
            return route.body.replacingOccurrences(of: "{csrf}", with: token)
        }
    }

    /// Sends one request from its own loopback address (`Connection: close`).
    final class Sender: @unchecked Sendable {
        // @unchecked: used by one test, sequentially.
        let port: Int
        var next = 0
        init(port: Int) { self.port = port }

        func send(_ method: String, _ path: String, headers: [(String, String)], body: String) async throws
            -> RawResponse
        {
            next += 1
            let source = "127.10.\(next / 250).\(next % 250 + 1)"
            let connection = try RawConnection(port: port, source: source)
            var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "Content-Length: \(body.utf8.count)\r\n\r\n"
            try connection.send(head + body)
            // Waits in poll(2) for each piece of the answer (not in sleeps: there are a thousand requests).
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                var ready = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&ready, 1, 1000)
                if let response = try await connection.readResponse(within: .zero), response.complete {
                    return response
                }
            }
            throw TestFailure("no answer to \(method) \(path)")
        }

        func send(_ route: Route, as principal: Principal, credentials: Credentials) async throws -> RawResponse {
            let parts = route.name.split(separator: " ", maxSplits: 1)
            var (headers, query) = credentials.headers(principal, route: route)
            var path = route.path
            if let query { path += (path.contains("?") ? "&" : "?") + query }
            if !route.body.isEmpty || parts[0] != "GET" { headers.append(("Content-Type", route.contentType)) }
            return try await send(
                String(parts[0]), path, headers: headers, body: credentials.body(principal, route: route))
        }
    }

    @Test func everyRouteAnswersEveryPrincipalByItsRoleAndARefusalChangesNothing() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        var credentials = Credentials(ingest: shop.ingest, upload: shop.upload, admin: admin)
        // Zed, of the other project only, holds the token no one of the matrix may revoke.
        _ = try await PeopleEndToEndTests.invite(folder, "zed@example.org", role: "member", project: "other")
        #expect(try await PersonalTokensEndToEndTests.create(folder, "zed@example.org", ["read"]).token != nil)
        let zedToken = try #require(
            Int(
                try PeopleEndToEndTests.sqlite(
                    folder,
                    "SELECT t.id FROM personal_tokens t JOIN people p ON p.id = t.person_id WHERE p.login = 'zed@example.org'"
                ).trimmingCharacters(in: .whitespacesAndNewlines)))
        let zed = try #require(
            Int(
                try PeopleEndToEndTests.sqlite(folder, "SELECT id FROM people WHERE login = 'zed@example.org'")
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        let logins: [Role: (String, String?)] = [
            .viewer: ("vic@example.org", "shop"), .member: ("mia@example.org", "shop"),
            .admin: ("ann@example.org", "shop"), .owner: ("own@example.org", nil),
            .outsider: ("out@example.org", "other"), .removed: ("rem@example.org", "shop"),
        ]
        var invites: [Role: String] = [:]
        for role in Role.allCases {
            let (login, project) = try #require(logins[role])
            let asRole = role == .outsider ? "admin" : role == .removed ? "member" : role.rawValue
            invites[role] = try await PeopleEndToEndTests.invite(folder, login, role: asRole, project: project)
        }
        for principal in Self.principals {
            guard case .token(let role, let scope) = principal else { continue }
            let made = try await PersonalTokensEndToEndTests.create(folder, logins[role]!.0, [scope.rawValue])
            let token = try #require(made.token, "\(principal): \(made.output)")
            credentials.tokens[principal] = token
        }
        let viewer = try #require(
            Int(
                try PeopleEndToEndTests.sqlite(folder, "SELECT id FROM people WHERE login = 'vic@example.org'")
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        let server = try await ServerProcess(
            folder: folder, arguments: Self.serveArguments, environment: Self.serveEnvironment)
        defer { server.cleanUp() }
        for role in Role.allCases {
            let cookie = try await PeopleEndToEndTests().accept(
                server, try #require(invites[role]), name: role.rawValue)
            credentials.cookies[role] = cookie
            let account = try await PeopleEndToEndTests().csrf(server, page: "/account", cookie: cookie)
            let csrf = try #require(account.token, "\(role)'s account page has its forms")
            credentials.csrf[role] = csrf
        }
        // Removing a person ends their session and their tokens at once, with the server running.
        let removed = try await ServerProcess.run(["users", "remove", "rem@example.org", "--data", folder])
        #expect(removed.status == 0, "\(removed)")
        let http = HTTP(client: .shared)
        for (key, site) in [(shop.ingest, "parseCart"), (other.ingest, "boot")] {
            let posted = try await http.postReports(
                server.baseURL, key: key,
                InsightsEndToEndTests.crash(
                    key == shop.ingest ? 1 : 2, site: site,
                    version: "1.0", user: "u1"))
            #expect(posted.status == 202)
        }
        #expect(
            try await eventually {
                let theirs = try? await DashboardActionsEndToEndTests().issueID(server, token: other.upload)
                let mine = try? await DashboardActionsEndToEndTests().issueID(server, token: shop.upload)
                return theirs != nil && mine != nil
            })
        var found: [(issue: Int, event: String)] = []
        for token in [shop.upload, other.upload] {
            let issue = try await DashboardActionsEndToEndTests().issueID(server, token: token)
            let reports = try await http.send(
                .GET, server.baseURL + "/api/v1/reports", headers: [("Authorization", "Bearer \(token)")])
            let event = try #require((reports.json["reports"] as? [[String: Any]])?.first?["event_id"] as? String)
            found.append((issue, event))
        }
        let routes = Self.table(
            Fixture(
                issue: found[0].issue, event: found[0].event, foreignIssue: found[1].issue,
                foreignEvent: found[1].event, foreignToken: zedToken, foreignPerson: zed, viewer: viewer))

        // Every route the router holds has its row, and every row is a route of the router.
        let registered = try await Self.registeredRoutes()
        let named = Set(routes.map(\.name))
        #expect(Set(routes.map(\.label)).count == routes.count, "one row per route")
        for route in registered where !named.contains(route) {
            Issue.record("\(route) is registered but not in the roles matrix: add its row")
        }
        for route in named where !registered.contains(route) {
            Issue.record("\(route) is in the matrix but not registered")
        }

        // The database settles (the reports filed, their alerts written) before the refusals are counted.
        var settled = try Self.snapshot(folder)
        #expect(
            try await eventually {
                try await Task.sleep(for: .milliseconds(700))
                let now = try Self.snapshot(folder)
                defer { settled = now }
                return now == settled
            })

        // The refusals first, route by route: each its status, and the database as it was.
        let sender = Sender(port: server.port)
        var allowed: [(Route, Principal)] = []
        for route in routes {
            let before = try Self.snapshot(folder)
            for principal in route.level == .open ? [.nobody] : Self.principals {
                guard let refusal = Self.expected(route.level, principal) else {
                    allowed.append((route, principal))
                    continue
                }
                let answer = try await sender.send(route, as: principal, credentials: credentials)
                let text = String(decoding: answer.body, as: UTF8.self).prefix(300)
                #expect(answer.status == refusal, "\(route.label) as \(principal): \(answer.status) \(text)")
                // (sentry-cli's routes say it in Sentry's shape, `detail`)
                #expect(
                    answer.json["error"] != nil || answer.json["detail"] != nil,
                    "\(route.label) as \(principal): a refusal says why: \(text)")
            }
            // The route aimed at the other project's issue or event (another person's token) from this project:
            // whoever may use the route gets 404; but the admin token, which is every project's.
            if let foreign = route.foreign {
                var aimed = route
                (aimed.path, aimed.body) = foreign
                for principal in Self.principals
                where principal != .adminToken && Self.expected(route.level, principal) == nil {
                    let answer = try await sender.send(aimed, as: principal, credentials: credentials)
                    let text = String(decoding: answer.body, as: UTF8.self).prefix(300)
                    #expect(
                        answer.status == 404, "\(route.label) aimed across as \(principal): \(answer.status) \(text)")
                }
            }
            let after = try Self.snapshot(folder)
            if after != before {
                let added = Set(after.split(separator: "\n")).subtracting(before.split(separator: "\n"))
                Issue.record("refusals of \(route.label) changed the database: \(added.sorted().prefix(5))")
            }
        }
        // Then what is allowed reaches the route's handler.
        for (route, principal) in allowed {
            let answer = try await sender.send(route, as: principal, credentials: credentials)
            let text = String(decoding: answer.body, as: UTF8.self).prefix(300)
            #expect(route.allowed.contains(answer.status), "\(route.label) as \(principal): \(answer.status) \(text)")
            if let says = route.allowedSays { #expect(text.contains(says), "\(route.label) as \(principal): \(text)") }
            if route.allowedPage { #expect(text.hasPrefix("<!doctype html>"), "\(route.label) as \(principal)") }
        }

        // A webhook's URL is its secret: those who may change the settings read it, the others its host only.
        let secret = "http://127.0.0.1:9/hooks/T0001/s3cr3tpath"
        let put = try await http.send(
            .PUT, server.baseURL + "/api/v1/alert-settings?project=shop",
            headers: [("Authorization", "Bearer \(admin)"), ("Content-Type", "application/json")],
            body: Array(#"{"webhook_url": "\#(secret)"}"#.utf8))
        #expect(put.status == 200, "\(String(decoding: put.body, as: UTF8.self))")
        for principal in Self.principals where Self.expected(.read, principal) == nil {
            let route = try #require(routes.first { $0.name == "GET /api/v1/alert-settings" })
            let answer = try await sender.send(route, as: principal, credentials: credentials)
            let shown = (answer.json["settings"] as? [String: Any])?["webhook_url"] as? String
            let full = Self.expected(.settings, principal) == nil
            #expect(
                shown == (full ? secret : "http://127.0.0.1:9/…"), "\(principal) reads the webhook as \(shown ?? "-")")
        }
    }
}

extension RolesMatrixEndToEndTests.Role: Comparable {
    static func < (a: Self, b: Self) -> Bool {
        let order: [Self] = [.removed, .outsider, .viewer, .member, .admin, .owner]
        return order.firstIndex(of: a)! < order.firstIndex(of: b)!
    }
}
