#!/bin/sh
# Sends this build's dSYMs to Faultline with symupload: the body of an Xcode "Run Script" build phase, and what the
# fastlane lane of docs/apple.md runs. Tested as it is (Tests/FaultlineHTTPTests/AppleXcodeBuildPhaseTests.swift).
#
# Read from Xcode's build settings:
#   DWARF_DSYM_FOLDER_PATH    the folder the build writes its dSYMs into (required)
#   DWARF_DSYM_FILE_NAME      this target's dSYM (Shop.app.dSYM); with FAULTLINE_DSYMS=target only it is sent
#   CONFIGURATION             a configuration named in FAULTLINE_SKIP_CONFIGURATIONS (default: Debug) sends nothing
#   DEBUG_INFORMATION_FORMAT  anything but dwarf-with-dsym writes no dSYM: nothing is sent
# Read from the build machine's environment:
#   FAULTLINE_URL, FAULTLINE_UPLOAD_TOKEN  the server and the project's upload token (never in the repository);
#                             without them a warning says the dSYMs were not sent, and the build goes on
#   FAULTLINE_SYMUPLOAD       symupload's path (default: symupload on PATH, then Homebrew's bin folders)
#   FAULTLINE_DSYMS           all (default: every *.dSYM in DWARF_DSYM_FOLDER_PATH, the app's, its frameworks' and
#                             its extensions') or target (DWARF_DSYM_FILE_NAME alone)
#
# Exits 0 once every dSYM sent is on the server (`symupload --check`), or when there is nothing to send. Anything
# else prints an `error:` line, which Xcode lists with the build's issues, and fails the build: a dSYM that never
# arrives leaves every crash of the build unsymbolicated.
set -u

note() { echo "note: faultline: $*"; }
warn() { echo "warning: faultline: $*"; }
fail() {
    echo "error: faultline: $1"
    exit "${2:-1}"
}

for skipped in ${FAULTLINE_SKIP_CONFIGURATIONS-Debug}; do
    if [ "${CONFIGURATION:-}" = "$skipped" ]; then
        note "the $skipped configuration sends no dSYMs (FAULTLINE_SKIP_CONFIGURATIONS)"
        exit 0
    fi
done
if [ -n "${DEBUG_INFORMATION_FORMAT:-}" ] && [ "$DEBUG_INFORMATION_FORMAT" != "dwarf-with-dsym" ]; then
    note "DEBUG_INFORMATION_FORMAT is $DEBUG_INFORMATION_FORMAT: this build writes no dSYM, nothing to send"
    exit 0
fi
[ -n "${DWARF_DSYM_FOLDER_PATH:-}" ] || fail "DWARF_DSYM_FOLDER_PATH is not set: run this script as an Xcode build phase"
[ -d "$DWARF_DSYM_FOLDER_PATH" ] || fail "DWARF_DSYM_FOLDER_PATH is no folder: $DWARF_DSYM_FOLDER_PATH"
if [ -z "${FAULTLINE_URL:-}" ] || [ -z "${FAULTLINE_UPLOAD_TOKEN:-}" ]; then
    warn "FAULTLINE_URL and FAULTLINE_UPLOAD_TOKEN are not both set: the dSYMs of this build were not sent"
    exit 0
fi

symupload=${FAULTLINE_SYMUPLOAD:-}
if [ -z "$symupload" ]; then
    # Xcode runs build phases with a short PATH that leaves Homebrew's folders out.
    symupload=$(command -v symupload 2>/dev/null || true)
    for candidate in /opt/homebrew/bin/symupload /usr/local/bin/symupload; do
        if [ -z "$symupload" ] && [ -x "$candidate" ]; then symupload=$candidate; fi
    done
fi
if [ -z "$symupload" ] || [ ! -x "$symupload" ]; then
    fail "symupload not found: install it or set FAULTLINE_SYMUPLOAD to its path (docs/apple.md)"
fi

case "${FAULTLINE_DSYMS:-all}" in
    target)
        [ -n "${DWARF_DSYM_FILE_NAME:-}" ] || fail "FAULTLINE_DSYMS=target needs DWARF_DSYM_FILE_NAME"
        set -- "$DWARF_DSYM_FOLDER_PATH/$DWARF_DSYM_FILE_NAME"
        [ -d "$1" ] || fail "no dSYM at $1: place this phase after the dSYM is written (docs/apple.md)"
        ;;
    all)
        set --
        for dsym in "$DWARF_DSYM_FOLDER_PATH"/*.dSYM; do
            if [ -d "$dsym" ]; then set -- "$@" "$dsym"; fi
        done
        [ $# -gt 0 ] || fail "no .dSYM in $DWARF_DSYM_FOLDER_PATH: place this phase after the dSYMs are written"
        ;;
    *) fail "FAULTLINE_DSYMS is all or target, not ${FAULTLINE_DSYMS}" ;;
esac

note "sending $# dSYM bundle(s) from $DWARF_DSYM_FOLDER_PATH to $FAULTLINE_URL"
"$symupload" --check "$@"
status=$?
[ "$status" -eq 0 ] || fail "symupload exited $status: not every dSYM of this build is on the server" "$status"
