#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into tools/fuzzing/seeds/<target>/ (see docs/fuzzing.md).

Small valid inputs, one file each, taken from the test fixtures (Tests/FormatsTests, Tests/TestSupport) so
that the fuzzer starts from what real clients send; ELF seeds are built here with gcc, g++ and swiftc.
Re-run after changing a format; the output is committed. Needs python3, gcc, g++, objcopy, strip (and
swiftc and brotli fixtures for their seeds).
"""
import gzip
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tools", "fuzzing", "seeds")
MAX_SEED = 100 * 1024


def source(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def swift_literal(path, name):
    """The text of a Swift `static let <name> =` multi-line string literal (raw or not), de-indented."""
    text = source(path)
    m = re.search(r'static let ' + re.escape(name) + r'\s*=\s*(#?)"""\n(.*?)\n\s*"""\1', text, re.S)
    if not m:
        one = re.search(r'static let ' + re.escape(name) + r'\s*=\s*#"(.*)"#\n', text)
        if one:
            return one.group(1)
        sys.exit(f"make-seeds: no literal {name} in {path}")
    lines = m.group(2).split("\n")
    indent = min(len(l) - len(l.lstrip(" ")) for l in lines if l.strip())
    body = "\n".join(l[indent:] for l in lines)
    if not m.group(1):  # a plain Swift string literal: undo its escapes
        body = body.replace("\\\\", "\x00").replace('\\"', '"').replace("\\n", "\n").replace("\x00", "\\")
    return body


written = []


def seed(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_SEED:
        print(f"make-seeds: skipping {target}/{name}: {len(data)} bytes is over {MAX_SEED}", file=sys.stderr)
        return
    folder = os.path.join(OUT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
    written.append((target, name, len(data)))


def chunk_assembly_seeds(elf_head):
    """The chunk-assembly planner's inputs (FuzzReader's order in FaultlineFuzz.swift): limits, the quota left, the
    running assemblies, which of 16 chunks are stored and their sizes, the list, then the file's first bytes."""
    def size(value):  # one byte of 4 KiB pages, or 0x80 and eight bytes
        if value % 4096 == 0 and value // 4096 < 0x80:
            return bytes([value // 4096])
        return b"\x80" + value.to_bytes(8, "big")

    def plan(listed, sizes, head, quota=10 << 30, running=0, running_bytes=0, same=False, repeats=8, parallel=2):
        out = size(4 << 30) + size(8 << 20) + bytes([repeats, parallel]) + size(quota)
        out += bytes([1 if same else 0, running]) + size(running_bytes)
        present = sum(1 << i for i in sizes)
        out += bytes([present & 0xff, present >> 8]) + b"".join(size(sizes[i]) for i in sorted(sizes))
        return out + bytes([len(listed)]) + bytes(listed) + head

    eight = 8 << 20
    # sentry-cli's own shape: a 20 MiB ELF file in three chunks, the last one short.
    seed("chunk-assembly", "honest", plan([0, 1, 2], {0: eight, 1: eight, 2: 4 << 20}, elf_head))
    # issue #39: one chunk (8 KB gzip'd) listed 64 times.
    seed("chunk-assembly", "one-chunk-64-times", plan([3] * 64, {3: eight}, elf_head))
    # Chunks still to upload; the quota nearly spent by a running assembly; the same file running.
    seed("chunk-assembly", "missing", plan([0, 5, 0, 6], {0: eight}, elf_head))
    seed("chunk-assembly", "quota", plan([0, 1], {0: eight, 1: 100}, elf_head, quota=20 << 20, running=1, running_bytes=12 << 20))
    seed("chunk-assembly", "running", plan([0], {0: 4096}, elf_head, running=1, same=True))
    # Zeros (a gzip bomb), and a source bundle's magic.
    seed("chunk-assembly", "zeros", plan([4, 4], {4: eight}, bytes(64)))
    seed("chunk-assembly", "source-bundle", plan([7], {7: 4096}, b"SYSB\x02\x00\x00\x00PK\x03\x04"))


def envelope(header, items):
    out = (header + "\n").encode()
    for item_header, payload in items:
        out += item_header.encode() + b"\n" + payload + b"\n"
    return out


def item(kind, payload, extra=""):
    if isinstance(payload, str):
        payload = payload.encode()
    return ('{"type":"%s","length":%d%s}' % (kind, len(payload), extra), payload)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    fixtures = "Tests/FormatsTests/SentryFixtures.swift"
    sentry = {n: swift_literal(fixtures, n) for n in [
        "pythonHeader", "pythonHandled", "pythonUnhandled", "pythonChain", "pythonMessage", "cliHeader", "cliEvent",
        "pythonSession", "pythonAggregates", "clientReport"]}
    native = swift_literal("Tests/FormatsTests/NativeReportsTests.swift", "crash")
    swift_crash = swift_literal("Tests/FormatsTests/SwiftCrashReportsTests.swift", "sample")

    # Native v1 reports: one report, a batch, a minimal non-fatal, and a session batch.
    seed("native", "crash.json", native)
    minimal = '{"event_id":"7077e450fa6f4594850bfed9428d1d98","kind":"nonfatal","timestamp":1795324080.5,' \
              '"error":{"type":"E","message":"m"},"threads":[{"frames":[{"address":"0x10"}]}]}'
    seed("native", "nonfatal.json", minimal)
    seed("native", "batch.json", '{"reports":[%s,%s]}' % (native, minimal))
    # Personal data for the scrubber (scrubbed while parsed, compared with scrubbing first).
    seed("native", "private.json", json.dumps({
        "event_id": "8077e450fa6f4594850bfed9428d1d98", "kind": "crash", "timestamp": 1795324080.5,
        "user_id": "u\u00e9", "ip_address": "10.0.0.1",
        "error": {"type": "E", "message": "card 4111 1111 1111 1111, iban BE68539007547034 at /home/alice/x"},
        "threads": [{"name": "auth-worker", "frames": [{"function": "login(password:)", "file": "C:\\Users\\bob\\a.swift",
                                                       "line": 3, "address": "0x10"}]}],
        "breadcrumbs": [{"timestamp": 1, "message": "Bearer abc.def", "data": {"token": "t", "url": "https://u:pw@h/x"}}],
        "custom_keys": {"password": "hunter2", "session_count": 3, "secret": True},
        "extra": {"api_key": [1, {"x": "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"}]}}))
    seed("native", "sessions.json", json.dumps({"sessions": [
        {"session_id": "s1", "status": "ok", "started": "2026-11-22T05:08:09Z", "timestamp": "2026-11-22T05:09:09Z",
         "release": "2.1.0 (310)", "user_id": "u1", "errors": 0, "environment": "production"},
        {"session_id": "s2", "status": "crashed", "started": 1795324080, "errors": 1, "seq": 2, "duration": 12.5,
         "app": {"id": "com.example.app", "version": "2.1.0", "build": "310"}}]}))

    # Sentry events (legacy store body) and envelopes (every item type the reader keeps).
    for name in ["pythonHandled", "pythonUnhandled", "pythonChain", "pythonMessage", "cliEvent"]:
        seed("sentry-event", name + ".json", sentry[name])
    seed("sentry-envelope", "python-crash.envelope", envelope(sentry["pythonHeader"], [
        item("event", sentry["pythonUnhandled"], ',"content_type":"application/json"'),
        item("session", sentry["pythonSession"]),
        item("attachment", "log line 1\nlog line 2\n", ',"filename":"app.log","content_type":"text/plain"'),
        item("attachment", b"MDMP\n\x00\n", ',"filename":"crash.dmp","attachment_type":"event.minidump"'),
        item("transaction", '{"type":"transaction"}'),
        item("client_report", sentry["clientReport"])]))
    seed("sentry-envelope", "cli-event.envelope", envelope(sentry["cliHeader"], [item("event", sentry["cliEvent"])]))
    seed("sentry-envelope", "sessions.envelope", envelope("{}", [item("sessions", sentry["pythonAggregates"])]))
    # An item without a length: its payload runs to the next newline.
    seed("sentry-envelope", "no-length.envelope",
         (sentry["cliHeader"] + '\n{"type":"event"}\n' + sentry["pythonMessage"] + "\n").encode())

    # Swift runtime crash files in the stored envelope.
    meta = '{"app_build":"45","app_version":"1.2","environment":"production","event_id":"7077e450-fa6f-4594-850b-fed9428d1d98","session_id":"s1","user_id":"u1"}'
    seed("swift-crash", "crash.json", '{"faultline_meta":%s,"swift_crash":%s}' % (meta, swift_crash))
    seed("swift-crash", "minimal.json", '{"faultline_meta":{"event_id":"7077e450fa6f4594850bfed9428d1d98"},'
         '"swift_crash":{"kind":"crashReport","timestamp":"2026-11-22T07:20:09Z","threads":[{"crashed":true,'
         '"frames":[{"kind":"programCounter","address":"0x10"}]}]}}')

    # multipart/form-data: the Content-Type header on the first line, then the body.
    body = ("--XyZ-123\r\nContent-Disposition: form-data; name=\"metadata\"\r\nContent-Type: application/json\r\n\r\n"
            + meta + "\r\n--XyZ-123\r\nContent-Disposition: form-data; name=\"crash\"; filename=\"crash.json\"\r\n"
            "Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n"
            + swift_crash[:400] + "\r\n--XyZ-123--\r\n")
    seed("multipart", "two-parts", "multipart/form-data; boundary=XyZ-123\n" + body)
    seed("multipart", "quoted-boundary", 'multipart/form-data; charset=utf-8; boundary="a b:c"\n'
         "preamble\r\n--a b:c\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--a b:c--\r\nepilogue")
    # A body full of near-delimiters, the close delimiter without a CRLF after it.
    seed("multipart", "near-delimiters", "multipart/form-data; boundary=q\n--q\r\nContent-Disposition: form-data; "
         "name=\"f\"; filename=\"a.bin\"\r\n\r\n\r\n-\r\n--\r\n--r\r\n-q\r\n\r\r\n--q--")

    # Bodies: the first byte picks the decoder (0 gzip, 1 deflate, 2 br, 3 stored, 4 streaming inflater).
    payload = native.encode()
    seed("body", "gzip", b"\x00" + gzip.compress(payload, mtime=0))
    seed("body", "zlib", b"\x01" + zlib.compress(payload))
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    seed("body", "raw-deflate", b"\x01" + raw.compress(payload) + raw.flush())
    with open(os.path.join(ROOT, "Tests/FormatsTests/Fixtures/brotli/envelope.txt.br"), "rb") as f:
        seed("body", "brotli", b"\x02" + f.read())
    seed("body", "stored", b"\x03" + zlib.compress(payload, 1))
    seed("body", "streaming", b"\x04" + zlib.compress(payload))

    # Source bundles, written byte by byte by the tests' own crafter: honest ones (deflated files; offsets from
    # after the header) and the hostile shapes the reader refuses (entries sharing one local entry, a local header
    # inside another entry's data).
    crafter = importlib.util.spec_from_file_location(
        "craft", os.path.join(ROOT, "Tests/FormatsTests/Fixtures/source-bundle/craft.py"))
    craft = importlib.util.module_from_spec(crafter)
    crafter.loader.exec_module(craft)
    build_id = "a1b2c3d4e5f60718293a4b5c6d7e8f9001122334"
    seed("source-bundle", "one-file", craft.bundle(build_id, files=1, size=100))
    seed("source-bundle", "three-files", craft.bundle(build_id, files=3, size=4096))
    seed("source-bundle", "aliases", craft.bundle(build_id, files=1, size=4096, aliases=4))
    seed("source-bundle", "overlap", craft.bundle(build_id, files=2, size=4096, overlap=True))

    # ELF files (the `elf` and `symbolicate` targets share them): gcc/g++/swiftc builds with DWARF, inline
    # frames, stripped, debug-only, shared, relocatable, compressed sections.
    command = "Tests/TestSupport/Command.swift"
    with tempfile.TemporaryDirectory() as tmp:
        def path(name):
            return os.path.join(tmp, name)

        def run(*args):
            # The same file names in every run, whatever the temporary folder (DWARF records them).
            if args[0] in ("gcc", "g++"):
                args = (args[0], f"-ffile-prefix-map={tmp}=/seeds") + args[1:]
            elif args[0] == "swiftc":
                args = (args[0], "-debug-prefix-map", f"{tmp}=/seeds") + args[1:]
            subprocess.run(args, check=True, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def elf(name, built):
            with open(built, "rb") as f:
                seed("elf", name, f.read())

        with open(path("crashy.c"), "w") as f:
            f.write(swift_literal(command, "crashyC"))
        with open(path("orders.cpp"), "w") as f:
            f.write(swift_literal(command, "ordersCpp"))
        # Without page alignment padding: a few KB, so that mutations land on headers, symbols and DWARF.
        compact = ["-Wl,-z,noseparate-code", "-Wl,-z,max-page-size=0x10"]
        run("gcc", "-O2", "-g", "-Wl,--build-id=sha1", *compact, "-o", path("crashy-compact"), path("crashy.c"))
        elf("crashy-O2-g-compact", path("crashy-compact"))
        with open(path("crashy-compact"), "rb") as f:
            chunk_assembly_seeds(f.read(4096))
        run("gcc", "-O2", "-g", "-Wl,--build-id=sha1", "-o", path("crashy-O2"), path("crashy.c"))
        elf("crashy-O2-g", path("crashy-O2"))
        run("gcc", "-O0", "-g", "-gdwarf-4", "-Wl,--build-id=sha1", "-o", path("crashy-O0"), path("crashy.c"))
        elf("crashy-O0-dwarf4", path("crashy-O0"))
        run("objcopy", "--only-keep-debug", path("crashy-O2"), path("crashy.debug"))
        elf("crashy.debug", path("crashy.debug"))
        run("objcopy", "--compress-debug-sections=zlib", path("crashy-O2"), path("crashy-z"))
        elf("crashy-compressed-debug", path("crashy-z"))
        shutil.copy(path("crashy-O2"), path("crashy-stripped"))
        run("strip", "--strip-all", path("crashy-stripped"))
        elf("crashy-stripped", path("crashy-stripped"))
        run("gcc", "-O2", "-g", "-fPIC", "-shared", "-Wl,--build-id=sha1", "-o", path("libcrashy.so"), path("crashy.c"))
        elf("libcrashy.so", path("libcrashy.so"))
        run("gcc", "-O1", "-g", "-c", "-o", path("crashy.o"), path("crashy.c"))
        elf("crashy.o", path("crashy.o"))
        try:
            run("g++", "-O2", "-g", "-Wl,--build-id=sha1", "-o", path("orders"), path("orders.cpp"))
            run("objcopy", "--compress-debug-sections=zlib", path("orders"), path("orders-z"))
            elf("orders-cpp", path("orders-z"))
        except (subprocess.CalledProcessError, FileNotFoundError) as error:
            print(f"make-seeds: no C++ seed ({error})", file=sys.stderr)
        try:
            run("gcc", "-m32", "-O2", "-g", "-o", path("crashy32"), path("crashy.c"))
            elf("crashy-i386", path("crashy32"))
        except subprocess.CalledProcessError:
            print("make-seeds: no 32-bit seed (gcc -m32 needs gcc-multilib)", file=sys.stderr)
        # Symbols where no sane binary has them: absolute FUNC symbols at the top of the address space
        # (ending exactly at 2^64 - 0x10 and at 2^64 - 1: one mutated size byte away from overflowing).
        with open(path("top.s"), "w") as f:
            f.write("\t.text\n\t.globl main\n\t.type main, @function\nmain:\n\txor %eax, %eax\n\tret\n"
                    "\t.size main, .-main\n"
                    "\t.globl near_top\n\t.type near_top, @function\n\t.set near_top, 0xffffffffffffff00\n"
                    "\t.size near_top, 0xf0\n"
                    "\t.globl last_byte\n\t.type last_byte, @function\n\t.set last_byte, 0xfffffffffffffffe\n"
                    "\t.size last_byte, 1\n")
        try:
            run("gcc", "-nostdlib", "-Wl,--build-id=sha1", "-Wl,-e,main", *compact, "-o", path("top"), path("top.s"))
            elf("symbols-at-the-top", path("top"))
        except subprocess.CalledProcessError as error:
            print(f"make-seeds: no symbols-at-the-top seed ({error.stderr.decode()})", file=sys.stderr)
        if shutil.which("swiftc"):
            with open(path("main.swift"), "w") as f:
                f.write(swift_literal(command, "source"))
            run("swiftc", "-Onone", "-g", "-o", path("trap"), path("main.swift"))
            run("objcopy", "--compress-debug-sections=zlib", path("trap"), path("trap-z"))
            elf("swift-trap", path("trap-z"))

    # A libFuzzer dictionary for the JSON targets: every key the parsers look for, and JSON's own tokens.
    keys = set()
    for folder, _, names in os.walk(os.path.join(ROOT, "Sources", "Formats")):
        for name in names:
            if name.endswith(".swift"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    keys.update(re.findall(r'matches\("([^"\\]+)"\)', f.read()))
    tokens = ["{", "}", "[", "]", ":", ",", "null", "true", "false", "-1", "1e309", "0x", "\\u0000", "\\ud800",
              # What the scrubber looks for in keys and values.
              "\"password\"", "\"ip_address\"", "\"debug_meta\"", "Bearer ", "/home/", "://u:p@", "4111111111111111"]
    with open(os.path.join(OUT, "json.dict"), "w") as f:
        f.write("# Written by tools/fuzzing/make-seeds.py: JSON tokens and the keys Sources/Formats reads.\n")
        for token in tokens:
            f.write('"%s"\n' % token.replace("\\", "\\\\").replace('"', '\\"'))
        for key in sorted(keys):
            f.write('"\\"%s\\""\n' % key)
    written.append(("", "json.dict", os.path.getsize(os.path.join(OUT, "json.dict"))))

    total = sum(size for _, _, size in written)
    for target, name, size in written:
        print(f"{size:8d}  {target}/{name}")
    print(f"{total:8d}  total in {len(written)} files")


if __name__ == "__main__":
    main()
