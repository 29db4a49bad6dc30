#!/usr/bin/env python3
"""The soak driver of tools/bench/soak/run: mixed traffic at a steady rate for a given time, sampled every minute.

Traffic (each stream its own thread on keep-alive connections, paced to its rate; rates per second, scaled by SCALE):
  native    4 requests/s of `POST /api/v1/reports`, 1–5 crash reports each; every crashed thread has raw addresses
            in one of the POOL uploaded ELF files (so the worker symbolicates with libdw) and is one of 300 stacks,
            so issues grow to a few hundred and then reports add to them, as a live app's do
  sentry    6 envelopes/s to `/api/{project}/envelope/`: one error event (the same bytes sentry-sdk sends for an
            unhandled exception, as tools/bench/spike) and its crashed or exited session
  sessions  3 requests/s of `POST /api/v1/sessions`, 5 updates each (start and end of runs of 2,000 installs)
  uploads   one debug file every 10 s, `PUT /api/v1/debug-files/{build_id}`, cycling through the POOL build-ids:
            after the first cycle every upload replaces a file the server already has (the folder must stay flat)
  dashboard 1 page/s read with the admin token: overview, issue list, releases, an issue page (rendered on demand)
  api       2 reads/s with the upload token: issues, releases, top issues, one issue, its reports

Every minute it prints one row: requests and failures of that minute, the p99 latency, the server's RSS, its heap
(RssAnon: RSS less the mapped code and files, which grow as more of the binary is touched) and open files
(/proc/PID/status, /proc/PID/fd), the database and WAL size (SQLite files; pg_database_size and pg_wal), the
debug-file blob folder and the site folder, reports waiting for symbolication and filing, and issue pages waiting to
render (an issue whose page is missing or whose page's mark names fewer events than the issue has). Then it stops the
traffic, waits for the backlog to drain, and says whether memory and files stayed flat and the backlog bounded.

Usage: soak.py URL PID PROJECT INGEST_KEY UPLOAD_TOKEN ADMIN_TOKEN DATA BLOBS ELF MINUTES [--postgres URL]
"""
import http.client
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

args = sys.argv[1:]
postgres = None
if "--postgres" in args:
    at = args.index("--postgres")
    postgres = args[at + 1]
    del args[at:at + 2]
url, pid, project, key, token, admin, data, blobs, elf_path, minutes = args[:10]
minutes = float(minutes)
scale = float(os.environ.get("SOAK_SCALE", "1"))
host = urllib.parse.urlparse(url)
POOL = 12
STACKS = 300
INSTALLS = 2000
SLUG = "bench"
BASE = 0x555555554000

# ---- the debug files: one ELF, its build-id note rewritten per pool entry -------------------------------------------
elf = bytearray(open(elf_path, "rb").read())
note = elf.find(b"GNU\x00", 0)
while note >= 0:
    # An NT_GNU_BUILD_ID note: namesz 4, descsz 20, type 3, then "GNU\0" and the 20 bytes.
    if elf[note - 12:note] == (4).to_bytes(4, "little") + (20).to_bytes(4, "little") + (3).to_bytes(4, "little"):
        break
    note = elf.find(b"GNU\x00", note + 1)
if note < 0:
    sys.exit("error: %s has no 20-byte GNU build-id note" % elf_path)
id_at = note + 4
build_ids = []
files = []
for n in range(POOL):
    build_id = bytes(random.Random(n).getrandbits(8) for _ in range(20))
    copy = bytearray(elf)
    copy[id_at:id_at + 20] = build_id
    build_ids.append(build_id.hex())
    files.append(bytes(copy))
# Addresses inside the text of the file: the symbols `nm` lists (function starts + a few bytes).
symbols = [int(line.split()[0], 16) for line in subprocess.run(
    ["nm", "--defined-only", elf_path], capture_output=True, text=True, check=True).stdout.splitlines()
    if len(line.split()) == 3 and line.split()[1] in "tT" and int(line.split()[0], 16) > 0]
