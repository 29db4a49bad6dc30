import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline users invite|list|role|remove`: the people of the server and their roles (docs/people.md).
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Invite people, list them, change their roles, remove them.",
        subcommands: [Invite.self, List.self, Role.self, Remove.self, ResetTOTP.self])

    /// A role as typed: a project role, or `owner` (the server's).
    enum RoleName: String, ExpressibleByArgument, CaseIterable {
        case viewer, member, admin, owner
        var projectRole: ProjectRole? { ProjectRole(rawValue: rawValue) }
    }

    static func login(_ raw: String) throws -> PersonLogin {
        guard let login = PersonLogin(raw) else {
            throw ValidationError(
                "'\(raw)' is not a login: an e-mail address or user name of 1 to 254 bytes, without spaces, quotes, <, > or /"
            )
        }
        return login
    }

    static func project(_ slug: String, _ root: Composition) async throws -> Project {
        guard let parsed = ProjectSlug(slug), let project = try await root.projects.project(slug: parsed) else {
            throw ValidationError("no project '\(slug)'; see faultline projects list")
        }
        return project
    }

    static func person(_ raw: String, _ root: Composition) async throws -> Person {
        guard let person = try await root.people.person(login: try login(raw)) else {
            throw ValidationError("no person '\(raw)'; see faultline users list")
        }
        return person
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invite a person and print their one-time link (it expires; only its hash is stored).",
            discussion: """
                The person opens the link, sets a password on it and is signed in; the link then stops working. \
                Inviting someone again (a lost link) makes a new link and keeps their roles. --role owner makes a \
                server owner, who manages projects and people; viewer, member and admin are roles in the project \
                --project names.
                """)

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The person's e-mail address or user name: what they sign in with.")
        var login: String

        @Option(help: "viewer (reads), member (also closes, mutes, reopens, notes), admin (also settings), or owner.")
        var role: RoleName

        @Option(help: "The project's slug (for viewer, member and admin).")
        var project: String?

        @Option(help: "Hours the link works (default 72).")
        var expiresHours: Int = 72

        @Option(help: "The address people reach the server at (env FAULTLINE_PUBLIC_URL), for the link.")
        var publicURL: String?

        func validate() throws {
            _ = try Users.login(login)
            if role == .owner, project != nil {
                throw ValidationError("an owner has every project: leave out --project")
            }
            if role != .owner, project == nil { throw ValidationError("--role \(role.rawValue) needs --project SLUG") }
            guard (1...24 * 30).contains(expiresHours) else {
                throw ValidationError("--expires-hours must be from 1 to 720")
            }
            if let publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
                throw ValidationError("--public-url must start with http:// or https://")
            }
        }

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let target = try await project.asyncMap { try await Users.project($0, root) }
            let invitation = try await root.people.invite(
                login: try Users.login(login), role: role.projectRole, project: target?.id, owner: role == .owner,
                lifetime: TimeInterval(expiresHours) * 3600, by: .cli)
            let base = try ServerURLRecord.base(publicURL: publicURL, folder: dataOptions.filesFolder)
            print(
                "invited:  \(invitation.person.login) (\(target.map { "\(role.rawValue) of \($0.slug)" } ?? "owner"))")
            print("link:     \(base)/invite/\(invitation.secret)")
            print("expires:  \(invitation.expiresAt.formatted(.iso8601))")
            print("The link works once; send it to the person. Only its hash is stored.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List people and their roles.")
        @OptionGroup var dataOptions: DataOptions

        func run() async throws {
            try await dataOptions.withComposition { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let people = try await root.people.all()
            guard !people.isEmpty else {
                print("no people; invite one with: faultline users invite EMAIL --role ROLE --project SLUG")
                return
            }
            let slugs = Dictionary(
                try await root.projects.all().map { ($0.id, $0.slug.rawValue) }, uniquingKeysWith: { a, _ in a })
            print("id\tlogin\tname\tpassword\troles")
            for person in people {
                var roles = person.memberships.map { "\(slugs[$0.project] ?? "\($0.project)"):\($0.role.rawValue)" }
                if person.owner { roles.insert("owner", at: 0) }
                let password = person.passwordHash == nil ? "invited" : "set"
                print("\(person.id)\t\(person.login)\t\(person.name)\t\(password)\t\(roles.joined(separator: ","))")
            }
        }
    }

    struct Role: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a person's role in a project (or take it away with --role none), or their owner flag.")

        enum Choice: String, ExpressibleByArgument, CaseIterable {
            case viewer, member, admin, owner, none
        }

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The person's login.")
        var login: String

        @Option(help: "viewer, member, admin, none (out of the project), or owner (with --project: not allowed).")
        var role: Choice

        @Option(help: "The project's slug (for viewer, member, admin, none).")
        var project: String?

        @Flag(help: "With --role owner: stop being an owner.")
        var revoke = false

        func validate() throws {
            _ = try Users.login(login)
            if role == .owner, project != nil {
                throw ValidationError("an owner has every project: leave out --project")
            }
            if role != .owner, project == nil { throw ValidationError("--role \(role.rawValue) needs --project SLUG") }
            if revoke, role != .owner { throw ValidationError("--revoke goes with --role owner") }
        }

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let person = try await Users.person(login, root)
            if role == .owner {
                _ = try await root.people.setOwner(!revoke, person: person.id, by: .cli)
                print("\(person.login): \(revoke ? "no longer an owner" : "owner")")
                return
            }
            let target = try await Users.project(project ?? "", root)
            let changed = try await root.people.setRole(
                ProjectRole(rawValue: role.rawValue), person: person.id, project: target.id, by: .cli)
            print("\(person.login) in \(target.slug): \(role.rawValue)\(changed ? "" : " (no change)")")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a person: their roles, invites and sessions end at once.")
        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The person's login.")
        var login: String

        func validate() throws { _ = try Users.login(login) }

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let person = try await Users.person(login, root)
            _ = try await root.people.remove(person.id, by: .cli)
            print("removed \(person.login); their sessions have ended")
        }
    }
}

extension Optional {
    /// `transform` of the wrapped value, awaited.
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
