import FaultlineCore
import Foundation
import Testing

/// The authorisation rule (``Access``) as a rule book: who may do what, in which project.
@Suite struct AccessRulesTests {
    static let shop = ProjectID(rawValue: 1)
    static let other = ProjectID(rawValue: 2)

    static func person(_ role: ProjectRole?, owner: Bool = false) -> Requester {
        .person(
            Person(
                id: PersonID(7), login: PersonLogin("ada@example.org")!, name: "Ada", owner: owner, passwordHash: nil,
                createdAt: Date(timeIntervalSince1970: 0),
                memberships: role.map { [Membership(project: shop, role: $0)] } ?? []))
    }

    @Test func eachRoleMayDoWhatTheRolesBelowItMayAndOneThingMore() {
        let expected: [(ProjectRole, [AccessAction: AccessDecision])] = [
            (
                .viewer,
                [.read: .allowed, .changeIssues: .forbidden, .changeSettings: .forbidden, .manageServer: .forbidden]
            ),
            (
                .member,
                [.read: .allowed, .changeIssues: .allowed, .changeSettings: .forbidden, .manageServer: .forbidden]
            ),
            (.admin, [.read: .allowed, .changeIssues: .allowed, .changeSettings: .allowed, .manageServer: .forbidden]),
        ]
        for (role, answers) in expected {
            for action in AccessAction.allCases {
                let project: ProjectID? = action == .manageServer ? nil : Self.shop
                #expect(
                    Access.decide(Self.person(role), action, project: project) == answers[action], "\(role) \(action)")
            }
        }
    }

    @Test func anotherProjectIsHiddenNotForbidden() {
        for role in ProjectRole.allCases {
            for action in [AccessAction.read, .changeIssues, .changeSettings] {
                #expect(Access.decide(Self.person(role), action, project: Self.other) == .hidden)
            }
        }
        // A person with no role anywhere sees no project.
        #expect(Access.decide(Self.person(nil), .read, project: Self.shop) == .hidden)
        #expect(!Access.canRead(Self.person(.admin), project: Self.other))
    }

    @Test func ownersAndTheAdminTokenMayDoEverything() {
        for requester in [Requester.adminToken, Self.person(nil, owner: true)] {
            for action in AccessAction.allCases {
                #expect(Access.decide(requester, action, project: Self.other) == .allowed)
                #expect(Access.decide(requester, action, project: nil) == .allowed)
            }
        }
    }

    @Test func anUploadTokenReadsAndChangesIssuesOfItsOwnProjectOnly() {
        let ci = Requester.uploadToken(Self.shop)
        #expect(Access.decide(ci, .read, project: Self.shop) == .allowed)
        #expect(Access.decide(ci, .changeIssues, project: Self.shop) == .allowed)
        #expect(Access.decide(ci, .changeSettings, project: Self.shop) == .forbidden)
        #expect(Access.decide(ci, .read, project: Self.other) == .hidden)
        #expect(Access.decide(ci, .manageServer, project: nil) == .forbidden)
    }

    @Test func aPublicDashboardOnlyReads() {
        #expect(Access.decide(.publicReader, .read, project: Self.shop) == .allowed)
        for action in [AccessAction.changeIssues, .changeSettings, .manageServer] {
            #expect(Access.decide(.publicReader, action, project: Self.shop) == .forbidden)
        }
    }

    @Test func rolesAreOrdered() {
        #expect(ProjectRole.viewer < .member && ProjectRole.member < .admin)
        #expect(AccessAction.changeIssues.leastRole == .member && AccessAction.manageServer.leastRole == nil)
    }
}

/// Logins, stored password hashes and who changed a status.
@Suite struct PeopleRulesTests {
    @Test func loginsAreLowercasedAndRefuseWhatCannotBeShownOrTyped() {
        #expect(PersonLogin("  Ada@Example.ORG ")?.rawValue == "ada@example.org")
        #expect(PersonLogin("ada")?.rawValue == "ada")
        for bad in ["", " ", "a b", "a<b", "a\"b", "a/b", "a\u{7}b", String(repeating: "x", count: 255)] {
            #expect(PersonLogin(bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func aHashIsStoredWithItsParametersAndReadBack() throws {
        let hash = PasswordHash(
            parameters: .standard, salt: Array(repeating: 0xab, count: 16), key: Array(0..<32).map(UInt8.init))
        #expect(hash.encoded.hasPrefix("scrypt$ln=15,r=8,p=1$" + String(repeating: "ab", count: 16) + "$000102"))
        #expect(PasswordHash(encoded: hash.encoded) == hash)
    }

    @Test func storedHashesOutsideTheBoundsAreNotRead() {
        let salt = String(repeating: "00", count: 16)
        let key = String(repeating: "11", count: 32)
        for bad in [
            "scrypt$ln=30,r=8,p=1$\(salt)$\(key)",  // 2^30 rounds: minutes and gigabytes
            "scrypt$ln=15,r=8,p=64$\(salt)$\(key)", "scrypt$ln=15,r=8$\(salt)$\(key)",
            "scrypt$ln=15,r=8,p=1$\(salt)$\(key.dropLast(2))", "scrypt$ln=15,r=8,p=1$zz\(salt.dropFirst(2))$\(key)",
            "bcrypt$ln=15,r=8,p=1$\(salt)$\(key)", "plain-text-password", "",
        ] {
            #expect(PasswordHash(encoded: bad) == nil, "\(bad)")
        }
    }

    @Test func keysAreComparedWholly() {
        let hash = PasswordHash(parameters: .standard, salt: [], key: [1, 2, 3, 4])
        #expect(hash.matches([1, 2, 3, 4]))
        #expect(!hash.matches([1, 2, 3, 5]) && !hash.matches([0, 2, 3, 4]) && !hash.matches([1, 2, 3]))
        #expect(!ConstantTime.equal([], [0]))
    }

    @Test func passwordsHaveALengthBetweenTheRulesBounds() {
        #expect(PasswordRule.problem("short") != nil)
        #expect(PasswordRule.problem("correct horse") == nil)
        #expect(PasswordRule.problem(String(repeating: "x", count: 1025)) != nil)
    }

    @Test func aPersonsStatusChangeNamesThemAndKeepsTheirID() {
        let person = Person(
            id: PersonID(42), login: PersonLogin("ada")!, name: "Ada Lovelace", owner: false, passwordHash: nil,
            createdAt: Date(timeIntervalSince1970: 0), memberships: [])
        let stored = StatusChanger.person(person)
        #expect(stored == "person:42:Ada Lovelace")
        #expect(StatusChanger.personID(stored) == PersonID(42))
        #expect(StatusChanger.shown(stored) == "Ada Lovelace")
        // Older records and other changers are shown as stored.
        #expect(StatusChanger.shown("the CLI") == "the CLI")
        #expect(StatusChanger.personID("the dashboard (session 4)") == nil)
        #expect(StatusChanger.shown("person:x:y") == "person:x:y")
        // Without a name, the login.
        var bare = person
        bare.name = ""
        #expect(StatusChanger.shown(StatusChanger.person(bare)) == "ada")
    }
}
