import FaultlineCore
import GRDB

/// The schema, as named migrations. A migration that has shipped is never edited: add a new one.
///
/// Table names are strings, not record types, so that renaming a Swift type can never change the schema.
/// SQLite enforces what it can (NOT NULL, UNIQUE, CHECK, foreign keys): a bug above Storage then fails
/// loudly at write time instead of leaving bad rows for the aggregator to trip on.
enum SQLiteMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-projects-reports-sessions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE projects (
                        id INTEGER PRIMARY KEY,
                        slug TEXT NOT NULL UNIQUE CHECK (length(slug) BETWEEN 1 AND 64),
                        created_at INTEGER NOT NULL,
                        rate_limit_per_second REAL NOT NULL CHECK (rate_limit_per_second > 0)
                    );

                    -- Secrets are stored as SHA-256 hex only. Admin tokens belong to no project.
                    CREATE TABLE credentials (
                        hash TEXT PRIMARY KEY CHECK (length(hash) = 64),
                        kind TEXT NOT NULL CHECK (kind IN ('ingest', 'upload', 'admin')),
                        project_id INTEGER REFERENCES projects(id) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL,
                        CHECK ((kind = 'admin') = (project_id IS NULL))
                    );
                    CREATE INDEX credentials_by_project ON credentials(project_id);

                    -- Request bodies exactly as accepted (compressed), so reports can be reprocessed.
                    CREATE TABLE payloads (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        received_at INTEGER NOT NULL,
                        encoding TEXT NOT NULL CHECK (encoding IN ('gzip', 'deflate')),
                        inflated_size INTEGER NOT NULL CHECK (inflated_size >= 0),
                        bytes BLOB NOT NULL
                    );
                    CREATE INDEX payloads_by_project ON payloads(project_id, received_at);

                    -- One row per accepted report; the report itself is the byte range of its payload.
                    CREATE TABLE reports (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        event_id TEXT NOT NULL CHECK (length(event_id) = 32),
                        kind TEXT NOT NULL CHECK (kind IN ('crash', 'nonfatal')),
                        occurred_at INTEGER NOT NULL,
                        received_at INTEGER NOT NULL,
                        release TEXT,
                        environment TEXT,
                        user_key TEXT,
                        session_id TEXT,
                        error_type TEXT,
                        error_message TEXT,
                        payload_id INTEGER NOT NULL REFERENCES payloads(id) ON DELETE CASCADE,
                        payload_offset INTEGER NOT NULL CHECK (payload_offset >= 0),
                        payload_length INTEGER NOT NULL CHECK (payload_length > 0),
                        custom_keys_dropped INTEGER NOT NULL DEFAULT 0 CHECK (custom_keys_dropped >= 0),
                        values_truncated INTEGER NOT NULL DEFAULT 0 CHECK (values_truncated >= 0),
                        breadcrumbs_dropped INTEGER NOT NULL DEFAULT 0 CHECK (breadcrumbs_dropped >= 0),
                        threads_dropped INTEGER NOT NULL DEFAULT 0 CHECK (threads_dropped >= 0),
                        frames_dropped INTEGER NOT NULL DEFAULT 0 CHECK (frames_dropped >= 0),
                        modules_dropped INTEGER NOT NULL DEFAULT 0 CHECK (modules_dropped >= 0),
                        UNIQUE (project_id, event_id)
                    );
                    CREATE INDEX reports_by_project ON reports(project_id, id);
                    CREATE INDEX reports_by_kind ON reports(project_id, kind, id);
                    CREATE INDEX reports_by_release ON reports(project_id, release, id);
                    CREATE INDEX reports_by_time ON reports(project_id, occurred_at);
                    CREATE INDEX reports_by_payload ON reports(payload_id);

                    -- The latest state of each session (updates are merged by SessionState.merging).
                    CREATE TABLE sessions (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        session_id TEXT NOT NULL CHECK (length(session_id) BETWEEN 1 AND 128),
                        distinct_id TEXT,
                        release TEXT NOT NULL,
                        environment TEXT,
                        started_at INTEGER NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('ok', 'exited', 'crashed', 'abnormal')),
                        errors INTEGER NOT NULL CHECK (errors >= 0),
                        duration REAL CHECK (duration IS NULL OR duration >= 0),
                        seq INTEGER,
                        updated_at INTEGER NOT NULL,
                        PRIMARY KEY (project_id, session_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX sessions_by_release ON sessions(project_id, release, started_at);
                    """)
        }
        migrator.registerMigration("v2-debug-files") { db in
            try db.execute(
                sql: """
                    -- One row per project and build-id and kind; the blob on disk is shared by build-id.
                    CREATE TABLE debug_files (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        build_id TEXT NOT NULL CHECK (length(build_id) BETWEEN 2 AND 128),
                        kind TEXT NOT NULL CHECK (kind IN ('debuginfo', 'executable')),
                        size INTEGER NOT NULL CHECK (size >= 0),
                        architecture TEXT NOT NULL,
                        file_type TEXT NOT NULL,
                        features TEXT NOT NULL,
                        name TEXT,
                        uploaded_at INTEGER NOT NULL,
                        PRIMARY KEY (project_id, build_id, kind)
                    ) WITHOUT ROWID;
                    CREATE INDEX debug_files_by_build_id ON debug_files(build_id, kind);
                    """)
        }
        migrator.registerMigration("v3-payload-format") { db in
            try db.execute(
                sql: """
                    ALTER TABLE payloads ADD COLUMN format TEXT NOT NULL DEFAULT 'native-v1'
                        CHECK (format IN ('native-v1', 'swift-crash'));
                    """)
        }
        migrator.registerMigration("v4-symbolication") { db in
            try db.execute(
                sql: """
                    ALTER TABLE reports ADD COLUMN symbolication TEXT NOT NULL DEFAULT 'pending'
                        CHECK (symbolication IN ('pending', 'complete', 'partial', 'missing', 'not_needed'));
                    CREATE INDEX reports_pending_symbolication ON reports(id) WHERE symbolication = 'pending';

                    -- The symbolicated frames of a report (JSON of SymbolicatedReport), replaced on each run.
                    CREATE TABLE report_symbols (
                        report_id INTEGER PRIMARY KEY REFERENCES reports(id) ON DELETE CASCADE,
                        result BLOB NOT NULL,
                        updated_at INTEGER NOT NULL
                    );

                    -- Which build-ids a report lacked: the missing-debug-files list, and the reports to queue
                    -- again when one arrives.
                    CREATE TABLE report_missing_debug_files (
                        report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        build_id TEXT NOT NULL,
                        module TEXT,
                        release TEXT,
                        PRIMARY KEY (report_id, build_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX missing_debug_files_by_build_id ON report_missing_debug_files(project_id, build_id);
                    """)
        }
        migrator.registerMigration("v5-issues-health-alerts") { db in
            try db.execute(
                sql: """
                    -- Issues: reports grouped by fingerprint. Counters are maintained incrementally by the grouping
                    -- transaction (add a report's contribution, or move it between issues when late symbols change
                    -- its fingerprint), so they always equal a recount and survive the pruning of raw reports.
                    CREATE TABLE issues (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        fingerprint TEXT NOT NULL CHECK (fingerprint LIKE 'v%:%'),
                        kind TEXT NOT NULL CHECK (kind IN ('crash', 'nonfatal')),
                        grouping TEXT NOT NULL,
                        title TEXT NOT NULL,
                        culprit TEXT,
                        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed', 'muted')),
                        regressed INTEGER NOT NULL DEFAULT 0 CHECK (regressed IN (0, 1)),
                        status_changed_at INTEGER,
                        first_seen INTEGER NOT NULL,
                        last_seen INTEGER NOT NULL,
                        first_release TEXT,
                        last_release TEXT,
                        events INTEGER NOT NULL DEFAULT 0 CHECK (events >= 0),
                        users INTEGER NOT NULL DEFAULT 0 CHECK (users >= 0),
                        repeat_users INTEGER NOT NULL DEFAULT 0 CHECK (repeat_users >= 0),
                        early_events INTEGER NOT NULL DEFAULT 0 CHECK (early_events >= 0),
                        timed_events INTEGER NOT NULL DEFAULT 0 CHECK (timed_events >= 0),
                        updated_at INTEGER NOT NULL,
                        UNIQUE (project_id, fingerprint)
                    );
                    CREATE INDEX issues_by_update ON issues(project_id, updated_at);
                    CREATE INDEX issues_by_last_seen ON issues(project_id, last_seen);

                    ALTER TABLE reports ADD COLUMN issue_id INTEGER REFERENCES issues(id) ON DELETE SET NULL;
                    -- 1 when the report came within the first seconds of its session, 0 when later, NULL unknown.
                    ALTER TABLE reports ADD COLUMN early INTEGER CHECK (early IS NULL OR early IN (0, 1));
                    CREATE INDEX reports_by_issue ON reports(issue_id, occurred_at);
                    -- Reports stored before grouping existed are grouped by the worker like new ones.
                    UPDATE reports SET symbolication = 'pending';

                    -- Per issue: by release ('' = no release), by day, by user, and by tag (device, os, environment).
                    -- The *_users tables count events per user so that distinct users stay exact when a report moves.
                    CREATE TABLE issue_releases (
                        issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        release TEXT NOT NULL,
                        events INTEGER NOT NULL CHECK (events >= 0),
                        users INTEGER NOT NULL DEFAULT 0 CHECK (users >= 0),
                        first_seen INTEGER NOT NULL,
                        last_seen INTEGER NOT NULL,
                        PRIMARY KEY (issue_id, release)
                    ) WITHOUT ROWID;
                    CREATE INDEX issue_releases_by_release ON issue_releases(release, users);
                    CREATE TABLE issue_days (
                        issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        day INTEGER NOT NULL,
                        events INTEGER NOT NULL CHECK (events >= 0),
                        users INTEGER NOT NULL DEFAULT 0 CHECK (users >= 0),
                        PRIMARY KEY (issue_id, day)
                    ) WITHOUT ROWID;
                    CREATE TABLE issue_users (
                        issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        user_key TEXT NOT NULL,
                        events INTEGER NOT NULL CHECK (events > 0),
                        PRIMARY KEY (issue_id, user_key)
                    ) WITHOUT ROWID;
                    CREATE TABLE issue_release_users (
                        issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        release TEXT NOT NULL,
                        user_key TEXT NOT NULL,
                        events INTEGER NOT NULL CHECK (events > 0),
                        PRIMARY KEY (issue_id, release, user_key)
                    ) WITHOUT ROWID;
                    CREATE TABLE issue_day_users (
                        issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        day INTEGER NOT NULL,
                        user_key TEXT NOT NULL,
                        events INTEGER NOT NULL CHECK (events > 0),
                        PRIMARY KEY (issue_id, day, user_key)
                    ) WITHOUT ROWID;
                    CREATE TABLE issue_tags (
                        issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        key TEXT NOT NULL,
                        value TEXT NOT NULL,
                        events INTEGER NOT NULL CHECK (events > 0),
                        PRIMARY KEY (issue_id, key, value)
                    ) WITHOUT ROWID;

                    -- Release health, maintained in the session write's transaction (subtract a session's old
                    -- contribution, add its new one). release '' = all releases of the project together.
                    CREATE TABLE health_days (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        release TEXT NOT NULL,
                        day INTEGER NOT NULL,
                        sessions INTEGER NOT NULL CHECK (sessions >= 0),
                        crashed INTEGER NOT NULL CHECK (crashed >= 0),
                        abnormal INTEGER NOT NULL CHECK (abnormal >= 0),
                        errored INTEGER NOT NULL CHECK (errored >= 0),
                        users INTEGER NOT NULL DEFAULT 0 CHECK (users >= 0),
                        crashed_users INTEGER NOT NULL DEFAULT 0 CHECK (crashed_users >= 0),
                        PRIMARY KEY (project_id, release, day)
                    ) WITHOUT ROWID;
                    CREATE INDEX health_days_by_day ON health_days(project_id, day);
                    CREATE TABLE health_day_users (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        release TEXT NOT NULL,
                        day INTEGER NOT NULL,
                        user_key TEXT NOT NULL,
                        sessions INTEGER NOT NULL CHECK (sessions > 0),
                        crashed INTEGER NOT NULL CHECK (crashed >= 0),
                        PRIMARY KEY (project_id, release, day, user_key)
                    ) WITHOUT ROWID;
                    CREATE TABLE health_releases (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        release TEXT NOT NULL,
                        first_seen INTEGER NOT NULL,
                        last_seen INTEGER NOT NULL,
                        sessions INTEGER NOT NULL CHECK (sessions >= 0),
                        crashed INTEGER NOT NULL CHECK (crashed >= 0),
                        abnormal INTEGER NOT NULL CHECK (abnormal >= 0),
                        errored INTEGER NOT NULL CHECK (errored >= 0),
                        users INTEGER NOT NULL DEFAULT 0 CHECK (users >= 0),
                        crashed_users INTEGER NOT NULL DEFAULT 0 CHECK (crashed_users >= 0),
                        PRIMARY KEY (project_id, release)
                    ) WITHOUT ROWID;
                    CREATE TABLE health_release_users (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        release TEXT NOT NULL,
                        user_key TEXT NOT NULL,
                        sessions INTEGER NOT NULL CHECK (sessions > 0),
                        crashed INTEGER NOT NULL CHECK (crashed >= 0),
                        PRIMARY KEY (project_id, release, user_key)
                    ) WITHOUT ROWID;
                    -- Sessions active in a time window (velocity alerts).
                    CREATE INDEX sessions_by_update ON sessions(project_id, release, updated_at);

                    -- Alerting: settings per project, alerts (deduplicated), and the durable webhook outbox.
                    CREATE TABLE alert_settings (
                        project_id INTEGER PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
                        settings TEXT NOT NULL,
                        updated_at INTEGER NOT NULL
                    );
                    CREATE TABLE alerts (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL CHECK (kind IN ('new_issue', 'regression', 'velocity', 'crash_free_target')),
                        dedupe_key TEXT NOT NULL,
                        issue_id INTEGER REFERENCES issues(id) ON DELETE SET NULL,
                        release TEXT,
                        title TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        dispatched INTEGER NOT NULL DEFAULT 0 CHECK (dispatched IN (0, 1)),
                        UNIQUE (project_id, dedupe_key)
                    );
                    CREATE INDEX alerts_by_project ON alerts(project_id, id);
                    CREATE INDEX alerts_to_dispatch ON alerts(id) WHERE dispatched = 0;
                    CREATE TABLE webhook_deliveries (
                        id INTEGER PRIMARY KEY,
                        alert_id INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
                        url TEXT NOT NULL,
                        body BLOB NOT NULL,
                        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
                        attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
                        next_attempt_at INTEGER NOT NULL,
                        last_status INTEGER,
                        last_error TEXT,
                        delivered_at INTEGER
                    );
                    CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state = 'pending';
                    """)
            try HealthRollup.backfill(db)
        }
        migrator.registerMigration("v6-sentry") { db in
            // SQLite cannot change a CHECK: payloads is rebuilt to allow the 'sentry-event' format (foreign keys
            // are checked after the migration, as GRDB does for every migration).
            try db.execute(
                sql: """
                    CREATE TABLE payloads_v6 (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        received_at INTEGER NOT NULL,
                        encoding TEXT NOT NULL CHECK (encoding IN ('gzip', 'deflate')),
                        inflated_size INTEGER NOT NULL CHECK (inflated_size >= 0),
                        bytes BLOB NOT NULL,
                        format TEXT NOT NULL DEFAULT 'native-v1' CHECK (format IN ('native-v1', 'swift-crash', 'sentry-event'))
                    );
                    INSERT INTO payloads_v6 (id, project_id, received_at, encoding, inflated_size, bytes, format)
                        SELECT id, project_id, received_at, encoding, inflated_size, bytes, format FROM payloads;
                    DROP TABLE payloads;
                    ALTER TABLE payloads_v6 RENAME TO payloads;
                    CREATE INDEX payloads_by_project ON payloads(project_id, received_at);

                    -- Sentry client reports: what SDKs dropped before sending, summed per day.
                    CREATE TABLE client_reports (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        day INTEGER NOT NULL,
                        reason TEXT NOT NULL,
                        category TEXT NOT NULL,
                        quantity INTEGER NOT NULL CHECK (quantity >= 0),
                        PRIMARY KEY (project_id, day, reason, category)
                    ) WITHOUT ROWID;

                    -- Files sent with events (within the attachment size limit).
                    CREATE TABLE attachments (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        event_id TEXT NOT NULL CHECK (length(event_id) = 32),
                        filename TEXT NOT NULL,
                        content_type TEXT,
                        attachment_type TEXT,
                        size INTEGER NOT NULL CHECK (size >= 0),
                        bytes BLOB NOT NULL,
                        received_at INTEGER NOT NULL
                    );
                    CREATE INDEX attachments_by_event ON attachments(project_id, event_id);
                    CREATE INDEX attachments_by_time ON attachments(received_at);

                    -- sentry-cli uploads: which file checksums are assembled, into which debug file.
                    CREATE TABLE dif_uploads (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        checksum TEXT NOT NULL CHECK (length(checksum) = 40),
                        name TEXT NOT NULL,
                        debug_id TEXT,
                        build_id TEXT,
                        state TEXT NOT NULL CHECK (state IN ('created', 'assembling', 'ok', 'error')),
                        detail TEXT,
                        dif TEXT,
                        updated_at INTEGER NOT NULL,
                        PRIMARY KEY (project_id, checksum)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v7-debug-file-blobs") { db in
            // Debug files belong to a project: each row names the blob (SHA-256 of the file's bytes) that this
            // project uploaded for the build-id and kind. Rows of an older install get their hash when the data
            // folder is opened (`SQLiteDebugFileStore.adoptLegacyFiles`, which needs the hasher); until then it
            // is NULL and the row serves nothing.
            try db.execute(
                sql: """
                    ALTER TABLE debug_files ADD COLUMN blob_sha256 TEXT
                        CHECK (blob_sha256 IS NULL OR length(blob_sha256) = 64);
                    CREATE INDEX debug_files_by_blob ON debug_files(blob_sha256);
                    """)
        }
        migrator.registerMigration("v8-symbolication-attempts") { db in
            try db.execute(
                sql: """
                    -- Poison-pill detection: attempts are counted (and committed) before symbolication starts and
                    -- reset by a clean result, so a pending report with attempts was being processed when the
                    -- process died. At the limit it is failed: state 'missing' with the reason here.
                    ALTER TABLE reports ADD COLUMN symbolication_attempts INTEGER NOT NULL DEFAULT 0
                        CHECK (symbolication_attempts >= 0);
                    ALTER TABLE reports ADD COLUMN symbolication_failure TEXT;
                    """)
        }
        migrator.registerMigration("v9-admin-sessions") { db in
            // Dashboard logins: the cookie holds a random secret, stored here as its SHA-256 only. `id` is the
            // session's stable id; `secret` is a per-session server-side key for values bound to the session
            // (CSRF tokens); rows end at logout, at expiry, or when the admin token is replaced.
            try db.execute(
                sql: """
                    CREATE TABLE admin_sessions (
                        id INTEGER PRIMARY KEY,
                        token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
                        secret TEXT NOT NULL CHECK (length(secret) >= 32),
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL CHECK (expires_at >= created_at)
                    );
                    CREATE INDEX admin_sessions_by_expiry ON admin_sessions(expires_at);
                    """)
        }
        migrator.registerMigration("v10-privacy-settings") { db in
            try db.execute(
                sql: """
                    -- Server-side PII scrubbing per project (on by default; IP addresses dropped by default).
                    ALTER TABLE projects ADD COLUMN scrubbing INTEGER NOT NULL DEFAULT 1 CHECK (scrubbing IN (0, 1));
                    ALTER TABLE projects ADD COLUMN keep_ip_addresses INTEGER NOT NULL DEFAULT 0
                        CHECK (keep_ip_addresses IN (0, 1));
                    -- JSON arrays of field names.
                    ALTER TABLE projects ADD COLUMN safe_fields TEXT NOT NULL DEFAULT '[]';
                    ALTER TABLE projects ADD COLUMN sensitive_fields TEXT NOT NULL DEFAULT '[]';
                    """)
        }
        migrator.registerMigration("v11-report-modules") { db in
            // Late symbols in any order: per report and build-id its result touched, the best debug data the
            // server held when the result was saved (rank 0 = no file, 1 = executable only, 2 = debuginfo). A file
            // that outranks a row queues that report again, in the transaction that stores the file.
            // `report_missing_debug_files` was the rank-0 part of this and is folded into it.
            try db.execute(
                sql: """
                    CREATE TABLE report_modules (
                        report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        build_id TEXT NOT NULL,
                        module TEXT,
                        release TEXT,
                        rank INTEGER NOT NULL CHECK (rank IN (0, 1, 2)),
                        PRIMARY KEY (report_id, build_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX report_modules_by_rank ON report_modules(project_id, build_id, rank);

                    -- A change sequence for debug files, never reused (not a clock): each stored file takes the next
                    -- value, and the symbolication worker reads it with its batch, so a file stored while a batch
                    -- was being symbolicated is recognised exactly, whatever the clock says.
                    CREATE TABLE counters (
                        name TEXT PRIMARY KEY,
                        value INTEGER NOT NULL CHECK (value >= 0)
                    ) WITHOUT ROWID;
                    INSERT INTO counters (name, value) VALUES ('debug_files', 0);
                    ALTER TABLE debug_files ADD COLUMN stored_seq INTEGER NOT NULL DEFAULT 0 CHECK (stored_seq >= 0);

                    -- Backfill 1: what reports lacked (rank 0), with the module names the reports gave.
                    INSERT OR IGNORE INTO report_modules (report_id, project_id, build_id, module, release, rank)
                        SELECT report_id, project_id, build_id, module, release, 0 FROM report_missing_debug_files;
                    DROP TABLE report_missing_debug_files;

                    -- Backfill 2: the build-ids every stored result resolved, from its JSON: DWARF answers mean the
                    -- debug information was there (2); anything else (symbol table, not found) counts as the
                    -- executable only (1), the conservative reading: at worst such a report is redone once below.
                    WITH valid AS MATERIALIZED (
                        SELECT report_id, CAST(result AS TEXT) AS json FROM report_symbols WHERE json_valid(CAST(result AS TEXT))
                    )
                    INSERT OR IGNORE INTO report_modules (report_id, project_id, build_id, module, release, rank)
                        SELECT v.report_id, r.project_id, json_extract(slot.value, '$.build_id'), NULL, r.release,
                            CASE WHEN max(json_extract(slot.value, '$.status') = 'dwarf') THEN 2
                                 WHEN max(json_extract(slot.value, '$.status') = 'missing_debug_file') THEN 0
                                 ELSE 1 END
                        FROM valid v JOIN reports r ON r.id = v.report_id,
                             json_each(v.json, '$.threads') AS thread, json_each(thread.value) AS slot
                        WHERE thread.type = 'array' AND slot.type = 'object'
                            AND typeof(json_extract(slot.value, '$.build_id')) = 'text'
                        GROUP BY v.report_id, json_extract(slot.value, '$.build_id');

                    -- Reports stuck by the old rule (resolved against a stripped executable, or lacking a file that
                    -- has arrived since) are queued once, now.
                    UPDATE reports SET symbolication = 'pending'
                    WHERE symbolication != 'pending' AND id IN (
                        SELECT m.report_id FROM report_modules m
                        WHERE m.rank < (SELECT max(CASE d.kind WHEN 'debuginfo' THEN 2 ELSE 1 END) FROM debug_files d
                                        WHERE d.project_id = m.project_id AND d.build_id = m.build_id));
                    """)
        }
        migrator.registerMigration("v12-report-issue-index") { db in
            // An issue's reports newest first, keyset-paged (`GET /api/v1/issues/{id}/reports`, `/reports?issue=`):
            // `WHERE issue_id = ? AND id < ? ORDER BY id DESC`. `reports_by_issue (issue_id, occurred_at)` orders by
            // the client's clock, so SQLite would read and sort every report of a large issue for each page.
            try db.execute(sql: "CREATE INDEX reports_by_issue_id ON reports(issue_id, id)")
        }
        migrator.registerMigration("v13-grouping-v2") { db in
            try db.execute(
                sql: """
                    -- The grouping version each report was filed with: reports of an older version are grouped
                    -- again in the background (a few hundred at a time) and their issues migrated.
                    ALTER TABLE reports ADD COLUMN grouping_version INTEGER NOT NULL DEFAULT 1;
                    CREATE INDEX reports_by_grouping_version ON reports(grouping_version);
                    -- How specific an issue's title is (Grouping.TitleRank): a later event with a more specific
                    -- cause replaces a vaguer title.
                    ALTER TABLE issues ADD COLUMN title_rank INTEGER NOT NULL DEFAULT 0;
                    -- Per-project in-app rules: JSON arrays of module-name glob patterns.
                    ALTER TABLE projects ADD COLUMN in_app_include TEXT NOT NULL DEFAULT '[]';
                    ALTER TABLE projects ADD COLUMN in_app_exclude TEXT NOT NULL DEFAULT '[]';
                    """)
        }
        migrator.registerMigration("v14-issue-status-history") { db in
            try db.execute(
                sql: """
                    -- Who last changed an issue's status (status_changed_at says when): `the dashboard (session 3)`,
                    -- `the CLI`, `the API (admin token)`; NULL when a new event reopened it as regressed.
                    ALTER TABLE issues ADD COLUMN status_changed_by TEXT;
                    -- The team's free-text note on the issue (at most 2 KB), shown on its page.
                    ALTER TABLE issues ADD COLUMN note TEXT;
                    """)
        }
        migrator.registerMigration("v15-search-index") { db in
            try db.execute(
                sql: """
                    -- The search index (SQLite FTS5): one entry per processed report, written in the symbolication and
                    -- grouping transaction (SQLiteSearchStore.replace) and replaced when the report is processed again.
                    -- External content: the text lives once, in search_documents, a plain table whose foreign key
                    -- removes a report's entry with the report (retention deletes payloads, project deletion deletes
                    -- projects, both cascade); its triggers keep the FTS index in step. Not contentless: SQLite 3.40
                    -- (Debian 12) cannot delete from a contentless table without the original text
                    -- (contentless_delete arrived in 3.43), and a regular FTS table would have no foreign key.
                    -- `project` holds the token p<project id>: every query ANDs it, so one project's search never
                    -- walks (or returns) another's entries; user terms are limited to the other columns.
                    CREATE TABLE search_documents (
                        report_id INTEGER PRIMARY KEY REFERENCES reports(id) ON DELETE CASCADE,
                        project TEXT NOT NULL,
                        event TEXT NOT NULL,
                        user TEXT NOT NULL,
                        release TEXT NOT NULL,
                        error TEXT NOT NULL,
                        functions TEXT NOT NULL,
                        keys TEXT NOT NULL
                    );
                    CREATE VIRTUAL TABLE search_index USING fts5(
                        project, event, user, release, error, functions, keys,
                        content = 'search_documents', content_rowid = 'report_id', tokenize = 'unicode61'
                    );
                    CREATE TRIGGER search_documents_insert AFTER INSERT ON search_documents BEGIN
                        INSERT INTO search_index (rowid, project, event, user, release, error, functions, keys)
                        VALUES (new.report_id, new.project, new.event, new.user, new.release, new.error, new.functions, new.keys);
                    END;
                    CREATE TRIGGER search_documents_delete AFTER DELETE ON search_documents BEGIN
                        INSERT INTO search_index (search_index, rowid, project, event, user, release, error, functions, keys)
                        VALUES ('delete', old.report_id, old.project, old.event, old.user, old.release, old.error, old.functions,
                            old.keys);
                    END;
                    CREATE TRIGGER search_documents_update AFTER UPDATE ON search_documents BEGIN
                        INSERT INTO search_index (search_index, rowid, project, event, user, release, error, functions, keys)
                        VALUES ('delete', old.report_id, old.project, old.event, old.user, old.release, old.error, old.functions,
                            old.keys);
                        INSERT INTO search_index (rowid, project, event, user, release, error, functions, keys)
                        VALUES (new.report_id, new.project, new.event, new.user, new.release, new.error, new.functions, new.keys);
                    END;

                    -- Reports processed before this version: what their rows say (event, user, release, error, issue
                    -- title). Function names and custom keys come when a report is processed again.
                    INSERT INTO search_documents (report_id, project, event, user, release, error, functions, keys)
                        SELECT r.id, 'p' || r.project_id, r.event_id, coalesce(r.user_key, ''),
                            trim(coalesce(r.release, '') || char(10) || coalesce(r.environment, ''), char(10)),
                            trim(coalesce(r.error_type, '') || char(10) || coalesce(r.error_message, '') || char(10)
                                || coalesce(i.title, '') || char(10) || coalesce(i.culprit, ''), char(10)),
                            '', ''
                        FROM reports r LEFT JOIN issues i ON i.id = r.issue_id
                        WHERE r.symbolication != 'pending';
                    """)
        }
        migrator.registerMigration("v16-source-bundles") { db in
            // Source bundles are debug files of a third kind, `sources`: the table is rebuilt because SQLite cannot
            // change a CHECK constraint in place (same columns, rows and indexes; foreign keys are checked by
            // the migrator after the rebuild).
            try db.execute(
                sql: """
                    CREATE TABLE debug_files_v16 (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        build_id TEXT NOT NULL CHECK (length(build_id) BETWEEN 2 AND 128),
                        kind TEXT NOT NULL CHECK (kind IN ('debuginfo', 'executable', 'sources')),
                        size INTEGER NOT NULL CHECK (size >= 0),
                        architecture TEXT NOT NULL,
                        file_type TEXT NOT NULL,
                        features TEXT NOT NULL,
                        name TEXT,
                        uploaded_at INTEGER NOT NULL,
                        blob_sha256 TEXT CHECK (blob_sha256 IS NULL OR length(blob_sha256) = 64),
                        stored_seq INTEGER NOT NULL DEFAULT 0 CHECK (stored_seq >= 0),
                        PRIMARY KEY (project_id, build_id, kind)
                    ) WITHOUT ROWID;
                    INSERT INTO debug_files_v16
                        (project_id, build_id, kind, size, architecture, file_type, features, name, uploaded_at, blob_sha256,
                         stored_seq)
                        SELECT project_id, build_id, kind, size, architecture, file_type, features, name, uploaded_at,
                            blob_sha256, stored_seq
                        FROM debug_files;
                    DROP TABLE debug_files;
                    ALTER TABLE debug_files_v16 RENAME TO debug_files;
                    CREATE INDEX debug_files_by_build_id ON debug_files(build_id, kind);
                    CREATE INDEX debug_files_by_blob ON debug_files(blob_sha256);
                    """)
        }
        migrator.registerMigration("v17-issue-list-order") { db in
            // The dashboard's issue lists (`/{slug}/list`): one index per order, whose leading columns after the
            // project are exactly the list's total `ORDER BY` (the id breaks ties), so a page is read in index
            // order with `LIMIT/OFFSET` instead of sorting the project's issues; status, kind and regressed follow,
            // so the filters are checked on the index entry and only the rows of the page are read from the table.
            // The last-seen one replaces `issues_by_last_seen (project_id, last_seen)`, a prefix of it.
            try db.execute(
                sql: """
                    DROP INDEX issues_by_last_seen;
                    CREATE INDEX issues_list_by_last_seen ON issues(project_id, last_seen, id, status, kind, regressed);
                    CREATE INDEX issues_list_by_users ON issues(project_id, users, events, last_seen, id, status, kind, regressed);
                    CREATE INDEX issues_list_by_events ON issues(project_id, events, users, last_seen, id, status, kind, regressed);
                    """)
        }
        migrator.registerMigration("v18-storage-alerts") { db in
            // Issue #15: the server tells the operator through the webhook outbox when its disk is full and when
            // space returns. SQLite cannot change a CHECK: alerts is rebuilt to allow the two kinds (ids are kept, so
            // webhook_deliveries.alert_id still points at its alert; foreign keys are checked after the migration).
            try db.execute(
                sql: """
                    CREATE TABLE alerts_v18 (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL CHECK (kind IN ('new_issue', 'regression', 'velocity', 'crash_free_target',
                                                           'storage_full', 'storage_ok')),
                        dedupe_key TEXT NOT NULL,
                        issue_id INTEGER REFERENCES issues(id) ON DELETE SET NULL,
                        release TEXT,
                        title TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        dispatched INTEGER NOT NULL DEFAULT 0 CHECK (dispatched IN (0, 1)),
                        UNIQUE (project_id, dedupe_key)
                    );
                    INSERT INTO alerts_v18 (id, project_id, kind, dedupe_key, issue_id, release, title, reason, created_at, dispatched)
                        SELECT id, project_id, kind, dedupe_key, issue_id, release, title, reason, created_at, dispatched FROM alerts;
                    DROP TABLE alerts;
                    ALTER TABLE alerts_v18 RENAME TO alerts;
                    CREATE INDEX alerts_by_project ON alerts(project_id, id);
                    CREATE INDEX alerts_to_dispatch ON alerts(id) WHERE dispatched = 0;
                    """)
        }
        migrator.registerMigration("v19-webhook-priority") { db in
            // Issue #15: the operator's storage_full / storage_ok message must not wait behind a backlog of issue
            // alerts (a crash storm that fills the disk also opens hundreds of issues): deliveries have a priority,
            // and the due index orders by it.
            try db.execute(
                sql: """
                    ALTER TABLE webhook_deliveries ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
                    UPDATE webhook_deliveries SET priority = 1
                        WHERE alert_id IN (SELECT id FROM alerts WHERE kind IN ('storage_full', 'storage_ok'));
                    DROP INDEX webhook_deliveries_due;
                    CREATE INDEX webhook_deliveries_due ON webhook_deliveries(priority DESC, next_attempt_at) WHERE state = 'pending';
                    """)
        }
        migrator.registerMigration("v20-top-issues-covering-index") { db in
            // Issue #13: the top issues of the last 24 hours and 7 days count each issue's reports and distinct users
            // in the window. With `reports_by_time (project_id, occurred_at)` every report of the window was then
            // looked up in the table for its issue and user: at 1 M reports stored, the 7-day window (~77,000
            // reports) took 0.32 s of a 0.40 s refresh of the summary pages, most of it reading table pages. With
            // the issue and the user in the index the window is read from the index alone (0.04 s). It replaces
            // the old index, a prefix of it; grouping now updates it too when it sets a report's issue.
            try db.execute(
                sql: """
                    DROP INDEX reports_by_time;
                    CREATE INDEX reports_by_time ON reports(project_id, occurred_at, issue_id, user_key);
                    """)
        }
        migrator.registerMigration("v21-counted-sessions") { db in
            // Issue #39: a request-mode aggregate (`{"exited": 10000}`, 189 bytes) was stored as 10,000 session rows. A
            // row now stands for `session_count` sessions of one status: an aggregate is one row per status it counts.
            try db.execute(
                sql:
                    "ALTER TABLE sessions ADD COLUMN session_count INTEGER NOT NULL DEFAULT 1 CHECK (session_count >= 1)"
            )
        }
        migrator.registerMigration("v22-issue-created-at") { db in
            // Issue #39: a project makes at most `new_issue_cap` issues a window (IssueFiling). The count is read from
            // this index at every filing of a new fingerprint, never from a scan of the project's issues. Issues made
            // before have no creation time and count in no window.
            try db.execute(
                sql: """
                    ALTER TABLE issues ADD COLUMN created_at INTEGER;
                    CREATE INDEX issues_by_created ON issues(project_id, created_at);
                    """)
        }
        migrator.registerMigration("v23-mask-emails-and-phones") { db in
            // Issue #39: e-mail addresses and phone numbers are masked on ingest unless a project turns it off, and an
            // e-mail used as a user id is stored as an HMAC under the project's own random key (made here for every
            // project, by the trigger for new ones: ALTER TABLE cannot give a column a random default).
            try db.execute(
                sql: """
                    ALTER TABLE projects ADD COLUMN mask_emails_and_phones INTEGER NOT NULL DEFAULT 1
                        CHECK (mask_emails_and_phones IN (0, 1));
                    ALTER TABLE projects ADD COLUMN identity_key BLOB;
                    UPDATE projects SET identity_key = randomblob(32);
                    CREATE TRIGGER projects_identity_key AFTER INSERT ON projects WHEN NEW.identity_key IS NULL
                    BEGIN
                        UPDATE projects SET identity_key = randomblob(32) WHERE id = NEW.id;
                    END;
                    """)
        }
        migrator.registerMigration("v24-hashed-rollup-users") { db in
            // Issue #39: retention pruned reports and sessions, but their user ids stayed in the per-user rollups for
            // ever. The rollups now hold a keyed hash of the user (`RollupUser.key`, HMAC-SHA-256 under the project's
            // identity key): the ids stored before are rewritten to it, with the function the database was opened with.
            try RollupUserKeys.rewriteStoredUsers(db)
        }
        migrator.registerMigration("v25-minidump-retention") { db in
            // Issue #34: a project keeps its minidumps only until their reports are processed (the default), or for the
            // retention period. The dumps count against the project's quota with its debug files: their bytes are
            // summed from this partial index (the project's dumps only, the size in the index), never from a scan of
            // every attachment.
            try db.execute(
                sql: """
                    ALTER TABLE projects ADD COLUMN minidump_retention TEXT NOT NULL DEFAULT 'until_processed'
                        CHECK (minidump_retention IN ('until_processed', 'retention_period'));
                    CREATE INDEX attachments_minidumps ON attachments(project_id, size)
                        WHERE attachment_type = 'event.minidump';
                    """)
        }
        migrator.registerMigration("v26-crash-free-targets") { db in
            // Issue #35: every crash-free rate is shown against the project's target, users 99.5 % and sessions 99.9 %
            // until the team sets its own (`CrashFreeTargets`).
            try db.execute(
                sql: """
                    ALTER TABLE projects ADD COLUMN crash_free_users_target REAL NOT NULL DEFAULT 99.5
                        CHECK (crash_free_users_target BETWEEN 0 AND 100);
                    ALTER TABLE projects ADD COLUMN crash_free_sessions_target REAL NOT NULL DEFAULT 99.9
                        CHECK (crash_free_sessions_target BETWEEN 0 AND 100);
                    """)
        }
        migrator.registerMigration("v27-one-release") { db in
            // Issue #35: one release, however it is written (`ReleaseName`): `2.4.0 (240)` and a Sentry event's
            // `com.x@2.4.0+240` were stored as releases apart from `2.4.0`, where their sessions are. Stored names are
            // brought under the one name, and the rollups keyed by release merged (`ReleaseMerge`).
            try SQLiteReleaseMerge.apply(db)
        }
        migrator.registerMigration("v28-merged-issues") { db in
            // Issue #36: merge and unmerge (`IssueMerge`, decision record 0060). A fingerprint merged into another
            // issue files into it (`issue_aliases`, read by filing when the fingerprint has no issue of its own); a
            // merged issue's number answers with the issue it was merged into (`issues_replaced`). Both go with the
            // survivor (ON DELETE CASCADE). SQLite may give a deleted issue's number to a new issue (no AUTOINCREMENT):
            // the trigger forgets the old number's merge then, so the number names the new issue only.
            try db.execute(
                sql: """
                    CREATE TABLE issue_aliases (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        fingerprint TEXT NOT NULL CHECK (fingerprint LIKE 'v%:%'),
                        issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (project_id, fingerprint)
                    );
                    CREATE INDEX issue_aliases_by_issue ON issue_aliases(issue_id);
                    CREATE TABLE issues_replaced (
                        issue_id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        survivor_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        fingerprint TEXT NOT NULL,
                        replaced_at INTEGER NOT NULL,
                        replaced_by TEXT
                    );
                    CREATE INDEX issues_replaced_by_survivor ON issues_replaced(survivor_id);
                    CREATE TRIGGER issues_replaced_number_reused AFTER INSERT ON issues BEGIN
                        DELETE FROM issues_replaced WHERE issue_id = NEW.id;
                    END;
                    """)
        }
        migrator.registerMigration("v29-retention-samples-trackers") { db in
            // Issue #36: past the retention period each issue keeps a few sample reports (`RetentionSamples`): `sample`
            // says why (1 its first or latest, 2 one of a release's); NULL for the rest. The partial index counts a
            // project's samples against its cap without a scan. A project may name its issue tracker (`TrackerLink`),
            // and an issue the tracker issue opened for it.
            try db.execute(
                sql: """
                    ALTER TABLE reports ADD COLUMN sample INTEGER CHECK (sample IS NULL OR sample IN (1, 2));
                    CREATE INDEX reports_samples ON reports(project_id, sample) WHERE sample IS NOT NULL;
                    ALTER TABLE projects ADD COLUMN tracker_kind TEXT
                        CHECK (tracker_kind IS NULL OR tracker_kind IN ('github', 'gitlab', 'gitea', 'jira'));
                    ALTER TABLE projects ADD COLUMN tracker_url TEXT
                        CHECK (tracker_url IS NULL OR length(tracker_url) BETWEEN 1 AND 2048);
                    ALTER TABLE issues ADD COLUMN tracker_url TEXT
                        CHECK (tracker_url IS NULL OR length(tracker_url) BETWEEN 1 AND 2048);
                    """)
        }
        migrator.registerMigration("v30-people") { db in
            // Issue #37: people with roles. A person signs in with a login (e-mail or name) and a scrypt password hash
            // (`PasswordHash`, parameters stored in the value; NULL until they set one on their invite link). Roles are
            // per project; `owner` manages the server. Invites are stored as the SHA-256 of the link's secret. A
            // session names its person (NULL: the admin token's); deleting a person deletes their memberships,
            // invites and sessions with them (ON DELETE CASCADE), so a removed person is signed out at once.
            try db.execute(
                sql: """
                    CREATE TABLE people (
                        id INTEGER PRIMARY KEY,
                        login TEXT NOT NULL UNIQUE CHECK (length(login) BETWEEN 1 AND 254 AND login = lower(login)),
                        name TEXT NOT NULL DEFAULT '' CHECK (length(name) <= 200),
                        owner INTEGER NOT NULL DEFAULT 0 CHECK (owner IN (0, 1)),
                        password_hash TEXT CHECK (password_hash IS NULL OR password_hash LIKE 'scrypt$%'),
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE memberships (
                        person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        role TEXT NOT NULL CHECK (role IN ('viewer', 'member', 'admin')),
                        PRIMARY KEY (person_id, project_id)
                    );
                    CREATE INDEX memberships_by_project ON memberships(project_id);
                    CREATE TABLE invites (
                        token_hash TEXT PRIMARY KEY CHECK (length(token_hash) = 64),
                        person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL CHECK (expires_at >= created_at)
                    );
                    CREATE INDEX invites_by_person ON invites(person_id);
                    ALTER TABLE admin_sessions ADD COLUMN person_id INTEGER REFERENCES people(id) ON DELETE CASCADE;
                    CREATE INDEX admin_sessions_by_person ON admin_sessions(person_id);
                    """)
        }
        migrator.registerMigration("v31-event-quotas") { db in
            // Issue #38: per-project event quotas per minute, hour and month (NULL: none), and what they counted per
            // day and release (`QuotaCount`; fingerprint '' when unknown): accepted events, and dropped ones, which
            // keep an issue's count honest during a spike. Alerts gain `quota_reached` (SQLite cannot change a CHECK:
            // alerts is rebuilt as in v18, its ids kept).
            try db.execute(
                sql: """
                    ALTER TABLE projects ADD COLUMN quota_per_minute INTEGER CHECK (quota_per_minute >= 1);
                    ALTER TABLE projects ADD COLUMN quota_per_hour INTEGER CHECK (quota_per_hour >= 1);
                    ALTER TABLE projects ADD COLUMN quota_per_month INTEGER CHECK (quota_per_month >= 1);
                    CREATE TABLE quota_counts (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        day INTEGER NOT NULL,
                        release TEXT NOT NULL,
                        fingerprint TEXT NOT NULL DEFAULT '',
                        accepted INTEGER NOT NULL DEFAULT 0 CHECK (accepted >= 0),
                        dropped INTEGER NOT NULL DEFAULT 0 CHECK (dropped >= 0),
                        PRIMARY KEY (project_id, day, release, fingerprint)
                    ) WITHOUT ROWID;
                    CREATE TABLE alerts_v31 (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL CHECK (kind IN ('new_issue', 'regression', 'velocity', 'crash_free_target',
                                                           'storage_full', 'storage_ok', 'quota_reached')),
                        dedupe_key TEXT NOT NULL,
                        issue_id INTEGER REFERENCES issues(id) ON DELETE SET NULL,
                        release TEXT,
                        title TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        dispatched INTEGER NOT NULL DEFAULT 0 CHECK (dispatched IN (0, 1)),
                        UNIQUE (project_id, dedupe_key)
                    );
                    INSERT INTO alerts_v31 (id, project_id, kind, dedupe_key, issue_id, release, title, reason, created_at, dispatched)
                        SELECT id, project_id, kind, dedupe_key, issue_id, release, title, reason, created_at, dispatched FROM alerts;
                    DROP TABLE alerts;
                    ALTER TABLE alerts_v31 RENAME TO alerts;
                    CREATE INDEX alerts_by_project ON alerts(project_id, id);
                    CREATE INDEX alerts_to_dispatch ON alerts(id) WHERE dispatched = 0;
                    """)
        }
        migrator.registerMigration("v32-fingerprint-rules") { db in
            // Issue #36: fingerprint rules per project, every version kept (`grouping_rules`: the latest version is the
            // one in force); what the rules match on, per report (`GroupingFacts`' stored form, written when the report
            // is filed, NULL for reports filed before), so that a dry run reads no payload; and the background
            // regroup after rules change (`regroups`: a cursor over the project's report ids, resumable).
            try db.execute(
                sql: """
                    ALTER TABLE reports ADD COLUMN grouping_facts TEXT;
                    CREATE TABLE grouping_rules (
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        version INTEGER NOT NULL CHECK (version >= 1),
                        rules TEXT NOT NULL CHECK (length(rules) <= 65536),
                        created_at INTEGER NOT NULL,
                        created_by TEXT,
                        PRIMARY KEY (project_id, version)
                    ) WITHOUT ROWID;
                    CREATE TABLE regroups (
                        project_id INTEGER PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
                        rules_version INTEGER NOT NULL CHECK (rules_version >= 1),
                        cursor INTEGER NOT NULL DEFAULT 0,
                        last_id INTEGER NOT NULL,
                        total INTEGER NOT NULL CHECK (total >= 0),
                        requeued INTEGER NOT NULL DEFAULT 0 CHECK (requeued >= 0),
                        started_at INTEGER NOT NULL,
                        finished_at INTEGER
                    );
                    """)
        }
        migrator.registerMigration("v33-personal-tokens-totp") { db in
            // Issue #37: personal API tokens (`PersonalToken`: the SHA-256 of the secret, never the secret; scopes as
            // sorted names), and the TOTP second factor: the shared secret (base32, as authenticator apps take it;
            // `confirmed_at` NULL while enrolment waits for a first code), the last time step accepted (a code is
            // not accepted twice), and one-time recovery codes as SHA-256 hashes, deleted when used. A person's
            // tokens, factor and codes go with them (ON DELETE CASCADE).
            try db.execute(
                sql: """
                    CREATE TABLE personal_tokens (
                        id INTEGER PRIMARY KEY,
                        person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
                        name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
                        token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
                        scopes TEXT NOT NULL CHECK (length(scopes) > 0),
                        created_at INTEGER NOT NULL,
                        last_used_at INTEGER,
                        expires_at INTEGER CHECK (expires_at IS NULL OR expires_at > created_at)
                    );
                    CREATE INDEX personal_tokens_by_person ON personal_tokens(person_id);
                    CREATE TABLE second_factors (
                        person_id INTEGER PRIMARY KEY REFERENCES people(id) ON DELETE CASCADE,
                        secret TEXT NOT NULL CHECK (length(secret) = 32),
                        confirmed_at INTEGER,
                        last_step INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE recovery_codes (
                        person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
                        code_hash TEXT NOT NULL CHECK (length(code_hash) = 64),
                        PRIMARY KEY (person_id, code_hash)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v34-audit") { db in
            // Issue #37: the audit trail (`AuditEntry`): who changed what, when, from where, before → after. Rows are
            // only added. The person's id is kept without a foreign key, so an entry outlives the person it names;
            // a project's entries go with it. The newest entry has the highest id (rows are not deleted but with their
            // project).
            try db.execute(
                sql: """
                    CREATE TABLE audit_log (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER REFERENCES projects(id) ON DELETE CASCADE,
                        at INTEGER NOT NULL,
                        actor_kind TEXT NOT NULL
                            CHECK (actor_kind IN ('person', 'personal-token', 'admin-token', 'project-token', 'cli')),
                        actor_person_id INTEGER,
                        actor_name TEXT CHECK (actor_name IS NULL OR length(actor_name) <= 1024),
                        actor_token TEXT CHECK (actor_token IS NULL OR length(actor_token) <= 1024),
                        address TEXT CHECK (address IS NULL OR length(address) <= 128),
                        kind TEXT NOT NULL CHECK (
                            length(kind) BETWEEN 3 AND 64 AND kind NOT GLOB '*[^a-z0-9._-]*' AND kind GLOB '?*.?*'),
                        subject TEXT CHECK (subject IS NULL OR length(CAST(subject AS BLOB)) <= 2048),
                        before_value TEXT CHECK (before_value IS NULL OR length(CAST(before_value AS BLOB)) <= 2048),
                        after_value TEXT CHECK (after_value IS NULL OR length(CAST(after_value AS BLOB)) <= 2048),
                        CHECK ((actor_kind IN ('person', 'personal-token')) = (actor_person_id IS NOT NULL)),
                        CHECK (actor_kind <> 'project-token' OR project_id IS NOT NULL)
                    );
                    CREATE INDEX audit_log_by_project ON audit_log(project_id, id);
                    """)
        }
        migrator.registerMigration("v35-alert-mail") { db in
            // Issue #37: who wants which alerts of a project by e-mail (`AlertMailPreference`). No row, no mail: a
            // member opts in. Alert mails are rows of `webhook_deliveries` with a `mailto:` URL; a digest belongs to
            // no alert, so digests are their own outbox (`mail_digests`, one row per person, project and period:
            // made once, sent at least once). `mail_secrets` holds the key that signs unsubscribe links.
            try db.execute(
                sql: """
                    CREATE TABLE alert_mail_preferences (
                        person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        kinds TEXT NOT NULL DEFAULT '' CHECK (length(kinds) <= 200),
                        digest TEXT NOT NULL DEFAULT 'none' CHECK (digest IN ('none', 'daily', 'weekly')),
                        PRIMARY KEY (person_id, project_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX alert_mail_preferences_by_project ON alert_mail_preferences(project_id);
                    CREATE TABLE mail_digests (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                        person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
                        cadence TEXT NOT NULL CHECK (cadence IN ('daily', 'weekly')),
                        period_start INTEGER NOT NULL,
                        recipient TEXT NOT NULL CHECK (length(recipient) BETWEEN 3 AND 254),
                        body BLOB NOT NULL,
                        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
                        attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
                        next_attempt_at INTEGER NOT NULL,
                        last_error TEXT,
                        created_at INTEGER NOT NULL,
                        UNIQUE (project_id, person_id, cadence, period_start)
                    );
                    CREATE INDEX mail_digests_due ON mail_digests(next_attempt_at) WHERE state = 'pending';
                    CREATE TABLE mail_secrets (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        secret BLOB NOT NULL CHECK (length(secret) = 32)
                    );
                    """)
        }
        migrator.registerMigration("v36-quota-counts-by-fingerprint") { db in
            // Issue #38: an issue page and the API read an issue's dropped events by fingerprint
            // (`QuotaCountStore.droppedEvents`); the primary key leads with the day. Only the fingerprint rows.
            try db.execute(
                sql: """
                    CREATE INDEX quota_counts_by_fingerprint ON quota_counts(project_id, fingerprint)
                        WHERE fingerprint <> '';
                    """)
        }
        migrator.registerMigration("v37-login-tickets") { db in
            // Issue #37: a password login waiting for its second factor's code, in the database so that the code step
            // may reach another node than the password step. Only the SHA-256 of the ticket is stored; a ticket lives
            // minutes, is spent by one conditional DELETE, and goes with its person.
            try db.execute(
                sql: """
                    CREATE TABLE login_tickets (
                        ticket_hash TEXT PRIMARY KEY CHECK (length(ticket_hash) = 64),
                        person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
                        expires_at INTEGER NOT NULL,
                        failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0)
                    ) WITHOUT ROWID;
                    CREATE INDEX login_tickets_by_expiry ON login_tickets(expires_at);
                    CREATE INDEX login_tickets_by_person ON login_tickets(person_id);
                    """)
        }
        migrator.registerMigration("v38-rotation") { db in
            // Issue #37: a project's ingest key can be replaced while the old one stays accepted for a while (apps
            // shipped with the old DSN keep reporting until the team ships the new one). NULL: no end (every
            // credential before this migration, and the current key of each kind).
            try db.execute(sql: "ALTER TABLE credentials ADD COLUMN expires_at INTEGER")
        }
        migrator.registerMigration("v39-issue-hangs") { db in
            // Issue #35: hangs and ANRs are a kind of their own (`IssueCategory`, decision record 0079). Filing marks an
            // issue a hang when its first report is one (from the error type, else the Sentry mechanism); the lists
            // and top issues select by the mark. The issues filed before are marked from their titles, which open with
            // the error type. One statement suffices, however many issues there are: it reads the table once and
            // writes only the hangs' rows (few), so the WAL holds the hangs, not the table. The partial index holds
            // the hangs alone: a project's hangs, or whether it has any, are found without reading its other issues.
            try db.execute(
                sql: """
                    ALTER TABLE issues ADD COLUMN hang INTEGER NOT NULL DEFAULT 0 CHECK (hang IN (0, 1));
                    UPDATE issues SET hang = 1 WHERE \(IssueCategory.hangTitleCondition("title"));
                    CREATE INDEX issues_hangs ON issues(project_id, last_seen, id) WHERE hang = true;
                    """)
        }
        migrator.registerMigration("v40-tag-users") { db in
            // Issue #35: users affected per device model, OS version, environment and build, exact as the users per
            // release and day are (one row per user, `issue_tags.users` moved as a row appears or goes). Counted from
            // this migration on: reports filed before left no per-user row of their tags (decision 0080).
            try db.execute(
                sql: """
                    ALTER TABLE issue_tags ADD COLUMN users INTEGER NOT NULL DEFAULT 0 CHECK (users >= 0);
                    CREATE TABLE issue_tag_users (
                        issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
                        key TEXT NOT NULL,
                        value TEXT NOT NULL,
                        user_key TEXT NOT NULL,
                        events INTEGER NOT NULL CHECK (events > 0),
                        PRIMARY KEY (issue_id, key, value, user_key)
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }
}
