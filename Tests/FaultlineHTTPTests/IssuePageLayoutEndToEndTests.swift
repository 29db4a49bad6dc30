import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The issue page opens on the crash, against the real `faultline` binary on 127.0.0.1: a crash with system frames
/// around the app's, other threads and breadcrumbs is processed by the server, and
///
/// - every stored event of the issue opens at `GET /{slug}/events/{id}`, each stepping to the newest, newer, older
///   and oldest event of the issue in the read API's order;
/// - in headless Chromium at a laptop's screen (1366×768) the crashed thread's first frame is on the first screen,
///   a frame line is one line, and axe-core finds nothing at that width or at phone width (390 px).
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct IssuePageLayoutEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// A crash of `shop`: libc's raise and abort above three app frames, ten libc frames below, three other threads
    /// of ten libc frames and twelve breadcrumbs in the 30 s before it. Client-symbolicated (functions and lines
    /// sent), with addresses in the modules listed, so each frame has its module.
    static func crash(_ n: Int) -> String {
        let libc = 0x7f00_0000_0000
        let app = 0x5500_0000_0000
        func frame(_ base: Int, _ offset: Int, _ function: String, file: String? = nil, line: Int? = nil) -> String {
            var text = #"{"address":"0x\#(String(base + offset, radix: 16))","function":"\#(function)""#
            if let file, let line { text += #","file":"\#(file)","line":\#(line)"# }
            return text + "}"
        }
        let systemTail = (0..<10).map { frame(libc, 0x3000 + $0 * 0x40, "__libc_helper_\($0)") }
        let crashed =
            [frame(libc, 0x1000, "raise"), frame(libc, 0x2000, "abort")]
            + [
                frame(app, 0x1200, "Cart.parse(_:)", file: "src/Cart.swift", line: 42),
                frame(app, 0x1400, "Cart.load()", file: "src/Cart.swift", line: 17),
                frame(app, 0x1600, "main", file: "src/main.swift", line: 3),
            ] + systemTail
        let others = (1...3).map { t in
            #"{"name":"worker \#(t)","crashed":false,"frames":[\#(systemTail.joined(separator: ","))]}"#
        }
        let now = Date()
        let crumbs = (0..<12).map { i in
            let at = ISO8601DateFormatter().string(from: now.addingTimeInterval(Double(-30 + i * 2)))
            return #"{"timestamp":"\#(at)","category":"ui","message":"step \#(i)"}"#
        }
        return """
            {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"\(ISO8601DateFormatter().string(from: now))",
             "user_id":"u\(n)","app":{"version":"2.4.0","build":"240"},
             "device":{"model":"Pixel 8","os":"Android","os_version":"15"},
             "error":{"type":"SIGABRT","message":"cart index out of range"},
             "modules":[
               {"name":"libc.so.6","path":"/usr/lib/x86_64-linux-gnu/libc.so.6","base_address":"0x\(String(libc, radix: 16))","size":1048576},
               {"name":"shop","path":"/opt/shop/shop","base_address":"0x\(String(app, radix: 16))","size":65536}],
             "threads":[{"name":"main","crashed":true,"frames":[\(crashed.joined(separator: ","))]},\(others.joined(separator: ","))],
             "breadcrumbs":[\(crumbs.joined(separator: ","))],
             "custom_keys":{"cart":"3 items"}}
            """
    }

    /// A server with three crashes of one issue, posted one by one (so their order is known); its admin token,
    /// project and issue id.
    static func server(_ http: HTTP) async throws -> (server: ServerProcess, admin: String, issue: Int, folder: String)
    {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        for n in 1...3 {
            #expect(
                try await http.postReports(server.baseURL, key: project.ingest, "[" + Self.crash(n) + "]").status == 202
            )
        }
        var issue = 0
        #expect(
            try await eventually {
                let answer = try await http.send(
                    .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(project.upload)")])
                let issues = answer.json["issues"] as? [[String: Any]] ?? []
                issue = issues.first?["id"] as? Int ?? 0
                return issues.count == 1 && issues.first?["events"] as? Int == 3
                    && FileManager.default.fileExists(atPath: folder + "/site/shop/issues/\(issue).html")
            })
        return (server, admin, issue, folder)
    }

    func page(_ server: ServerProcess, _ path: String, admin: String) async throws -> (status: Int, html: String) {
        let answer = try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(admin)")])
        return (answer.status, String(decoding: answer.body, as: UTF8.self))
    }

    /// The href of the step `label` on an event page (nil: shown as text, no such event).
    static func step(_ label: String, in html: String) -> String? {
        guard let end = html.range(of: ">\(label)</a></li>") else { return nil }
        let before = html[..<end.lowerBound]
        guard let start = before.range(of: "<li><a href=\"", options: .backwards) else { return nil }
        return String(before[start.upperBound...].prefix { $0 != "\"" })
    }

    @Test func everyEventOfAnIssueOpensAndStepsToItsNeighbours() async throws {
        let (server, admin, issue, _) = try await Self.server(http)
        defer { server.cleanUp() }
        let (one, two, three) = (Payloads.normalized(1), Payloads.normalized(2), Payloads.normalized(3))

        // The issue page links its samples and the event it shows.
        let issuePage = try await page(server, "/shop/issues/\(issue).html", admin: admin)
        #expect(issuePage.status == 200)
        for id in [one, two, three] {
            #expect(issuePage.html.contains("<a href=\"../events/\(id)\"><code>\(id)</code></a>"), "\(id) not linked")
        }
        #expect(issuePage.html.contains("This event on its own page</a>"))

        // The middle event steps both ways; the ends say there is nothing beyond them.
        let middle = try await page(server, "/shop/events/\(two)", admin: admin)
        #expect(middle.status == 200)
        #expect(Self.step("Newest", in: middle.html) == three)
        #expect(Self.step("Newer", in: middle.html) == three)
        #expect(Self.step("Older", in: middle.html) == one)
        #expect(Self.step("Oldest", in: middle.html) == one)
        let newest = try await page(server, "/shop/events/\(three)", admin: admin)
        #expect(Self.step("Newer", in: newest.html) == nil)
        #expect(newest.html.contains("<span class=\"event-nav-off\">Newest</span>"))
        #expect(Self.step("Older", in: newest.html) == two)

        // Walking "Older" from the newest reaches every event once, the oldest last.
        var seen = [three]
        while let next = Self.step(
            "Older", in: try await page(server, "/shop/events/\(seen.last!)", admin: admin).html),
            seen.count < 10
        {
            seen.append(next)
        }
        #expect(seen == [three, two, one])
    }

}

