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
    /// One project's alert mail form: a checkbox per alert kind and the digest's choices.
    struct MailForm {
        struct Choice {
            var value: String
            var id: String
            var label: String
            var checked: Bool
        }
        var slug: String
        var id: String
        var kinds: [Choice]
        var digests: [Choice]
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
    /// The alert mail forms, one per project; `canMail` is false when the login is not an e-mail address.
    var mailForms: [MailForm]
    var hasMailForms: Bool
    var canMail: Bool
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
        chrome.csrf = overview.csrf  // this page is one session's: its sign-out signs out at once
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
        mailForms = overview.mail.map(Self.mailForm)
        hasMailForms = !mailForms.isEmpty
        canMail = overview.person.map { MailAddress($0.login.rawValue) != nil } ?? false
    }

    /// The form of one project's alert mail choice; ids are made of the slug (letters, digits and dashes).
    static func mailForm(_ line: AccountOverview.MailLine) -> MailForm {
        let slug = line.slug.rawValue
        return MailForm(
            slug: slug, id: "mail-" + slug,
            kinds: AlertMailPreference.choosableKinds.map {
                MailForm.Choice(
                    value: $0.rawValue, id: "mail-\(slug)-\($0.rawValue)", label: describe($0),
                    checked: line.kinds.contains($0))
            },
            digests: [(DigestCadence.weekly, "Weekly"), (.daily, "Daily"), (.none, "Off")].map {
                MailForm.Choice(
                    value: $0.0.rawValue, id: "mail-\(slug)-digest-\($0.0.rawValue)", label: $0.1,
                    checked: line.digest == $0.0)
            })
    }

    /// What an alert kind's checkbox says.
    static func describe(_ kind: AlertKind) -> String {
        switch kind {
        case .newIssue: "New issues"
        case .regression: "Regressions (a closed issue back in a newer release)"
        case .velocity: "Velocity (an issue trending in a release)"
        case .crashFreeTarget: "Crash-free users below the target"
        case .storageFull, .storageOK: "Storage full, and space again"
        case .quotaReached: "Event quota reached"
        }
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
