import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The signed-in person's own page (`/account`, rendered live for each request): who they are, their projects and
/// roles, their personal API tokens (made, shown once, revoked here), and their password. Every form carries the
/// session's CSRF token.
struct AccountPage {
    struct TokenRow {
        var id: Int64
        var name: String
        var scopes: String
        var created: TimeView
        var lastUsed: TimeView?
        var expires: TimeView?
        var expired: Bool
    }
    struct ProjectRow {
        var slug: String
        var href: String
        var role: String
    }
    struct ScopeChoice {
        var value: String
        var id: String
        var label: String
    }

    var chrome: PageChrome
    var isPerson: Bool
    /// Whether the person has a password (an account made by single sign-on has none: no password form, and no
    /// second factor, which only password logins ask for).
    var hasPassword: Bool
    var login: String
    var name: String
    var owner: Bool
    var projects: [ProjectRow]
    var hasProjects: Bool
    var tokens: [TokenRow]
    var hasTokens: Bool
    var newToken: AccountOverview.NewToken?
    var notice: String?
    var errorMessage: String?
    var csrf: String
    var scopes: [ScopeChoice]
    var maxDays: Int
    var minCharacters: Int
    /// The second factor: off (the enrol button), enrolling (the key and the confirm form), or on.
    var factorOff: Bool
    var enrolment: Enrolment?
    var factorOn: Bool
    var recoveryCodesLeft: Int
    var recoveryCodes: [String]
    var hasRecoveryCodes: Bool
    struct Enrolment {
        var secret: String
        var uri: String
    }

    init(_ overview: AccountOverview, maxDays: Int, minCharacters: Int) {
        chrome = PageChrome(path: "account", title: "Your account", project: nil, now: nil)
        isPerson = overview.person != nil
        hasPassword = overview.person?.passwordHash != nil
        login = overview.person?.login.rawValue ?? ""
        name = overview.person?.name ?? ""
        owner = overview.person?.owner ?? true
        projects = overview.projects.map {
            ProjectRow(
                slug: $0.slug.rawValue, href: SitePaths.relative(from: "account", to: SitePaths.overview($0.slug)),
                role: $0.role)
        }
        hasProjects = !projects.isEmpty
        tokens = overview.tokens.map { token in
            TokenRow(
                id: token.id.rawValue, name: token.name,
                scopes: token.scopes.sorted().map(\.rawValue).joined(separator: ", "),
                created: TimeView(token.createdAt), lastUsed: token.lastUsedAt.map(TimeView.init),
                expires: token.expiresAt.map(TimeView.init),
                expired: token.expiresAt.map { $0 <= overview.now } ?? false)
        }
        hasTokens = !tokens.isEmpty
        newToken = overview.newToken
        notice = overview.notice
        errorMessage = overview.error
        csrf = overview.csrf
        scopes = TokenScope.allCases.map {
            ScopeChoice(
                value: $0.rawValue, id: "scope-" + $0.rawValue.replacingOccurrences(of: ":", with: "-"),
                label: Self.describe($0))
        }
        self.maxDays = maxDays
        self.minCharacters = minCharacters
        factorOff = overview.secondFactor == .off
        factorOn = false
        recoveryCodesLeft = 0
        switch overview.secondFactor {
        case .off: enrolment = nil
        case .enrolling(let secret, let uri): enrolment = Enrolment(secret: Self.grouped(secret), uri: uri)
        case .on(let left):
            enrolment = nil
            factorOn = true
            recoveryCodesLeft = left
        }
        recoveryCodes = overview.recoveryCodes
        hasRecoveryCodes = !recoveryCodes.isEmpty
    }

    /// A base32 secret in groups of four, as apps that take typed keys show them.
    static func grouped(_ secret: String) -> String {
        var out = ""
        for (index, character) in secret.enumerated() {
            if index > 0, index % 4 == 0 { out.append(" ") }
            out.append(character)
        }
        return out
    }

    static func describe(_ scope: TokenScope) -> String {
        switch scope {
        case .read: "read: issues, reports, releases, health and alerts"
        case .writeIssues: "write:issues: also close, mute, reopen, merge and annotate issues"
        case .uploadSymbols: "upload:symbols: debug-file uploads with symupload or sentry-cli"
        case .admin: "admin: everything your roles allow, alert settings included"
        }
    }
}

extension SiteRenderer {
    /// The account page of `overview`'s reader.
    ///
    /// - Parameters:
    ///   - maxDays: the longest lifetime a token may be given.
    /// - Throws: `DashboardError` when the template fails.
    public func accountPage(_ overview: AccountOverview, maxDays: Int) throws -> String {
        try templates.render(
            AccountPage(overview, maxDays: maxDays, minCharacters: PasswordRule.minCharacters), as: "account")
    }
}

/// The code step of a password login for a person with a second factor (`POST /login` answered with this form).
struct LoginCodePage {
    var chrome: PageChrome
    var errorMessage: String?
    var next: String

    init(error: String?, next: String) {
        chrome = PageChrome(path: "login", title: "Two-step sign-in", project: nil, now: nil, navigation: false)
        errorMessage = error.flatMap { $0.isEmpty ? nil : $0 }
        self.next = next
    }
}

extension SiteRenderer {
    /// The code form of a login waiting for its second factor.
    /// - Throws: `DashboardError` when the template fails.
    public func loginCodePage(error: String?, next: String) throws -> String {
        try templates.render(LoginCodePage(error: error, next: next), as: "login_code")
    }
}
