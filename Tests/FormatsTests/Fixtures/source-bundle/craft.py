#!/usr/bin/env python3
"""Writes Sentry source bundles (`SYSB`, version 2, then a ZIP archive) built byte by byte, for tests and fuzz seeds.

A second, independent writer beside the server's `SourceBundleWriter`, able to write what no honest writer does:

    craft.py OUT --build-id ID [--files N] [--size BYTES] [--aliases K] [--overlap]

  --files N     N source files `/src/fN.c`, each BYTES zero bytes, deflated (zeros deflate about 1000:1)
  --aliases K   K central-directory entries (K - 1 extra names, all listed in the manifest) for each local entry:
                the archive whose entries share one entry's data (issue #39.4)
  --overlap     the second file's local header starts inside the first file's data

Offsets count from the byte after the `SYSB` header, as Python's zipfile and most writers do (the reader also
takes sentry-cli's, which count the header). Used by Tests/TestSupport (SourceBundles.crafted) and by
tools/fuzzing/make-seeds.py.
"""
import argparse
import json
import struct
import zlib


def deflate(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def bundle(build_id, files=1, size=64, aliases=1, overlap=False):
    """The bytes of a bundle (see the module's docstring)."""
    body = bytearray()
    central = bytearray()
    count = 0
    listed = {}

    def local(name, raw, comp):
        offset = len(body)
        body.extend(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x0800, 8, 0, 0x21, zlib.crc32(raw), len(comp),
                                len(raw), len(name), 0))
        body.extend(name)
        body.extend(comp)
        return offset

    def directory(name, offset, raw, comp):
        nonlocal count
        central.extend(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0x0800, 8, 0, 0x21, zlib.crc32(raw),
                                   len(comp), len(raw), len(name), 0, 0, 0, 0, 0, offset))
        central.extend(name)
        count += 1

    data = b"\0" * size
    comp = deflate(data)
    for i in range(files):
        name = b"files/src/f%d.c" % i
        offset = local(name, data, comp)
        if overlap and i == 1:
            offset -= len(comp) // 2 + 1  # points into the previous entry's data
        for a in range(aliases):
            alias = name if a == 0 else b"files/src/f%d-%d.c" % (i, a)
            directory(alias, offset, data, comp)
            listed[alias.decode()] = {"type": "source", "path": "/" + alias.decode()[len("files/"):]}
    manifest = json.dumps({"files": listed, "arch": "x86_64", "code_id": build_id, "debug_id": "",
                           "object_name": "crafted"}, sort_keys=True).encode()
    manifest_comp = deflate(manifest)
    directory(b"manifest.json", local(b"manifest.json", manifest, manifest_comp), manifest, manifest_comp)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central), len(body), 0)
    return b"SYSB" + struct.pack("<I", 2) + bytes(body) + bytes(central) + end


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--build-id", required=True)
    parser.add_argument("--files", type=int, default=1)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--aliases", type=int, default=1)
    parser.add_argument("--overlap", action="store_true")
    args = parser.parse_args()
    with open(args.out, "wb") as f:
        f.write(bundle(args.build_id, args.files, args.size, args.aliases, args.overlap))


if __name__ == "__main__":
    main()
