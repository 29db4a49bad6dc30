#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the account page (`/account`) shows the signed-in reader: who they are, their projects and roles, their
/// personal tokens, and what they just did (a token shown once, a message). Built by the HTTP edge for one request,
/// rendered by the Dashboard module.
public struct AccountOverview: Sendable {
    /// One project the reader may see, with their role in it (`owner` for a server owner).
    public struct ProjectLine: Sendable, Equatable {
        public var slug: ProjectSlug
        public var role: String
        public init(slug: ProjectSlug, role: String) {
            self.slug = slug
            self.role = role
        }
    }

    /// A token just made: its name and its secret, shown on this one answer and never again.
    public struct NewToken: Sendable, Equatable {
        public var name: String
        public var secret: String
        public init(name: String, secret: String) {
            self.name = name
            self.secret = secret
        }
    }

    /// The state of the reader's TOTP second factor.
    public enum SecondFactorState: Sendable, Equatable {
        /// None: login asks for the password only.
        case off
        /// Enrolment waits for a first code from the app: the secret as text and as an `otpauth://` URI.
        case enrolling(secret: String, uri: String)
        /// On: login asks for a code; this many recovery codes are left.
        case on(recoveryCodesLeft: Int)
    }

    /// The person signed in; nil for the admin token's session (no tokens, password or second factor of its own).
    public var person: Person?
    public var projects: [ProjectLine]
    public var tokens: [PersonalToken]
    public var newToken: NewToken?
    /// A note of what was done ("Password changed."), shown as a status.
    public var notice: String?
    /// Why the last form was refused, shown as an alert.
    public var error: String?
    /// The session's CSRF token, put in every form.
    public var csrf: String
    /// When the page is rendered (token expiry is shown relative to it).
    public var now: Date
    public var secondFactor: SecondFactorState
    /// Recovery codes just made: shown on this one answer and never again.
    public var recoveryCodes: [String]
    /// The reader's alert mail choice in each of their projects (in the order of `projects`); empty when mail is not
    /// offered (the admin token's session).
    public var mail: [MailLine] = []

    /// One project's alert mail choice: the kinds mailed and the digest.
    public struct MailLine: Sendable, Equatable {
        public var slug: ProjectSlug
        public var kinds: Set<AlertKind>
        public var digest: DigestCadence
        public init(slug: ProjectSlug, kinds: Set<AlertKind>, digest: DigestCadence) {
            self.slug = slug
            self.kinds = kinds
            self.digest = digest
        }
    }

    public init(
        person: Person?, projects: [ProjectLine], tokens: [PersonalToken], newToken: NewToken? = nil,
        notice: String? = nil, error: String? = nil, csrf: String, now: Date, secondFactor: SecondFactorState = .off,
        recoveryCodes: [String] = []
    ) {
        self.secondFactor = secondFactor
        self.recoveryCodes = recoveryCodes
        self.person = person
        self.projects = projects
        self.tokens = tokens
        self.newToken = newToken
        self.notice = notice
        self.error = error
        self.csrf = csrf
        self.now = now
    }
}
