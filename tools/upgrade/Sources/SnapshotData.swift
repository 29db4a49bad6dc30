import FaultlineCore

/// A value of a snapshot row, written as each engine reads it.
enum Value {
    case null
    case int(Int64)
    case real(Double)
    case text(String)
    case hex(String)
    case bool(Bool)
    /// A user in a per-user rollup: the id itself before the rollups were keyed (`v24-hashed-rollup-users`,
    /// `pg9-hashed-rollup-users`), its `RollupUser.key` under the project's identity key after.
    case user(project: Int, id: String)
}

/// One row: the table and its values by column. A column the table lacks at the snapshot's version is left out, and
/// a table that does not exist yet is skipped: one description fills every version.
struct SnapshotRow {
    var table: String
    var values: [(String, Value)]
    /// The SQLite migration the row needs (a CHECK that allowed its value came with it, or it stands for what that
    /// version brought); on PostgreSQL its twin (`SnapshotData.postgresTwins`), where it has one: PostgreSQL had the
    /// older ones from its first version.
    var since: String?
}

/// A crash reporter's data as it looks after a few days: two projects (an iOS app with releases spelt three ways, as
/// installs before `v27-one-release` stored them: `SnapshotFill` carries them through it; a Python worker sending
/// Sentry events), their keys, reports with payloads and symbolication results, issues with
/// every rollup, sessions and release health, debug files and source bundles, alerts with webhook deliveries, a
/// minidump, a sentry-cli upload, a dashboard login, search entries; from `v28-merged-issues` / `pg13-merged-issues` on
/// a merged issue, people and their tokens and second factors, quotas, fingerprint rules, the audit trail and alert mail
/// (`rowsSince28`).
enum SnapshotData {
    /// 2026-03-02 09:00 UTC, in milliseconds.
    static let t0: Int64 = 1_772_442_000_000
    static let day0: Int64 = t0 / 86_400_000
    static let hour: Int64 = 3_600_000

    static let identityKeys: [Int: String] = [
        1: "5f2a9c0e7d3b41a68e0c2f4b7a9d1e3c5b7f9a0c2e4d6b8f1a3c5e7092b4d6f8",
        2: "0b1d3f5a7c9e2b4d6f8a0c2e4b6d8f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b2d",
    ]

    static let nativePayload =
        "1f8b08000000000002036d904d6bc3300c86ff4af1b929723e9bdcbaae941d76ca18636314c796d7b0e603db092da5ff7d72d2c10e3b4aefab47af7465ba338d70ac60ad70f588c1c8d99219ec3be32c2b3eae0c476cdda15664893597a1c82b0415c5592673c131a95299a935e61afce477dd7aa734c21ea9747583d689a6a75e08611a401440f80279c1e30292f769d70985456f58c52ba00eb6636dbab6a1bdd4ed4da706e9eaae2569b068587165531c5f049cdd96cca2b5649853dac0074163bac9ea2ebd87974ffb72b77f25851259f1e57bbbb7ede161f378d86cb7bbb25c08b78033070f74478342cd0f986e41223b33e09269238830294229433022c13949144850c8c32826c2ff226820fce7ed9352d055a73ba72522f99e2f9bbea780d5509fd47c8be05528231563a253c8f83acc231157894c55866b9dc3afeea7e627fe5906f765b71fdf175152e6010000"
    static let sentryPayload =
        "789c1d8ecb0e82400c45ffa51b364a4079ef5df909c6980e74223a329332a084ccbf5b58ded3739bbb02cd34f847df41033556aa6c8b2ea74c67c9393d61aa92b6ee2a2a7581b9820338835e5bfe88ed16ffb4833026433892a0344ee2448891a746b2468f4632fd5a72be17bb59614633d108cd6d05bfb8ad76a5e5c26c59ccfd28287a5925a32208f770806924deaafbcaafe537f1b18410fe2d2e3c7e"

    static let appBuild = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4"
    static let libBuild = "c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6"

    static func row(_ table: String, since: String? = nil, _ values: [(String, Value)]) -> SnapshotRow {
        SnapshotRow(table: table, values: values, since: since)
    }

    static func event(_ n: Int) -> String { String(repeating: "0", count: 31 - String(n).count) + "e" + String(n) }

