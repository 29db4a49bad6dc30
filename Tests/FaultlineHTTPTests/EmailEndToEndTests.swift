import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Alert mail through a real SMTP server (aiosmtpd on 127.0.0.1, `Python/smtp_sink.py`) and the real `faultline`.
@Suite(.serialized, .tags(.endToEnd, .smtp), .provisioned) struct EmailEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// A running `smtp_sink.py`: mails land in `out` as `NNNN.eml` with their envelope in `NNNN.json`.
    final class Sink {
        let process = ChildProcess()
        let stdin = Pipe()
        let out: String
        let port: Int

        init(port: Int, out: String, arguments: [String] = []) async throws {
            self.port = port
            self.out = out
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Python/smtp_sink.py").path
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, "--port", "\(port)", "--out", out] + arguments
            let stdout = Pipe()
            process.standardOutput = stdout
            process.standardInput = stdin
            try process.run()
            let ready = stdout.fileHandleForReading.availableData
            guard String(decoding: ready, as: UTF8.self).hasPrefix("READY") else {
                throw TestFailure("smtp_sink.py did not start: \(String(decoding: ready, as: UTF8.self))")
            }
        }

        /// The mails received so far, oldest first: (envelope, message text).
        func mails() -> [(envelope: [String: Any], message: String)] {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter {
                $0.hasSuffix(".eml")
            }.sorted()
            return names.compactMap { name in
                let base = out + "/" + name.dropLast(4)
                guard let message = try? String(contentsOfFile: base + ".eml", encoding: .utf8),
                    let data = FileManager.default.contents(atPath: base + ".json"),
                    let envelope = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                else { return nil }
                return (envelope, message)
            }
        }

        func stop() {
            try? stdin.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// A port nothing listens on (yet).
    static func freePort() throws -> Int {
        let probe = try Command.run(
            "python3",
            ["-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        guard let port = Int(probe.out.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("no free port: \(probe.err)")
        }
        return port
    }

    /// A header's value in a message (the first line of it).
    static func header(_ name: String, in message: String) -> String? {
        message.components(separatedBy: "\r\n").first { $0.hasPrefix(name + ": ") }.map {
            String($0.dropFirst(name.count + 2))
        }
    }

    /// The decoded part of `type` (`text/plain` or `text/html`).
    static func part(_ type: String, in message: String) -> String? {
        guard
            let start = message.range(
                of: "Content-Type: \(type); charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n")
        else { return nil }
        let rest = message[start.upperBound...]
        let body = rest.prefix { $0 != "-" }.replacingOccurrences(of: "\r\n", with: "")
        return Data(base64Encoded: body).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A self-signed certificate for 127.0.0.1, made with openssl: (certificate, key) paths.
    static func certificate(in folder: String) async throws -> (String, String) {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let (cert, key) = (folder + "/cert.pem", folder + "/key.pem")
        let made = try Command.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj",
                "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ])
        guard made.status == 0 else { throw TestFailure("openssl: \(made.err)") }
        return (cert, key)
    }

    /// A project with two members: ada chose velocity and new-issue mail, bob chose nothing.
    static func projectWithMembers(_ slug: String, in folder: String) async throws -> (
        ingest: String, upload: String, id: Int
    ) {
        let project = try await ServerProcess.createProject(slug, in: folder)
        for person in ["ada@example.com", "bob@example.com"] {
            let invited = try await ServerProcess.run(
                ["users", "invite", person, "--role", "member", "--project", slug, "--data", folder])
            #expect(invited.status == 0, "\(invited.err)")
        }
        let chosen = try await ServerProcess.run(
            ["alerts", "mail", slug, "--person", "ada@example.com", "--kinds", "velocity,new_issue", "--data", folder])
        #expect(chosen.status == 0, "\(chosen.err)")
        #expect(chosen.out.contains("ada@example.com \(slug): kinds new_issue,velocity; digest none"))
        return project
    }

    static let fast = [
        "FAULTLINE_ALERT_INTERVAL_MS": "300", "FAULTLINE_WEBHOOK_BACKOFF_MS": "300",
        "FAULTLINE_WEBHOOK_POLL_MS": "100", "FAULTLINE_MAIL_FROM": "faultline@example.com",
        "FAULTLINE_SMTP_HOST": "127.0.0.1", "FAULTLINE_SMTP_TIMEOUT_SECONDS": "10",
    ]

    @Test func aVelocityAlertArrivesOverSTARTTLSWithAUTHAndItsNumbers() async throws {
        let folder = ServerProcess.newFolder()
        let (cert, key) = try await Self.certificate(in: folder + "-tls")
        let port = try Self.freePort()
        let sink = try await Sink(
            port: port, out: folder + "-mail",
            arguments: ["--cert", cert, "--key", key, "--auth", "faultline:s3cret pw"])
        defer { sink.stop() }
        let passwordFile = folder + "-tls/password"
        try "s3cret pw\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        var smtp = Self.fast
        smtp["FAULTLINE_SMTP_PORT"] = "\(port)"
        smtp["FAULTLINE_SMTP_USER"] = "faultline"
        smtp["FAULTLINE_SMTP_PASSWORD_FILE"] = passwordFile
        smtp["FAULTLINE_SMTP_CA_FILE"] = cert

        // The test command: through STARTTLS and AUTH it arrives.
        let tested = try await ServerProcess.run(
            ["alerts", "test-email", "--to", "ops@example.com"], environment: smtp)
        #expect(tested.status == 0, "\(tested.err)")
        #expect(tested.out.contains("sent to ops@example.com via 127.0.0.1:\(port) (starttls, AUTH as faultline)"))
        #expect(sink.mails().count == 1)
        let test = try #require(sink.mails().first)
        #expect(test.envelope["tls"] as? Bool == true)
        #expect(test.envelope["auth"] as? Bool == true)
        #expect(Self.header("Subject", in: test.message) == "Faultline test mail")

        // A velocity spike: 30 of release 3.0's 50 sessions crash with one issue.
        let project = try await Self.projectWithMembers("spiky", in: folder)
        var environment = smtp
        environment["FAULTLINE_RENDER_DEBOUNCE_MS"] = "200"
        let server = try await ServerProcess(folder: folder, environment: environment)
        defer { server.cleanUp() }
        let sessions = (0..<50).map {
            InsightsEndToEndTests.session(
                "a\($0)", user: "a\($0)", release: "3.0 (1)", status: $0 < 30 ? "crashed" : "exited")
        }
        try await InsightsEndToEndTests().postSessions(server, key: project.ingest, sessions)
        let reports = (0..<30).map {
            InsightsEndToEndTests.crash(100 + $0, site: "spike", version: "3.0", user: "a\($0)", session: "a\($0)")
        }
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)

        #expect(
            try await eventually(timeout: .seconds(60)) {
                sink.mails().contains { Self.part("text/plain", in: $0.message)?.contains("Trending") == true }
            })
        try await Task.sleep(for: .seconds(1))
        let mails = sink.mails().dropFirst()  // the test mail
        // ada chose velocity and new issues: one new-issue mail and one velocity mail; bob chose nothing.
        #expect(mails.allSatisfy { $0.envelope["to"] as? [String] == ["ada@example.com"] })
        #expect(mails.allSatisfy { $0.envelope["tls"] as? Bool == true && $0.envelope["auth"] as? Bool == true })
        let velocity = try #require(
            mails.first { Self.part("text/plain", in: $0.message)?.contains("Trending") == true })
        // The subject has an em dash: RFC 2047 encoded words.
        #expect(Self.header("Subject", in: velocity.message)?.hasPrefix("=?UTF-8?B?") == true)
        #expect(mails.count == 2)
        let text = try #require(Self.part("text/plain", in: velocity.message))
        #expect(text.contains("[spiky] Trending in 3.0: "), "\(text)")
        #expect(text.contains("30 of 50 sessions (60 % > 1 %), 30 users in 30 min"), "\(text)")
        #expect(text.contains("/spiky/issues/"))
        let html = try #require(Self.part("text/html", in: velocity.message))
        #expect(html.contains("30 of 50 sessions"))
        #expect(!html.contains("<img"))
        #expect(Self.header("From", in: velocity.message) == "Faultline <faultline@example.com>")
        #expect(Self.header("Message-ID", in: velocity.message)?.hasPrefix("<faultline.alert.") == true)
        // A wrong password and an untrusted certificate are said plainly, with exit status 1.
        var wrong = smtp
        wrong["FAULTLINE_SMTP_PASSWORD_FILE"] = nil
        wrong["FAULTLINE_SMTP_PASSWORD"] = "guess"
        let refused = try await ServerProcess.run(
            ["alerts", "test-email", "--to", "ops@example.com"], environment: wrong)
        #expect(refused.status == 1)
        #expect(refused.err.contains("failed: authentication failed (535"), "\(refused.err)")
        var untrusted = smtp
        untrusted["FAULTLINE_SMTP_CA_FILE"] = nil
        let distrusted = try await ServerProcess.run(
            ["alerts", "test-email", "--to", "ops@example.com"], environment: untrusted)
        #expect(distrusted.status == 1)
        #expect(distrusted.err.contains("the TLS handshake failed"), "\(distrusted.err)")
    }

    @Test func aServerThatIsDownThenUpGetsEachMailOncePerAlert() async throws {
        let folder = ServerProcess.newFolder()
        let port = try Self.freePort()
        let project = try await Self.projectWithMembers("down", in: folder)
        var environment = Self.fast
        environment["FAULTLINE_SMTP_PORT"] = "\(port)"
        environment["FAULTLINE_SMTP_SECURITY"] = "none"
        let server = try await ServerProcess(folder: folder, environment: environment)
        defer { server.cleanUp() }
        // Three new issues while no SMTP server listens: their mails wait in the outbox and are retried.
        let reports = (0..<3).map {
            InsightsEndToEndTests.crash(300 + $0, site: "site\($0)", version: "1.0", user: "u\($0)")
        }
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)
        func alerts() async throws -> [[String: Any]] {
            let answer = try await http.send(
                .GET, server.baseURL + "/api/v1/alerts", headers: [("Authorization", "Bearer \(project.upload)")])
            return answer.json["alerts"] as? [[String: Any]] ?? []
        }
        #expect(
            try await eventually(timeout: .seconds(60)) {
                let found = try await alerts()
                return found.count == 3
                    && found.allSatisfy {
                        ($0["delivery_attempts"] as? Int ?? 0) >= 2 && $0["delivery"] as? String == "pending"
                    }
            })
        // The server comes up: each alert's mail arrives, once, or again only as the same Message-ID.
        let sink = try await Sink(port: port, out: folder + "-mail")
        defer { sink.stop() }
        #expect(try await eventually(timeout: .seconds(60)) { sink.mails().count >= 3 })
        #expect(
            try await eventually(timeout: .seconds(30)) {
                try await alerts().allSatisfy { $0["delivery"] as? String == "delivered" }
            })
        try await Task.sleep(for: .seconds(1))
        let mails = sink.mails()
        let ids = mails.compactMap { Self.header("Message-ID", in: $0.message) }
        let alertIDs = try await alerts().compactMap { $0["id"] as? Int }
        #expect(ids.count == mails.count)
        #expect(Set(ids).count == 3)
        for id in alertIDs { #expect(ids.contains { $0.hasPrefix("<faultline.alert.\(id).") }) }
        #expect(mails.allSatisfy { $0.envelope["to"] as? [String] == ["ada@example.com"] })
    }

    /// A rate as the digest writes it (two decimals), from the API's fraction.
    static func percent(_ rate: Double?) -> String {
        guard let rate else { return "no data" }
        return String(format: "%.2f %%", (rate * 100 * 100).rounded() / 100)
    }

    @Test func aWeeklyDigestArrivesWithTheAPIsNumbersAndItsUnsubscribeLinkWorks() async throws {
        let folder = ServerProcess.newFolder()
        let port = try Self.freePort()
        let sink = try await Sink(port: port, out: folder + "-mail")
        defer { sink.stop() }
        let project = try await Self.projectWithMembers("weekly", in: folder)
        var environment = Self.fast
        environment["FAULTLINE_SMTP_PORT"] = "\(port)"
        environment["FAULTLINE_SMTP_SECURITY"] = "none"
        environment["FAULTLINE_DIGEST_HOUR"] = "0"
        environment["FAULTLINE_DIGEST_INTERVAL_MS"] = "300"
        let server = try await ServerProcess(folder: folder, environment: environment)
        defer { server.cleanUp() }
        // 40 users of 2.0 (6 crash) and 20 of 2.1 (2 crash); four crash sites hit by 4, 2, 1 and 1 users.
        var sessions: [String] = []
        for u in 0..<40 {
            sessions.append(
                InsightsEndToEndTests.session(
                    "w\(u)", user: "w\(u)", release: "2.0 (1)", status: u < 6 ? "crashed" : "exited"))
        }
        for u in 0..<20 {
            sessions.append(
                InsightsEndToEndTests.session(
                    "v\(u)", user: "v\(u)", release: "2.1 (1)", status: u < 2 ? "crashed" : "exited"))
        }
        try await InsightsEndToEndTests().postSessions(server, key: project.ingest, sessions)
        let sites = ["checkout", "checkout", "checkout", "checkout", "login", "login", "search", "profile"]
        let reports = sites.enumerated().map { n, site in
            let user = n < 6 ? "w\(n)" : "v\(n - 6)"
            return InsightsEndToEndTests.crash(
                500 + n, site: site, version: n < 6 ? "2.0" : "2.1", user: user, session: user)
        }
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)
        func api(_ path: String) async throws -> [String: Any] {
            try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(project.upload)")])
                .json
        }
        #expect(
            try await eventually(timeout: .seconds(60)) {
                let top =
                    try await api("/api/v1/top-issues?window=7d&kind=crash&limit=3")["issues"] as? [[String: Any]] ?? []
                return top.count == 3 && top.first?["users"] as? Int == 4
            })
        // ada asks for the weekly digest now: it is made at the next round, from what the API shows.
        let chosen = try await ServerProcess.run(
            ["alerts", "mail", "weekly", "--person", "ada@example.com", "--digest", "weekly", "--data", folder])
        #expect(chosen.status == 0, "\(chosen.err)")
        #expect(
            try await eventually(timeout: .seconds(60)) {
                sink.mails().contains { Self.header("Subject", in: $0.message)?.hasPrefix("Weekly digest") == true }
            })
        let health = try await api("/api/v1/health?days=7")
        let top = try await api("/api/v1/top-issues?window=7d&kind=crash&limit=3")["issues"] as? [[String: Any]] ?? []
        let digest = try #require(
            sink.mails().first { Self.header("Subject", in: $0.message)?.hasPrefix("Weekly digest") == true })
        #expect(digest.envelope["to"] as? [String] == ["ada@example.com"])
        let text = try #require(Self.part("text/plain", in: digest.message))
        let total = try #require(health["total"] as? [String: Any])
        let users = total["users"] as? Int ?? -1, crashedUsers = total["crashed_users"] as? Int ?? -1
        let sessionsCount = total["sessions"] as? Int ?? -1, crashedSessions = total["crashed_sessions"] as? Int ?? -1
        #expect((sessionsCount, crashedSessions) == (60, 8))
        #expect(
            text.contains(
                "Crash-free users: \(Self.percent(total["crash_free_users"] as? Double)) (\(crashedUsers) crashed of \(users))"
            ),
            "\(text)")
        #expect(
            text.contains(
                "Crash-free sessions: \(Self.percent(total["crash_free_sessions"] as? Double)) (\(crashedSessions) crashed of \(sessionsCount)) — below the target 99.90 %"
            ),
            "\(text)")
        // The top 3 crashes, in the API's order, with their users and a link each.
        var position = text.startIndex
        for row in top {
            let issue = try #require(row["issue"] as? [String: Any])
            let line =
                "#\(issue["id"] as? Int ?? -1) \(issue["title"] as? String ?? "?") — \(row["users"] as? Int ?? -1) users"
            let found = try #require(text.range(of: line, range: position..<text.endIndex), "\(line) in \(text)")
            position = found.upperBound
            #expect(text.contains("/weekly/issues/\(issue["id"] as? Int ?? -1).html"))
        }
        #expect(text.contains("New issues:\n  #"))
        #expect(text.contains("New releases:\n  2."))
        let html = try #require(Self.part("text/html", in: digest.message))
        #expect(!html.contains("<img") && html.contains("Top crashes by users affected"))
        // The unsubscribe link works without a login: GET changes nothing, POST stops ada's mail from the project.
        let unsubscribe = try #require(Self.header("List-Unsubscribe", in: digest.message)).dropFirst().dropLast()
        #expect(Self.header("List-Unsubscribe-Post", in: digest.message) == "List-Unsubscribe=One-Click")
        let shown = try await http.send(.GET, String(unsubscribe))
        #expect(shown.status == 200)
        #expect(String(decoding: shown.body, as: UTF8.self).contains("Stop mail from weekly"))
        // The last hex digit changed (to one it is not), so the HMAC no longer matches.
        var tampered = String(unsubscribe)
        let last = tampered.removeLast()
        tampered += last == "0" ? "1" : "0"
        #expect(try await http.send(.POST, tampered).status == 404)
        #expect(try await http.send(.POST, String(unsubscribe)).status == 200)
        let after = try await ServerProcess.run([
            "alerts", "mail", "weekly", "--person", "ada@example.com", "--data", folder,
        ])
        #expect(after.out.contains("ada@example.com weekly: kinds none; digest none"), "\(after.out)")
        // The trail names ada (the link's person) as the one who stopped her mail, from the address that posted.
        let trail = try await ServerProcess.run(["projects", "audit", "weekly", "--kind", "member", "--data", folder])
        #expect(
            trail.out.split(separator: "\n").contains {
                $0.contains("member.mail") && $0.contains("127.0.0.1") && $0.contains("digest none")
                    && !$0.contains("CLI")
            }, "\(trail.out)")
    }

    /// The account page's alert mail form (issue #37, "each person has alert preferences"): bob turns new-issue mail
    /// off there and gets none of a new issue's mail from the real SMTP server, while ada, who kept it, gets it. The
    /// form changes only the signed-in person's own choice, needs the session's CSRF token, and is audited as them.
    @Test func aKindTurnedOffOnTheAccountPageIsNotMailedAndOneKeptIs() async throws {
        let folder = ServerProcess.newFolder()
        let port = try Self.freePort()
        let sink = try await Sink(port: port, out: folder + "-mail")
        defer { sink.stop() }
        let project = try await ServerProcess.createProject("prefs", in: folder)
        _ = try await ServerProcess.createProject("other", in: folder)
        var links: [String: String] = [:]
        for person in ["ada@example.com", "bob@example.com"] {
            links[person] = try await PeopleEndToEndTests.invite(folder, person, role: "member", project: "prefs")
            let chosen = try await ServerProcess.run(
                ["alerts", "mail", "prefs", "--person", person, "--kinds", "new_issue,velocity", "--data", folder])
            #expect(chosen.status == 0, "\(chosen.err)")
        }
        var environment = Self.fast
        environment["FAULTLINE_SMTP_PORT"] = "\(port)"
        environment["FAULTLINE_SMTP_SECURITY"] = "none"
        let server = try await ServerProcess(folder: folder, environment: environment)
        defer { server.cleanUp() }
        let people = PeopleEndToEndTests()
        let bob = try await people.accept(server, try #require(links["bob@example.com"]), name: "Bob")
        _ = try await people.accept(server, try #require(links["ada@example.com"]), name: "Ada")

        // The page shows bob's choice for his one project, as stored.
        let page = String(
            decoding: try await people.browser.send(
                .GET, server.baseURL + "/account", headers: [("Cookie", bob), ("Accept", "text/html")]
            ).body, as: UTF8.self)
        #expect(page.contains("<h2 id=\"alerts-heading\">Alert mail</h2>"))
        #expect(page.contains("id=\"mail-prefs-new_issue\" name=\"kind\" value=\"new_issue\" checked"))
        #expect(page.contains("id=\"mail-prefs-regression\" name=\"kind\" value=\"regression\">"))
        #expect(page.contains("id=\"mail-prefs-digest-none\" name=\"digest\" value=\"none\" checked"))
        #expect(!page.contains("mail-other-"), "a project bob is not in has no form")
        let csrf = try #require(DashboardActionsEndToEndTests.csrf(page))
        func post(_ body: String, cookie: String = bob) async throws -> (status: Int, page: String) {
            let answer = try await people.browser.send(
                .POST, server.baseURL + "/account/alerts", headers: PeopleEndToEndTests.form + [("Cookie", cookie)],
                body: Array(body.utf8))
            return (answer.status, String(decoding: answer.body, as: UTF8.self))
        }
        let stored =
            "SELECT p.login, a.kinds, a.digest FROM alert_mail_preferences a JOIN people p ON p.id = a.person_id"
            + " ORDER BY p.login"
        let before = try PeopleEndToEndTests.sqlite(folder, stored)
        // Refused, nothing stored: no CSRF token, another project, an unknown kind.
        #expect(try await post("project=prefs&kind=velocity&digest=weekly").status == 403)
        #expect(try await post("csrf=\(csrf)&project=other&kind=velocity&digest=weekly").status == 404)
        #expect(try await post("csrf=\(csrf)&project=prefs&kind=bogus&digest=weekly").status == 400)
        #expect(try await post("csrf=\(csrf)&project=prefs&kind=velocity&digest=hourly").status == 400)
        #expect(try PeopleEndToEndTests.sqlite(folder, stored) == before)
        // Bob keeps velocity, turns new issues off, and takes the weekly digest.
        let saved = try await post("csrf=\(csrf)&project=prefs&kind=velocity&digest=weekly")
        #expect(saved.status == 200)
        #expect(saved.page.contains("Alert mail for prefs saved."))
        #expect(saved.page.contains("id=\"mail-prefs-new_issue\" name=\"kind\" value=\"new_issue\">"))
        #expect(
            try PeopleEndToEndTests.sqlite(folder, stored)
                == "ada@example.com|new_issue,velocity|none\nbob@example.com|velocity|weekly\n")
        // Recorded as bob, from the browser's address; the same choice again records nothing.
        let audit =
            "SELECT actor_kind, actor_name, address, subject, before_value, after_value FROM audit_log"
            + " WHERE kind = 'member.mail'"
            + " AND actor_kind = 'person'"
        #expect(
            try PeopleEndToEndTests.sqlite(folder, audit)
                == "person|Bob|127.0.0.1|bob@example.com|kinds new_issue,velocity; digest none|kinds velocity; digest weekly\n"
        )
        #expect(try await post("csrf=\(csrf)&project=prefs&kind=velocity&digest=weekly").status == 200)
        #expect(try PeopleEndToEndTests.sqlite(folder, audit).split(separator: "\n").count == 1)

        // A new issue: its alert is mailed to ada, who kept new-issue mail, and not to bob.
        #expect(
            try await http.postReports(
                server.baseURL, key: project.ingest,
                InsightsEndToEndTests.crash(700, site: "prefsSite", version: "1.0", user: "u1")
            ).status == 202)
        #expect(
            try await eventually(timeout: .seconds(60)) {
                let alerts =
                    try await http.send(
                        .GET, server.baseURL + "/api/v1/alerts",
                        headers: [("Authorization", "Bearer \(project.upload)")]
                    ).json["alerts"] as? [[String: Any]] ?? []
                return !alerts.isEmpty && alerts.allSatisfy { $0["delivery"] as? String == "delivered" }
            })
        let mails = sink.mails()
        #expect(mails.count == 1, "\(mails.map(\.envelope))")
        #expect(mails.first?.envelope["to"] as? [String] == ["ada@example.com"])
        #expect(Self.header("Message-ID", in: mails.first?.message ?? "")?.hasPrefix("<faultline.alert.") == true)
    }
}
