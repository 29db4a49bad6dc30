-- Faultline upgrade snapshot: SQLite at v40-tag-users (made by tools/upgrade/make-snapshots)
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE CHECK (length(slug) BETWEEN 1 AND 64),
    created_at INTEGER NOT NULL,
    rate_limit_per_second REAL NOT NULL CHECK (rate_limit_per_second > 0)
, scrubbing INTEGER NOT NULL DEFAULT 1 CHECK (scrubbing IN (0, 1)), keep_ip_addresses INTEGER NOT NULL DEFAULT 0
    CHECK (keep_ip_addresses IN (0, 1)), safe_fields TEXT NOT NULL DEFAULT '[]', sensitive_fields TEXT NOT NULL DEFAULT '[]', in_app_include TEXT NOT NULL DEFAULT '[]', in_app_exclude TEXT NOT NULL DEFAULT '[]', mask_emails_and_phones INTEGER NOT NULL DEFAULT 1
    CHECK (mask_emails_and_phones IN (0, 1)), identity_key BLOB, minidump_retention TEXT NOT NULL DEFAULT 'until_processed'
    CHECK (minidump_retention IN ('until_processed', 'retention_period')), crash_free_users_target REAL NOT NULL DEFAULT 99.5
    CHECK (crash_free_users_target BETWEEN 0 AND 100), crash_free_sessions_target REAL NOT NULL DEFAULT 99.9
    CHECK (crash_free_sessions_target BETWEEN 0 AND 100), tracker_kind TEXT
    CHECK (tracker_kind IS NULL OR tracker_kind IN ('github', 'gitlab', 'gitea', 'jira')), tracker_url TEXT
    CHECK (tracker_url IS NULL OR length(tracker_url) BETWEEN 1 AND 2048), quota_per_minute INTEGER CHECK (quota_per_minute >= 1), quota_per_hour INTEGER CHECK (quota_per_hour >= 1), quota_per_month INTEGER CHECK (quota_per_month >= 1));
