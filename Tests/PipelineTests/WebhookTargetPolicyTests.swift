import FaultlineCore
import Foundation
import Pipeline
import Testing

/// A resolver with fixed answers (unit tests only; the server uses the system's getaddrinfo).
struct FixedResolver: HostResolving {
    struct NotFound: Error {}
    let answers: [String: [[UInt8]]]
    func addresses(of host: String) async throws -> [[UInt8]] {
        guard let found = answers[host] else { throw NotFound() }
        return found
    }
}

@Suite struct WebhookTargetPolicyTests {
    static let resolver = FixedResolver(answers: [
        "hooks.example.com": [
            [93, 184, 216, 34], [0x26, 0x06, 0x28, 0, 0x02, 0x20, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x01],
        ],
        // One public and one internal address: refused (the client may connect to either).
        "rebind.example.com": [[93, 184, 216, 34], [127, 0, 0, 1]],
        "metadata.example.com": [[169, 254, 169, 254]],
        "empty.example.com": [],
    ])

    @Test func namesAreResolvedAndEveryAddressJudged() async throws {
        let policy = WebhookTargetPolicy(resolver: Self.resolver, allowPrivate: false)
        try await policy.check("https://hooks.example.com/services/x")
        for (url, code) in [
            ("https://rebind.example.com/x", WebhookTargetProblem.Code.privateAddress),
            ("http://metadata.example.com/latest", .privateAddress),
            ("http://127.0.0.1:8080/internal-admin", .privateAddress),
            ("http://nowhere.example.com/", .unresolvable),
            ("http://empty.example.com/", .unresolvable),
            ("gopher://hooks.example.com/", .invalidURL),
        ] {
            await #expect(throws: WebhookTargetProblem.self, "\(url)") { try await policy.check(url) }
            do throws(WebhookTargetProblem) { try await policy.check(url) } catch {
                #expect(error.code == code, "\(url): \(error)")
            }
        }
    }

    @Test func theOperatorMayAllowInternalTargetsButNotOtherSchemes() async throws {
        let policy = WebhookTargetPolicy(resolver: Self.resolver, allowPrivate: true)
        try await policy.check("http://127.0.0.1:8080/hook")
        try await policy.check("http://metadata.example.com/")
        await #expect(throws: WebhookTargetProblem.self) { try await policy.check("file:///etc/passwd") }
    }

    @Test func reservedSlugsCannotNameANewProject() async throws {
        let service = ProjectService(
            store: MemoryProjectStore(), hasher: ReversingHasher(), generator: CountingGenerator(), clock: ManualClock()
        )
        for name in ["api", "metrics", "login", "buildid"] {
            await #expect(throws: ProjectError.self, "\(name)") { try await service.create(slug: ProjectSlug(name)!) }
        }
        #expect(try await service.create(slug: ProjectSlug("metrics-app")!).project.slug.rawValue == "metrics-app")
    }
}
