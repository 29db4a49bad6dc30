import FaultlineCore
import Foundation
import Testing

/// The pure rules behind issue #9's findings 3, 4, 5 and 8: reserved slugs, Slack escaping, webhook targets and
/// the failed-login window.
@Suite struct SecurityRulesTests {
    @Test(arguments: ["api", "buildid", "healthz", "metrics", "login", "logout", "search", "static"])
    func routeNamesAreReservedAsSlugs(_ name: String) throws {
        #expect(try #require(ProjectSlug(name)).isReserved)
        #expect(ProjectSlug.problemForNewProject(name)?.contains("reserved") == true)
    }

    @Test(arguments: ["metrics-app", "login-svc", "healthzcheck", "logoutx", "apis", "buildid2", "shop"])
    func namesThatMerelyStartLikeARouteAreFine(_ name: String) {
        #expect(ProjectSlug.problemForNewProject(name) == nil)
    }

    @Test func slackTextEscapesTheThreeControlCharacters() {
        #expect(
            SlackText.escape("<!channel> & <https://evil.example/phish|Reset your password>")
                == "&lt;!channel&gt; &amp; &lt;https://evil.example/phish|Reset your password&gt;")
        #expect(SlackText.escape("&lt;") == "&amp;lt;")  // escaped text stays text
        #expect(SlackText.escape("plain — ünïcode") == "plain — ünïcode")
    }

    @Test func alertTextEscapesEveryValueFromReports() {
        let text = AlertRules.text(
            project: "shop", kind: .regression, title: "<!channel>: <https://evil.example/phish|Reset your password>",
            release: "<!here> 1.0", reason: [:], link: "https://faultline.example/shop/issues/1.html")
        #expect(
            text
                == "[shop] Regressed in &lt;!here&gt; 1.0: &lt;!channel&gt;: &lt;https://evil.example/phish|Reset your password&gt; "
                + "<https://faultline.example/shop/issues/1.html>")
        // Absurd reason numbers print instead of trapping.
        let velocity = AlertRules.text(
            project: "shop", kind: .velocity, title: "t", release: "1",
            reason: ["issue_sessions": 1e300, "share_percent": .nan],
            link: nil)
        #expect(velocity.contains("1e+300") && velocity.contains("(? %"))
    }

    @Test(arguments: [
        "127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "169.254.169.254",
        "100.64.0.1",
        "100.127.255.255", "0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
        "192.0.0.8",
        "198.18.0.1", "192.0.2.1",
    ])
    func internalIPv4AddressesAreRefused(_ text: String) throws {
        #expect(NetworkAddressRules.isPrivate(try #require(NetworkAddressRules.parseIPv4(text))), "\(text)")
    }

    @Test(arguments: ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "192.169.0.1", "93.184.216.34", "11.0.0.1"])
    func publicIPv4AddressesAreAllowed(_ text: String) throws {
        #expect(!NetworkAddressRules.isPrivate(try #require(NetworkAddressRules.parseIPv4(text))), "\(text)")
    }

    static func v6(_ groups: [UInt16]) -> [UInt8] { groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] } }

    @Test func ipv6RangesFollowTheRules() {
        let refused: [[UInt16]] = [
            [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0xffff, 0x0808, 0x0808],  // mapped: always
            [0xfc00, 0, 0, 0, 0, 0, 0, 1], [0xfd12, 0x3456, 0, 0, 0, 0, 0, 1], [0xfe80, 0, 0, 0, 0, 0, 0, 1],
            [0xfebf, 0, 0, 0, 0, 0, 0, 1], [0xff02, 0, 0, 0, 0, 0, 0, 1], [0x2001, 0x0db8, 0, 0, 0, 0, 0, 1],
            [0x0064, 0xff9b, 0, 0, 0, 0, 0x7f00, 0x0001], [0x2002, 0x0a00, 0x0001, 0, 0, 0, 0, 1],
        ]
        for address in refused { #expect(NetworkAddressRules.isPrivate(Self.v6(address)), "\(address)") }
        let allowed: [[UInt16]] = [
            [0x2606, 0x4700, 0, 0, 0, 0, 0, 0x1111], [0x2a00, 0x1450, 0x4001, 0x0800, 0, 0, 0, 0x200e],
            [0x0064, 0xff9b, 0, 0, 0, 0, 0x0808, 0x0808],
        ]
        for address in allowed { #expect(!NetworkAddressRules.isPrivate(Self.v6(address)), "\(address)") }
        #expect(NetworkAddressRules.isPrivate([1, 2, 3]))  // an address of unknown shape is refused
    }

    @Test func webhookURLsAreParsedWithTheClientsParser() throws {
        let target = try WebhookTarget.parse("https://Hooks.Slack.com./services/T0/B0/x")
        #expect(target == WebhookTarget(scheme: "https", host: "hooks.slack.com"))
        #expect(try WebhookTarget.parse("http://[::1]:8080/x").host == "::1")
        for bad in [
            "ftp://x/y", "javascript:alert(1)", "http://", "http://user:pw@example.com/", "http://a\\@127.0.0.1/",
            "http://exa mple.com/", "//example.com/x", "http://ex\u{e4}mple.com/",
        ] {
            #expect(throws: WebhookTargetProblem.self, "\(bad)") { try WebhookTarget.parse(bad) }
        }
        for literal in [
            "http://127.0.0.1:9/internal-admin", "http://localhost/", "http://api.localhost/", "http://10.0.0.1/",
        ] {
            #expect(
                NetworkAddressRules.literalProblem(try WebhookTarget.parse(literal))?.code == .privateAddress,
                "\(literal)")
        }
        #expect(NetworkAddressRules.literalProblem(try WebhookTarget.parse("https://hooks.slack.com/x")) == nil)
        var settings = AlertSettings()
        settings.webhookURL = "http://user:pw@example.com/"
        #expect(settings.problem?.field == "webhook_url")
    }

    @Test func failedLoginsAgeOutOfTheWindow() {
        let start = Date(timeIntervalSince1970: 1_000)
        var failures = LoginFailures()
        for second in 0..<10 { failures.record(start.addingTimeInterval(Double(second)), keep: 10) }
        let now = start.addingTimeInterval(10)
        #expect(failures.retryAfter(now: now, maxFailures: 10, window: 60) == 50)
        #expect(failures.retryAfter(now: now, maxFailures: 11, window: 60) == nil)
        #expect(failures.retryAfter(now: start.addingTimeInterval(60), maxFailures: 10, window: 60) == nil)
        // Only the newest `keep` are kept, so one address cannot grow its list without bound.
        for second in 10..<1_000 { failures.record(start.addingTimeInterval(Double(second)), keep: 10) }
        #expect(failures.times.count == 10)
        failures.forget(before: start.addingTimeInterval(2_000), window: 60)
        #expect(failures.times.isEmpty)
    }
}
