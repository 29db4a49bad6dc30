#!/bin/sh
# Canary rollout → wait → gate → promote or roll back, for any CI (docs/release-gate.md).
#
# Needs `faultline` on PATH (or FAULTLINE_BIN), and:
#   FAULTLINE_SERVER  the server's URL, e.g. https://faultline.example.com
#   FAULTLINE_TOKEN   the project's upload token (or the admin token)
#   PROJECT, RELEASE  the project's slug and the release being rolled out, as the app reports it
#   DEPLOY_CANARY, PROMOTE, ROLL_BACK   your deployment's own commands (each run with sh -c)
# Optional:
#   GATE_WAIT     seconds to wait before each look at the gate (default 900)
#   GATE_TRIES    looks before "not enough data" counts as a failure (default 4)
#   GATE_OPTIONS  more `faultline gate` options, e.g. "--min-sessions 500 --baseline 2.3.0"
#
# Exits 0 when the release was promoted, 1 when it failed the gate and was rolled back, 2 when it never had enough
# sessions and was rolled back, and the gate's own status (3, or 64 for bad options) when the gate could not be asked:
# then nothing is promoted or rolled back, and a person decides.
set -eu

faultline=${FAULTLINE_BIN:-faultline}
wait_seconds=${GATE_WAIT:-900}
tries=${GATE_TRIES:-4}

echo "release gate: deploying $RELEASE of $PROJECT to the canary"
sh -c "$DEPLOY_CANARY"

try=1
while :; do
    echo "release gate: waiting ${wait_seconds}s for sessions (look $try of $tries)"
    sleep "$wait_seconds"
    status=0
    # GATE_OPTIONS is split into words on purpose.
    # shellcheck disable=SC2086
    "$faultline" gate --server "$FAULTLINE_SERVER" --project "$PROJECT" --release "$RELEASE" ${GATE_OPTIONS:-} ||
        status=$?
    case $status in
    0)
        echo "release gate: pass, promoting $RELEASE"
        sh -c "$PROMOTE"
        exit 0
        ;;
    1)
        echo "release gate: fail, rolling back $RELEASE"
        sh -c "$ROLL_BACK"
        exit 1
        ;;
    2)
        if [ "$try" -ge "$tries" ]; then
            echo "release gate: still not enough data after $try looks, rolling back $RELEASE"
            sh -c "$ROLL_BACK"
            exit 2
        fi
        try=$((try + 1))
        ;;
    *)
        echo "release gate: the gate could not be asked (exit $status); leaving the canary as it is" >&2
        exit "$status"
        ;;
    esac
done