if not symbols:
    sys.exit("error: %s has no text symbols" % elf_path)


def iso(at=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at if at is not None else time.time()))


def native_report(rng):
    stack = rng.randrange(STACKS)
    srng = random.Random(stack)
    file_index = stack % POOL
    frames = [{"address": hex(BASE + srng.choice(symbols) + srng.randrange(1, 8)), "module": "libsoak.so"}
              for _ in range(srng.randrange(4, 12))]
    install = rng.randrange(INSTALLS)
    return {
        "event_id": uuid.UUID(int=rng.getrandbits(128)).hex, "kind": "crash", "timestamp": iso(),
        "install_id": "install-%d" % install, "environment": "production",
        "app": {"id": "com.example.soak", "version": "2.%d.0" % (stack % 4), "build": 100 + stack % 4},
        "device": {"model": "Pixel 8", "os": "Android", "os_version": "15", "arch": "x86_64"},
        "error": {"type": "SIGSEGV", "code": "SEGV_MAPERR", "message": "Segmentation fault at 0x10"},
        "threads": [{"name": "main", "crashed": True, "frames": frames}],
        "modules": [{"name": "libsoak.so", "path": "/data/app/lib/libsoak.so", "build_id": build_ids[file_index],
                     "base_address": hex(BASE), "size": 0x1000000}],
        "breadcrumbs": [{"timestamp": iso(), "category": "navigation", "message": "step %d" % i} for i in range(5)],
        "custom_keys": {"screen": "cart", "stack": stack},
    }


def sentry_envelope(rng):
    event_id = uuid.UUID(int=rng.getrandbits(128)).hex
    now = iso()
    install = rng.randrange(INSTALLS)
    crashed = rng.random() < 0.3
    release = "soak-sentry@1.%d.0" % rng.randrange(3)
    event = ('{"event_id":"%s","timestamp":"%s","platform":"native","level":"fatal","release":"%s",'
             '"user":{"id":"s%d"},"exception":{"values":[{"type":"SIGSEGV","value":"Segfault",'
             '"mechanism":{"type":"signalhandler","handled":false},"stacktrace":{"frames":['
             '{"function":"main","instruction_addr":"0x1000"},{"function":"Cart.step%d","instruction_addr":"0x2000"}]}}]}}'
             % (event_id, now, release, install, rng.randrange(40)))
    session = ('{"sid":"%s","did":"s%d","init":true,"started":"%s","timestamp":"%s","status":"%s","errors":%d,'
               '"attrs":{"release":"%s","environment":"production"}}'
               % (uuid.UUID(int=rng.getrandbits(128)), install, now, now, "crashed" if crashed else "exited",
                  1 if crashed else 0, release))
    parts = ['{"event_id":"%s"}' % event_id]
    for kind, item in (("event", event), ("session", session)):
        parts.append('{"type":"%s","length":%d}' % (kind, len(item.encode())))
        parts.append(item)
    return ("\n".join(parts) + "\n").encode()


def session_batch(rng):
    updates = []
    for _ in range(5):
        sid = uuid.UUID(int=rng.getrandbits(128)).hex
        install = rng.randrange(INSTALLS)
        started = iso(time.time() - 60)
        release = "2.%d.0" % rng.randrange(4)
        updates.append({"session_id": sid, "install_id": "install-%d" % install, "release": release,
                        "started": started, "status": "ok", "errors": 0, "seq": 1})
        updates.append({"session_id": sid, "install_id": "install-%d" % install, "release": release,
                        "started": started, "status": "exited", "errors": 0, "duration": 60, "seq": 2})
    return json.dumps({"sessions": updates}).encode()


# ---- the streams --------------------------------------------------------------------------------------------------
lock = threading.Lock()
minute = {"requests": 0, "failures": 0, "latencies": [], "statuses": {}}
totals = {"requests": 0, "failures": 0, "statuses": {}}
known_issues = []
stop = threading.Event()


