import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The fingerprint rules page (`/{slug}/settings/grouping`, issue #36) against the real `faultline` binary on
/// 127.0.0.1: its dry run answers what `POST /api/v1/grouping/try` answers, a mistake names its line and column with
/// the text kept, a viewer may try but not apply (403, nothing stored), and an admin's apply stores the next version,
/// is in the audit trail, and the regroup ends with the issues the dry run announced.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct GroupingRulesPageEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)

    /// Merges the parse and image crashes (both "merge me") into a new issue, and splits the boot crash's odd event
    /// out into another.
    static let rules = "# issue 36's page\nmessage:\"merge me\" -> merged\nmessage:\"odd one\" -> odd\n"

    /// A server with three issues of six events: parseCart (2, "merge me"), loadImage (1, "merge me") and boot
    /// (2 "plain", 1 "odd one"), with a viewer (Vic) and an admin (Ann) of `shop` signed in.
    struct Seeded {
        var folder: String
        var shop: SpikeProtectionEndToEndTests.Keys
        var server: ServerProcess
        var viewer: String
        var admin: String
    }

    static func seeded() async throws -> Seeded {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let vic = try await PeopleEndToEndTests.invite(folder, "vic@example.org", role: "viewer", project: "shop")
        let ann = try await PeopleEndToEndTests.invite(folder, "ann@example.org", role: "admin", project: "shop")
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        let http = HTTP(client: HTTPClient.shared)
        let sent: [(String, String)] = [
            ("parseCart", "merge me"), ("parseCart", "merge me"), ("loadImage", "merge me"), ("boot", "plain"),
            ("boot", "plain"), ("boot", "odd one"),
        ]
        for (n, (site, message)) in sent.enumerated() {
            let report = InsightsEndToEndTests.crash(n + 1, site: site, version: "1.0", user: "u\(n)", message: message)
            #expect(try await http.postReports(server.baseURL, key: shop.ingest, report).status == 202)
        }
        let merge = IssueMergeEndToEndTests()
        #expect(
            try await eventually {
                let issues = try await merge.issues(server, token: shop.upload)
                return issues.count == 3 && issues.map(\.events).reduce(0, +) == 6
            })
        let people = PeopleEndToEndTests()
        return Seeded(
            folder: folder, shop: shop, server: server, viewer: try await people.accept(server, vic, name: "Vic"),
            admin: try await people.accept(server, ann, name: "Ann"))
    }

    /// A form body: each value percent-encoded.
    static func form(_ fields: [(String, String)]) -> [UInt8] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return Array(
            fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
                .joined(separator: "&").utf8)
    }

    /// The issue numbers linked inside `<ul class="CLASS">…</ul>` of `html`.
    static func linkedIssues(_ html: String, list: String) -> Set<Int> {
        guard let start = html.range(of: "<ul class=\"\(list)\">"),
            let end = html.range(of: "\n</ul>", range: start.upperBound..<html.endIndex)
        else { return [] }
        let section = html[start.upperBound..<end.lowerBound]
        var found: Set<Int> = []
        var rest = section[...]
        while let link = rest.range(of: "html\">#") {
            let digits = rest[link.upperBound...].prefix { $0.isNumber }
            if let number = Int(digits) { found.insert(number) }
            rest = rest[link.upperBound...]
        }
        return found
    }

    func post(_ seeded: Seeded, cookie: String, _ fields: [(String, String)]) async throws -> HTTP.Answer {
        try await browser.send(
            .POST, seeded.server.baseURL + "/shop/settings/grouping",
            headers: PeopleEndToEndTests.form + [("Cookie", cookie), ("Accept", "text/html")], body: Self.form(fields))
    }

    func versions(_ seeded: Seeded) async throws -> [Int] {
        let rules = try await SpikeProtectionEndToEndTests().get(seeded.server, seeded.shop, "/api/v1/grouping/rules")
        return (rules["versions"] as? [[String: Any]] ?? []).compactMap { $0["version"] as? Int }
    }

    @Test func thePagesDryRunIsTheAPIsAndAnAdminsApplyRegroupsAsItSaid() async throws {
        let seeded = try await Self.seeded()
        defer { seeded.server.cleanUp() }
        let server = seeded.server
        let admin = try await SecurityEndToEndTests.adminToken(seeded.folder)
        // Given version 1 of the rules, set through the API (it matches nothing here)
        let first = try await http.send(
            .PUT, server.baseURL + "/api/v1/grouping/rules?project=shop",
            headers: [("Authorization", "Bearer \(admin)")], body: Array("error.type:Nothing -> nothing\n".utf8))
        #expect(first.status == 200)
        #expect(
            try await eventually {
                let rules = try await SpikeProtectionEndToEndTests().get(server, seeded.shop, "/api/v1/grouping/rules")
                return (rules["regroup"] as? [String: Any])?["done"] as? Bool == true
            })

        // When the API tries the rules: one merge (two issues into a new one), one split
        let tried = try await http.send(
            .POST, server.baseURL + "/api/v1/grouping/try?days=30",
            headers: [("Authorization", "Bearer \(seeded.shop.upload)")], body: Array(Self.rules.utf8))
        #expect(tried.status == 200)
        let answer = tried.json["answer"] as? [String: Any] ?? [:]
        let merges = answer["merges"] as? [[String: Any]] ?? []
        let splits = answer["splits"] as? [[String: Any]] ?? []
        try #require(merges.count == 1 && splits.count == 1, "\(answer)")
        let mergedIssues = Set(merges[0]["issues"] as? [Int] ?? [])
        let mergedInto = try #require((merges[0]["into"] as? [String: Any])?["fingerprint"] as? String)
        let splitIssue = try #require(splits[0]["issue"] as? Int)
        let parts = splits[0]["parts"] as? [[String: Any]] ?? []
        let oddPart = try #require(parts.first { ($0["to"] as? [String: Any])?["fingerprint"] != nil })
        let oddFingerprint = try #require((oddPart["to"] as? [String: Any])?["fingerprint"] as? String)
        #expect(mergedIssues.count == 2 && merges[0]["events"] as? Int == 3 && merges[0]["users"] as? Int == 3)

        // Then the viewer's page has the form without Apply, and its dry run answers the same merge and split
        let people = PeopleEndToEndTests()
        let viewerPage = try await people.csrf(server, page: "/shop/settings/grouping", cookie: seeded.viewer)
        #expect(viewerPage.html.contains("Version 1, set by the API (admin token)"), "\(viewerPage.html)")
        #expect(viewerPage.html.contains("spellcheck=\"false\">\nerror.type:Nothing -&gt; nothing\n</textarea>"))
        #expect(viewerPage.html.contains("<button type=\"submit\" name=\"do\" value=\"try\">Dry run</button>"))
        #expect(!viewerPage.html.contains("value=\"apply\""))
        #expect(viewerPage.html.contains("<a href=\"../settings\">Settings of shop</a>"))
        let viewerToken = try #require(viewerPage.token)
        let dryRun = try await post(
            seeded, cookie: seeded.viewer,
            [("csrf", viewerToken), ("rules", Self.rules), ("days", "30"), ("do", "try")])
        #expect(dryRun.status == 200)
        let html = String(decoding: dryRun.body, as: UTF8.self)
        #expect(html.contains("Dry run of 2 rules over 6 reports of the last 30 days. Nothing was changed."), "\(html)")
        #expect(Self.linkedIssues(html, list: "grouping-merges") == mergedIssues)
        #expect(html.contains("a new issue (<code>\(mergedInto)</code>): 3 events, 3 users; e.g."))
        for example in merges[0]["examples"] as? [String] ?? [] {
            #expect(html.contains("<a href=\"../events/\(example)\">\(example)</a>"))
        }
        #expect(Self.linkedIssues(html, list: "grouping-splits") == [splitIssue])
        #expect(html.contains("a new issue (<code>\(oddFingerprint)</code>): 1 event, 1 user; e.g."))
        #expect(Self.linkedIssues(html, list: "grouping-moves").isEmpty)
        // and the text stays in the form
        #expect(html.contains("message:&quot;merge me&quot; -&gt; merged"))

        // A mistake: 400, its line and column, the text kept, nothing run
        let bad = "message:x -> a\ncolour:red -> x"
        let refused = try await post(
            seeded, cookie: seeded.viewer, [("csrf", viewerToken), ("rules", bad), ("days", "30"), ("do", "try")])
        #expect(refused.status == 400)
        let refusedHTML = String(decoding: refused.body, as: UTF8.self)
        #expect(refusedHTML.contains("Line 2, column 1: unknown field"), "\(refusedHTML)")
        #expect(
            refusedHTML.contains(
                "aria-invalid=\"true\" aria-describedby=\"rules-error\">\nmessage:x -&gt; a\ncolour:red -&gt; x</textarea>"
            ))
        #expect(!refusedHTML.contains("Dry run of"))

        // A viewer's apply: 403 and nothing stored; without the form's token: 403 too
        let viewerApply = try await post(
            seeded, cookie: seeded.viewer, [("csrf", viewerToken), ("rules", Self.rules), ("do", "apply")])
        #expect(viewerApply.status == 403)
        let adminPage = try await people.csrf(server, page: "/shop/settings/grouping", cookie: seeded.admin)
        let adminToken = try #require(adminPage.token)
        #expect(adminPage.html.contains("<button type=\"submit\" name=\"do\" value=\"apply\">Apply</button>"))
        let bare = try await post(seeded, cookie: seeded.admin, [("rules", Self.rules), ("do", "apply")])
        #expect(bare.status == 403)
        let stolen = try await post(
            seeded, cookie: seeded.admin, [("csrf", viewerToken), ("rules", Self.rules), ("do", "apply")])
        #expect(stolen.status == 403)
        #expect(try await versions(seeded) == [1])
        #expect(try PeopleEndToEndTests.sqlite(seeded.folder, "SELECT count(*) FROM grouping_rules") == "1\n")
        // and an admin's mistake stores nothing either
        let badApply = try await post(
            seeded, cookie: seeded.admin, [("csrf", adminToken), ("rules", bad), ("days", "30"), ("do", "apply")])
        #expect(badApply.status == 400)
        #expect(String(decoding: badApply.body, as: UTF8.self).contains("Line 2, column 1: unknown field"))
        #expect(try await versions(seeded) == [1])

        // When the admin applies the rules: back to the page, version 2 by Ann, in the audit trail
        let applied = try await post(
            seeded, cookie: seeded.admin,
            [("csrf", adminToken), ("rules", Self.rules), ("days", "30"), ("do", "apply")])
        #expect(applied.status == 303)
        #expect(applied.headers["Location"].first == "/shop/settings/grouping")
        #expect(try await versions(seeded) == [2, 1])
        let trail = try await http.send(
            .GET, server.baseURL + "/api/v1/audit?project=shop&kind=project.grouping_rules",
            headers: [("Authorization", "Bearer \(admin)")])
        let entries = trail.json["entries"] as? [[String: Any]] ?? []
        #expect(
            entries.contains {
                $0["actor_kind"] as? String == "person" && $0["actor"] as? String == "Ann"
                    && $0["after"] as? String == "version 2: 2 rules" && $0["before"] as? String == "version 1"
                    && $0["address"] as? String == "127.0.0.1"
            }, "\(trail.json)")

        // Then the regroup finishes, shown on the page as `faultline grouping progress` prints it
        #expect(
            try await eventually {
                let page = try await people.csrf(server, page: "/shop/settings/grouping", cookie: seeded.admin)
                return page.html.contains("regroup for rules version 2: done;")
            })
        let progress = try await ServerProcess.run([
            "grouping", "progress", "--project", "shop", "--data", seeded.folder,
        ])
        let done = try await people.csrf(server, page: "/shop/settings/grouping", cookie: seeded.admin)
        let line = progress.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(done.html.contains("role=\"status\">\(line)</p>"), "\(line)")
        #expect(done.html.contains("Version 2, set by Ann"))
        #expect(done.html.contains("Ann from 127.0.0.1: version 1 → version 2: 2 rules"))
        // with the issues the dry run announced: the merged three events in the new issue, the odd one in another,
        // the boot issue keeping its two
        #expect(
            try await eventually {
                let issues = try await IssueMergeEndToEndTests().issues(server, token: seeded.shop.upload)
                    .filter { $0.events > 0 }
                let byFingerprint = Dictionary(issues.map { ($0.fingerprint, $0.events) }) { a, _ in a }
                return issues.count == 3 && byFingerprint[mergedInto] == 3 && byFingerprint[oddFingerprint] == 1
                    && issues.first { $0.id == splitIssue }?.events == 2
            })
        // and the same dry run now finds nothing to move
        let again = try await http.send(
            .POST, server.baseURL + "/api/v1/grouping/try?days=30",
            headers: [("Authorization", "Bearer \(seeded.shop.upload)")], body: Array(Self.rules.utf8))
        #expect((again.json["answer"] as? [String: Any])?["moved"] as? Int == 0, "\(again.json)")
    }
}

