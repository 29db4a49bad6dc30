import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline tokens create|list|revoke`: people's personal API tokens (docs/people.md).
struct Tokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make, list and revoke people's personal API tokens.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a personal API token for a person and print it once (only its hash is stored).",
            discussion: """
                Scopes: read (the read API), write:issues (also close, mute, reopen, merge, notes), upload:symbols \
                (symupload and sentry-cli uploads), admin (everything the person's roles allow). A token never does \
                more than its person's role in a project allows, checked at every use.
                """)

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The person's login.")
        var login: String

        @Option(help: "What the token is for (shown in lists), 1 to 100 bytes.")
        var name: String

        @Option(help: "A scope: read, write:issues, upload:symbols or admin (repeat, or separate with commas).")
        var scope: [String]

        @Option(help: "Days until the token stops working (default: never).")
        var expiresDays: Int?

        func validate() throws {
            _ = try Users.login(login)
            if case .failure(let error) = TokenScope.parse(scope) { throw ValidationError(error.message) }
            if case .failure(let error) = PersonalTokenName.checked(name) { throw ValidationError(error.message) }
            if let expiresDays, !(1...AccountService.maxDays).contains(expiresDays) {
                throw ValidationError("--expires-days must be from 1 to \(AccountService.maxDays)")
            }
        }

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let person = try await Users.person(login, root)
            let created: AccountService.Created
            do {
                created = try await root.accounts.create(
                    person: person.id, name: name, scopes: try TokenScope.parse(scope).get(),
                    expiresInDays: expiresDays, by: .cli)
            } catch let error as PersonalTokenError {
                throw ValidationError(error.message)
            }
            print("token:    \(created.secret)")
            print("id:       \(created.token.id)")
            print("for:      \(person.login)")
            print("scopes:   \(TokenScope.encode(created.token.scopes))")
            print("expires:  \(created.token.expiresAt.map { $0.formatted(.iso8601) } ?? "never")")
            print("Shown once: copy it now. Only its hash is stored.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List personal tokens (never their secrets): everyone's, or one person's.")
        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "Only this person's tokens.")
        var login: String?

        func validate() throws { if let login { _ = try Users.login(login) } }

        func run() async throws {
            try await dataOptions.withComposition { try await run(on: $0) }
        }

        /// One token's line: id, login, name, scopes, created, last used, expires.
        static func line(_ token: PersonalToken, login: String) -> String {
            let created = token.createdAt.formatted(.iso8601)
            let scopes = TokenScope.encode(token.scopes)
            let used = Tokens.time(token.lastUsedAt)
            let expires = Tokens.time(token.expiresAt)
            return "\(token.id)\t\(login)\t\(token.name)\t\(scopes)\t\(created)\t\(used)\t\(expires)"
        }

        func run(on root: Composition) async throws {
            var only: Person?
            if let login { only = try await Users.person(login, root) }
            let tokens = try await root.accounts.tokens(of: only?.id)
            guard !tokens.isEmpty else {
                print("no tokens; make one with: faultline tokens create LOGIN --name NAME --scope read")
                return
            }
            let logins = Dictionary(
                try await root.people.all().map { ($0.id, $0.login.rawValue) }, uniquingKeysWith: { a, _ in a })
            print("id\tlogin\tname\tscopes\tcreated\tlast used\texpires")
            for token in tokens { print(Self.line(token, login: logins[token.person] ?? "\(token.person)")) }
        }
    }

    static func time(_ date: Date?) -> String { date.map { $0.formatted(.iso8601) } ?? "never" }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a personal token by its id (see faultline tokens list); it stops working at once.")
        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The token's id.")
        var id: Int64

        func validate() throws { guard id > 0 else { throw ValidationError("a token id is a positive number") } }

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            guard try await root.accounts.revoke(PersonalTokenID(id), of: nil, by: .cli) else {
                throw ValidationError("no token \(id); see faultline tokens list")
            }
            print("revoked token \(id)")
        }
    }
}