def record(stream, status, seconds):
    with lock:
        ok = isinstance(status, int) and status < 400
        minute["requests"] += 1
        minute["latencies"].append(seconds)
        totals["requests"] += 1
        label = "%s %s" % (stream, status)
        minute["statuses"][label] = minute["statuses"].get(label, 0) + 1
        totals["statuses"][label] = totals["statuses"].get(label, 0) + 1
        if not ok:
            minute["failures"] += 1
            totals["failures"] += 1


def stream(name, rate, make):
    """Calls make(rng) → (method, path, body, headers) `rate` times a second until stopped, on one connection."""
    rng = random.Random(sum(map(ord, name)))
    interval = 1.0 / (rate * scale)
    connection = None
    next_at = time.monotonic()
    while not stop.is_set():
        method, path, body, headers = make(rng)
        if connection is None:
            connection = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
        started = time.monotonic()
        try:
            connection.request(method, path, body, headers)
            response = connection.getresponse()
            payload = response.read()
            status = response.status
            if name == "api" and status == 200 and path.startswith("/api/v1/issues?"):
                ids = [issue["id"] for issue in json.loads(payload).get("issues", [])]
                with lock:
                    known_issues[:] = ids or known_issues
        except Exception as error:  # a reset connection is a finding (counted), not the end of the soak
            status = type(error).__name__
            connection.close()
            connection = None
        record(name, status, time.monotonic() - started)
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0:
            stop.wait(delay)
        else:
            next_at = time.monotonic()  # behind (a slow answer): do not burst to catch up


ingest_headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
upload_headers = {"Authorization": "Bearer " + token, "Content-Type": "application/octet-stream"}
admin_headers = {"Authorization": "Bearer " + admin}
upload_index = [0]


def native(rng):
    reports = [native_report(rng) for _ in range(rng.randrange(1, 6))]
    return "POST", "/api/v1/reports", json.dumps({"reports": reports}).encode(), ingest_headers


def sentry(rng):
    return ("POST", "/api/%s/envelope/?sentry_key=%s" % (project, key), sentry_envelope(rng),
            {"Content-Type": "application/x-sentry-envelope"})


def sessions(rng):
    return "POST", "/api/v1/sessions", session_batch(rng), ingest_headers


def upload(rng):
    n = upload_index[0] % POOL
    upload_index[0] += 1
    return "PUT", "/api/v1/debug-files/%s?name=libsoak.so" % build_ids[n], files[n], upload_headers


def issue_id(rng):
    """An issue the API listed (None before the first list)."""
    with lock:
        return rng.choice(known_issues) if known_issues else None


def dashboard(rng):
    issue = issue_id(rng)
    pages = ["/%s/index.html" % SLUG, "/%s/issues.html" % SLUG, "/%s/releases.html" % SLUG]
    if issue is not None:
        pages.append("/%s/issues/%d.html" % (SLUG, issue))
    return "GET", rng.choice(pages), None, admin_headers


def api(rng):
    issue = issue_id(rng)
    paths = ["/api/v1/issues?limit=100", "/api/v1/releases", "/api/v1/top-issues"]
    if issue is not None:
        paths += ["/api/v1/issues/%d" % issue, "/api/v1/issues/%d/reports?limit=5" % issue]
    return "GET", rng.choice(paths), None, {"Authorization": "Bearer " + token}


STREAMS = [("native", 4, native), ("sentry", 6, sentry), ("sessions", 3, sessions), ("uploads", 0.1, upload),
           ("dashboard", 1, dashboard), ("api", 2, api)]


