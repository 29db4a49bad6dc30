"""Writes plain.jsonl and secrets.jsonl: 2,000 native reports each, shaped like tools/bench/ingest's (threads,
modules, 20 breadcrumbs, 10 custom keys, ~9.6 KB); the secrets set adds a password key and a card number."""
import json
import random
import sys

random.seed(1)
out = sys.argv[1]


def report(i, secrets):
    frames = []
    for f in range(random.randint(30, 60)):
        if f % 5 == 4:
            frames.append({"function": "f%d" % f, "file": "Sources/App/File%d.swift" % f, "line": random.randint(1, 900)})
        else:
            frames.append({"address": hex(0x7f3c00000000 + random.randint(0x1000, 0xffffff)), "module": "libapp.so"})
    threads = [{"name": "main", "crashed": True, "frames": frames}] + [
        {"name": n, "frames": [{"address": hex(0x7f3c00000000 + random.randint(0x1000, 0xffffff)), "module": "libc.so"}
                               for _ in range(random.randint(8, 15))]} for n in ["worker", "network", "eventfetch"]]
    crumbs = [{"timestamp": 1795000000 + i + c, "category": ["ui", "http", "navigation", "state"][c % 4], "level": "info",
               "message": "event %d for screen %d request %x" % (c, random.randint(1, 50), random.getrandbits(60)),
               "data": {"screen": "screen-%d" % (c % 7), "latency_ms": str(random.randint(1, 900)),
                        "url": "https://api.example.com/v1/items/%x" % random.getrandbits(60)}} for c in range(20)]
    keys = {"key_%d" % k: "%x-%x" % (random.getrandbits(64), random.getrandbits(40)) for k in range(10)}
    if secrets:
        keys["password"] = "hunter2-%d" % i
        crumbs.append({"timestamp": 1795000000 + i, "category": "payment", "message": "charge card 4111 1111 1111 1111"})
    r = {"event_id": "%032x" % random.getrandbits(128), "kind": "crash", "timestamp": 1795000000 + i, "session_id": "s",
         "install_id": "i", "user_id": "user-%d" % random.randint(1, 100000), "environment": "production",
         "app": {"id": "com.example.shop", "version": "4.0.0", "build": "400"},
         "device": {"model": "Pixel 8", "os": "Android", "os_version": "14", "arch": "arm64", "memory": 8589934592,
                    "free_disk": 2147483648, "locale": "en_US"},
         "error": {"type": "SIGSEGV", "code": 11, "message": "Segmentation fault at 0x%x" % random.getrandbits(32)},
         "threads": threads,
         "modules": [{"name": "libapp.so", "build_id": "0123456789abcdef0123456789abcdef01234567",
                      "base_address": "0x7f3c00000000", "size": 33554432}],
         "breadcrumbs": crumbs, "custom_keys": keys}
    return json.dumps(r, separators=(',', ':'))


for name, secrets in (("plain", False), ("secrets", True)):
    with open(f"{out}/{name}.jsonl", "w") as f:
        for i in range(2000):
            f.write(report(i, secrets) + "\n")
