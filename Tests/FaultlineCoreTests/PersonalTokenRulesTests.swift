import FaultlineCore
import Foundation
import Testing

/// Personal token scopes as a rule book: which scope covers which use, what a person may give a token, and how a
/// token narrows its person before ``Access`` decides.
@Suite struct PersonalTokenRulesTests {
    static let shop = ProjectID(rawValue: 1)
    static let other = ProjectID(rawValue: 2)

    static func person(_ role: ProjectRole?, owner: Bool = false) -> Person {
        Person(
            id: PersonID(7), login: PersonLogin("ada@example.org")!, name: "Ada", owner: owner, passwordHash: nil,
            createdAt: Date(timeIntervalSince1970: 0),
            memberships: role.map { [Membership(project: shop, role: $0)] } ?? [])
    }

    @Test func eachScopeCoversItsOwnUseAndAdminCoversAll() {
        let expected: [(TokenScope, [TokenUse])] = [
            (.read, [.read]),
            (.writeIssues, [.read, .writeIssues]),
            (.uploadSymbols, [.uploadSymbols]),
            (.admin, [.read, .writeIssues, .uploadSymbols]),
        ]
        for (scope, uses) in expected {
            for use in TokenUse.allCases {
                #expect(use.allowed(by: [scope]) == uses.contains(use), "\(scope) for \(use)")
            }
        }
    }

    @Test func scopesParseFromNamesAndRoundTripThroughTheirStoredForm() throws {
        let parsed = try TokenScope.parse(["write:issues,read", " upload:symbols"]).get()
        #expect(parsed == [.read, .writeIssues, .uploadSymbols])
        #expect(TokenScope.encode(parsed) == "read,write:issues,upload:symbols")
        #expect(TokenScope.decode(TokenScope.encode(parsed)) == parsed)
        #expect(TokenScope.decode("read,delete:everything") == [.read], "an unknown stored name grants nothing")
        guard case .failure(let error) = TokenScope.parse(["read", "root"]) else {
            Issue.record("an unknown scope is refused")
            return
        }
        #expect(error.code == .invalidScope && error.message.contains("root"))
        guard case .failure = TokenScope.parse([]) else {
            Issue.record("no scope is refused")
            return
        }
    }

    @Test func aPersonGivesATokenNoScopeAboveTheirBestRole() {
        #expect(PersonalTokenGrant.refused([.read], for: Self.person(.viewer)) == nil)
        #expect(PersonalTokenGrant.refused([.read, .writeIssues], for: Self.person(.viewer)) == .writeIssues)
        #expect(PersonalTokenGrant.refused([.uploadSymbols], for: Self.person(.viewer)) == .uploadSymbols)
        #expect(PersonalTokenGrant.refused([.uploadSymbols, .writeIssues], for: Self.person(.member)) == nil)
        #expect(PersonalTokenGrant.refused([.admin], for: Self.person(.member)) == .admin)
        #expect(PersonalTokenGrant.refused([.admin], for: Self.person(.admin)) == nil)
        #expect(PersonalTokenGrant.refused([.read], for: Self.person(nil)) == .read, "no project: no scope")
        #expect(PersonalTokenGrant.refused(Set(TokenScope.allCases), for: Self.person(nil, owner: true)) == nil)
    }

    /// The table of what a token may do: the person's role in the project, lowered to the token's scopes.
    @Test func aTokenActsAsItsPersonLoweredToItsScopes() {
        let cases: [(ProjectRole?, Bool, Set<TokenScope>, [AccessAction: AccessDecision])] = [
            (.admin, false, [.read], [.read: .allowed, .changeIssues: .forbidden, .changeSettings: .forbidden]),
            (.admin, false, [.writeIssues], [.read: .allowed, .changeIssues: .allowed, .changeSettings: .forbidden]),
            (.admin, false, [.admin], [.read: .allowed, .changeIssues: .allowed, .changeSettings: .allowed]),
            (.viewer, false, [.admin], [.read: .allowed, .changeIssues: .forbidden, .changeSettings: .forbidden]),
            (
                .member, false, [.uploadSymbols],
                [.read: .allowed, .changeIssues: .allowed, .changeSettings: .forbidden]
            ),
            (nil, false, [.admin], [.read: .hidden, .changeIssues: .hidden, .changeSettings: .hidden]),
            (nil, true, [.read], [.read: .allowed, .changeIssues: .forbidden, .changeSettings: .forbidden]),
            (nil, true, [.admin], [.read: .allowed, .changeIssues: .allowed, .changeSettings: .allowed]),
        ]
        for (role, owner, scopes, answers) in cases {
            let narrowed = PersonalTokenGrant.narrowed(
                Self.person(role, owner: owner), scopes: scopes, project: Self.shop)
            for (action, answer) in answers {
                #expect(
                    Access.decide(.person(narrowed), action, project: Self.shop) == answer,
                    "\(role?.rawValue ?? "none") owner=\(owner) \(scopes) \(action)")
            }
            #expect(
                Access.decide(.person(narrowed), .manageServer, project: nil)
                    == (owner && scopes.contains(.admin)
                        ? .allowed : .forbidden))
            if !owner {
                #expect(
                    Access.decide(.person(narrowed), .read, project: Self.other) == .hidden,
                    "a token acts in its one project")
            }
        }
    }

    @Test func aTokenSecretHasItsPrefixAndSixtyFourHexDigits() {
        let good = "flp_" + String(repeating: "0a", count: 32)
        #expect(PersonalTokenSecret.looksLikeToken(good))
        #expect(!PersonalTokenSecret.looksLikeToken(String(good.dropLast())))
        #expect(!PersonalTokenSecret.looksLikeToken(good + "0"))
        #expect(!PersonalTokenSecret.looksLikeToken("flp_" + String(repeating: "0A", count: 32)), "lowercase only")
        #expect(!PersonalTokenSecret.looksLikeToken(String(repeating: "0a", count: 34)))
        #expect(!PersonalTokenSecret.looksLikeToken("flp_" + String(repeating: "é", count: 64)))
    }

    @Test func aTokenNameIsTrimmedAndBounded() throws {
        #expect(try PersonalTokenName.checked("  CI of the iOS app ").get() == "CI of the iOS app")
        for bad in ["", "   ", String(repeating: "x", count: 101), "a\u{7}b"] {
            guard case .failure(let error) = PersonalTokenName.checked(bad) else {
                Issue.record("\(bad.debugDescription) is refused")
                continue
            }
            #expect(error.code == .invalidName)
        }
    }
}
