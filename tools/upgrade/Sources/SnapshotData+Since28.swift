import FaultlineCore
import FaultlineHTTP

/// The tables of `v28-merged-issues` / `pg13-merged-issues` on, as a team that has used them for a while has them:
/// an issue merged into another (its fingerprint filing into the survivor, its number answering with it), people with
/// roles (an owner, a member with a second factor waiting, an invite not yet taken), personal tokens, a confirmed TOTP
/// factor with a spent step and nine recovery codes left, event quotas and what they counted, two fingerprint-rules
/// versions with a regroup half done, the audit trail of all that, alert mail preferences, a digest sent and one
/// retrying, an alert mailed. Secrets are stored as the server stores them: passwords as scrypt, tokens, invites and
/// recovery codes as SHA-256, never the secret itself.
extension SnapshotData {
    /// The SQLite migration (a row's `since`) and the PostgreSQL one that brought the same schema change: a row that
    /// needs one needs the other on PostgreSQL.
    static let postgresTwins: [String: String] = [
        "v27-one-release": "pg12-one-release", "v28-merged-issues": "pg13-merged-issues",
        "v29-retention-samples-trackers": "pg14-retention-samples-trackers",
        "v30-people": "pg15-people", "v31-event-quotas": "pg16-event-quotas",
        "v32-fingerprint-rules": "pg17-fingerprint-rules", "v33-personal-tokens-totp": "pg18-personal-tokens-totp",
        "v34-audit": "pg19-audit", "v35-alert-mail": "pg20-alert-mail",
        "v36-quota-counts-by-fingerprint": "pg21-quota-counts-by-fingerprint",
    ]

    static let sha256 = SHA256SecretHasher()

    /// A password as `PasswordHash` stores it (scrypt at the standard cost), with a fixed salt: the same data gives the
    /// same snapshot.
    static func passwordHash(_ password: String, salt: UInt8) -> String {
        let salt = [UInt8](repeating: salt, count: PasswordHash.saltBytes)
        guard
            let key = try? ScryptPasswordDeriver().derive(
                password: password, salt: salt, parameters: .standard, length: PasswordHash.keyBytes)
        else { preconditionFailure("scrypt failed") }
        return PasswordHash(parameters: .standard, salt: salt, key: key).encoded
    }

    /// A personal token's stored hash (`flp_` and 64 hex digits, as `faultline tokens create` makes them).
    static func tokenHash(_ n: Int) -> String {
        sha256.hash("flp_" + Hex.encode([UInt8](repeating: UInt8(truncatingIfNeeded: 0x30 + n), count: 32))).hex
    }

    /// A recovery code as the account page shows it (`abcde-fghij`), from fixed bytes, and its stored hash.
    static func recoveryCodeHash(_ n: Int) -> String {
        let text = Base32.encode((0..<8).map { UInt8(truncatingIfNeeded: n &* 37 &+ $0 &* 11) }).lowercased().prefix(10)
        return sha256.hash(String(text)).hex
    }

    /// What fingerprint rules match on for a report filed after `v32-fingerprint-rules` (`GroupingFacts.encoded`).
    static func groupingFacts(report: Int64) -> Value {
        switch report {
        case 1, 2:
            .text(
                GroupingFacts(
                    kind: .crash, source: .stack, components: ["MyApp.CheckoutView.pay()"], errorType: "SIGSEGV",
                    errorValue: "at 0x10", functions: ["MyApp.CheckoutView.pay()", "MyApp.CheckoutView.body"],
                    modules: ["MyApp", "libcrypto.so.3"], release: "2.4.0", platform: "ios",
                    tags: [("screen", "checkout"), ("os", "iOS 18.3"), ("environment", "production")]
                ).encoded)
        case 3:
            .text(
                GroupingFacts(
                    kind: .nonfatal, source: .error, components: ["DecodingError", "keyNotFound"],
                    errorType: "DecodingError",
                    errorValue: "keyNotFound(\"total\")", errorCode: "-1001", functions: ["MyApp.Decoder.decode(_:)"],
                    modules: ["MyApp"], release: "2.4.0", platform: "ios", tags: [("os", "iOS 18.3")]
                ).encoded)
        case 5:
            .text(
                GroupingFacts(
                    kind: .crash, source: .client, components: ["worker", "KeyError"], client: true,
                    errorType: "KeyError",
                    errorValue: "'job_id'", functions: ["worker.run"], release: "1.0.0", platform: "python",
                    tags: [("os", "Linux")]
                ).encoded)
        default: .null  // report 4 waits for symbolication: filed, it gets its facts
        }
    }

