#!/usr/bin/env python3
"""The spike driver of tools/bench/spike/run: a burst of crash reports from one release against a project quota.

Sends COUNT Sentry envelopes to URL as fast as THREADS keep-alive connections go. Envelope i carries one crash event
of release 3.1.0 (a client fingerprint on every other one), the crashed session of user u(i mod USERS/4), and the
exited session of user u(i mod USERS): so the truth is 2 × COUNT sessions, COUNT crashed, USERS users of whom USERS/4
crashed. While the burst runs a probe reads /healthz and the release-health API every 100 ms (is the server still
responsive?). Then it waits for the quota counts to be flushed and prints: answers (200/429), request and probe
latencies, the server's crash-free numbers beside the truth, accepted and dropped counts beside what the client saw,
and the data folder's size.

Usage: spike.py URL PROJECT_ID INGEST_KEY UPLOAD_TOKEN DATA_FOLDER COUNT [THREADS] [USERS]
"""
import http.client
import json
import os
import sqlite3
import statistics
import sys
import threading
import time
import urllib.parse
import uuid

url, project, key, token, data, count = sys.argv[1:7]
count = int(count)
threads = int(sys.argv[7]) if len(sys.argv) > 7 else 8
users = int(sys.argv[8]) if len(sys.argv) > 8 else max(4, count // 2)
crashing_users = max(1, users // 4)
host = urllib.parse.urlparse(url)
RELEASE = "spike-app@3.1.0"


def envelope(i, now):
    event_id = uuid.UUID(int=(1 << 64) + i).hex
    fingerprint = ',"fingerprint":["spike-crash"]' if i % 2 == 0 else ""
    event = ('{"event_id":"%s","timestamp":"%s","platform":"native","level":"fatal","release":"%s",'
             '"user":{"id":"u%d"}%s,"exception":{"values":[{"type":"SIGSEGV","value":"Segfault",'
             '"mechanism":{"type":"signalhandler","handled":false},"stacktrace":{"frames":['
             '{"function":"main","instruction_addr":"0x1000"},{"function":"Cart.checkout","instruction_addr":"0x2000"}]}}]}}'
             % (event_id, now, RELEASE, i % crashing_users, fingerprint))
    crashed = ('{"sid":"%s","did":"u%d","init":true,"started":"%s","timestamp":"%s","status":"crashed","errors":1,'
               '"attrs":{"release":"%s","environment":"production"}}'
               % (uuid.UUID(int=(2 << 64) + i), i % crashing_users, now, now, RELEASE))
    exited = ('{"sid":"%s","did":"u%d","init":true,"started":"%s","timestamp":"%s","status":"exited","errors":0,'
              '"attrs":{"release":"%s","environment":"production"}}'
              % (uuid.UUID(int=(3 << 64) + i), i % users, now, now, RELEASE))
    parts = ['{"event_id":"%s"}' % event_id]
    for kind, item in (("event", event), ("session", crashed), ("session", exited)):
        parts.append('{"type":"%s","length":%d}' % (kind, len(item.encode())))
        parts.append(item)
    return ("\n".join(parts) + "\n").encode()


answers = {}
latencies = []
errors = []
lock = threading.Lock()
next_index = [0]


def sender():
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
    path = "/api/%s/envelope/?sentry_key=%s" % (project, key)
    mine = {}
    mine_latency = []
    while True:
        with lock:
            i = next_index[0]
            next_index[0] += 1
        if i >= count:
            break
        body = envelope(i, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        started = time.monotonic()
        try:
            connection.request("POST", path, body, {"Content-Type": "application/x-sentry-envelope"})
            response = connection.getresponse()
            response.read()
            status = response.status
        except Exception as error:  # a refused or reset connection is a finding, not a crash of the driver
            with lock:
                errors.append(repr(error))
            connection.close()
            connection = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
            status = "error"
        mine_latency.append(time.monotonic() - started)
        mine[status] = mine.get(status, 0) + 1
    with lock:
        for status, n in mine.items():
            answers[status] = answers.get(status, 0) + n
        latencies.extend(mine_latency)


probe_latencies = {"/healthz": [], "/api/v1/releases": []}
probe_failures = []
stop = threading.Event()


def probe():
    while not stop.is_set():
        for path in probe_latencies:
            connection = http.client.HTTPConnection(host.hostname, host.port, timeout=30)
            started = time.monotonic()
            try:
                connection.request("GET", path, headers={"Authorization": "Bearer " + token})
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    probe_failures.append((path, response.status))
            except Exception as error:
                probe_failures.append((path, repr(error)))
            probe_latencies[path].append(time.monotonic() - started)
            connection.close()
        stop.wait(0.1)


def folder_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def pct(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] * 1000


def get(path):
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=30)
    connection.request("GET", path, headers={"Authorization": "Bearer " + token})
    response = connection.getresponse()
    return json.loads(response.read())


def db_rows(sql):
    db = sqlite3.connect("file:" + data + "/faultline.sqlite?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


before = folder_bytes(data)
print("== burst: %d envelopes (1 crash event + 2 sessions each) of release 3.1.0, %d connections, %d users"
      % (count, threads, users), flush=True)
prober = threading.Thread(target=probe)
prober.start()
started = time.monotonic()
workers = [threading.Thread(target=sender) for _ in range(threads)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
elapsed = time.monotonic() - started
stop.set()
prober.join()

accepted, refused = answers.get(200, 0), answers.get(429, 0)
print("answers: %s in %.1f s (%.0f requests/s)" % (
    ", ".join("%s: %d" % (k, v) for k, v in sorted(answers.items(), key=str)), elapsed, count / elapsed))
print("request latency ms: p50 %.1f, p99 %.1f, max %.1f" % (
    pct(latencies, 0.5), pct(latencies, 0.99), pct(latencies, 1.0)))
for path, values in probe_latencies.items():
    print("probe %s during the burst: %d reads, p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (
        path, len(values), pct(values, 0.5), pct(values, 0.99), pct(values, 1.0)))
print("probe failures: %d %s; connection errors: %d %s" % (
    len(probe_failures), probe_failures[:3], len(errors), errors[:3]))

# Sessions are applied before the answer; the quota counts within a flush interval.
truth = {"sessions": 2 * count, "crashed_sessions": count, "users": users, "crashed_users": crashing_users}
deadline = time.time() + 120
server = {}
while time.time() < deadline:
    releases = get("/api/v1/releases").get("releases", [])
    row = next((r for r in releases if r.get("release") == "3.1.0"), None)
    server = row["health"] if row else {}
    counted = db_rows("SELECT coalesce(sum(accepted),0), coalesce(sum(dropped),0), "
                      "coalesce(sum(CASE WHEN fingerprint <> '' THEN dropped ELSE 0 END),0) FROM quota_counts")[0]
    if server.get("sessions") == truth["sessions"] and counted[0] + counted[1] >= count:
        break
    time.sleep(0.5)
print("crash-free (release 3.1.0):")
for name in ("sessions", "crashed_sessions", "users", "crashed_users"):
    print("  %-16s server %8s   truth %8d   %s" % (
        name, server.get(name), truth[name], "equal" if server.get(name) == truth[name] else "DIFFERENT"))
cf_users = 1 - truth["crashed_users"] / truth["users"]
cf_sessions = 1 - truth["crashed_sessions"] / truth["sessions"]
print("  crash-free users %.4f %%, sessions %.4f %% (truth)" % (cf_users * 100, cf_sessions * 100))
print("quota counts: accepted %d (client saw %d), dropped %d (client saw %d), dropped with the fingerprint %d" % (
    counted[0], accepted, counted[1], refused, counted[2]))
reports = db_rows("SELECT count(*), coalesce(sum(length(bytes)),0) FROM payloads")[0]
stored = db_rows("SELECT count(*) FROM reports")[0][0]
alerts = db_rows("SELECT count(*) FROM alerts WHERE kind = 'quota_reached'")[0][0]
after = folder_bytes(data)
per_report = reports[1] / max(reports[0], 1)
print("stored: %d reports (%d payload bytes, %.0f per report), %d quota alerts" % (
    stored, reports[1], per_report, alerts))
print("data folder: %.1f MiB before, %.1f MiB after (+%.1f MiB); the %d refused reports would have added ~%.1f MiB "
      "of payloads alone" % (before / 2**20, after / 2**20, (after - before) / 2**20, refused,
                             refused * per_report / 2**20))
