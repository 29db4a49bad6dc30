"""Prints everything a Faultline data folder holds about reports, as text, for PrivacyEndToEndTests.

usage: stored_bytes.py DATA_FOLDER

Writes the inflated bytes of every stored payload (gzip or zlib), then the raw bytes of the SQLite database and
its WAL (latin-1, so every byte maps to one character). A secret that appears in neither was not stored.
"""
import os
import sqlite3
import sys
import zlib

folder = sys.argv[1]
db = os.path.join(folder, "faultline.sqlite")
out = sys.stdout.buffer  # written as UTF-8 text: every raw byte mapped through latin-1 first
conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
for (encoding, blob) in conn.execute("SELECT encoding, bytes FROM payloads ORDER BY id"):
    out.write(zlib.decompress(blob, 47).decode("latin-1").encode("utf-8"))  # 47: zlib or gzip header, detected
    out.write(b"\n")
for table in ("attachments",):
    try:
        for (blob,) in conn.execute(f"SELECT bytes FROM {table}"):
            out.write(bytes(blob).decode("latin-1").encode("utf-8") + b"\n")
    except sqlite3.OperationalError:
        pass
conn.close()
for name in ("faultline.sqlite", "faultline.sqlite-wal"):
    path = os.path.join(folder, name)
    if os.path.exists(path):
        with open(path, "rb") as f:
            out.write(f.read().decode("latin-1").encode("utf-8"))
