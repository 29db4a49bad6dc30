import Crypto
import FaultlineCore
import Hummingbird

/// Signed unsubscribe links: `/unsubscribe/<person>.<project>.<HMAC>` where the HMAC is SHA-256 under the server's
/// mail secret (`mail_secrets`) over `faultline-unsubscribe:v1:<person>:<project>`. The link works without a login (a
/// person reading mail on a phone is rarely signed in) and only ever turns mail off, for one person and one project.
public struct UnsubscribeLinks: Sendable {
    let secret: [UInt8]
    var key: SymmetricKey { SymmetricKey(data: secret) }

    /// - Parameter secret: the stored mail secret (32 bytes).
    public init(secret: [UInt8]) {
        self.secret = secret
    }

    static func message(_ person: PersonID, _ project: ProjectID) -> [UInt8] {
        Array("faultline-unsubscribe:v1:\(person):\(project)".utf8)
    }

    /// The token of the link for `person` and `project`.
    public func token(person: PersonID, project: ProjectID) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Self.message(person, project), using: key)
        return "\(person).\(project).\(mac.map { String($0, radix: 16).leftPadded }.joined())"
    }

    /// The full link under the dashboard's address.
    public func link(base: String, person: PersonID, project: ProjectID) -> String {
        (base.hasSuffix("/") ? base : base + "/") + "unsubscribe/" + token(person: person, project: project)
    }

    /// The person and project a token names, when its HMAC is right (compared in constant time); nil otherwise.
    public func verify(_ token: String) -> (person: PersonID, project: ProjectID)? {
        guard token.utf8.count <= 128 else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let person = Int64(parts[0]), let project = Int64(parts[1]), person > 0, project > 0,
            parts[2].utf8.count == 64
        else { return nil }
        var mac: [UInt8] = []
        var index = parts[2].startIndex
        while index < parts[2].endIndex {
            let next = parts[2].index(index, offsetBy: 2)
            guard let byte = UInt8(parts[2][index..<next], radix: 16) else { return nil }
            mac.append(byte)
            index = next
        }
        let (p, q) = (PersonID(person), ProjectID(project))
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Self.message(p, q), using: key) else {
            return nil
        }
        return (p, q)
    }
}

extension String {
    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}

/// What the unsubscribe pages need: the links' key (read from the database when needed: one small row), where
/// preferences are kept, and the audit trail a change is recorded in (as the person the link names).
public struct UnsubscribePages: Sendable {
    let links: @Sendable () async throws -> UnsubscribeLinks
    let store: any AlertMailStore
    let projects: any ProjectStore
    let people: any PeopleStore
    let audit: (any AuditTrail)?
    let clock: any WallClock

    public init(
        links: @escaping @Sendable () async throws -> UnsubscribeLinks, store: any AlertMailStore,
        projects: any ProjectStore, people: any PeopleStore, audit: (any AuditTrail)?, clock: any WallClock
    ) {
        self.links = links
        self.store = store
        self.projects = projects
        self.people = people
        self.audit = audit
        self.clock = clock
    }
}

/// `GET /unsubscribe/{token}` shows one button; `POST` (the button, or a mail client's RFC 8058 one-click POST) turns
/// off every alert mail and the digest of that project for that person. A GET changes nothing: mail scanners open
/// links.
struct UnsubscribeController {
    let pages: UnsubscribePages

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("unsubscribe/{token}", use: show)
            .post("unsubscribe/{token}", use: unsubscribe)
    }

    func target(_ context: AppRequestContext) async throws -> (PersonID, ProjectID, String)? {
        guard let token = context.parameters.get("token"),
            let (person, project) = try await pages.links().verify(token),
            let found = try await pages.projects.project(id: project)
        else { return nil }
        return (person, project, found.slug.rawValue)
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let (_, _, slug) = try await target(context) else { return Self.invalid }
        let token = MailMessage.html(context.parameters.get("token") ?? "")
        return .dynamicPage(
            Self.page(
                "Stop mail from \(MailMessage.html(slug))",
                "<p>You will get no more alert mail and no digest of <b>\(MailMessage.html(slug))</b>. You can "
                    + "turn it on again on your account page (<a href=\"/account#alerts\">/account</a>).</p><form method=\"post\" action=\"/unsubscribe/\(token)\">"
                    + "<button type=\"submit\">Stop mail from \(MailMessage.html(slug))</button></form>"))
    }

    @Sendable func unsubscribe(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let (person, project, slug) = try await target(context) else { return Self.invalid }
        let before = try await pages.store.mailPreferences(person: person).first { $0.project == project }
        let after = AlertMailPreference(person: person, project: project, kinds: [], digest: .none)
        try await pages.store.setMailPreference(after)
        // Recorded as the person the signed link names (only they received it), from the address that posted.
        if let audit = pages.audit, let before, before != after, let who = try await pages.people.person(id: person) {
            try await audit.record(
                AuditEntry(
                    project: project, at: pages.clock.now(),
                    origin: AuditOrigin(
                        actor: .person(person, name: who.displayName), address: context.clientAddress),
                    kind: .memberMail, subject: who.login.rawValue, before: before.shown, after: after.shown))
        }
        return .dynamicPage(
            Self.page("No more mail", "<p>You will get no more mail from <b>\(MailMessage.html(slug))</b>.</p>"))
    }

    static var invalid: Response {
        .dynamicPage(
            page("Link not valid", "<p>This unsubscribe link is not valid (or its project is gone).</p>"),
            status: .notFound)
    }

    static func page(_ title: String, _ body: String) -> String {
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(title)</title>"
            + "<link rel=\"stylesheet\" href=\"/style.css\"></head><body><main><h1>\(title)</h1>\(body)</main></body></html>"
    }
}