    /// A stored symbolication result (the JSON `SymbolicatedReport` encodes; results of these versions were stored
    /// uncompressed or are read either way).
    static let result =
        #"{"threads":[[{"build_id":"\#(appBuild)","frames":[{"function":"MyApp.CheckoutView.pay()","file":"CheckoutView.swift","line":88}],"offset":4660,"status":"dwarf"},{"build_id":"\#(libBuild)","frames":[],"offset":3840,"status":"missing_debug_file"}]],"modules":[{"build_id":"\#(appBuild)","module":"MyApp"},{"build_id":"\#(libBuild)","module":"libcrypto.so.3"}]}"#

    // swift-format-ignore
    static var rows: [SnapshotRow] {
        var rows: [SnapshotRow] = []
        // Projects and their keys.
        rows.append(row("projects", [
            ("id", .int(1)), ("slug", .text("ios-app")), ("created_at", .int(t0 - 30 * 24 * hour)),
            ("rate_limit_per_second", .real(50)), ("scrubbing", .bool(true)), ("keep_ip_addresses", .bool(false)),
            ("safe_fields", .text(#"["order_id"]"#)), ("sensitive_fields", .text(#"["card_number"]"#)),
            ("in_app_include", .text(#"["MyApp*"]"#)), ("in_app_exclude", .text("[]")),
            ("mask_emails_and_phones", .bool(true)), ("identity_key", .hex(identityKeys[1]!)),
            ("minidump_retention", .text("until_processed")), ("crash_free_users_target", .real(99.0)),
            ("crash_free_sessions_target", .real(99.8)), ("tracker_kind", .text("github")),
            ("tracker_url", .text("https://github.com/example/ios-app/issues")), ("quota_per_minute", .int(600)),
            ("quota_per_hour", .int(10_000)), ("quota_per_month", .null),
        ]))
        rows.append(row("projects", [
            ("id", .int(2)), ("slug", .text("backend-worker")), ("created_at", .int(t0 - 10 * 24 * hour)),
            ("rate_limit_per_second", .real(2.5)), ("scrubbing", .bool(false)), ("keep_ip_addresses", .bool(true)),
            ("mask_emails_and_phones", .bool(false)), ("identity_key", .hex(identityKeys[2]!)),
            ("minidump_retention", .text("retention_period")), ("tracker_kind", .text("gitlab")),
            ("tracker_url", .text("https://gitlab.example.com/backend/worker/-/issues")), ("quota_per_minute", .int(60)),
            ("quota_per_hour", .null), ("quota_per_month", .int(1_000_000)),
        ]))
        for (hash, kind, project) in [
            (String(repeating: "1a", count: 32), "ingest", Value.int(1)),
            (String(repeating: "2b", count: 32), "upload", Value.int(1)),
            (String(repeating: "3c", count: 32), "ingest", Value.int(2)),
            (String(repeating: "4d", count: 32), "admin", Value.null),
        ] {
            rows.append(row("credentials", [
                ("hash", .text(hash)), ("kind", .text(kind)), ("project_id", project), ("created_at", .int(t0 - hour)),
            ]))
        }
        // Payloads: two native batches (gzip) and a Sentry event (zlib).
        for (id, project, bytes, size, format, since) in [
            (1, 1, nativePayload, 486, "native-v1", nil), (2, 1, nativePayload, 486, "native-v1", nil),
            (3, 2, sentryPayload, 190, "sentry-event", "v6-sentry"),
        ] as [(Int64, Int64, String, Int64, String, String?)] {
            rows.append(row("payloads", since: since, [
                ("id", .int(id)), ("project_id", .int(project)), ("received_at", .int(t0 + id * hour)),
                ("encoding", .text(format == "sentry-event" ? "deflate" : "gzip")), ("inflated_size", .int(size)),
                ("bytes", .hex(bytes)), ("format", .text(format)),
            ]))
        }
        // Issues: a crash in the checkout, a non-fatal decoding error, the worker's KeyError.
        let issues: [(Int64, Int64, String, String, String, String, String, Int64, Int64, String, String)] = [
            (1, 1, "v2:8c1f0a", "crash", "CheckoutView.pay()", "EXC_BAD_ACCESS in CheckoutView.pay()", "open", 2, 2, "2.4.0", "2.4.0 (240)"),
            (2, 1, "v2:31d9e4", "nonfatal", "Decoder.decode(_:)", "DecodingError.keyNotFound", "closed", 1, 1, "com.example.app@2.4.0+240", "com.example.app@2.4.0+240"),
            (3, 2, "v2:77aa02", "crash", "worker.run", "KeyError: 'job_id'", "muted", 1, 1, "1.0.0", "1.0.0"),
        ]
        for (id, project, fingerprint, kind, culprit, title, status, events, users, first, last) in issues {
            rows.append(row("issues", [
                ("id", .int(id)), ("project_id", .int(project)), ("fingerprint", .text(fingerprint)),
                ("kind", .text(kind)), ("grouping", .text(#"{"frames":["\#(culprit)"],"version":2}"#)),
                ("title", .text(title)), ("culprit", .text(culprit)), ("status", .text(status)),
                ("regressed", .bool(id == 1)), ("status_changed_at", id == 1 ? .null : .int(t0 + 5 * hour)),
                ("status_changed_by", id == 1 ? .null : .text("the dashboard (session 1)")),
                ("note", id == 2 ? .text("Fixed by the 2.4.1 decoder change") : .null),
                ("first_seen", .int(t0 + id * hour)), ("last_seen", .int(t0 + (id + 2) * hour)),
                ("first_release", .text(first)), ("last_release", .text(last)), ("events", .int(events)),
                ("users", .int(users)), ("repeat_users", .int(0)), ("early_events", .int(id == 1 ? 1 : 0)),
                ("timed_events", .int(events)), ("title_rank", .int(2)), ("created_at", .int(t0 + id * hour)),
                ("updated_at", .int(t0 + (id + 2) * hour)),
                ("tracker_url", id == 1 ? .text("https://github.com/example/ios-app/issues/412")
                    : id == 3 ? .text("https://gitlab.example.com/backend/worker/-/issues/7") : .null),
            ]))
        }
        // Reports: (id, project, payload, kind, release, user, issue, symbolication, error type).
        let reports: [(Int64, Int64, Int64, String, String?, String?, Int64?, String, String)] = [
            (1, 1, 1, "crash", "2.4.0", "user-1", 1, "complete", "SIGSEGV"),
            (2, 1, 1, "crash", "2.4.0 (240)", "user-2", 1, "partial", "SIGSEGV"),
            (3, 1, 2, "nonfatal", "com.example.app@2.4.0+240", "user-1", 2, "not_needed", "DecodingError"),
            (4, 1, 2, "crash", "2.3.1", nil, nil, "pending", "SIGABRT"),
            (5, 2, 3, "crash", "1.0.0", "worker-7", 3, "complete", "KeyError"),
        ]
        for (id, project, payload, kind, release, user, issue, state, error) in reports {
            let received = t0 + payload * hour
            rows.append(row("reports", since: project == 2 ? "v6-sentry" : nil, [
                ("id", .int(id)), ("project_id", .int(project)), ("event_id", .text(event(Int(id)))),
                ("kind", .text(kind)), ("occurred_at", .int(received - 60_000 * id)), ("received_at", .int(received)),
                ("release", release.map(Value.text) ?? .null), ("environment", .text("production")),
                ("user_key", user.map(Value.text) ?? .null), ("session_id", .text("s-\(id)")),
                ("error_type", .text(error)), ("error_message", .text(error == "KeyError" ? "'job_id'" : "at 0x10")),
                ("payload_id", .int(payload)), ("payload_offset", .int(0)), ("payload_length", .int(payload == 3 ? 190 : 486)),
                ("custom_keys_dropped", .int(id == 1 ? 3 : 0)), ("values_truncated", .int(0)),
                ("breadcrumbs_dropped", .int(id == 2 ? 12 : 0)), ("threads_dropped", .int(0)),
                ("frames_dropped", .int(0)), ("modules_dropped", .int(0)), ("symbolication", .text(state)),
                ("issue_id", issue.map(Value.int) ?? .null), ("early", id == 1 ? .bool(true) : .bool(false)),
                ("symbolication_attempts", .int(0)), ("grouping_version", .int(2)),
                ("sample", id == 1 ? .int(1) : id == 3 ? .int(2) : .null), ("grouping_facts", groupingFacts(report: id)),
            ]))
            rows.append(row("report_event_ids", [
                ("project_id", .int(project)), ("event_id", .text(event(Int(id)))), ("report_id", .int(id)),
                ("received_at", .int(received)),
            ]))
            if state != "pending" {
                rows.append(row("report_symbols", since: project == 2 ? "v6-sentry" : nil, [
                    ("report_id", .int(id)), ("received_at", .int(received)), ("result", .hex(Hex.encode(Array(result.utf8)))),
                    ("updated_at", .int(received + 1000)),
                ]))
                let error = "\(error) \(kind == "crash" ? "at 0x10" : "")"
                rows.append(row("search_documents", since: project == 2 ? "v6-sentry" : nil, [
                    ("report_id", .int(id)), ("received_at", .int(received)), ("project_id", .int(project)),
                    ("project", .text("p\(project)")), ("event", .text(event(Int(id)))), ("user", .text(user ?? "")),
                    ("release", .text((release ?? "") + "\nproduction")), ("error", .text(error)),
                    ("functions", .text("MyApp.CheckoutView.pay()")), ("keys", .text("screen checkout")),
                    ("document", .text("'checkout':3 'pay':4 'sigsegv':1 'user-1':2")),
                ]))
            }
        }
        // What report 2 lacked (v4…v10), then per module the debug data each result was made with (v11 on).
        rows.append(row("report_missing_debug_files", [
            ("report_id", .int(2)), ("project_id", .int(1)), ("build_id", .text(libBuild)),
            ("module", .text("libcrypto.so.3")), ("release", .text("2.4.0 (240)")),
        ]))
        for (report, build, module, rank) in [(1, appBuild, "MyApp", 2), (2, libBuild, "libcrypto.so.3", 0)] as [(Int64, String, String, Int64)] {
            rows.append(row("report_modules", [
                ("report_id", .int(report)), ("received_at", .int(t0 + hour)), ("project_id", .int(1)),
                ("build_id", .text(build)), ("module", .text(module)), ("release", .text("2.4.0")), ("rank", .int(rank)),
            ]))
        }
        // Per-issue rollups.
        let byRelease: [(Int64, String, Int64, [(Int, String)])] = [
            (1, "2.4.0", 1, [(1, "user-1")]), (1, "2.4.0 (240)", 1, [(1, "user-2")]),
            (2, "com.example.app@2.4.0+240", 1, [(1, "user-1")]), (3, "1.0.0", 1, [(2, "worker-7")]),
        ]
        for (issue, release, events, users) in byRelease {
            rows.append(row("issue_releases", [
                ("issue_id", .int(issue)), ("release", .text(release)), ("events", .int(events)),
                ("users", .int(Int64(users.count))), ("first_seen", .int(t0 + issue * hour)), ("last_seen", .int(t0 + (issue + 2) * hour)),
            ]))
            for (project, user) in users {
                rows.append(row("issue_release_users", [
                    ("issue_id", .int(issue)), ("release", .text(release)), ("user_key", .user(project: project, id: user)),
                    ("events", .int(1)),
                ]))
            }
        }
        for (issue, project, users) in [(1, 1, ["user-1", "user-2"]), (2, 1, ["user-1"]), (3, 2, ["worker-7"])] as [(Int64, Int, [String])] {
            rows.append(row("issue_days", [
                ("issue_id", .int(issue)), ("day", .int(day0)), ("events", .int(Int64(users.count))),
                ("users", .int(Int64(users.count))),
            ]))
            rows.append(row("issue_tags", [
                ("issue_id", .int(issue)), ("key", .text("os")), ("value", .text(project == 1 ? "iOS 18.3" : "Linux")),
                ("events", .int(Int64(users.count))), ("users", .int(Int64(users.count))),
            ]))
            for user in users {
                // Users per breakdown value (`v40-tag-users` / `pg25-tag-users`; skipped before, as the column above).
                rows.append(row("issue_tag_users", [
                    ("issue_id", .int(issue)), ("key", .text("os")), ("value", .text(project == 1 ? "iOS 18.3" : "Linux")),
                    ("user_key", .user(project: project, id: user)), ("events", .int(1)),
                ]))
                rows.append(row("issue_users", [
                    ("issue_id", .int(issue)), ("user_key", .user(project: project, id: user)), ("events", .int(1)),
                ]))
                rows.append(row("issue_day_users", [
                    ("issue_id", .int(issue)), ("day", .int(day0)), ("user_key", .user(project: project, id: user)),
                    ("events", .int(1)),
                ]))
            }
        }
        // Sessions: (project, id, user, release, status, errors), and the health rollups they add up to.
        let sessions: [(Int64, String, String, String, String, Int64)] = [
            (1, "s-1", "user-1", "2.4.0", "crashed", 0), (1, "s-2", "user-2", "2.4.0 (240)", "crashed", 0),
            (1, "s-3", "user-1", "com.example.app@2.4.0+240", "exited", 1), (1, "s-4", "user-3", "2.3.1", "abnormal", 0),
            (1, "s-6", "user-3", "2.4.0", "ok", 0), (2, "s-5", "worker-7", "1.0.0", "exited", 0),
        ]
        for (project, id, user, release, status, errors) in sessions {
            rows.append(row("sessions", [
                ("project_id", .int(project)), ("session_id", .text(id)), ("distinct_id", .text(user)),
                ("release", .text(release)), ("environment", .text("production")), ("started_at", .int(t0)),
                ("status", .text(status)), ("errors", .int(errors)), ("duration", status == "ok" ? .null : .real(42.5)),
                ("seq", .int(3)), ("updated_at", .int(t0 + hour)), ("session_count", .int(1)),
            ]))
        }
        // Health per release ('' = the whole project) and per day: sessions, crashed, abnormal, errored, users.
        var health: [String: (project: Int, release: String, s: Int64, c: Int64, a: Int64, e: Int64, users: [String: Int64])] = [:]
        for (project, _, user, release, status, errors) in sessions {
            for name in [release, ""] {
                let key = "\(project)/\(name)"
                var entry = health[key] ?? (Int(project), name, 0, 0, 0, 0, [:])
                entry.s += 1
                entry.c += status == "crashed" ? 1 : 0
                entry.a += status == "abnormal" ? 1 : 0
                entry.e += errors > 0 ? 1 : 0
                entry.users[user] = max(entry.users[user] ?? 0, status == "crashed" ? 1 : 0)
                health[key] = entry
            }
        }
        for entry in health.values.sorted(by: { ($0.project, $0.release) < ($1.project, $1.release) }) {
            let crashedUsers = Int64(entry.users.values.filter { $0 > 0 }.count)
            let common: [(String, Value)] = [
                ("project_id", .int(Int64(entry.project))), ("release", .text(entry.release)),
                ("sessions", .int(entry.s)), ("crashed", .int(entry.c)), ("abnormal", .int(entry.a)),
                ("errored", .int(entry.e)), ("users", .int(Int64(entry.users.count))), ("crashed_users", .int(crashedUsers)),
            ]
            rows.append(row("health_releases", common + [("first_seen", .int(t0)), ("last_seen", .int(t0 + hour))]))
            rows.append(row("health_days", common + [("day", .int(day0))]))
            for (user, crashed) in entry.users.sorted(by: { $0.key < $1.key }) {
                let count = Int64(sessions.filter { $0.0 == entry.project && $0.2 == user && (entry.release.isEmpty || $0.3 == entry.release) }.count)
                let base: [(String, Value)] = [
                    ("project_id", .int(Int64(entry.project))), ("release", .text(entry.release)),
                    ("user_key", .user(project: entry.project, id: user)), ("sessions", .int(count)), ("crashed", .int(crashed)),
                ]
                rows.append(row("health_release_users", base))
                rows.append(row("health_day_users", base + [("day", .int(day0))]))
            }
        }
        // Debug files: the app's debug information and executable, its source bundle (v16 on).
        for (kind, size, since) in [("debuginfo", 18_204_112, nil), ("executable", 2_404_352, nil), ("sources", 88_410, "v16-source-bundles")] as [(String, Int64, String?)] {
            rows.append(row("debug_files", since: since, [
                ("project_id", .int(1)), ("build_id", .text(appBuild)), ("kind", .text(kind)), ("size", .int(size)),
                ("architecture", .text("x86_64")), ("file_type", .text(kind == "sources" ? "sourcebundle" : "elf")),
                ("features", .text(kind == "debuginfo" ? "debug,symtab" : kind == "sources" ? "sources" : "symtab")),
                ("name", .text(kind == "sources" ? "MyApp.src.zip" : "MyApp")), ("uploaded_at", .int(t0 + 2 * hour)),
                ("blob_sha256", .text(String(repeating: kind == "debuginfo" ? "d" : kind == "sources" ? "5" : "e", count: 64))),
                ("stored_seq", .int(kind == "debuginfo" ? 1 : kind == "executable" ? 2 : 3)),
            ]))
        }
        // Alerts, their settings and the webhook outbox.
        rows.append(row("alert_settings", [
            ("project_id", .int(1)), ("updated_at", .int(t0 - hour)),
            ("settings", .text(#"{"webhook":"https://hooks.example.com/faultline","velocity_percent":1,"velocity_users":25}"#)),
        ]))
        let alerts: [(Int64, String, String, Value, String?, String)] = [
            (1, "new_issue", "new_issue:1", .int(1), "2.4.0", "New issue: EXC_BAD_ACCESS in CheckoutView.pay()"),
            (2, "regression", "regression:1:2.4.0 (240)", .int(1), "2.4.0 (240)", "Regressed in 2.4.0 (240)"),
            (3, "velocity", "velocity:1:2.4.0", .int(1), "2.4.0", "Crash velocity: 2 users in 30 min"),
            (4, "storage_full", "storage_full:1", .null, nil, "The server's disk is full"),
        ]
        for (id, kind, dedupe, issue, release, title) in alerts {
            rows.append(row("alerts", since: kind == "storage_full" ? "v18-storage-alerts" : nil, [
                ("id", .int(id)), ("project_id", .int(1)), ("kind", .text(kind)), ("dedupe_key", .text(dedupe)),
                ("issue_id", issue), ("release", release.map(Value.text) ?? .null), ("title", .text(title)),
                ("reason", .text("rule \(kind)")), ("created_at", .int(t0 + id * hour)), ("dispatched", .bool(id < 4)),
            ]))
        }
        for (id, alert, state, since) in [(1, 1, "delivered", nil), (2, 3, "failed", nil), (3, 4, "pending", "v18-storage-alerts")] as [(Int64, Int64, String, String?)] {
            rows.append(row("webhook_deliveries", since: since, [
                ("id", .int(id)), ("alert_id", .int(alert)), ("url", .text("https://hooks.example.com/faultline")),
                ("body", .hex(Hex.encode(Array(#"{"alert":\#(alert)}"#.utf8)))), ("state", .text(state)),
                ("attempts", .int(state == "failed" ? 8 : 1)), ("next_attempt_at", .int(t0 + 6 * hour)),
                ("last_status", state == "failed" ? .int(502) : .int(200)),
                ("last_error", state == "failed" ? .text("502 Bad Gateway") : .null),
                ("delivered_at", state == "delivered" ? .int(t0 + 2 * hour) : .null),
                ("priority", .int(alert == 4 ? 1 : 0)),
            ]))
        }
        // Sentry's side: client reports, a minidump attachment, a sentry-cli upload.
        rows.append(row("client_reports", [
            ("project_id", .int(2)), ("day", .int(day0)), ("reason", .text("ratelimit_backoff")),
            ("category", .text("error")), ("quantity", .int(17)),
        ]))
        rows.append(row("attachments", [
            ("id", .int(1)), ("project_id", .int(2)), ("event_id", .text(event(5))), ("filename", .text("upload_file_minidump")),
            ("content_type", .text("application/octet-stream")), ("attachment_type", .text("event.minidump")),
            ("size", .int(8)), ("bytes", .hex("4d444d5093a70000")), ("received_at", .int(t0 + 3 * hour)),
        ]))
        rows.append(row("dif_uploads", [
            ("project_id", .int(1)), ("checksum", .text(String(repeating: "ab", count: 20))), ("name", .text("MyApp.debug")),
            ("debug_id", .text("d4c3b2a1-f6e5-1807-2939-4a5b6c7d8e9f")), ("build_id", .text(appBuild)), ("state", .text("ok")),
            ("detail", .null), ("dif", .text(appBuild)), ("updated_at", .int(t0 + 2 * hour)),
        ]))
        rows.append(row("admin_sessions", [
            ("id", .int(1)), ("token_hash", .text(String(repeating: "5e", count: 32))),
            ("secret", .text("c2VjcmV0LW9mLXRoZS1zZXNzaW9uLTAwMDAwMDAx")), ("created_at", .int(t0)),
            ("expires_at", .int(t0 + 12 * hour)),
        ]))
        return rows + rowsSince28
    }

    /// Statements after the rows (tables the migrations filled themselves): the debug-file change sequence.
    static let updates = [("counters", "UPDATE counters SET value = 3 WHERE name = 'debug_files'")]
}
