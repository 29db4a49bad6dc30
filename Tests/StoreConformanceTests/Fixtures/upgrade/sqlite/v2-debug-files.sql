-- Faultline upgrade snapshot: SQLite at v2-debug-files (made by tools/upgrade/make-snapshots)
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE CHECK (length(slug) BETWEEN 1 AND 64),
    created_at INTEGER NOT NULL,
    rate_limit_per_second REAL NOT NULL CHECK (rate_limit_per_second > 0)
);
CREATE TABLE credentials (
    hash TEXT PRIMARY KEY CHECK (length(hash) = 64),
    kind TEXT NOT NULL CHECK (kind IN ('ingest', 'upload', 'admin')),
    project_id INTEGER REFERENCES projects(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    CHECK ((kind = 'admin') = (project_id IS NULL))
);
CREATE TABLE payloads (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    received_at INTEGER NOT NULL,
    encoding TEXT NOT NULL CHECK (encoding IN ('gzip', 'deflate')),
    inflated_size INTEGER NOT NULL CHECK (inflated_size >= 0),
    bytes BLOB NOT NULL
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
    modules_dropped INTEGER NOT NULL DEFAULT 0 CHECK (modules_dropped >= 0),
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
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, session_id)
) WITHOUT ROWID;
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
INSERT INTO "grdb_migrations" VALUES ('v1-projects-reports-sessions');
INSERT INTO "grdb_migrations" VALUES ('v2-debug-files');
INSERT INTO "projects" VALUES (1, 'ios-app', 1769850000000, 50.0);
INSERT INTO "projects" VALUES (2, 'backend-worker', 1771578000000, 2.5);
INSERT INTO "credentials" VALUES ('1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a', 'ingest', 1, 1772438400000);
INSERT INTO "credentials" VALUES ('2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b', 'upload', 1, 1772438400000);
INSERT INTO "credentials" VALUES ('3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c', 'ingest', 2, 1772438400000);
INSERT INTO "credentials" VALUES ('4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d', 'admin', NULL, 1772438400000);
INSERT INTO "payloads" VALUES (1, 1, 1772445600000, 'gzip', 486, X'1f8b08000000000002036d904d6bc3300c86ff4af1b929723e9bdcbaae941d76ca18636314c796d7b0e603db092da5ff7d72d2c10e3b4aefab47af7465ba338d70ac60ad70f588c1c8d99219ec3be32c2b3eae0c476cdda15664893597a1c82b0415c5592673c131a95299a935e61afce477dd7aa734c21ea9747583d689a6a75e08611a401440f80279c1e30292f769d70985456f58c52ba00eb6636dbab6a1bdd4ed4da706e9eaae2569b068587165531c5f049cdd96cca2b5649853dac0074163bac9ea2ebd87974ffb72b77f25851259f1e57bbbb7ede161f378d86cb7bbb25c08b78033070f74478342cd0f986e41223b33e09269238830294229433022c13949144850c8c32826c2ff226820fce7ed9352d055a73ba72522f99e2f9bbea780d5509fd47c8be05528231563a253c8f83acc231157894c55866b9dc3afeea7e627fe5906f765b71fdf175152e6010000');
INSERT INTO "payloads" VALUES (2, 1, 1772449200000, 'gzip', 486, X'1f8b08000000000002036d904d6bc3300c86ff4af1b929723e9bdcbaae941d76ca18636314c796d7b0e603db092da5ff7d72d2c10e3b4aefab47af7465ba338d70ac60ad70f588c1c8d99219ec3be32c2b3eae0c476cdda15664893597a1c82b0415c5592673c131a95299a935e61afce477dd7aa734c21ea9747583d689a6a75e08611a401440f80279c1e30292f769d70985456f58c52ba00eb6636dbab6a1bdd4ed4da706e9eaae2569b068587165531c5f049cdd96cca2b5649853dac0074163bac9ea2ebd87974ffb72b77f25851259f1e57bbbb7ede161f378d86cb7bbb25c08b78033070f74478342cd0f986e41223b33e09269238830294229433022c13949144850c8c32826c2ff226820fce7ed9352d055a73ba72522f99e2f9bbea780d5509fd47c8be05528231563a253c8f83acc231157894c55866b9dc3afeea7e627fe5906f765b71fdf175152e6010000');
INSERT INTO "reports" VALUES (1, 1, '000000000000000000000000000000e1', 'crash', 1772445540000, 1772445600000, '2.4.0', 'production', 'user-1', 's-1', 'SIGSEGV', 'at 0x10', 1, 0, 486, 3, 0, 0, 0, 0, 0);
INSERT INTO "reports" VALUES (2, 1, '000000000000000000000000000000e2', 'crash', 1772445480000, 1772445600000, '2.4.0 (240)', 'production', 'user-2', 's-2', 'SIGSEGV', 'at 0x10', 1, 0, 486, 0, 0, 12, 0, 0, 0);
INSERT INTO "reports" VALUES (3, 1, '000000000000000000000000000000e3', 'nonfatal', 1772449020000, 1772449200000, 'com.example.app@2.4.0+240', 'production', 'user-1', 's-3', 'DecodingError', 'at 0x10', 2, 0, 486, 0, 0, 0, 0, 0, 0);
INSERT INTO "reports" VALUES (4, 1, '000000000000000000000000000000e4', 'crash', 1772448960000, 1772449200000, '2.3.1', 'production', NULL, 's-4', 'SIGABRT', 'at 0x10', 2, 0, 486, 0, 0, 0, 0, 0, 0);
INSERT INTO "sessions" VALUES (1, 's-1', 'user-1', '2.4.0', 'production', 1772442000000, 'crashed', 0, 42.5, 3, 1772445600000);
INSERT INTO "sessions" VALUES (1, 's-2', 'user-2', '2.4.0 (240)', 'production', 1772442000000, 'crashed', 0, 42.5, 3, 1772445600000);
INSERT INTO "sessions" VALUES (1, 's-3', 'user-1', 'com.example.app@2.4.0+240', 'production', 1772442000000, 'exited', 1, 42.5, 3, 1772445600000);
INSERT INTO "sessions" VALUES (1, 's-4', 'user-3', '2.3.1', 'production', 1772442000000, 'abnormal', 0, 42.5, 3, 1772445600000);
INSERT INTO "sessions" VALUES (1, 's-6', 'user-3', '2.4.0', 'production', 1772442000000, 'ok', 0, NULL, 3, 1772445600000);
INSERT INTO "sessions" VALUES (2, 's-5', 'worker-7', '1.0.0', 'production', 1772442000000, 'exited', 0, 42.5, 3, 1772445600000);
INSERT INTO "debug_files" VALUES (1, 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4', 'debuginfo', 18204112, 'x86_64', 'elf', 'debug,symtab', 'MyApp', 1772449200000);
INSERT INTO "debug_files" VALUES (1, 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4', 'executable', 2404352, 'x86_64', 'elf', 'symtab', 'MyApp', 1772449200000);
CREATE INDEX credentials_by_project ON credentials(project_id);
CREATE INDEX payloads_by_project ON payloads(project_id, received_at);
CREATE INDEX reports_by_project ON reports(project_id, id);
CREATE INDEX reports_by_kind ON reports(project_id, kind, id);
CREATE INDEX reports_by_release ON reports(project_id, release, id);
CREATE INDEX reports_by_time ON reports(project_id, occurred_at);
CREATE INDEX reports_by_payload ON reports(payload_id);
CREATE INDEX sessions_by_release ON sessions(project_id, release, started_at);
CREATE INDEX debug_files_by_build_id ON debug_files(build_id, kind);
COMMIT;
