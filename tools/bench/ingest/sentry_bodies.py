#!/usr/bin/env python3
"""Writes gzip'd Sentry envelopes for the ingest benchmarks, in the bodies format of `ingest-bench
--emit-bodies` (a 4-byte big-endian length, then the body, repeated), so that wrk and `ingest-count` read them
like the native bodies.

Each envelope holds one error event shaped like what sentry-sdk sends for an unhandled exception in a
native-ish app: an exception with a 20-40 frame stack trace (raw instruction addresses over four images, as
sentry-native sends them, plus function/file/line on a fifth of them), three more threads, 20 breadcrumbs
with data, contexts (os, device, app, runtime, trace), tags, extra, a user and debug_meta images with
debug ids. About 14 KB of JSON, 2.6 KB gzip'd. Every event has its own id. Seeded: the same arguments give
the same bytes.

With --native, writes the same events (same seed, same content) as native Faultline reports for
`POST /api/v1/reports` instead: the reference of `tools/bench/table`'s "Sentry vs native for the same event
content" row. Tags and extra become custom keys, the images modules, the exception the error and the crashed
thread.

Usage: sentry_bodies.py [--native] COUNT OUT [SEED]
"""
import gzip
import json
import random
import struct
import sys
import uuid

IMAGES = [
    ("/opt/shop/bin/shop-server", 0x555555554000, 0x2000000),
    ("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7FFFF7C00000, 0x200000),
    ("/usr/lib/swift/linux/libswiftCore.so", 0x7FFFF6800000, 0x1000000),
    ("/usr/lib/x86_64-linux-gnu/libssl.so.3", 0x7FFFF7E00000, 0x100000),
]
FUNCTIONS = ["CartService.checkout(_:)", "OrderStore.save(_:)", "PaymentClient.charge(amount:)",
             "Router.handle(_:)", "JSONDecoder.decode(_:from:)", "HTTPServer.respond(_:)",
             "Inventory.reserve(items:)", "SessionCache.lookup(id:)"]
CATEGORIES = ["http", "navigation", "ui.click", "db.query", "cache", "auth"]


def hexaddr(rng, image):
    _, base, size = image
    return hex(base + rng.randrange(size))


def frames(rng, count):
    out = []
    for i in range(count):
        image = rng.choice(IMAGES)
        frame = {"instruction_addr": hexaddr(rng, image), "package": image[0], "in_app": image is IMAGES[0]}
        if i % 5 == 0:
            frame.update({
                "function": rng.choice(FUNCTIONS), "filename": "Sources/Shop/%s.swift" % rng.choice(["Cart", "Order", "Pay"]),
                "abs_path": "/build/shop/Sources/Shop/File%d.swift" % rng.randrange(100), "lineno": rng.randrange(1, 900),
            })
        out.append(frame)
    return out


def event(rng, index, seed):
    event_id = uuid.UUID(int=rng.getrandbits(128)).hex
    user = "user-%d" % rng.randrange(100_000)
    breadcrumbs = [{
        "timestamp": 1_763_800_000 + index + i / 100, "type": "default", "category": rng.choice(CATEGORIES),
        "level": "info", "message": "step %d of request %x" % (i, rng.getrandbits(32)),
        "data": {"url": "/api/cart/%d" % rng.randrange(10_000), "status_code": rng.choice([200, 201, 404, 500]),
                 "method": rng.choice(["GET", "POST"]), "duration_ms": rng.randrange(1, 900)},
    } for i in range(20)]
    threads = [{"id": t, "name": "worker-%d" % t, "crashed": False, "current": False,
                "stacktrace": {"frames": frames(rng, rng.randrange(6, 12))}} for t in range(1, 4)]
    return event_id, {
        "event_id": event_id,
        "timestamp": 1_763_800_000 + index,
        "platform": "native",
        "level": "fatal",
        "logger": "shop",
        "release": "shop@1.%d.%d" % (rng.randrange(3), rng.randrange(10)),
        "environment": "production",
        "server_name": "node-%d" % rng.randrange(40),
        "exception": {"values": [{
            "type": "SIGSEGV", "value": "Segfault at %s (run %d)" % (hex(rng.getrandbits(40)), seed),
            "mechanism": {"type": "signalhandler", "handled": False, "meta": {"signal": {"number": 11, "name": "SIGSEGV"}}},
            "stacktrace": {"frames": frames(rng, rng.randrange(20, 41))}, "thread_id": 0,
        }]},
        "threads": {"values": threads},
        "breadcrumbs": {"values": breadcrumbs},
        "user": {"id": user},
        "tags": {"region": rng.choice(["eu", "us", "ap"]), "feature": "checkout-v%d" % rng.randrange(4),
                 "build": str(rng.randrange(10_000))},
        "extra": {"cart_items": rng.randrange(20), "attempt": rng.randrange(5), "trace": uuid.UUID(int=rng.getrandbits(128)).hex},
        "contexts": {
            "os": {"name": "Linux", "version": "6.1.%d" % rng.randrange(150), "kernel_version": "6.1.0-%d-amd64" % rng.randrange(30)},
            "device": {"arch": "x86_64", "memory_size": 8_589_934_592, "free_memory": rng.randrange(1 << 33), "cpu_description": "AMD EPYC"},
            "app": {"app_start_time": "2026-11-22T10:00:00Z", "app_version": "1.4.%d" % rng.randrange(10), "app_build": str(rng.randrange(900))},
            "runtime": {"name": "swift", "version": "6.3.1"},
            "trace": {"trace_id": uuid.UUID(int=rng.getrandbits(128)).hex, "span_id": "%016x" % rng.getrandbits(64)},
        },
        "debug_meta": {"images": [{
            "type": "elf", "code_file": name, "image_addr": hex(base), "image_size": size,
            "debug_id": str(uuid.UUID(int=rng.getrandbits(128))), "code_id": "%040x" % rng.getrandbits(160),
        } for name, base, size in IMAGES]},
        "sdk": {"name": "sentry.native", "version": "0.7.%d" % rng.randrange(20)},
    }


def envelope(rng, index, seed):
    event_id, body = event(rng, index, seed)
    payload = json.dumps(body, separators=(",", ":")).encode()
    header = json.dumps({"event_id": event_id, "sent_at": "2026-11-22T10:00:00Z",
                         "sdk": body["sdk"]}, separators=(",", ":")).encode()
    item = json.dumps({"type": "event", "length": len(payload)}, separators=(",", ":")).encode()
    return header + b"\n" + item + b"\n" + payload + b"\n"


def native_frame(frame):
    out = {}
    if "instruction_addr" in frame:
        out["address"] = frame["instruction_addr"]
        out["module"] = frame["package"].rsplit("/", 1)[-1]
    if "function" in frame:
        out.update({"function": frame["function"], "file": frame["filename"], "line": frame["lineno"]})
    return out


def native(rng, index, seed):
    """The event of `event` as a native report, with the same content."""
    event_id, e = event(rng, index, seed)
    exc = e["exception"]["values"][0]
    app_id, version = e["release"].split("@", 1)
    contexts = e["contexts"]
    custom = dict(e["tags"])
    custom.update({k: v for k, v in e["extra"].items()})
    custom.update({"server_name": e["server_name"], "logger": e["logger"], "level": e["level"],
                   "trace_id": contexts["trace"]["trace_id"], "span_id": contexts["trace"]["span_id"],
                   "kernel_version": contexts["os"]["kernel_version"], "cpu": contexts["device"]["cpu_description"],
                   "free_memory": contexts["device"]["free_memory"], "app_version": contexts["app"]["app_version"],
                   "runtime": "%s %s" % (contexts["runtime"]["name"], contexts["runtime"]["version"]),
                   "app_start_time": contexts["app"]["app_start_time"], "sdk": "%s %s" % (e["sdk"]["name"], e["sdk"]["version"])})
    threads = [{"name": "main", "crashed": True, "frames": [native_frame(f) for f in exc["stacktrace"]["frames"]]}]
    threads += [{"name": t["name"], "frames": [native_frame(f) for f in t["stacktrace"]["frames"]]} for t in e["threads"]["values"]]
    report = {
        "event_id": event_id, "kind": "crash", "timestamp": e["timestamp"], "user_id": e["user"]["id"],
        "environment": e["environment"],
        "app": {"id": app_id, "version": version, "build": contexts["app"]["app_build"]},
        "device": {"os": contexts["os"]["name"], "os_version": contexts["os"]["version"], "arch": contexts["device"]["arch"],
                   "memory": contexts["device"]["memory_size"]},
        "error": {"type": exc["type"], "code": exc["mechanism"]["meta"]["signal"]["number"], "message": exc["value"]},
        "threads": threads,
        "modules": [{"name": i["code_file"].rsplit("/", 1)[-1], "path": i["code_file"], "build_id": i["code_id"],
                     "base_address": i["image_addr"], "size": i["image_size"]} for i in e["debug_meta"]["images"]],
        "breadcrumbs": [{"timestamp": b["timestamp"], "category": b["category"], "level": b["level"], "message": b["message"],
                         "data": {k: str(v) for k, v in b["data"].items()}} for b in e["breadcrumbs"]["values"]],
        "custom_keys": custom,
    }
    return json.dumps(report, separators=(",", ":")).encode()


def main():
    args = sys.argv[1:]
    as_native = args[:1] == ["--native"]
    if as_native:
        args = args[1:]
    count, out = int(args[0]), args[1]
    seed = int(args[2]) if len(args) > 2 else 1
    rng = random.Random(seed)
    plain = packed = 0
    with open(out, "wb") as f:
        for i in range(count):
            raw = native(rng, i, seed) if as_native else envelope(rng, i, seed)
            body = gzip.compress(raw, 6)
            plain += len(raw)
            packed += len(body)
            f.write(struct.pack(">I", len(body)) + body)
    print("wrote %d %s, %.0f B gzip'd (%.0f B inflated) each on average" % (count, "native reports" if as_native else "envelopes", packed / count, plain / count))


if __name__ == "__main__":
    main()
