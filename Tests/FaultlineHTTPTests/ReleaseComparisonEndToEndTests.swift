import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The releases comparison on the real `faultline` binary on 127.0.0.1, in headless Chromium
/// (tools/a11y/release_compare_layout.py): six releases' sessions posted, the page shows the latest five with each
/// rate against the project's targets; at 1366 px the cards stand side by side, at 390 px they are stacked and the
/// page does not scroll sideways; axe-core finds nothing at either width.
@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned) struct ReleaseComparisonEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    struct Layout: Decodable {
        struct Card: Decodable {
            var release: String
            var left: Int
            var top: Int
            var width: Int
            var marks: [String]
        }
        struct View: Decodable {
            struct Violation: Decodable {
                var id: String
                var help: String?
                var nodes: [[String]]?
            }
            var cards: [Card]
            var innerWidth: Int
            var scrollWidth: Int
            var violations: [Violation]
        }
        var desktop: View
        var phone: View
    }

    /// Release `index` of six, one day apart (the newest today): 100 sessions of 100 users, `crashed` of them crashed.
    static func sessions(_ release: String, index: Int, crashed: Int) -> [String] {
        let started = ISO8601DateFormatter().string(from: Date().addingTimeInterval(Double(index - 5) * 86_400))
        return (0..<100).map { n in
            InsightsEndToEndTests.session(
                "\(release)-\(n)", user: "\(release)-u\(n)", release: release,
                status: n < crashed ? "crashed" : "exited", started: started)
        }
    }

    @Test func theLatestReleasesStandSideBySideAtDesktopAndStackAtPhoneWidth() async throws {
        let axe = try #require(AccessibilityEndToEndTests.axe, "axe-core is missing (tools/test fetches it)")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        // 2.4.0 is the bad one (10 of 100 crashed); 2.4.1 is clean; the oldest, 2.0.0, is not compared.
        let releases = [("2.0.0", 0), ("2.1.0", 0), ("2.2.0", 1), ("2.3.0", 1), ("2.4.0", 10), ("2.4.1", 0)]
        var all: [String] = []
        for (index, (release, crashed)) in releases.enumerated() {
            all += Self.sessions(release, index: index, crashed: crashed)
        }
        let answer = try await http.send(
            .POST, server.baseURL + "/api/v1/sessions",
            headers: [("Authorization", "Bearer \(project.ingest)"), ("Content-Type", "application/json")],
            body: Array(("[" + all.joined(separator: ",") + "]").utf8))
        #expect(answer.status == 202)
        #expect(
            try await eventually {
                let html = (try? String(contentsOfFile: folder + "/site/shop/releases.html", encoding: .utf8)) ?? ""
                return html.components(separatedBy: "<li class=\"release-card").count - 1 == 5
                    && html.contains(">2.4.1</a>")
            })

        let login = try await HTTP(client: SecurityEndToEndTests.noRedirects).send(
            .POST, server.baseURL + "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(admin)&next=%2F".utf8))
        let cookie = try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
        let script = URL(fileURLWithPath: AccessibilityEndToEndTests.script).deletingLastPathComponent()
            .appendingPathComponent("release_compare_layout.py").path
        let run = try Command.run(
            "python3", [script, "--axe", axe, "--cookie", cookie, server.baseURL + "/shop/releases.html"])
        #expect(run.status == 0, "\(run.err.suffix(3000))")
        let layout = try JSONDecoder().decode(Layout.self, from: Data(run.out.utf8))

        for (width, view) in [("desktop", layout.desktop), ("phone", layout.phone)] {
            #expect(
                view.violations.isEmpty,
                "\(width): \(view.violations.map { "\($0.id): \($0.help ?? "") \($0.nodes ?? [])" })")
            #expect(view.scrollWidth <= view.innerWidth, "\(width) scrolls sideways: \(view.scrollWidth)")
            // The latest five, newest first, each with both rates against their targets in words.
            #expect(view.cards.map(\.release) == ["2.4.1", "2.4.0", "2.3.0", "2.2.0", "2.1.0"], "\(width)")
            for card in view.cards { #expect(card.marks.count == 2, "\(width) \(card.release): \(card.marks)") }
            let bad = try #require(view.cards.first { $0.release == "2.4.0" })
            #expect(bad.marks == ["▼ below 99.5 % target", "▼ below 99.9 % target"], "\(width)")
            let clean = try #require(view.cards.first { $0.release == "2.4.1" })
            #expect(clean.marks == ["✓ meets 99.5 % target", "✓ meets 99.9 % target"], "\(width)")
        }
        // At a laptop's screen: one row, left to right.
        let desktop = layout.desktop.cards
        #expect(layout.desktop.innerWidth == 1366)
        #expect(Set(desktop.map(\.top)).count == 1, "not side by side: \(desktop.map(\.top))")
        #expect(desktop.map(\.left) == desktop.map(\.left).sorted() && Set(desktop.map(\.left)).count == 5)
        // At a phone's: one column, top to bottom, each card the width of the column.
        let phone = layout.phone.cards
        #expect(layout.phone.innerWidth == 390)
        #expect(Set(phone.map(\.left)).count == 1, "not stacked: \(phone.map(\.left))")
        #expect(phone.map(\.top) == phone.map(\.top).sorted() && Set(phone.map(\.top)).count == 5)
        #expect(phone.allSatisfy { $0.width > 300 && $0.width <= 390 }, "\(phone.map(\.width))")
    }
}
