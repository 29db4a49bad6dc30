#!/usr/bin/env python3
"""Seeds a Faultline SQLite database with REPORTS stored reports of one project, each with stored grouping facts
(GroupingFacts' stored form, `f1`) and filed in one of ISSUES issues whose fingerprints are grouping's own
(FNV-1a 64 over the canonical string, as Grouping.fingerprint computes it), for tools/bench/grouping/try.

Usage: seed.py DATABASE PROJECT_SLUG REPORTS [ISSUES]
"""
import sqlite3
import sys
import time

VERSION = 3  # Grouping.version


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode():
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def fingerprint(kind, origin, components):
    canonical = "faultline-grouping-v%d\n%s\n%s\n" % (VERSION, kind, origin)
    for c in components:
        canonical += c + "\n"
    return "v%d:%s" % (VERSION, fnv1a64(canonical))


def opt(v):
    return "\x1c" if v is None else v


def lst(items):
    return "".join("\x1e" + x for x in items)


def facts(kind, source, components, etype, value, code, functions, modules, release, platform, tags):
    return "\x1f".join([
        "f1", kind, source, "0", lst(components), opt(etype), opt(value), opt(code), lst(functions), lst(modules),
        opt(release), opt(platform), lst(k + "\x1d" + v for k, v in tags),
    ])


def issue_shape(i):
    """Issue i's kind, source, default components and the facts its reports share."""
    if i < 100:  # non-fatal network errors: 50 of them code 1001, each with its own top frame
        code = "1001" if i < 50 else "1002"
        fn = "Api%d.get()" % i
        return ("nonfatal", "error", ["type:NetworkError", "code:" + code, fn], "NetworkError", code, [fn], ["app"])
    if i < 150:  # decode errors without frames in their components, thrown from Inventory functions
        return ("nonfatal", "error", ["type:DecodeError%d" % i, "code:"], "DecodeError%d" % i, None, None, ["app"])
    if i < 200:  # crashes in libfoo
        fn = "parse%d()" % i
        return ("crash", "stack", [fn], None, None, [fn], ["app", "libfoo.so"])
    fn = "Module%d.run()" % i
    return ("crash", "stack", [fn], "SIGSEGV", None, [fn, "Main.main()"], ["app", "libc.so.6"])


def main():
    path, slug, reports = sys.argv[1], sys.argv[2], int(sys.argv[3])
    issues = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")
    (project,) = db.execute("SELECT id FROM projects WHERE slug = ?", (slug,)).fetchone()
    now = int(time.time() * 1000)
    db.execute(
        "INSERT INTO payloads (project_id, received_at, encoding, inflated_size, bytes) VALUES (?, ?, 'deflate', 1, x'00')",
        (project, now))
    (payload,) = db.execute("SELECT max(id) FROM payloads").fetchone()
    shapes = [issue_shape(i) for i in range(issues)]
    ids = []
    for i, (kind, source, components, etype, code, functions, modules) in enumerate(shapes):
        fp = fingerprint(kind, "computed", components)
        cur = db.execute(
            """INSERT INTO issues (project_id, fingerprint, kind, grouping, title, first_seen, last_seen, updated_at)
               VALUES (?, ?, ?, '{}', ?, ?, ?, ?)""", (project, fp, kind, "issue %d" % i, now, now, now))
        ids.append(cur.lastrowid)

    def rows():
        for n in range(reports):
            i = n % issues
            kind, source, components, etype, code, functions, modules = shapes[i]
            if 100 <= i < 150:
                functions = ["Inventory.load()" if n % 3 else "Inventory.save()", "Main.run()"]
            value = "timed out after %d s" % (n % 60) if etype == "NetworkError" else None
            release = "2.%d.0" % (n % 5)
            user = "user-%d" % (n % 50_000)
            f = facts(kind, source, components, etype, value, code, functions, modules, release, "iOS",
                      [("region", "eu-west" if n % 2 else "us-east")])
            event = "%032x" % (n + 1)
            yield (project, event, kind, now - n, now - (n % 86_400_000), release, user, payload, ids[i], VERSION, f)

    db.executemany(
        """INSERT INTO reports (project_id, event_id, kind, occurred_at, received_at, release, user_key, payload_id,
               payload_offset, payload_length, symbolication, issue_id, grouping_version, grouping_facts)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 1, 'complete', ?, ?, ?)""", rows())
    db.commit()
    print("seeded %d reports in %d issues" % (reports, issues), file=sys.stderr)


if __name__ == "__main__":
    main()
