import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline projects create|list|configure|rotate-key|audit`.
struct Projects: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create, list and configure projects, replace their keys, and read their audit trail.",
        subcommands: [Create.self, List.self, Configure.self, RotateKey.self, Audit.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a project and print its ingest key and upload token (shown once).")

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "Short name: lowercase letters, digits, - and _.")
        var slug: String

        @Option(help: "Reports per second the project may post (default 1000).")
        var rateLimit: Double?

        @Flag(help: "Print JSON.")
        var json = false

        @Option(
            help:
                "The address SDKs reach the server at, for the Sentry DSN (env FAULTLINE_PUBLIC_URL; default: the address the server last listened on, recorded in the data folder, else http://127.0.0.1:8080)."
        )
        var publicURL: String?

        /// `http://<ingest key>@host:port[/prefix]/<project id>`: what any Sentry SDK takes as its DSN.
        func dsn(key: String, project: ProjectID) throws -> String {
            Projects.sentryDSN(
                base: try ServerURLRecord.base(publicURL: publicURL, folder: dataOptions.filesFolder), key: key,
                project: project)
        }

        func validate() throws {
            if let publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
                throw ValidationError("--public-url must start with http:// or https://")
            }
            if let problem = ProjectSlug.problemForNewProject(slug) { throw ValidationError(problem) }
            if let rateLimit, !(rateLimit > 0) { throw ValidationError("--rate-limit must be positive") }
            // The DSN printed is built from these: a bad value is named now, not turned into a wrong DSN.
            _ = try dsn(key: "", project: ProjectID(rawValue: 1))
        }

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let credentials = try await root.projects.create(slug: ProjectSlug(slug)!, rateLimitPerSecond: rateLimit)
            if json {
                // The id is a number, as the API and the DSN's last path segment have it.
                let out = CreatedOut(
                    id: credentials.project.id.rawValue, slug: slug, ingestKey: credentials.ingestKey,
                    uploadToken: credentials.uploadToken,
                    sentryDSN: try dsn(key: credentials.ingestKey, project: credentials.project.id))
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(out), as: UTF8.self))
            } else {
                print("project:      \(slug) (id \(credentials.project.id))")
                print("ingest key:   \(credentials.ingestKey)")
                print("upload token: \(credentials.uploadToken)")
                print("sentry dsn:   \(try dsn(key: credentials.ingestKey, project: credentials.project.id))")
                print("Keep these now: only their hashes are stored.")
            }
        }
    }

    /// `http://<ingest key>@host:port[/prefix]/<project id>` for the server at `base`: what any Sentry SDK takes as
    /// its DSN.
    static func sentryDSN(base: String, key: String, project: ProjectID) -> String {
        SentryDSN.string(base: base, key: key, project: project)
    }

    /// What `projects create --json` prints.
    struct CreatedOut: Encodable {
        var id: Int64
        var slug: String
        var ingestKey: String
        var uploadToken: String
        var sentryDSN: String
        enum CodingKeys: String, CodingKey {
            case id, slug, ingestKey = "ingest_key", uploadToken = "upload_token", sentryDSN = "sentry_dsn"
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List projects.")
        @OptionGroup var dataOptions: DataOptions

        func run() async throws {
            try await dataOptions.withComposition { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let projects = try await root.projects.all()
            if projects.isEmpty {
                print("no projects; create one with: faultline projects create SLUG")
                return
            }
            print("id\tslug\trate limit/s")
            for project in projects {
                print("\(project.id)\t\(project.slug)\t\(project.rateLimitPerSecond)")
            }
        }
    }
}

extension Projects {
    /// `faultline projects configure SLUG`: the project's privacy settings (server-side PII scrubbing).
    struct Configure: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Set a project's privacy, grouping and target settings and print them (with no option, only print them).",
            discussion: """
                Scrubbing (on by default) replaces values of sensitive keys, credit card numbers, IBANs, PEM private \
                keys, bearer tokens, URL passwords and sensitive name=value pairs with [Filtered], and user names in \
                home paths with [user], before a report is stored. IP addresses are dropped unless \
                --keep-ip-addresses on; e-mail addresses and phone numbers are masked (j***@example.com, the last \
                two digits kept) unless --mask-emails-and-phones off. A running server applies the change within a \
                minute.

                Minidumps (Crashpad, Breakpad, sentry-native) are stored without their environment and with their \
                command line scrubbed, but their stack memory is raw. By default a dump is deleted once its report \
                is processed and its stack final (every module it touched has a debug file or executable); \
                --keep-minidumps retention-period keeps dumps for the retention period, for the team to download. \
                Stored dumps count against the project's debug-file quota.

                In-app rules decide which modules are the app's own when crashes are grouped (the blamed frame is \
                the innermost in-app frame). By default every module outside the system and language-runtime \
                libraries is in-app; --in-app-include adds modules (a company library installed in /usr/lib), \
                --in-app-exclude removes them (a vendored third-party library). Patterns match a module's file \
                name with * and ?; exclusion wins. Reports grouped from then on use the rules.

                Targets are the crash-free rates the team means to stay at or above, in percent (defaults: users \
                99.5, sessions 99.9). Every page shows each crash-free rate against its target: a target line on \
                the charts and a "below target" mark. Pages rendered from then on use them.

                An issue tracker (--tracker github|gitlab|gitea|jira --tracker-url URL) gives every issue page an \
                "Open in tracker" link: a new issue there, prefilled with the issue's title, culprit, counts, first \
                release and a link back (the server's --public-url). No token is stored and the server calls nothing.
                """)

        enum Switch: String, ExpressibleByArgument, CaseIterable {
            case on, off
            var isOn: Bool { self == .on }
        }

        /// `--keep-minidumps`: the spelling of `MinidumpRetention` on the command line.
        enum KeepMinidumps: String, ExpressibleByArgument, CaseIterable {
            case untilProcessed = "until-processed"
            case retentionPeriod = "retention-period"
            var retention: MinidumpRetention {
                switch self {
                case .untilProcessed: .untilProcessed
                case .retentionPeriod: .retentionPeriod
                }
            }
        }

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The project's slug.")
        var slug: String

        @Option(help: "Scrub personal data from reports before storing them: on or off.")
        var scrubbing: Switch?

        @Option(
            name: .customLong("safe-field"),
            help: "A key never scrubbed (exact name, any case); repeat for more. Replaces the list.")
        var safeFields: [String] = []

        @Option(
            name: .customLong("sensitive-field"),
            help:
                "Another key name whose values are filtered (substring, any case); repeat for more. Replaces the list.")
        var sensitiveFields: [String] = []

        @Flag(help: "Empty the safe-field list.")
        var clearSafeFields = false

        @Flag(help: "Empty the sensitive-field list.")
        var clearSensitiveFields = false

        @Option(
            name: .customLong("keep-ip-addresses"),
            help: "Keep client IP addresses (user.ip_address, REMOTE_ADDR): on or off.")
        var keepIPAddresses: Switch?

        @Option(
            name: .customLong("mask-emails-and-phones"),
            help: "Mask e-mail addresses and phone numbers in values: on or off.")
        var maskEmailsAndPhones: Switch?

        @Option(
            name: .customLong("keep-minidumps"),
            help: "How long minidumps are kept: until-processed (the default) or retention-period (for download).")
        var keepMinidumps: KeepMinidumps?

        @Option(
            name: .customLong("in-app-include"),
            help: "A module-name pattern (* and ?) that is in-app; repeat for more. Replaces the list.")
        var inAppInclude: [String] = []

        @Option(
            name: .customLong("in-app-exclude"),
            help: "A module-name pattern (* and ?) that is never in-app; repeat for more. Replaces the list.")
        var inAppExclude: [String] = []

        @Flag(help: "Empty both in-app pattern lists.")
        var clearInApp = false

        @Option(help: "The crash-free users target, in percent from 0 to 100 (default 99.5).")
        var crashFreeUsersTarget: Double?

        @Option(help: "The crash-free sessions target, in percent from 0 to 100 (default 99.9).")
        var crashFreeSessionsTarget: Double?

        @Option(help: "Events (not sessions) the project may send per minute; past it 429 (0: no quota, the default).")
        var quotaPerMinute: Int?

        @Option(help: "Events the project may send per hour (0: no quota).")
        var quotaPerHour: Int?

        @Option(help: "Events the project may send per calendar month, UTC (0: no quota).")
        var quotaPerMonth: Int?

        @Option(help: "The project's issue tracker: github, gitlab, gitea or jira (with --tracker-url).")
        var tracker: String?

        @Option(
            help:
                "The tracker's repository URL (GitHub, GitLab, Gitea), or Jira's base URL with ?pid=PROJECT&issuetype=TYPE."
        )
        var trackerURL: String?

        @Flag(help: "Remove the project's issue tracker.")
        var clearTracker = false

        @Flag(help: "Print JSON.")
        var json = false

        /// `--tracker` and `--tracker-url` checked together (nil when neither is given).
        func checkedTracker() throws -> IssueTracker? {
            guard tracker != nil || trackerURL != nil else { return nil }
            guard let name = tracker, let kind = TrackerKind(rawValue: name) else {
                throw ValidationError("--tracker must be github, gitlab, gitea or jira, with --tracker-url")
            }
            guard let trackerURL else { throw ValidationError("--tracker needs --tracker-url") }
            do {
                return try IssueTracker.validated(kind: kind, url: trackerURL)
            } catch {
                throw ValidationError("--tracker-url " + error.problem)
            }
        }

        func validate() throws {
            if clearTracker && (tracker != nil || trackerURL != nil) {
                throw ValidationError("--clear-tracker and --tracker/--tracker-url exclude each other")
            }
            _ = try checkedTracker()
            if let problem = InAppRules.problem(inAppInclude) ?? InAppRules.problem(inAppExclude) {
                throw ValidationError(problem)
            }
            if clearInApp && !(inAppInclude.isEmpty && inAppExclude.isEmpty) {
                throw ValidationError("--clear-in-app and --in-app-include/--in-app-exclude exclude each other")
            }
            guard ProjectSlug(slug) != nil else {
                throw ValidationError("'\(slug)' is not a slug: use 1–64 lowercase letters, digits, '-' or '_'")
            }
            if let problem = PrivacySettings.fieldProblem(safeFields + sensitiveFields) {
                throw ValidationError(problem)
            }
            if clearSafeFields && !safeFields.isEmpty {
                throw ValidationError("--clear-safe-fields and --safe-field exclude each other")
            }
            if clearSensitiveFields && !sensitiveFields.isEmpty {
                throw ValidationError("--clear-sensitive-fields and --sensitive-field exclude each other")
            }
            for (name, value) in [("users", crashFreeUsersTarget), ("sessions", crashFreeSessionsTarget)] {
                if let value, let problem = CrashFreeTargets.problem(value) {
                    throw ValidationError("--crash-free-\(name)-target \(problem)")
                }
            }
            for (name, value) in [("minute", quotaPerMinute), ("hour", quotaPerHour), ("month", quotaPerMonth)] {
                if let value, value != 0, let problem = EventQuotas.problem(value) {
                    throw ValidationError("--quota-per-\(name) \(problem) (0: no quota)")
                }
            }
        }

        func run() async throws {
            try await dataOptions.withComposition(announcing: true) { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            let configured = try await root.projects.configurePrivacy(slug: ProjectSlug(slug)!, by: .cli) { settings in
                if let scrubbing { settings.scrubbing = scrubbing.isOn }
                if let keepIPAddresses { settings.keepIPAddresses = keepIPAddresses.isOn }
                if let maskEmailsAndPhones { settings.maskEmailsAndPhones = maskEmailsAndPhones.isOn }
                if !safeFields.isEmpty || clearSafeFields { settings.safeFields = safeFields }
                if !sensitiveFields.isEmpty || clearSensitiveFields { settings.sensitiveFields = sensitiveFields }
            }
            guard var project = configured else {
                throw ValidationError("no project with the slug '\(slug)'")
            }
            if clearInApp || !inAppInclude.isEmpty || !inAppExclude.isEmpty {
                guard
                    let changed = try await root.projects.configureInApp(
                        slug: project.slug, by: .cli,
                        { rules in
                            if clearInApp { rules = .none }
                            if !inAppInclude.isEmpty { rules.include = inAppInclude }
                            if !inAppExclude.isEmpty { rules.exclude = inAppExclude }
                        })
                else { throw ValidationError("no project with the slug '\(slug)'") }
                project = changed
            }
            if let keepMinidumps {
                guard
                    let changed = try await root.projects.configureMinidumps(
                        slug: project.slug, by: .cli, keepMinidumps.retention)
                else { throw ValidationError("no project with the slug '\(slug)'") }
                project = changed
            }
            if crashFreeUsersTarget != nil || crashFreeSessionsTarget != nil {
                guard
                    let changed = try await root.projects.configureTargets(
                        slug: project.slug, by: .cli,
                        { targets in
                            if let crashFreeUsersTarget { targets.users = crashFreeUsersTarget }
                            if let crashFreeSessionsTarget { targets.sessions = crashFreeSessionsTarget }
                        })
                else { throw ValidationError("no project with the slug '\(slug)'") }
                project = changed
            }
            if quotaPerMinute != nil || quotaPerHour != nil || quotaPerMonth != nil {
                guard
                    let changed = try await root.projects.configureQuotas(
                        slug: project.slug, by: .cli,
                        { quotas in
                            if let quotaPerMinute { quotas.perMinute = quotaPerMinute == 0 ? nil : quotaPerMinute }
                            if let quotaPerHour { quotas.perHour = quotaPerHour == 0 ? nil : quotaPerHour }
                            if let quotaPerMonth { quotas.perMonth = quotaPerMonth == 0 ? nil : quotaPerMonth }
                        })
                else { throw ValidationError("no project with the slug '\(slug)'") }
                project = changed
            }
            if clearTracker || tracker != nil {
                let chosen = try checkedTracker()
                guard
                    let changed = try await root.projects.configureTracker(
                        slug: project.slug, kind: chosen?.kind, url: chosen?.url, by: .cli)
                else { throw ValidationError("no project with the slug '\(slug)'") }
                project = changed
            }
            let privacy = project.privacy
            if json {
                struct Out: Encodable {
                    var slug: String
                    var scrubbing: Bool
                    var safe_fields: [String]
                    var sensitive_fields: [String]
                    var keep_ip_addresses: Bool
                    var mask_emails_and_phones: Bool
                    var in_app_include: [String]
                    var in_app_exclude: [String]
                    var keep_minidumps: String
                    var crash_free_users_target: Double
                    var crash_free_sessions_target: Double
                    var quota_per_minute: Int?
                    var quota_per_hour: Int?
                    var quota_per_month: Int?
                    var tracker: String?
                    var tracker_url: String?
                }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                let out = Out(
                    slug: slug, scrubbing: privacy.scrubbing, safe_fields: privacy.safeFields,
                    sensitive_fields: privacy.sensitiveFields, keep_ip_addresses: privacy.keepIPAddresses,
                    mask_emails_and_phones: privacy.maskEmailsAndPhones,
                    in_app_include: project.inApp.include, in_app_exclude: project.inApp.exclude,
                    keep_minidumps: project.minidumps.rawValue, crash_free_users_target: project.targets.users,
                    crash_free_sessions_target: project.targets.sessions, quota_per_minute: project.quotas.perMinute,
                    quota_per_hour: project.quotas.perHour, quota_per_month: project.quotas.perMonth,
                    tracker: project.tracker?.kind.rawValue, tracker_url: project.tracker?.url)
                print(String(decoding: try encoder.encode(out), as: UTF8.self))
            } else {
                print("project:           \(slug)")
                print("scrubbing:         \(privacy.scrubbing ? "on" : "off")")
                print(
                    "safe fields:       \(privacy.safeFields.isEmpty ? "(none)" : privacy.safeFields.joined(separator: ", "))"
                )
                print(
                    "sensitive fields:  \(privacy.sensitiveFields.isEmpty ? "(defaults only)" : privacy.sensitiveFields.joined(separator: ", "))"
                )
                print("keep IP addresses: \(privacy.keepIPAddresses ? "on" : "off")")
                print("mask e-mails and phones: \(privacy.maskEmailsAndPhones ? "on" : "off")")
                print(
                    "in-app include:    \(project.inApp.include.isEmpty ? "(none)" : project.inApp.include.joined(separator: ", "))"
                )
                print(
                    "in-app exclude:    \(project.inApp.exclude.isEmpty ? "(none)" : project.inApp.exclude.joined(separator: ", "))"
                )
                print("keep minidumps:    \(Self.describe(project.minidumps))")
                print("crash-free users target:    \(Self.percent(project.targets.users))")
                print("crash-free sessions target: \(Self.percent(project.targets.sessions))")
                print("event quotas:      \(Self.describe(project.quotas))")
                print("issue tracker:     \(project.tracker.map { "\($0.kind.rawValue) \($0.url)" } ?? "(none)")")
            }
        }
    }
}

extension Projects.Configure {
    /// Quotas as `configure` prints them: `1000/minute, 50000/month`, or `none`.
    static func describe(_ quotas: EventQuotas) -> String {
        let parts = QuotaWindow.allCases.compactMap { window in quotas[window].map { "\($0)/\(window.rawValue)" } }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }

    /// A target as `configure` prints it: `99.5 %`, `100 %` (Swift's shortest form, without a trailing `.0`).
    static func percent(_ value: Double) -> String {
        let text = value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        return text + " %"
    }

    /// How `configure` prints a project's minidump setting.
    static func describe(_ retention: MinidumpRetention) -> String {
        switch retention {
        case .untilProcessed: "until processed"
        case .retentionPeriod: "for the retention period"
        }
    }
}

/// `faultline admin-token`: replaces the admin token and prints the new one.
struct AdminToken: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-token", abstract: "Create or replace the admin token and print it (shown once).")
    @OptionGroup var dataOptions: DataOptions

    func run() async throws {
        try await dataOptions.withComposition { try await run(on: $0) }
    }

    func run(on root: Composition) async throws {
        print(try await root.projects.rotateAdminToken())
    }
}