    static let ada = "person:1:Ada Lovelace"
    /// An alert mail as the outbox holds it (RFC 5322, CRLF line ends), shortened.
    static func mail(to: String, subject: String, id: String, text: String) -> Value {
        let lines = [
            "From: Faultline <faultline@crash.example.com>", "To: \(to)", "Subject: \(subject)",
            "Date: Mon, 02 Mar 2026 10:00:00 +0000", "Message-ID: <\(id)@crash.example.com>", "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit", "", text, "",
        ]
        return .hex(Hex.encode(Array(lines.joined(separator: "\r\n").utf8)))
    }

    // swift-format-ignore
    static var rowsSince28: [SnapshotRow] {
        var rows: [SnapshotRow] = []
        // Issue 4 (the same crash under another fingerprint) was merged into issue 1 through the API by Ada's token:
        // its fingerprint files into issue 1, its number answers with issue 1.
        rows.append(row("issue_aliases", [
            ("project_id", .int(1)), ("fingerprint", .text("v2:5d20c3")), ("issue_id", .int(1)),
            ("created_at", .int(t0 + 4 * hour)),
        ]))
        rows.append(row("issues_replaced", [
            ("issue_id", .int(4)), ("project_id", .int(1)), ("survivor_id", .int(1)), ("fingerprint", .text("v2:5d20c3")),
            ("replaced_at", .int(t0 + 4 * hour)), ("replaced_by", .text(ada)),
        ]))
        // People: the owner, a member of one project and admin of the other, an invited viewer who has not set a
        // password yet.
        for (id, login, name, owner, hash, created) in [
            (1, "ada@example.org", "Ada Lovelace", true, passwordHash("analytical engine 1843", salt: 0xA1), t0 - 20 * 24 * hour),
            (2, "grace@example.org", "Grace Hopper", false, passwordHash("first actual bug 1947", salt: 0xB2), t0 - 12 * 24 * hour),
            (3, "linus@example.org", "", false, nil, t0 - hour),
        ] as [(Int64, String, String, Bool, String?, Int64)] {
            rows.append(row("people", [
                ("id", .int(id)), ("login", .text(login)), ("name", .text(name)), ("owner", .bool(owner)),
                ("password_hash", hash.map(Value.text) ?? .null), ("created_at", .int(created)),
            ]))
        }
        for (person, project, role) in [(1, 1, "admin"), (2, 1, "member"), (2, 2, "admin"), (3, 1, "viewer")] as [(Int64, Int64, String)] {
            rows.append(row("memberships", [("person_id", .int(person)), ("project_id", .int(project)), ("role", .text(role))]))
        }
        rows.append(row("invites", [
            ("token_hash", .text(sha256.hash(String(repeating: "7f", count: 32)).hex)), ("person_id", .int(3)),
            ("created_at", .int(t0 - hour)), ("expires_at", .int(t0 - hour + 7 * 24 * hour)),
        ]))
        // Ada's dashboard session (the admin token's is session 1).
        rows.append(row("admin_sessions", since: "v30-people", [
            ("id", .int(2)), ("token_hash", .text(String(repeating: "6f", count: 32))),
            ("secret", .text("c2VjcmV0LW9mLXRoZS1zZXNzaW9uLTAwMDAwMDAy")), ("created_at", .int(t0 + hour)),
            ("expires_at", .int(t0 + 13 * hour)), ("person_id", .int(1)),
        ]))
        // Quotas: what they counted (accepted and dropped per day and release; a dropped crash by its client
        // fingerprint), and the alert the worker's per-minute quota raised.
        for (project, day, release, fingerprint, accepted, dropped) in [
            (1, day0 - 1, "2.3.1", "", 1, 0), (1, day0, "2.4.0", "", 3, 0), (1, day0, "2.4.0", "v2:8c1f0a", 0, 41),
            (2, day0, "1.0.0", "", 1, 250), (2, day0, "", "", 0, 3),
        ] as [(Int64, Int64, String, String, Int64, Int64)] {
            rows.append(row("quota_counts", [
                ("project_id", .int(project)), ("day", .int(day)), ("release", .text(release)),
                ("fingerprint", .text(fingerprint)), ("accepted", .int(accepted)), ("dropped", .int(dropped)),
            ]))
        }
        let minute = (t0 + 3 * hour) / 60_000 * 60
        rows.append(row("alerts", since: "v31-event-quotas", [
            ("id", .int(5)), ("project_id", .int(2)), ("kind", .text("quota_reached")),
            ("dedupe_key", .text("quota_reached:minute:\(minute)")), ("issue_id", .null), ("release", .null),
            ("title", .text("The project's quota of 60 events per minute was reached")),
            ("reason", .text(#"{"quota":60,"retry_after_seconds":17}"#)), ("created_at", .int(t0 + 3 * hour)),
            ("dispatched", .bool(true)),
        ]))
        // Fingerprint rules: the app's version 1, then version 2, whose regroup of the project's stored reports is
        // half done; the worker's one version, set with the CLI, its regroup finished.
        for (project, version, rules, created, by) in [
            (2, 1, "error.type:KeyError -> worker-key-error {{ error.value }}\n", t0 + 7 * hour, "cli"),
            (1, 1, "error.type:NetworkError error.code:1001 -> network-timeout\n", t0 - 2 * 24 * hour, ada),
            (1, 2, "# one issue per network failure, one for the checkout\nerror.type:NetworkError error.code:1001 -> network-timeout\nfunction:\"MyApp.CheckoutView.*\" -> checkout {{ error.type }}\n", t0 + 5 * hour, "the API (admin token)"),
        ] as [(Int64, Int64, String, Int64, String)] {
            rows.append(row("grouping_rules", [
                ("project_id", .int(project)), ("version", .int(version)), ("rules", .text(rules)),
                ("created_at", .int(created)), ("created_by", .text(by)),
            ]))
        }
        for (project, version, cursor, last, total, requeued, started, finished) in [
            (1, 2, 2, 4, 4, 2, t0 + 5 * hour, nil), (2, 1, 5, 5, 1, 1, t0 + 7 * hour, t0 + 7 * hour + 1_500),
        ] as [(Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64?)] {
            rows.append(row("regroups", [
                ("project_id", .int(project)), ("rules_version", .int(version)), ("cursor", .int(cursor)),
                ("last_id", .int(last)), ("total", .int(total)), ("requeued", .int(requeued)),
                ("started_at", .int(started)), ("finished_at", finished.map(Value.int) ?? .null),
            ]))
        }
        // Personal tokens (stored hashed) and second factors: Ada's confirmed, one code spent and one recovery code
        // used; Grace's enrolment waiting for its first code.
        for (id, person, name, scopes, created, used, expires) in [
            (1, 1, "ci-upload", [TokenScope.uploadSymbols], t0 - 3 * 24 * hour, t0 + 2 * hour, nil),
            (2, 2, "grafana", [.read, .writeIssues], t0 - 24 * hour, nil, t0 + 89 * 24 * hour),
        ] as [(Int64, Int64, String, [TokenScope], Int64, Int64?, Int64?)] {
            rows.append(row("personal_tokens", [
                ("id", .int(id)), ("person_id", .int(person)), ("name", .text(name)),
                ("token_hash", .text(tokenHash(Int(id)))), ("scopes", .text(TokenScope.encode(Set(scopes)))),
                ("created_at", .int(created)), ("last_used_at", used.map(Value.int) ?? .null),
                ("expires_at", expires.map(Value.int) ?? .null),
            ]))
        }
        for (person, fill, confirmed, step) in [(1, 0x5A, t0 - 5 * 24 * hour, t0 / 30_000 + 120), (2, 0x3C, nil, 0)] as [(Int64, UInt8, Int64?, Int64)] {
            rows.append(row("second_factors", [
                ("person_id", .int(person)),
                ("secret", .text(Base32.encode((0..<TOTP.secretBytes).map { fill &+ UInt8($0) }))),
                ("confirmed_at", confirmed.map(Value.int) ?? .null), ("last_step", .int(step)),
            ]))
        }
        for n in 2...10 {
            rows.append(row("recovery_codes", [("person_id", .int(1)), ("code_hash", .text(recoveryCodeHash(n)))]))
        }
        // The audit trail: every actor kind, project-wide and server-wide entries.
        let audit: [(Int64, Int64?, Int64, String, Int64?, String?, String?, String?, String, String?, String?, String?)] = [
            (1, 1, t0 - 30 * 24 * hour, "cli", nil, nil, nil, nil, "project.created", "ios-app", nil, nil),
            (2, nil, t0 - 20 * 24 * hour, "cli", nil, nil, nil, nil, "person.owner", "ada@example.org", "not owner", "owner"),
            (3, 1, t0 - 12 * 24 * hour, "person", 1, "Ada Lovelace", nil, "203.0.113.7", "member.invited", "grace@example.org", nil, "member"),
            (4, nil, t0 - 3 * 24 * hour, "person", 1, "Ada Lovelace", nil, "203.0.113.7", "token.created", #"token 1 "ci-upload" of ada@example.org"#, nil, "upload:symbols"),
            (5, 1, t0 - 24 * hour, "person", 1, "Ada Lovelace", nil, "203.0.113.7", "project.quotas", "ios-app", "none", "600/minute, 10000/hour"),
            (6, 1, t0 - hour, "person", 1, "Ada Lovelace", nil, "203.0.113.7", "member.invited", "linus@example.org", nil, "viewer"),
            (7, 1, t0 + 4 * hour, "personal-token", 1, "Ada Lovelace", "1", "2001:db8::17", "issue.merge", "issue 1", nil, "merged issue 4"),
            (8, 1, t0 + 5 * hour, "admin-token", nil, nil, nil, "127.0.0.1", "project.grouping_rules", "fingerprint rules", "version 1", "version 2: 2 rules"),
            (9, 1, t0 + 5 * hour, "person", 2, "Grace Hopper", nil, "198.51.100.23", "issue.status", "issue 2", nil, "closed"),
            (10, 2, t0 + 6 * hour, "project-token", nil, nil, nil, "10.0.0.5", "issue.status", "issue 3", nil, "muted"),
            (11, 2, t0 + 7 * hour, "cli", nil, nil, nil, nil, "project.grouping_rules", "fingerprint rules", nil, "version 1: 1 rule"),
        ]
        for (id, project, at, kind, person, name, token, address, change, subject, before, after) in audit {
            rows.append(row("audit_log", [
                ("id", .int(id)), ("project_id", project.map(Value.int) ?? .null), ("at", .int(at)),
                ("actor_kind", .text(kind)), ("actor_person_id", person.map(Value.int) ?? .null),
                ("actor_name", name.map(Value.text) ?? .null), ("actor_token", token.map(Value.text) ?? .null),
                ("address", address.map(Value.text) ?? .null), ("kind", .text(change)),
                ("subject", subject.map(Value.text) ?? .null), ("before_value", before.map(Value.text) ?? .null),
                ("after_value", after.map(Value.text) ?? .null),
            ]))
        }
        // Alert mail: who wants what, the outbox's mail of the first alert to Ada, a weekly digest sent and a daily
        // one retrying, the key that signs unsubscribe links.
        for (person, project, kinds, digest) in [
            (1, 1, "new_issue,regression,quota_reached", "weekly"), (2, 1, "velocity", "none"), (2, 2, "", "daily"),
        ] as [(Int64, Int64, String, String)] {
            rows.append(row("alert_mail_preferences", [
                ("person_id", .int(person)), ("project_id", .int(project)), ("kinds", .text(kinds)),
                ("digest", .text(digest)),
            ]))
        }
        rows.append(row("webhook_deliveries", since: "v35-alert-mail", [
            ("id", .int(4)), ("alert_id", .int(1)), ("url", .text("mailto:ada@example.org")),
            ("body", mail(to: "ada@example.org", subject: "[ios-app] New issue: EXC_BAD_ACCESS in CheckoutView.pay()",
                          id: "alert-1.ada", text: "A new issue in ios-app: EXC_BAD_ACCESS in CheckoutView.pay()")),
            ("state", .text("delivered")), ("attempts", .int(1)), ("next_attempt_at", .int(t0 + hour)),
            ("last_status", .int(250)), ("last_error", .null), ("delivered_at", .int(t0 + hour + 2_000)),
            ("priority", .int(0)),
        ]))
        let midnight = day0 * 86_400_000
        for (id, project, person, cadence, start, to, state, attempts, next, error) in [
            (1, 1, 1, "weekly", day0 - 7, "ada@example.org", "delivered", 1, midnight + 60_000, nil),
            (2, 2, 2, "daily", day0 - 1, "grace@example.org", "pending", 2, t0 + 600_000, "connection_failed"),
        ] as [(Int64, Int64, Int64, String, Int64, String, String, Int64, Int64, String?)] {
            rows.append(row("mail_digests", [
                ("id", .int(id)), ("project_id", .int(project)), ("person_id", .int(person)),
                ("cadence", .text(cadence)), ("period_start", .int(start)), ("recipient", .text(to)),
                ("body", mail(to: to, subject: "[\(project == 1 ? "ios-app" : "backend-worker")] Your \(cadence) digest",
                              id: "digest-\(id)", text: "Crash-free users 99.1 % (target 99 %); 3 new issues.")),
                ("state", .text(state)), ("attempts", .int(attempts)), ("next_attempt_at", .int(next)),
                ("last_error", error.map(Value.text) ?? .null), ("created_at", .int(midnight + 60_000)),
            ]))
        }
        rows.append(row("mail_secrets", [("id", .int(1)), ("secret", .hex(String(repeating: "9e", count: 32)))]))
        return rows
    }
}