/// The fingerprint rules page with a dry run's answer on it, as a viewer sees it after clicking "Dry run" in real
/// headless Chromium (`tools/a11y/check_pages.py --fill --click`): no axe-core violation at desktop or phone width, and
/// nothing wider than the phone.
@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned) struct GroupingRulesPageAccessibilityTests {
    @Test func thePageWithADryRunIsAccessibleAndFitsAPhone() async throws {
        let axe = try #require(AccessibilityEndToEndTests.axe, "axe-core is missing (tools/test fetches it)")
        let seeded = try await GroupingRulesPageEndToEndTests.seeded()
        defer { seeded.server.cleanUp() }
        let url = seeded.server.baseURL + "/shop/settings/grouping"
        let shots = try TempFolder("a11y-grouping")
        let run = try Command.run(
            "python3",
            [
                AccessibilityEndToEndTests.script, "--axe", axe, "--shots", shots.path, "--cookie", seeded.viewer,
                "--fill", "rules=" + GroupingRulesPageEndToEndTests.rules, "--click", "button[value=try]", url,
            ])
        #expect(run.status == 0, "\(run.err.suffix(3000))")
        let results = try JSONDecoder().decode(
            [String: AccessibilityEndToEndTests.PageResult].self, from: Data(run.out.utf8))
        let result = try #require(results[url])
        // The answer's page was checked, not the form's.
        #expect(result.desktop.title.hasPrefix("Dry run of fingerprint rules"), "\(result.desktop.title)")
        #expect(result.phone.title.hasPrefix("Dry run of fingerprint rules"), "\(result.phone.title)")
        result.expectAccessibleAndFitsAPhone()
    }
}