CREATE TABLE credentials (
    hash TEXT PRIMARY KEY CHECK (length(hash) = 64),
    kind TEXT NOT NULL CHECK (kind IN ('ingest', 'upload', 'admin')),
    project_id INTEGER REFERENCES projects(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL, expires_at INTEGER,
    CHECK ((kind = 'admin') = (project_id IS NULL))
);
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
    modules_dropped INTEGER NOT NULL DEFAULT 0 CHECK (modules_dropped >= 0), symbolication TEXT NOT NULL DEFAULT 'pending'
    CHECK (symbolication IN ('pending', 'complete', 'partial', 'missing', 'not_needed')), issue_id INTEGER REFERENCES issues(id) ON DELETE SET NULL, early INTEGER CHECK (early IS NULL OR early IN (0, 1)), symbolication_attempts INTEGER NOT NULL DEFAULT 0
    CHECK (symbolication_attempts >= 0), symbolication_failure TEXT, grouping_version INTEGER NOT NULL DEFAULT 1, sample INTEGER CHECK (sample IS NULL OR sample IN (1, 2)), grouping_facts TEXT,
    UNIQUE (project_id, event_id)
);
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
    updated_at INTEGER NOT NULL, session_count INTEGER NOT NULL DEFAULT 1 CHECK (session_count >= 1),
    PRIMARY KEY (project_id, session_id)
) WITHOUT ROWID;
CREATE TABLE report_symbols (
    report_id INTEGER PRIMARY KEY REFERENCES reports(id) ON DELETE CASCADE,
    result BLOB NOT NULL,
    updated_at INTEGER NOT NULL
);
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
    updated_at INTEGER NOT NULL, title_rank INTEGER NOT NULL DEFAULT 0, status_changed_by TEXT, note TEXT, created_at INTEGER, tracker_url TEXT
    CHECK (tracker_url IS NULL OR length(tracker_url) BETWEEN 1 AND 2048), hang INTEGER NOT NULL DEFAULT 0 CHECK (hang IN (0, 1)),
    UNIQUE (project_id, fingerprint)
);
CREATE TABLE issue_releases (
    issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
    release TEXT NOT NULL,
    events INTEGER NOT NULL CHECK (events >= 0),
    users INTEGER NOT NULL DEFAULT 0 CHECK (users >= 0),
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    PRIMARY KEY (issue_id, release)
) WITHOUT ROWID;
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
    events INTEGER NOT NULL CHECK (events > 0), users INTEGER NOT NULL DEFAULT 0 CHECK (users >= 0),
    PRIMARY KEY (issue_id, key, value)
) WITHOUT ROWID;
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
CREATE TABLE alert_settings (
    project_id INTEGER PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    settings TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
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
, priority INTEGER NOT NULL DEFAULT 0);
CREATE TABLE "payloads" (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    received_at INTEGER NOT NULL,
    encoding TEXT NOT NULL CHECK (encoding IN ('gzip', 'deflate')),
    inflated_size INTEGER NOT NULL CHECK (inflated_size >= 0),
    bytes BLOB NOT NULL,
    format TEXT NOT NULL DEFAULT 'native-v1' CHECK (format IN ('native-v1', 'swift-crash', 'sentry-event'))
);
CREATE TABLE client_reports (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day INTEGER NOT NULL,
    reason TEXT NOT NULL,
    category TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity >= 0),
    PRIMARY KEY (project_id, day, reason, category)
) WITHOUT ROWID;
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
CREATE TABLE admin_sessions (
    id INTEGER PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    secret TEXT NOT NULL CHECK (length(secret) >= 32),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL CHECK (expires_at >= created_at)
, person_id INTEGER REFERENCES people(id) ON DELETE CASCADE);
CREATE TABLE report_modules (
    report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    build_id TEXT NOT NULL,
    module TEXT,
    release TEXT,
    rank INTEGER NOT NULL CHECK (rank IN (0, 1, 2)),
    PRIMARY KEY (report_id, build_id)
) WITHOUT ROWID;
CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL CHECK (value >= 0)
) WITHOUT ROWID;
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
CREATE TABLE "debug_files" (
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
CREATE TABLE issue_aliases (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    fingerprint TEXT NOT NULL CHECK (fingerprint LIKE 'v%:%'),
    issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, fingerprint)
);
CREATE TABLE issues_replaced (
    issue_id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    survivor_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
    fingerprint TEXT NOT NULL,
    replaced_at INTEGER NOT NULL,
    replaced_by TEXT
);
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
CREATE TABLE invites (
    token_hash TEXT PRIMARY KEY CHECK (length(token_hash) = 64),
    person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL CHECK (expires_at >= created_at)
);
CREATE TABLE quota_counts (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day INTEGER NOT NULL,
    release TEXT NOT NULL,
    fingerprint TEXT NOT NULL DEFAULT '',
    accepted INTEGER NOT NULL DEFAULT 0 CHECK (accepted >= 0),
    dropped INTEGER NOT NULL DEFAULT 0 CHECK (dropped >= 0),
    PRIMARY KEY (project_id, day, release, fingerprint)
) WITHOUT ROWID;
CREATE TABLE "alerts" (
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
CREATE TABLE alert_mail_preferences (
    person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kinds TEXT NOT NULL DEFAULT '' CHECK (length(kinds) <= 200),
    digest TEXT NOT NULL DEFAULT 'none' CHECK (digest IN ('none', 'daily', 'weekly')),
    PRIMARY KEY (person_id, project_id)
) WITHOUT ROWID;
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
CREATE TABLE mail_secrets (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    secret BLOB NOT NULL CHECK (length(secret) = 32)
);
CREATE TABLE login_tickets (
    ticket_hash TEXT PRIMARY KEY CHECK (length(ticket_hash) = 64),
    person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0)
) WITHOUT ROWID;
CREATE TABLE issue_tag_users (
    issue_id INTEGER NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    user_key TEXT NOT NULL,
    events INTEGER NOT NULL CHECK (events > 0),
    PRIMARY KEY (issue_id, key, value, user_key)
) WITHOUT ROWID;
INSERT INTO "grdb_migrations" VALUES ('v1-projects-reports-sessions');
INSERT INTO "grdb_migrations" VALUES ('v2-debug-files');
INSERT INTO "grdb_migrations" VALUES ('v3-payload-format');
INSERT INTO "grdb_migrations" VALUES ('v4-symbolication');
INSERT INTO "grdb_migrations" VALUES ('v5-issues-health-alerts');
INSERT INTO "grdb_migrations" VALUES ('v6-sentry');
INSERT INTO "grdb_migrations" VALUES ('v7-debug-file-blobs');
INSERT INTO "grdb_migrations" VALUES ('v8-symbolication-attempts');
INSERT INTO "grdb_migrations" VALUES ('v9-admin-sessions');
INSERT INTO "grdb_migrations" VALUES ('v10-privacy-settings');
INSERT INTO "grdb_migrations" VALUES ('v11-report-modules');
INSERT INTO "grdb_migrations" VALUES ('v12-report-issue-index');
INSERT INTO "grdb_migrations" VALUES ('v13-grouping-v2');
INSERT INTO "grdb_migrations" VALUES ('v14-issue-status-history');
INSERT INTO "grdb_migrations" VALUES ('v15-search-index');
INSERT INTO "grdb_migrations" VALUES ('v16-source-bundles');
INSERT INTO "grdb_migrations" VALUES ('v17-issue-list-order');
INSERT INTO "grdb_migrations" VALUES ('v18-storage-alerts');
INSERT INTO "grdb_migrations" VALUES ('v19-webhook-priority');
INSERT INTO "grdb_migrations" VALUES ('v20-top-issues-covering-index');
INSERT INTO "grdb_migrations" VALUES ('v21-counted-sessions');
INSERT INTO "grdb_migrations" VALUES ('v22-issue-created-at');
INSERT INTO "grdb_migrations" VALUES ('v23-mask-emails-and-phones');
INSERT INTO "grdb_migrations" VALUES ('v24-hashed-rollup-users');
INSERT INTO "grdb_migrations" VALUES ('v25-minidump-retention');
INSERT INTO "grdb_migrations" VALUES ('v26-crash-free-targets');
INSERT INTO "grdb_migrations" VALUES ('v27-one-release');
INSERT INTO "grdb_migrations" VALUES ('v28-merged-issues');
INSERT INTO "grdb_migrations" VALUES ('v29-retention-samples-trackers');
INSERT INTO "grdb_migrations" VALUES ('v30-people');
INSERT INTO "grdb_migrations" VALUES ('v31-event-quotas');
INSERT INTO "grdb_migrations" VALUES ('v32-fingerprint-rules');
INSERT INTO "grdb_migrations" VALUES ('v33-personal-tokens-totp');
INSERT INTO "grdb_migrations" VALUES ('v34-audit');
INSERT INTO "grdb_migrations" VALUES ('v35-alert-mail');
INSERT INTO "grdb_migrations" VALUES ('v36-quota-counts-by-fingerprint');
INSERT INTO "grdb_migrations" VALUES ('v37-login-tickets');
INSERT INTO "grdb_migrations" VALUES ('v38-rotation');
INSERT INTO "grdb_migrations" VALUES ('v39-issue-hangs');
INSERT INTO "grdb_migrations" VALUES ('v40-tag-users');
INSERT INTO "projects" VALUES (1, 'ios-app', 1769850000000, 50.0, 1, 0, '["order_id"]', '["card_number"]', '["MyApp*"]', '[]', 1, X'5f2a9c0e7d3b41a68e0c2f4b7a9d1e3c5b7f9a0c2e4d6b8f1a3c5e7092b4d6f8', 'until_processed', 99.0, 99.8, 'github', 'https://github.com/example/ios-app/issues', 600, 10000, NULL);
INSERT INTO "projects" VALUES (2, 'backend-worker', 1771578000000, 2.5, 0, 1, '[]', '[]', '[]', '[]', 0, X'0b1d3f5a7c9e2b4d6f8a0c2e4b6d8f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b2d', 'retention_period', 99.5, 99.9, 'gitlab', 'https://gitlab.example.com/backend/worker/-/issues', 60, NULL, 1000000);
INSERT INTO "credentials" VALUES ('1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a', 'ingest', 1, 1772438400000, NULL);
INSERT INTO "credentials" VALUES ('2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b', 'upload', 1, 1772438400000, NULL);
INSERT INTO "credentials" VALUES ('3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c', 'ingest', 2, 1772438400000, NULL);
INSERT INTO "credentials" VALUES ('4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d', 'admin', NULL, 1772438400000, NULL);
INSERT INTO "reports" VALUES (1, 1, '000000000000000000000000000000e1', 'crash', 1772445540000, 1772445600000, '2.4.0', 'production', 'user-1', 's-1', 'SIGSEGV', 'at 0x10', 1, 0, 486, 3, 0, 0, 0, 0, 0, 'complete', 1, 1, 0, NULL, 2, 1, 'f1crashstack0MyApp.CheckoutView.pay()SIGSEGVat 0x10MyApp.CheckoutView.pay()MyApp.CheckoutView.bodyMyApplibcrypto.so.32.4.0iosscreencheckoutosiOS 18.3environmentproduction');
INSERT INTO "reports" VALUES (2, 1, '000000000000000000000000000000e2', 'crash', 1772445480000, 1772445600000, '2.4.0', 'production', 'user-2', 's-2', 'SIGSEGV', 'at 0x10', 1, 0, 486, 0, 0, 12, 0, 0, 0, 'partial', 1, 0, 0, NULL, 2, NULL, 'f1crashstack0MyApp.CheckoutView.pay()SIGSEGVat 0x10MyApp.CheckoutView.pay()MyApp.CheckoutView.bodyMyApplibcrypto.so.32.4.0iosscreencheckoutosiOS 18.3environmentproduction');
INSERT INTO "reports" VALUES (3, 1, '000000000000000000000000000000e3', 'nonfatal', 1772449020000, 1772449200000, '2.4.0', 'production', 'user-1', 's-3', 'DecodingError', 'at 0x10', 2, 0, 486, 0, 0, 0, 0, 0, 0, 'not_needed', 2, 0, 0, NULL, 2, 2, 'f1nonfatalerror0DecodingErrorkeyNotFoundDecodingErrorkeyNotFound("total")-1001MyApp.Decoder.decode(_:)MyApp2.4.0iososiOS 18.3');
INSERT INTO "reports" VALUES (4, 1, '000000000000000000000000000000e4', 'crash', 1772448960000, 1772449200000, '2.3.1', 'production', NULL, 's-4', 'SIGABRT', 'at 0x10', 2, 0, 486, 0, 0, 0, 0, 0, 0, 'pending', NULL, 0, 0, NULL, 2, NULL, NULL);
INSERT INTO "reports" VALUES (5, 2, '000000000000000000000000000000e5', 'crash', 1772452500000, 1772452800000, '1.0.0', 'production', 'worker-7', 's-5', 'KeyError', '''job_id''', 3, 0, 190, 0, 0, 0, 0, 0, 0, 'complete', 3, 0, 0, NULL, 2, NULL, 'f1crashclient1workerKeyErrorKeyError''job_id''worker.run1.0.0pythonosLinux');
INSERT INTO "sessions" VALUES (1, 's-1', 'user-1', '2.4.0', 'production', 1772442000000, 'crashed', 0, 42.5, 3, 1772445600000, 1);
INSERT INTO "sessions" VALUES (1, 's-2', 'user-2', '2.4.0', 'production', 1772442000000, 'crashed', 0, 42.5, 3, 1772445600000, 1);
INSERT INTO "sessions" VALUES (1, 's-3', 'user-1', '2.4.0', 'production', 1772442000000, 'exited', 1, 42.5, 3, 1772445600000, 1);
INSERT INTO "sessions" VALUES (1, 's-4', 'user-3', '2.3.1', 'production', 1772442000000, 'abnormal', 0, 42.5, 3, 1772445600000, 1);
INSERT INTO "sessions" VALUES (1, 's-6', 'user-3', '2.4.0', 'production', 1772442000000, 'ok', 0, NULL, 3, 1772445600000, 1);
INSERT INTO "sessions" VALUES (2, 's-5', 'worker-7', '1.0.0', 'production', 1772442000000, 'exited', 0, 42.5, 3, 1772445600000, 1);
INSERT INTO "report_symbols" VALUES (1, X'7b2274687265616473223a5b5b7b226275696c645f6964223a2261316232633364346535663630373138323933613462356336643765386639306131623263336434222c226672616d6573223a5b7b2266756e6374696f6e223a224d794170702e436865636b6f7574566965772e7061792829222c2266696c65223a22436865636b6f7574566965772e7377696674222c226c696e65223a38387d5d2c226f6666736574223a343636302c22737461747573223a226477617266227d2c7b226275696c645f6964223a2263336434653566363037313832393361346235633664376538663930613162326333643465356636222c226672616d6573223a5b5d2c226f6666736574223a333834302c22737461747573223a226d697373696e675f64656275675f66696c65227d5d5d2c226d6f64756c6573223a5b7b226275696c645f6964223a2261316232633364346535663630373138323933613462356336643765386639306131623263336434222c226d6f64756c65223a224d79417070227d2c7b226275696c645f6964223a2263336434653566363037313832393361346235633664376538663930613162326333643465356636222c226d6f64756c65223a226c696263727970746f2e736f2e33227d5d7d', 1772445601000);
INSERT INTO "report_symbols" VALUES (2, X'7b2274687265616473223a5b5b7b226275696c645f6964223a2261316232633364346535663630373138323933613462356336643765386639306131623263336434222c226672616d6573223a5b7b2266756e6374696f6e223a224d794170702e436865636b6f7574566965772e7061792829222c2266696c65223a22436865636b6f7574566965772e7377696674222c226c696e65223a38387d5d2c226f6666736574223a343636302c22737461747573223a226477617266227d2c7b226275696c645f6964223a2263336434653566363037313832393361346235633664376538663930613162326333643465356636222c226672616d6573223a5b5d2c226f6666736574223a333834302c22737461747573223a226d697373696e675f64656275675f66696c65227d5d5d2c226d6f64756c6573223a5b7b226275696c645f6964223a2261316232633364346535663630373138323933613462356336643765386639306131623263336434222c226d6f64756c65223a224d79417070227d2c7b226275696c645f6964223a2263336434653566363037313832393361346235633664376538663930613162326333643465356636222c226d6f64756c65223a226c696263727970746f2e736f2e33227d5d7d', 1772445601000);
INSERT INTO "report_symbols" VALUES (3, X'7b2274687265616473223a5b5b7b226275696c645f6964223a2261316232633364346535663630373138323933613462356336643765386639306131623263336434222c226672616d6573223a5b7b2266756e6374696f6e223a224d794170702e436865636b6f7574566965772e7061792829222c2266696c65223a22436865636b6f7574566965772e7377696674222c226c696e65223a38387d5d2c226f6666736574223a343636302c22737461747573223a226477617266227d2c7b226275696c645f6964223a2263336434653566363037313832393361346235633664376538663930613162326333643465356636222c226672616d6573223a5b5d2c226f6666736574223a333834302c22737461747573223a226d697373696e675f64656275675f66696c65227d5d5d2c226d6f64756c6573223a5b7b226275696c645f6964223a2261316232633364346535663630373138323933613462356336643765386639306131623263336434222c226d6f64756c65223a224d79417070227d2c7b226275696c645f6964223a2263336434653566363037313832393361346235633664376538663930613162326333643465356636222c226d6f64756c65223a226c696263727970746f2e736f2e33227d5d7d', 1772449201000);
INSERT INTO "report_symbols" VALUES (5, X'7b2274687265616473223a5b5b7b226275696c645f6964223a2261316232633364346535663630373138323933613462356336643765386639306131623263336434222c226672616d6573223a5b7b2266756e6374696f6e223a224d794170702e436865636b6f7574566965772e7061792829222c2266696c65223a22436865636b6f7574566965772e7377696674222c226c696e65223a38387d5d2c226f6666736574223a343636302c22737461747573223a226477617266227d2c7b226275696c645f6964223a2263336434653566363037313832393361346235633664376538663930613162326333643465356636222c226672616d6573223a5b5d2c226f6666736574223a333834302c22737461747573223a226d697373696e675f64656275675f66696c65227d5d5d2c226d6f64756c6573223a5b7b226275696c645f6964223a2261316232633364346535663630373138323933613462356336643765386639306131623263336434222c226d6f64756c65223a224d79417070227d2c7b226275696c645f6964223a2263336434653566363037313832393361346235633664376538663930613162326333643465356636222c226d6f64756c65223a226c696263727970746f2e736f2e33227d5d7d', 1772452801000);
INSERT INTO "issues" VALUES (1, 1, 'v2:8c1f0a', 'crash', '{"frames":["CheckoutView.pay()"],"version":2}', 'EXC_BAD_ACCESS in CheckoutView.pay()', 'CheckoutView.pay()', 'open', 1, NULL, 1772445600000, 1772452800000, '2.4.0', '2.4.0', 2, 2, 0, 1, 2, 1772452800000, 2, NULL, NULL, 1772445600000, 'https://github.com/example/ios-app/issues/412', 0);
INSERT INTO "issues" VALUES (2, 1, 'v2:31d9e4', 'nonfatal', '{"frames":["Decoder.decode(_:)"],"version":2}', 'DecodingError.keyNotFound', 'Decoder.decode(_:)', 'closed', 0, 1772460000000, 1772449200000, 1772456400000, '2.4.0', '2.4.0', 1, 1, 0, 0, 1, 1772456400000, 2, 'the dashboard (session 1)', 'Fixed by the 2.4.1 decoder change', 1772449200000, NULL, 0);
INSERT INTO "issues" VALUES (3, 2, 'v2:77aa02', 'crash', '{"frames":["worker.run"],"version":2}', 'KeyError: ''job_id''', 'worker.run', 'muted', 0, 1772460000000, 1772452800000, 1772460000000, '1.0.0', '1.0.0', 1, 1, 0, 0, 1, 1772460000000, 2, 'the dashboard (session 1)', NULL, 1772452800000, 'https://gitlab.example.com/backend/worker/-/issues/7', 0);
INSERT INTO "issue_releases" VALUES (1, '2.4.0', 2, 2, 1772445600000, 1772452800000);
INSERT INTO "issue_releases" VALUES (2, '2.4.0', 1, 1, 1772449200000, 1772456400000);
INSERT INTO "issue_releases" VALUES (3, '1.0.0', 1, 1, 1772452800000, 1772460000000);
INSERT INTO "issue_days" VALUES (1, 20514, 2, 2);
INSERT INTO "issue_days" VALUES (2, 20514, 1, 1);
INSERT INTO "issue_days" VALUES (3, 20514, 1, 1);
INSERT INTO "issue_users" VALUES (1, 'h1:438a4c5ccbb62206c799fd3784291d87', 1);
INSERT INTO "issue_users" VALUES (1, 'h1:c5ea98421f921a764c01b5fd9220b64d', 1);
INSERT INTO "issue_users" VALUES (2, 'h1:438a4c5ccbb62206c799fd3784291d87', 1);
INSERT INTO "issue_users" VALUES (3, 'h1:43871e4b1f2a1e3952603134c154ad40', 1);
INSERT INTO "issue_release_users" VALUES (1, '2.4.0', 'h1:438a4c5ccbb62206c799fd3784291d87', 1);
INSERT INTO "issue_release_users" VALUES (1, '2.4.0', 'h1:c5ea98421f921a764c01b5fd9220b64d', 1);
INSERT INTO "issue_release_users" VALUES (2, '2.4.0', 'h1:438a4c5ccbb62206c799fd3784291d87', 1);
INSERT INTO "issue_release_users" VALUES (3, '1.0.0', 'h1:43871e4b1f2a1e3952603134c154ad40', 1);
INSERT INTO "issue_day_users" VALUES (1, 20514, 'h1:438a4c5ccbb62206c799fd3784291d87', 1);
INSERT INTO "issue_day_users" VALUES (1, 20514, 'h1:c5ea98421f921a764c01b5fd9220b64d', 1);
INSERT INTO "issue_day_users" VALUES (2, 20514, 'h1:438a4c5ccbb62206c799fd3784291d87', 1);
INSERT INTO "issue_day_users" VALUES (3, 20514, 'h1:43871e4b1f2a1e3952603134c154ad40', 1);
INSERT INTO "issue_tags" VALUES (1, 'os', 'iOS 18.3', 2, 2);
INSERT INTO "issue_tags" VALUES (2, 'os', 'iOS 18.3', 1, 1);
INSERT INTO "issue_tags" VALUES (3, 'os', 'Linux', 1, 1);
INSERT INTO "health_days" VALUES (1, '', 20514, 5, 2, 1, 1, 3, 2);
INSERT INTO "health_days" VALUES (1, '2.3.1', 20514, 1, 0, 1, 0, 1, 0);
INSERT INTO "health_days" VALUES (1, '2.4.0', 20514, 4, 2, 0, 1, 3, 2);
INSERT INTO "health_days" VALUES (2, '', 20514, 1, 0, 0, 0, 1, 0);
INSERT INTO "health_days" VALUES (2, '1.0.0', 20514, 1, 0, 0, 0, 1, 0);
INSERT INTO "health_day_users" VALUES (1, '', 20514, 'h1:438a4c5ccbb62206c799fd3784291d87', 2, 1);
INSERT INTO "health_day_users" VALUES (1, '', 20514, 'h1:47f7dd47c50e9faf8df611f7542ca32d', 2, 0);
INSERT INTO "health_day_users" VALUES (1, '', 20514, 'h1:c5ea98421f921a764c01b5fd9220b64d', 1, 1);
INSERT INTO "health_day_users" VALUES (1, '2.3.1', 20514, 'h1:47f7dd47c50e9faf8df611f7542ca32d', 1, 0);
INSERT INTO "health_day_users" VALUES (1, '2.4.0', 20514, 'h1:438a4c5ccbb62206c799fd3784291d87', 2, 1);
INSERT INTO "health_day_users" VALUES (1, '2.4.0', 20514, 'h1:47f7dd47c50e9faf8df611f7542ca32d', 1, 0);
INSERT INTO "health_day_users" VALUES (1, '2.4.0', 20514, 'h1:c5ea98421f921a764c01b5fd9220b64d', 1, 1);
INSERT INTO "health_day_users" VALUES (2, '', 20514, 'h1:43871e4b1f2a1e3952603134c154ad40', 1, 0);
INSERT INTO "health_day_users" VALUES (2, '1.0.0', 20514, 'h1:43871e4b1f2a1e3952603134c154ad40', 1, 0);
INSERT INTO "health_releases" VALUES (1, '', 1772442000000, 1772445600000, 5, 2, 1, 1, 3, 2);
INSERT INTO "health_releases" VALUES (1, '2.3.1', 1772442000000, 1772445600000, 1, 0, 1, 0, 1, 0);
INSERT INTO "health_releases" VALUES (1, '2.4.0', 1772442000000, 1772445600000, 4, 2, 0, 1, 3, 2);
INSERT INTO "health_releases" VALUES (2, '', 1772442000000, 1772445600000, 1, 0, 0, 0, 1, 0);
INSERT INTO "health_releases" VALUES (2, '1.0.0', 1772442000000, 1772445600000, 1, 0, 0, 0, 1, 0);
INSERT INTO "health_release_users" VALUES (1, '', 'h1:438a4c5ccbb62206c799fd3784291d87', 2, 1);
INSERT INTO "health_release_users" VALUES (1, '', 'h1:47f7dd47c50e9faf8df611f7542ca32d', 2, 0);
INSERT INTO "health_release_users" VALUES (1, '', 'h1:c5ea98421f921a764c01b5fd9220b64d', 1, 1);
INSERT INTO "health_release_users" VALUES (1, '2.3.1', 'h1:47f7dd47c50e9faf8df611f7542ca32d', 1, 0);
INSERT INTO "health_release_users" VALUES (1, '2.4.0', 'h1:438a4c5ccbb62206c799fd3784291d87', 2, 1);
INSERT INTO "health_release_users" VALUES (1, '2.4.0', 'h1:47f7dd47c50e9faf8df611f7542ca32d', 1, 0);
INSERT INTO "health_release_users" VALUES (1, '2.4.0', 'h1:c5ea98421f921a764c01b5fd9220b64d', 1, 1);
INSERT INTO "health_release_users" VALUES (2, '', 'h1:43871e4b1f2a1e3952603134c154ad40', 1, 0);
INSERT INTO "health_release_users" VALUES (2, '1.0.0', 'h1:43871e4b1f2a1e3952603134c154ad40', 1, 0);
INSERT INTO "alert_settings" VALUES (1, '{"webhook":"https://hooks.example.com/faultline","velocity_percent":1,"velocity_users":25}', 1772438400000);
INSERT INTO "webhook_deliveries" VALUES (1, 1, 'https://hooks.example.com/faultline', X'7b22616c657274223a317d', 'delivered', 1, 1772463600000, 200, NULL, 1772449200000, 0);
INSERT INTO "webhook_deliveries" VALUES (2, 3, 'https://hooks.example.com/faultline', X'7b22616c657274223a337d', 'failed', 8, 1772463600000, 502, '502 Bad Gateway', NULL, 0);
INSERT INTO "webhook_deliveries" VALUES (3, 4, 'https://hooks.example.com/faultline', X'7b22616c657274223a347d', 'pending', 1, 1772463600000, 200, NULL, NULL, 1);
INSERT INTO "webhook_deliveries" VALUES (4, 1, 'mailto:ada@example.org', X'46726f6d3a204661756c746c696e65203c6661756c746c696e654063726173682e6578616d706c652e636f6d3e0d0a546f3a20616461406578616d706c652e6f72670d0a5375626a6563743a205b696f732d6170705d204e65772069737375653a204558435f4241445f41434345535320696e20436865636b6f7574566965772e70617928290d0a446174653a204d6f6e2c203032204d617220323032362031303a30303a3030202b303030300d0a4d6573736167652d49443a203c616c6572742d312e6164614063726173682e6578616d706c652e636f6d3e0d0a4d494d452d56657273696f6e3a20312e300d0a436f6e74656e742d547970653a20746578742f706c61696e3b20636861727365743d7574662d380d0a436f6e74656e742d5472616e736665722d456e636f64696e673a20386269740d0a0d0a41206e657720697373756520696e20696f732d6170703a204558435f4241445f41434345535320696e20436865636b6f7574566965772e70617928290d0a', 'delivered', 1, 1772445600000, 250, NULL, 1772445602000, 0);
INSERT INTO "payloads" VALUES (1, 1, 1772445600000, 'gzip', 486, X'1f8b08000000000002036d904d6bc3300c86ff4af1b929723e9bdcbaae941d76ca18636314c796d7b0e603db092da5ff7d72d2c10e3b4aefab47af7465ba338d70ac60ad70f588c1c8d99219ec3be32c2b3eae0c476cdda15664893597a1c82b0415c5592673c131a95299a935e61afce477dd7aa734c21ea9747583d689a6a75e08611a401440f80279c1e30292f769d70985456f58c52ba00eb6636dbab6a1bdd4ed4da706e9eaae2569b068587165531c5f049cdd96cca2b5649853dac0074163bac9ea2ebd87974ffb72b77f25851259f1e57bbbb7ede161f378d86cb7bbb25c08b78033070f74478342cd0f986e41223b33e09269238830294229433022c13949144850c8c32826c2ff226820fce7ed9352d055a73ba72522f99e2f9bbea780d5509fd47c8be05528231563a253c8f83acc231157894c55866b9dc3afeea7e627fe5906f765b71fdf175152e6010000', 'native-v1');
INSERT INTO "payloads" VALUES (2, 1, 1772449200000, 'gzip', 486, X'1f8b08000000000002036d904d6bc3300c86ff4af1b929723e9bdcbaae941d76ca18636314c796d7b0e603db092da5ff7d72d2c10e3b4aefab47af7465ba338d70ac60ad70f588c1c8d99219ec3be32c2b3eae0c476cdda15664893597a1c82b0415c5592673c131a95299a935e61afce477dd7aa734c21ea9747583d689a6a75e08611a401440f80279c1e30292f769d70985456f58c52ba00eb6636dbab6a1bdd4ed4da706e9eaae2569b068587165531c5f049cdd96cca2b5649853dac0074163bac9ea2ebd87974ffb72b77f25851259f1e57bbbb7ede161f378d86cb7bbb25c08b78033070f74478342cd0f986e41223b33e09269238830294229433022c13949144850c8c32826c2ff226820fce7ed9352d055a73ba72522f99e2f9bbea780d5509fd47c8be05528231563a253c8f83acc231157894c55866b9dc3afeea7e627fe5906f765b71fdf175152e6010000', 'native-v1');
INSERT INTO "payloads" VALUES (3, 2, 1772452800000, 'deflate', 190, X'789c1d8ecb0e82400c45ffa51b364a4079ef5df909c6980e74223a329332a084ccbf5b58ded3739bbb02cd34f847df41033556aa6c8b2ea74c67c9393d61aa92b6ee2a2a7581b9820338835e5bfe88ed16ffb4833026433892a0344ee2448891a746b2468f4632fd5a72be17bb59614633d108cd6d05bfb8ad76a5e5c26c59ccfd28287a5925a32208f770806924deaafbcaafe537f1b18410fe2d2e3c7e', 'sentry-event');
INSERT INTO "client_reports" VALUES (2, 20514, 'ratelimit_backoff', 'error', 17);
INSERT INTO "attachments" VALUES (1, 2, '000000000000000000000000000000e5', 'upload_file_minidump', 'application/octet-stream', 'event.minidump', 8, X'4d444d5093a70000', 1772452800000);
INSERT INTO "dif_uploads" VALUES (1, 'abababababababababababababababababababab', 'MyApp.debug', 'd4c3b2a1-f6e5-1807-2939-4a5b6c7d8e9f', 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4', 'ok', NULL, 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4', 1772449200000);
INSERT INTO "admin_sessions" VALUES (1, '5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e', 'c2VjcmV0LW9mLXRoZS1zZXNzaW9uLTAwMDAwMDAx', 1772442000000, 1772485200000, NULL);
INSERT INTO "admin_sessions" VALUES (2, '6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f', 'c2VjcmV0LW9mLXRoZS1zZXNzaW9uLTAwMDAwMDAy', 1772445600000, 1772488800000, 1);
INSERT INTO "report_modules" VALUES (1, 1, 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4', 'MyApp', '2.4.0', 2);
INSERT INTO "report_modules" VALUES (2, 1, 'c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6', 'libcrypto.so.3', '2.4.0', 0);
INSERT INTO "counters" VALUES ('debug_files', 3);
INSERT INTO "search_documents" VALUES (1, 'p1', '000000000000000000000000000000e1', 'user-1', '2.4.0
production', 'SIGSEGV at 0x10', 'MyApp.CheckoutView.pay()', 'screen checkout');
INSERT INTO "search_documents" VALUES (2, 'p1', '000000000000000000000000000000e2', 'user-2', '2.4.0 (240)
production', 'SIGSEGV at 0x10', 'MyApp.CheckoutView.pay()', 'screen checkout');
INSERT INTO "search_documents" VALUES (3, 'p1', '000000000000000000000000000000e3', 'user-1', 'com.example.app@2.4.0+240
production', 'DecodingError ', 'MyApp.CheckoutView.pay()', 'screen checkout');
INSERT INTO "search_documents" VALUES (5, 'p2', '000000000000000000000000000000e5', 'worker-7', '1.0.0
production', 'KeyError at 0x10', 'MyApp.CheckoutView.pay()', 'screen checkout');
INSERT INTO "debug_files" VALUES (1, 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4', 'debuginfo', 18204112, 'x86_64', 'elf', 'debug,symtab', 'MyApp', 1772449200000, 'dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd', 1);
INSERT INTO "debug_files" VALUES (1, 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4', 'executable', 2404352, 'x86_64', 'elf', 'symtab', 'MyApp', 1772449200000, 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', 2);
INSERT INTO "debug_files" VALUES (1, 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4', 'sources', 88410, 'x86_64', 'sourcebundle', 'sources', 'MyApp.src.zip', 1772449200000, '5555555555555555555555555555555555555555555555555555555555555555', 3);
INSERT INTO "issue_aliases" VALUES (1, 'v2:5d20c3', 1, 1772456400000);
INSERT INTO "issues_replaced" VALUES (4, 1, 1, 'v2:5d20c3', 1772456400000, 'person:1:Ada Lovelace');
INSERT INTO "people" VALUES (1, 'ada@example.org', 'Ada Lovelace', 1, 'scrypt$ln=15,r=8,p=1$a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1$52b7d668654ba53efe621801cd54a8faa82349c8f169d212616e2df882033cef', 1770714000000);
INSERT INTO "people" VALUES (2, 'grace@example.org', 'Grace Hopper', 0, 'scrypt$ln=15,r=8,p=1$b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2$7d4aab8bb5b0d09d3411e5868ce954ca54f6308b0505118fcc3e2917cdaa67d9', 1771405200000);
INSERT INTO "people" VALUES (3, 'linus@example.org', '', 0, NULL, 1772438400000);
INSERT INTO "memberships" VALUES (1, 1, 'admin');
INSERT INTO "memberships" VALUES (2, 1, 'member');
INSERT INTO "memberships" VALUES (2, 2, 'admin');
INSERT INTO "memberships" VALUES (3, 1, 'viewer');
INSERT INTO "invites" VALUES ('587078d635168058f0e4dcf8ebeca05ae6b845ba2392308953a7b902c4d20b94', 3, 1772438400000, 1773043200000);
INSERT INTO "quota_counts" VALUES (1, 20513, '2.3.1', '', 1, 0);
INSERT INTO "quota_counts" VALUES (1, 20514, '2.4.0', '', 3, 0);
INSERT INTO "quota_counts" VALUES (1, 20514, '2.4.0', 'v2:8c1f0a', 0, 41);
INSERT INTO "quota_counts" VALUES (2, 20514, '', '', 0, 3);
INSERT INTO "quota_counts" VALUES (2, 20514, '1.0.0', '', 1, 250);
INSERT INTO "alerts" VALUES (1, 1, 'new_issue', 'new_issue:1', 1, '2.4.0', 'New issue: EXC_BAD_ACCESS in CheckoutView.pay()', 'rule new_issue', 1772445600000, 1);
INSERT INTO "alerts" VALUES (2, 1, 'regression', 'regression:1:2.4.0 (240)', 1, '2.4.0', 'Regressed in 2.4.0 (240)', 'rule regression', 1772449200000, 1);
INSERT INTO "alerts" VALUES (3, 1, 'velocity', 'velocity:1:2.4.0', 1, '2.4.0', 'Crash velocity: 2 users in 30 min', 'rule velocity', 1772452800000, 1);
INSERT INTO "alerts" VALUES (4, 1, 'storage_full', 'storage_full:1', NULL, NULL, 'The server''s disk is full', 'rule storage_full', 1772456400000, 0);
INSERT INTO "alerts" VALUES (5, 2, 'quota_reached', 'quota_reached:minute:1772452800', NULL, NULL, 'The project''s quota of 60 events per minute was reached', '{"quota":60,"retry_after_seconds":17}', 1772452800000, 1);
INSERT INTO "grouping_rules" VALUES (1, 1, 'error.type:NetworkError error.code:1001 -> network-timeout
', 1772269200000, 'person:1:Ada Lovelace');
INSERT INTO "grouping_rules" VALUES (1, 2, '# one issue per network failure, one for the checkout
error.type:NetworkError error.code:1001 -> network-timeout
function:"MyApp.CheckoutView.*" -> checkout {{ error.type }}
', 1772460000000, 'the API (admin token)');
INSERT INTO "grouping_rules" VALUES (2, 1, 'error.type:KeyError -> worker-key-error {{ error.value }}
', 1772467200000, 'cli');
INSERT INTO "regroups" VALUES (1, 2, 2, 4, 4, 2, 1772460000000, NULL);
INSERT INTO "regroups" VALUES (2, 1, 5, 5, 1, 1, 1772467200000, 1772467201500);
INSERT INTO "personal_tokens" VALUES (1, 1, 'ci-upload', 'eabe8d1a45d5e50a07c3d548c22c8494da502fd97e204bbe6a3e352c564e19b3', 'upload:symbols', 1772182800000, 1772449200000, NULL);
INSERT INTO "personal_tokens" VALUES (2, 2, 'grafana', 'df3f6fe07a439cb351f796acb9f49b0f41176cbbdf08919f848248be9d66b612', 'read,write:issues', 1772355600000, NULL, 1780131600000);
INSERT INTO "second_factors" VALUES (1, 'LJNVYXK6L5QGCYTDMRSWMZ3INFVGW3DN', 1772010000000, 59081520);
INSERT INTO "second_factors" VALUES (2, 'HQ6T4P2AIFBEGRCFIZDUQSKKJNGE2TSP', NULL, 0);
INSERT INTO "recovery_codes" VALUES (1, '1797f8eeeaba4c30ee4281dccfddad951a85d0dad6f36b4b7062da6534adcb0c');
INSERT INTO "recovery_codes" VALUES (1, '197ef70d714c4f48d6530ff641daafbc388b3811d78bdc22224c54e6327ce0ba');
INSERT INTO "recovery_codes" VALUES (1, '2b6de3b7a52da543f8adfe894665b01ce801ecaae9b179ac537b37dba91fae8b');
INSERT INTO "recovery_codes" VALUES (1, '3c6c7b4b5531e8e993974cb0932306f4f3212291e251b612b720dba215fe9f87');
INSERT INTO "recovery_codes" VALUES (1, '8d14eddbf81e93b986041314cfba66189f48cdaee955be937f3062748aea09d2');
INSERT INTO "recovery_codes" VALUES (1, 'bdb1cb7d12868e6523c168efff38ae5ffd2276bfb89069eda9f2f2c21d9395b5');
INSERT INTO "recovery_codes" VALUES (1, 'cb2a6e51327672877a1fedcb2466e3250a6c80bec08b1375dabdebeeafa2a2c9');
INSERT INTO "recovery_codes" VALUES (1, 'e43f9c7e18c7967d5d9af4243b3a85e90f87bf6c5fb622d2e4c52008feb949f5');
INSERT INTO "recovery_codes" VALUES (1, 'ec864b66991401e9e5aaa65da9dc5f7a1ad407e868a3465af5e4b483a8a97598');
INSERT INTO "audit_log" VALUES (1, 1, 1769850000000, 'cli', NULL, NULL, NULL, NULL, 'project.created', 'ios-app', NULL, NULL);
INSERT INTO "audit_log" VALUES (2, NULL, 1770714000000, 'cli', NULL, NULL, NULL, NULL, 'person.owner', 'ada@example.org', 'not owner', 'owner');
INSERT INTO "audit_log" VALUES (3, 1, 1771405200000, 'person', 1, 'Ada Lovelace', NULL, '203.0.113.7', 'member.invited', 'grace@example.org', NULL, 'member');
INSERT INTO "audit_log" VALUES (4, NULL, 1772182800000, 'person', 1, 'Ada Lovelace', NULL, '203.0.113.7', 'token.created', 'token 1 "ci-upload" of ada@example.org', NULL, 'upload:symbols');
INSERT INTO "audit_log" VALUES (5, 1, 1772355600000, 'person', 1, 'Ada Lovelace', NULL, '203.0.113.7', 'project.quotas', 'ios-app', 'none', '600/minute, 10000/hour');
INSERT INTO "audit_log" VALUES (6, 1, 1772438400000, 'person', 1, 'Ada Lovelace', NULL, '203.0.113.7', 'member.invited', 'linus@example.org', NULL, 'viewer');
INSERT INTO "audit_log" VALUES (7, 1, 1772456400000, 'personal-token', 1, 'Ada Lovelace', '1', '2001:db8::17', 'issue.merge', 'issue 1', NULL, 'merged issue 4');
INSERT INTO "audit_log" VALUES (8, 1, 1772460000000, 'admin-token', NULL, NULL, NULL, '127.0.0.1', 'project.grouping_rules', 'fingerprint rules', 'version 1', 'version 2: 2 rules');
INSERT INTO "audit_log" VALUES (9, 1, 1772460000000, 'person', 2, 'Grace Hopper', NULL, '198.51.100.23', 'issue.status', 'issue 2', NULL, 'closed');
INSERT INTO "audit_log" VALUES (10, 2, 1772463600000, 'project-token', NULL, NULL, NULL, '10.0.0.5', 'issue.status', 'issue 3', NULL, 'muted');
INSERT INTO "audit_log" VALUES (11, 2, 1772467200000, 'cli', NULL, NULL, NULL, NULL, 'project.grouping_rules', 'fingerprint rules', NULL, 'version 1: 1 rule');
INSERT INTO "alert_mail_preferences" VALUES (1, 1, 'new_issue,regression,quota_reached', 'weekly');
INSERT INTO "alert_mail_preferences" VALUES (2, 1, 'velocity', 'none');
INSERT INTO "alert_mail_preferences" VALUES (2, 2, '', 'daily');
INSERT INTO "mail_digests" VALUES (1, 1, 1, 'weekly', 20507, 'ada@example.org', X'46726f6d3a204661756c746c696e65203c6661756c746c696e654063726173682e6578616d706c652e636f6d3e0d0a546f3a20616461406578616d706c652e6f72670d0a5375626a6563743a205b696f732d6170705d20596f7572207765656b6c79206469676573740d0a446174653a204d6f6e2c203032204d617220323032362031303a30303a3030202b303030300d0a4d6573736167652d49443a203c6469676573742d314063726173682e6578616d706c652e636f6d3e0d0a4d494d452d56657273696f6e3a20312e300d0a436f6e74656e742d547970653a20746578742f706c61696e3b20636861727365743d7574662d380d0a436f6e74656e742d5472616e736665722d456e636f64696e673a20386269740d0a0d0a43726173682d667265652075736572732039392e31202520287461726765742039392025293b2033206e6577206973737565732e0d0a', 'delivered', 1, 1772409660000, NULL, 1772409660000);
INSERT INTO "mail_digests" VALUES (2, 2, 2, 'daily', 20513, 'grace@example.org', X'46726f6d3a204661756c746c696e65203c6661756c746c696e654063726173682e6578616d706c652e636f6d3e0d0a546f3a206772616365406578616d706c652e6f72670d0a5375626a6563743a205b6261636b656e642d776f726b65725d20596f7572206461696c79206469676573740d0a446174653a204d6f6e2c203032204d617220323032362031303a30303a3030202b303030300d0a4d6573736167652d49443a203c6469676573742d324063726173682e6578616d706c652e636f6d3e0d0a4d494d452d56657273696f6e3a20312e300d0a436f6e74656e742d547970653a20746578742f706c61696e3b20636861727365743d7574662d380d0a436f6e74656e742d5472616e736665722d456e636f64696e673a20386269740d0a0d0a43726173682d667265652075736572732039392e31202520287461726765742039392025293b2033206e6577206973737565732e0d0a', 'pending', 2, 1772442600000, 'connection_failed', 1772409660000);
INSERT INTO "mail_secrets" VALUES (1, X'9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e');
INSERT INTO "issue_tag_users" VALUES (1, 'os', 'iOS 18.3', 'h1:438a4c5ccbb62206c799fd3784291d87', 1);
INSERT INTO "issue_tag_users" VALUES (1, 'os', 'iOS 18.3', 'h1:c5ea98421f921a764c01b5fd9220b64d', 1);
INSERT INTO "issue_tag_users" VALUES (2, 'os', 'iOS 18.3', 'h1:438a4c5ccbb62206c799fd3784291d87', 1);
INSERT INTO "issue_tag_users" VALUES (3, 'os', 'Linux', 'h1:43871e4b1f2a1e3952603134c154ad40', 1);
CREATE INDEX credentials_by_project ON credentials(project_id);
CREATE INDEX reports_by_project ON reports(project_id, id);
CREATE INDEX reports_by_kind ON reports(project_id, kind, id);
CREATE INDEX reports_by_release ON reports(project_id, release, id);
CREATE INDEX reports_by_payload ON reports(payload_id);
CREATE INDEX sessions_by_release ON sessions(project_id, release, started_at);
CREATE INDEX reports_pending_symbolication ON reports(id) WHERE symbolication = 'pending';
CREATE INDEX issues_by_update ON issues(project_id, updated_at);
CREATE INDEX reports_by_issue ON reports(issue_id, occurred_at);
CREATE INDEX issue_releases_by_release ON issue_releases(release, users);
CREATE INDEX health_days_by_day ON health_days(project_id, day);
CREATE INDEX sessions_by_update ON sessions(project_id, release, updated_at);
CREATE INDEX payloads_by_project ON payloads(project_id, received_at);
CREATE INDEX attachments_by_event ON attachments(project_id, event_id);
CREATE INDEX attachments_by_time ON attachments(received_at);
CREATE INDEX admin_sessions_by_expiry ON admin_sessions(expires_at);
CREATE INDEX report_modules_by_rank ON report_modules(project_id, build_id, rank);
CREATE INDEX reports_by_issue_id ON reports(issue_id, id);
CREATE INDEX reports_by_grouping_version ON reports(grouping_version);
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
CREATE INDEX debug_files_by_build_id ON debug_files(build_id, kind);
CREATE INDEX debug_files_by_blob ON debug_files(blob_sha256);
CREATE INDEX issues_list_by_last_seen ON issues(project_id, last_seen, id, status, kind, regressed);
CREATE INDEX issues_list_by_users ON issues(project_id, users, events, last_seen, id, status, kind, regressed);
CREATE INDEX issues_list_by_events ON issues(project_id, events, users, last_seen, id, status, kind, regressed);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(priority DESC, next_attempt_at) WHERE state = 'pending';
CREATE INDEX reports_by_time ON reports(project_id, occurred_at, issue_id, user_key);
CREATE INDEX issues_by_created ON issues(project_id, created_at);
CREATE TRIGGER projects_identity_key AFTER INSERT ON projects WHEN NEW.identity_key IS NULL
BEGIN
    UPDATE projects SET identity_key = randomblob(32) WHERE id = NEW.id;
END;
CREATE INDEX attachments_minidumps ON attachments(project_id, size)
    WHERE attachment_type = 'event.minidump';
CREATE INDEX issue_aliases_by_issue ON issue_aliases(issue_id);
CREATE INDEX issues_replaced_by_survivor ON issues_replaced(survivor_id);
CREATE TRIGGER issues_replaced_number_reused AFTER INSERT ON issues BEGIN
    DELETE FROM issues_replaced WHERE issue_id = NEW.id;
END;
CREATE INDEX reports_samples ON reports(project_id, sample) WHERE sample IS NOT NULL;
CREATE INDEX memberships_by_project ON memberships(project_id);
CREATE INDEX invites_by_person ON invites(person_id);
CREATE INDEX admin_sessions_by_person ON admin_sessions(person_id);
CREATE INDEX alerts_by_project ON alerts(project_id, id);
CREATE INDEX alerts_to_dispatch ON alerts(id) WHERE dispatched = 0;
CREATE INDEX personal_tokens_by_person ON personal_tokens(person_id);
CREATE INDEX audit_log_by_project ON audit_log(project_id, id);
CREATE INDEX alert_mail_preferences_by_project ON alert_mail_preferences(project_id);
CREATE INDEX mail_digests_due ON mail_digests(next_attempt_at) WHERE state = 'pending';
CREATE INDEX quota_counts_by_fingerprint ON quota_counts(project_id, fingerprint)
    WHERE fingerprint <> '';
CREATE INDEX login_tickets_by_expiry ON login_tickets(expires_at);
CREATE INDEX login_tickets_by_person ON login_tickets(person_id);
CREATE INDEX issues_hangs ON issues(project_id, last_seen, id) WHERE hang = true;
INSERT INTO "search_index" ("search_index") VALUES ('rebuild');
COMMIT;
