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

Usage: sentry_bodies.py COUNT OUT [SEED]
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


def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    plain = packed = 0
    with open(out, "wb") as f:
        for i in range(count):
            raw = envelope(rng, i, seed)
            body = gzip.compress(raw, 6)
            plain += len(raw)
            packed += len(body)
            f.write(struct.pack(">I", len(body)) + body)
    print("wrote %d envelopes, %.0f B gzip'd (%.0f B inflated) each on average" % (count, packed / count, plain / count))


if __name__ == "__main__":
    main()