# ---- the measures -------------------------------------------------------------------------------------------------
def folder_bytes(path):
    total = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def psql(sql):
    out = subprocess.run(["psql", postgres, "-X", "-A", "-t", "-F", " ", "-c", sql], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    return [line.split(" ") for line in out.stdout.splitlines() if line]


def query(sql):
    if postgres:
        return psql(sql)
    db = sqlite3.connect("file:%s/faultline.sqlite?mode=ro" % data, uri=True, timeout=30)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def database_bytes():
    if postgres:
        size = int(psql("SELECT pg_database_size(current_database())")[0][0])
        wal = int(psql("SELECT coalesce(sum(size), 0) FROM pg_ls_waldir()")[0][0])
        return size, wal
    size = lambda suffix: os.path.getsize(data + "/faultline.sqlite" + suffix) if os.path.exists(
        data + "/faultline.sqlite" + suffix) else 0
    return size(""), size("-wal")


MARK = re.compile(rb"<!-- faultline-page 1 \S+ v (-?\d+) (\d+) ")
# Where the server keeps the rendered site and the debug files: the data folder with SQLite; with PostgreSQL the folder
# given by --blobs holds both (docs/scaling.md), and `blobs` is that folder.
SITE = (blobs if postgres else data) + "/site"
DEBUG_FILES = blobs + "/debug-files" if postgres else blobs


def pages_waiting():
    issues = query("SELECT id, events FROM issues")
    waiting = 0
    for issue, events in issues:
        path = "%s/%s/issues/%s.html" % (SITE, SLUG, issue)
        try:
            with open(path, "rb") as page:
                page.seek(max(0, os.path.getsize(path) - 192))
                mark = MARK.search(page.read())
        except OSError:
            mark = None
        if mark is None or int(mark.group(2)) < int(events):
            waiting += 1
    return waiting, len(issues)


def sample():
    status = open("/proc/%s/status" % pid).read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024
    anon = int(re.search(r"RssAnon:\s+(\d+)", status).group(1)) / 1024
    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
    fds = len(os.listdir("/proc/%s/fd" % pid))
    db, wal = database_bytes()
    pending = int(query("SELECT count(*) FROM reports WHERE symbolication = 'pending'")[0][0])
    reports = int(query("SELECT count(*) FROM reports")[0][0])
    waiting, issues = pages_waiting()
    return {"rss": rss, "anon": anon, "threads": threads, "fds": fds, "db": db, "wal": wal, "blobs": folder_bytes(DEBUG_FILES),
            "site": folder_bytes(SITE), "pending": pending, "pages": waiting, "issues": issues,
            "reports": reports}


MiB = 2 ** 20
HEADER = ("| min | requests | failed | p99 ms | RSS MiB | heap MiB | threads | open files | DB MiB | WAL MiB | blobs MiB | "
          "site MiB | reports | issues | waiting: reports | waiting: pages |")


def row(label, s, requests, failures, p99):
    return ("| %s | %s | %s | %s | %.1f | %.1f | %d | %d | %.1f | %.1f | %.1f | %.1f | %d | %d | %d | %d |" % (
        label, requests, failures, p99, s["rss"], s["anon"], s["threads"], s["fds"], s["db"] / MiB, s["wal"] / MiB,
        s["blobs"] / MiB, s["site"] / MiB, s["reports"], s["issues"], s["pending"], s["pages"]))


print("== soak: %.0f minutes, %s, rates/s × %.2g: %s" % (
    minutes, "PostgreSQL" if postgres else "SQLite", scale,
    ", ".join("%s %g" % (name, rate) for name, rate, _ in STREAMS)), flush=True)
print(HEADER)
print("|" + "---|" * 16, flush=True)
samples = [sample()]
print(row("0", samples[0], "-", "-", "-"), flush=True)
threads = [threading.Thread(target=stream, args=spec, daemon=True) for spec in STREAMS]
started = time.monotonic()
for thread in threads:
    thread.start()
n = 0
while n < minutes:
    n += 1
    stop.wait(max(0.0, started + 60 * n - time.monotonic()))
    with lock:
        done = dict(minute)
        minute.update({"requests": 0, "failures": 0, "latencies": [], "statuses": {}})
    latencies = sorted(done["latencies"])
    p99 = "%.0f" % (latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000) if latencies else "-"
    samples.append(sample())
    print(row(str(n), samples[-1], done["requests"], done["failures"], p99), flush=True)
stop.set()
for thread in threads:
    thread.join(timeout=90)
load_ended = time.monotonic()
drained = None
while time.monotonic() - load_ended < 300:
    after = sample()
    if after["pending"] == 0 and after["pages"] == 0:
        drained = time.monotonic() - load_ended
        break
    time.sleep(2)
print(row("after", after, "-", "-", "-"), flush=True)

# ---- the summary --------------------------------------------------------------------------------------------------
print("answers: " + ", ".join("%s: %d" % item for item in sorted(totals["statuses"].items())))
warm = samples[max(1, len(samples) // 3):]  # from a third of the run on: caches and pools are warm


def slope(values):
    """Least-squares growth per minute over the warm samples."""
    xs = list(range(len(values)))
    if len(xs) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(values)
    return sum((x - mx) * (y - my) for x, y in zip(xs, values)) / sum((x - mx) ** 2 for x in xs)


rss = [s["rss"] for s in warm]
rss_growth = slope(rss) * (len(rss) - 1)
heap = [s["anon"] for s in warm]
heap_growth = slope(heap) * (len(heap) - 1)
memory_flat = rss_growth < max(8.0, 0.1 * rss[0]) and heap_growth < max(8.0, 0.1 * heap[0])
fds = [s["fds"] for s in warm]
files_flat = max(fds) - min(fds) <= 8
backlog = [s["pending"] for s in samples[1:]]
pages = [s["pages"] for s in samples[1:]]
third = max(1, len(backlog) // 3)
backlog_bounded = drained is not None and max(backlog[-third:]) <= max(2 * max(backlog[:-third] or [0]), 500)
reports = samples[-1]["reports"] - samples[0]["reports"]
db_growth = (samples[-1]["db"] + samples[-1]["wal"]) - (samples[0]["db"] + samples[0]["wal"])
print("summary over %d minutes (%d requests, %d failed; %d reports stored):" % (
    len(samples) - 1, totals["requests"], totals["failures"], reports))
print("  memory: RSS %.1f → %.1f MiB from minute %d on (fit: %+.1f MiB over those minutes; max %.1f), of it heap "
      "(anonymous) %.1f → %.1f MiB (fit: %+.1f MiB): %s" % (
          rss[0], rss[-1], len(samples) - len(warm), rss_growth, max(s["rss"] for s in samples), heap[0], heap[-1],
          heap_growth, "flat" if memory_flat else "GROWING"))
print("  open files: %d–%d from minute %d on: %s" % (
    min(fds), max(fds), len(samples) - len(warm), "flat" if files_flat else "GROWING"))
print("  backlog: reports waiting at most %d (last third %d), pages waiting at most %d; %s" % (
    max(backlog), max(backlog[-third:]), max(pages),
    "drained %.0f s after the load" % drained if drained is not None else "NOT drained 300 s after the load"))
print("  backlog bounded: %s" % ("yes" if backlog_bounded else "NO"))
print("  database + WAL grew %.1f MiB (%.0f bytes per stored report); WAL at the end %.1f MiB; blob folder %.1f MiB "
      "(%d files in the pool), site folder %.1f MiB" % (
          db_growth / MiB, db_growth / max(reports, 1), samples[-1]["wal"] / MiB, samples[-1]["blobs"] / MiB, POOL,
          samples[-1]["site"] / MiB))
print("verdict: %s" % ("memory and files flat, backlog bounded" if memory_flat and files_flat and backlog_bounded
                       else "GROWTH FOUND (see above)"))
sys.exit(0 if memory_flat and files_flat and backlog_bounded else 1)
