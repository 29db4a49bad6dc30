#!/usr/bin/env bash
# Makes the real source bundle of SourceBundleTests (FormatsTests) with the real sentry-cli, so that the tests need
# neither sentry-cli (a PyPI package) nor gcc: run from anywhere with gcc and sentry-cli 3.8.2 on PATH
# (`pip install sentry-cli==3.8.2`); commit what it writes.
#   divide          - `gcc -g -O0` of divide.c, built in $BUILD below: its DWARF names $BUILD/divide.c
#   divide.src.zip  - `sentry-cli debug-files bundle-sources divide`: the manifest names the binary's build-id and
#                     holds $BUILD/divide.c byte for byte
# divide.c has no final newline: the tests count its 11 lines.
set -euo pipefail
cd "$(dirname "$0")"
BUILD=/tmp/faultline-source-bundle-fixture   # SourceBundleTests.Program.buildFolder
[ "$(sentry-cli --version 2>/dev/null)" = "sentry-cli 3.8.2" ] || { echo "needs sentry-cli 3.8.2: pip install sentry-cli==3.8.2" >&2; exit 1; }
rm -rf "$BUILD" && mkdir -p "$BUILD"
cp divide.c "$BUILD/divide.c"
(cd "$BUILD" && gcc -g -O0 -o divide divide.c)
(cd "$BUILD" && SENTRY_DISABLE_UPDATE_CHECK=true SENTRY_LOAD_DOTENV=0 sentry-cli debug-files bundle-sources divide >&2)
cp "$BUILD/divide" "$BUILD/divide.src.zip" .
rm -rf "$BUILD"
readelf -n divide | grep 'Build ID'
ls -l divide divide.src.zip
