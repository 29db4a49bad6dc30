#!/usr/bin/env bash
# Makes the brotli fixtures of BodyDecodingTests with the reference encoder, the `brotli` CLI
# (Debian package `brotli`, 1.0.9): run from anywhere; commit what it writes.
#   envelope.txt.br   - envelope.txt at quality 11, for the round trip (the test compares with envelope.txt)
#   zeros-64MiB.br    - 64 MiB of zero bytes: a ~100-byte "brotli bomb" for the output-limit test
set -euo pipefail
cd "$(dirname "$0")"
command -v brotli >/dev/null || { echo "install the brotli CLI: apt-get install brotli" >&2; exit 1; }
brotli --force --quality=11 --output=envelope.txt.br envelope.txt
head -c 67108864 /dev/zero | brotli --quality=11 --stdout > zeros-64MiB.br
ls -l envelope.txt envelope.txt.br zeros-64MiB.br
