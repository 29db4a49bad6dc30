#!/bin/sh
# Sends this build's dSYMs to Faultline with symupload, or with sentry-cli where symupload is not installed: the body
# of an Xcode "Run Script" build phase, and what the fastlane lane of docs/apple.md runs. Tested as it is
# (Tests/FaultlineHTTPTests/AppleXcodeBuildPhaseTests.swift).
#
# Read from Xcode's build settings:
#   DWARF_DSYM_FOLDER_PATH    the folder the build writes its dSYMs into (required)
#   DWARF_DSYM_FILE_NAME      this target's dSYM (Shop.app.dSYM); with FAULTLINE_DSYMS=target only it is sent
#   CONFIGURATION             a configuration named in FAULTLINE_SKIP_CONFIGURATIONS (default: Debug) sends nothing
#   DEBUG_INFORMATION_FORMAT  anything but dwarf-with-dsym writes no dSYM: nothing is sent
# Read from the build machine's environment:
#   FAULTLINE_URL, FAULTLINE_UPLOAD_TOKEN  the server and the project's upload token (never in the repository);
#                             without them a warning says the dSYMs were not sent, and the build goes on
#   FAULTLINE_UPLOADER        symupload, sentry-cli, or auto (default): symupload when it is found, else sentry-cli
#   FAULTLINE_SYMUPLOAD       symupload's path (default: symupload on PATH, then Homebrew's bin folders)
#   FAULTLINE_SENTRY_CLI      sentry-cli's path (default: sentry-cli on PATH, then Homebrew's bin folders)
#   FAULTLINE_PROJECT         the project's slug: sentry-cli needs it (symupload learns it from the token)
#   FAULTLINE_DSYMS           all (default: every *.dSYM in DWARF_DSYM_FOLDER_PATH, the app's, its frameworks' and
#                             its extensions') or target (DWARF_DSYM_FILE_NAME alone)
#
# Exits 0 once every dSYM sent is on the server (`symupload --check`, or `sentry-cli debug-files upload --wait`), or
# when there is nothing to send. Anything else prints an `error:` line, which Xcode lists with the build's issues, and
# fails the build: a dSYM that never arrives leaves every crash of the build unsymbolicated.
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

# Finds `$1` (a tool's name) from `$2` (its path if given), PATH, then Homebrew's bin folders: Xcode runs build phases
# with a short PATH that leaves Homebrew's folders out. Prints the path, or nothing.
find_tool() {
    if [ -n "$2" ]; then
        echo "$2"
        return
    fi
    found=$(command -v "$1" 2>/dev/null || true)
    for candidate in "/opt/homebrew/bin/$1" "/usr/local/bin/$1"; do
        if [ -z "$found" ] && [ -x "$candidate" ]; then found=$candidate; fi
    done
    echo "$found"
}

uploader=${FAULTLINE_UPLOADER:-auto}
symupload=
sentry_cli=
case "$uploader" in
    symupload | auto)
        symupload=$(find_tool symupload "${FAULTLINE_SYMUPLOAD:-}")
        # A path given, or symupload asked for by name, must be there: only a search that found nothing falls back.
        if { [ "$uploader" = "symupload" ] || [ -n "${FAULTLINE_SYMUPLOAD:-}" ]; } && [ ! -x "$symupload" ]; then
            fail "symupload not found: install it or set FAULTLINE_SYMUPLOAD to its path (docs/apple.md)"
        fi
        ;;
    sentry-cli) ;;
    *) fail "FAULTLINE_UPLOADER is symupload, sentry-cli or auto, not $uploader" ;;
esac
if [ ! -x "$symupload" ]; then
    symupload=
    sentry_cli=$(find_tool sentry-cli "${FAULTLINE_SENTRY_CLI:-}")
    if [ ! -x "$sentry_cli" ]; then
        fail "neither symupload nor sentry-cli found: install one, or set FAULTLINE_SYMUPLOAD or FAULTLINE_SENTRY_CLI to its path (docs/apple.md)"
    fi
    [ -n "${FAULTLINE_PROJECT:-}" ] || fail "sentry-cli needs the project's slug: set FAULTLINE_PROJECT (docs/apple.md)"
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

if [ -n "$symupload" ]; then
    note "sending $# dSYM bundle(s) from $DWARF_DSYM_FOLDER_PATH to $FAULTLINE_URL"
    "$symupload" --check "$@"
    status=$?
    [ "$status" -eq 0 ] || fail "symupload exited $status: not every dSYM of this build is on the server" "$status"
else
    note "sending $# dSYM bundle(s) from $DWARF_DSYM_FOLDER_PATH to $FAULTLINE_URL with sentry-cli"
    # The token decides the project on Faultline; sentry-cli still wants an organisation's name, which is ignored.
    SENTRY_URL=$FAULTLINE_URL SENTRY_AUTH_TOKEN=$FAULTLINE_UPLOAD_TOKEN SENTRY_DISABLE_UPDATE_CHECK=true \
        "$sentry_cli" debug-files upload --org faultline --project "$FAULTLINE_PROJECT" --wait "$@"
    status=$?
    [ "$status" -eq 0 ] || fail "sentry-cli exited $status: not every dSYM of this build is on the server" "$status"
fi
