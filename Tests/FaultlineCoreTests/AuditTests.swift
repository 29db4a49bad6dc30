import FaultlineCore
import Foundation
import Testing

/// The audit trail's values: kinds and their groups, clipped values, what pages show for each actor, and how a
/// setting's value is written (secrets of a webhook URL left out).
@Suite struct AuditTests {
    @Test func kindsHaveAGroupAndAShape() {
        #expect(AuditKind.issueStatus.group == "issue")
        #expect(AuditKind(rawValue: "token.created") == .tokenCreated)
        for bad in ["issue", "Issue.status", "issue..status", ".issue", "issue.", "issue status", "", "é.x"] {
            #expect(AuditKind(rawValue: bad) == nil, "\(bad)")
        }
        #expect(AuditKind.isGroupOrKind("issue") && AuditKind.isGroupOrKind("member.role"))
        #expect(!AuditKind.isGroupOrKind(String(repeating: "a", count: 65)))
    }

    @Test func longValuesAreClippedOnACharacter() {
        let long = String(repeating: "é", count: 2000)  // 4000 bytes
        let entry = AuditEntry(
            project: nil, at: Date(timeIntervalSince1970: 0), origin: .cli, kind: .issueNote, subject: nil, after: long)
        let after = try! #require(entry.after)
        #expect(after.utf8.count <= AuditEntry.maxValueBytes && after.hasSuffix("…"))
        #expect(after.dropLast().allSatisfy { $0 == "é" })
        #expect(AuditEntry.clipped("short") == "short")
    }

    @Test func actorsReadBackFromTheirColumns() {
        let actors: [AuditActor] = [
            .person(PersonID(4), name: "Ada"), .personalToken(PersonID(4), name: "Ada", token: "ci"), .adminToken,
            .projectToken(ProjectID(rawValue: 2)), .cli,
        ]
        for actor in actors {
            let back = AuditActor(
                kind: actor.kind, person: actor.person?.rawValue, name: actor.storedName, token: actor.storedToken,
                project: ProjectID(rawValue: 2))
            #expect(back == actor)
        }
        #expect(AuditActor(kind: "robot", person: nil, name: nil, token: nil, project: nil) == nil)
        #expect(AuditActor.personalToken(PersonID(4), name: "Ada", token: "ci").shown == "Ada (token ci)")
        #expect(AuditActor(.publicReader) == nil)
    }

    @Test func webhookURLsAreShownWithoutTheirSecretPath() {
        #expect(
            AuditText.webhook("https://hooks.slack.com/services/T000/B000/XXXX") == "https://hooks.slack.com/…")
        #expect(AuditText.webhook("https://user:pw@example.org:8443/hook?x=1") == "https://example.org:8443/…")
        #expect(AuditText.webhook("http://example.org") == "http://example.org")
        #expect(AuditText.webhook(nil) == "(none)" && AuditText.webhook("") == "(none)")
    }

    @Test func alertSettingsAreWrittenWithoutTheWebhook() {
        var settings = AlertSettings()
        settings.webhookURL = "https://hooks.slack.com/services/secret"
        let text = AuditText.alerts(settings)
        #expect(!text.contains("secret") && text.contains("\"velocity_percent\":1"))
        #expect(AuditText.targets(CrashFreeTargets(users: 99.5, sessions: 100)).contains("99.5 %"))
    }
}