/// The issue page of ``IssuePageLayoutEndToEndTests``'s server in headless Chromium (tools/a11y/issue_page_layout.py).
@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned) struct IssuePageChromiumTests {
    let http = HTTP(client: HTTPClient.shared)

    struct Layout: Decodable {
        struct View: Decodable {
            struct Violation: Decodable {
                var id: String
                var help: String?
                var nodes: [[String]]?
            }
            var innerWidth: Int
            var innerHeight: Int
            var scrollWidth: Int
            var pageHeight: Double
            var firstFrameTop: Double?
            var firstFrameBottom: Double?
            var firstFrameText: String?
            var frameHeights: [Double]
            var title: String
            var violations: [Violation]
        }
        var desktop: View
        var phone: View
    }

    @Test func theCrashedThreadIsOnTheFirstScreenAndAxeFindsNothing() async throws {
        let axe = try #require(AccessibilityEndToEndTests.axe, "axe-core is missing (tools/test fetches it)")
        let (server, admin, issue, _) = try await IssuePageLayoutEndToEndTests.server(http)
        defer { server.cleanUp() }
        let login = try await HTTP(client: SecurityEndToEndTests.noRedirects).send(
            .POST, server.baseURL + "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(admin)&next=%2F".utf8))
        let cookie = try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
        let script = URL(fileURLWithPath: AccessibilityEndToEndTests.script).deletingLastPathComponent()
            .appendingPathComponent("issue_page_layout.py").path
        let run = try Command.run(
            "python3", [script, "--axe", axe, "--cookie", cookie, server.baseURL + "/shop/issues/\(issue).html"])
        #expect(run.status == 0, "\(run.err.suffix(3000))")
        let layout = try JSONDecoder().decode(Layout.self, from: Data(run.out.utf8))
        for (width, view) in [("desktop", layout.desktop), ("phone", layout.phone)] {
            #expect(!view.title.hasPrefix("Sign in"), "\(width): asked to log in")
            #expect(
                view.violations.isEmpty,
                "\(width): \(view.violations.map { "\($0.id): \($0.help ?? "") \($0.nodes ?? [])" })")
            #expect(view.scrollWidth <= view.innerWidth, "\(width) scrolls sideways: \(view.scrollWidth)")
            // Every frame line is one line of text (system frames and in-app frames alike, source lines apart).
            #expect(!view.frameHeights.isEmpty)
            let tallest = view.frameHeights.max() ?? 0
            #expect(tallest <= (width == "desktop" ? 30 : 60), "\(width): frame lines \(view.frameHeights)")
            print(
                "issue page at \(width) \(view.innerWidth)x\(view.innerHeight): first frame at \(view.firstFrameTop ?? -1)"
                    + "–\(view.firstFrameBottom ?? -1) px (\(view.firstFrameText ?? "")), frame lines \(view.frameHeights) px, "
                    + "page \(view.pageHeight) px")
        }
        // At a laptop's screen the crashed thread's first frame is on the first screen, without scrolling.
        #expect(layout.desktop.innerWidth == 1366 && layout.desktop.innerHeight == 768)
        let top = try #require(layout.desktop.firstFrameTop, "no frame of the crashed thread found")
        #expect(top < 768, "the first frame starts \(top) px down")
        #expect((layout.desktop.firstFrameBottom ?? .infinity) <= 768)
        #expect(layout.phone.innerWidth == 390)
    }
}
