# Shared by the benchmark scripts (source it): a fresh Faultline server with one project, on a free loopback port.
# They keep `server` (the server's pid) for their cleanup trap.

# bench_create_project FAULTLINE DATA [OPTIONS...]: creates project "bench" in the data folder DATA (rate limit out of
# the way; OPTIONS such as --database URL --blobs DIR go to the command); sets key (its ingest key), project (its id)
# and upload (its upload token).
bench_create_project() {
  local created
  created=$("$1" projects create bench --data "$2" --rate-limit 1000000 --json "${@:3}")
  read -r key project upload < <(python3 -c \
    'import json,sys; p = json.load(sys.stdin); print(p["ingest_key"], p["id"], p.get("upload_token", "-"))' <<< "$created")
  # The new-issue cap out of the way too (the benches make many issues quickly), where the build has one.
  if "$1" alerts configure --help 2>/dev/null | grep -q -- --new-issue-cap; then
    "$1" alerts configure bench --data "$2" --new-issue-cap 10000 "${@:3}" > /dev/null
  fi
}

# bench_serve FAULTLINE DATA LOGS [OPTIONS...]: starts `FAULTLINE serve` on DATA (stdout and stderr in LOGS/out,
# LOGS/err; OPTIONS go to serve); sets server (its pid) and url once it listens.
# The load generator's connections all come from 127.0.0.1: the per-address share is lifted to the whole cap (by the
# environment, which builds older than the share ignore, so --baseline binaries start the same way).
bench_serve() {
  # Emptied first: the server's shell truncates them only once it runs, and the wait below must not find the line a
  # previous server wrote.
  : > "$3/out"
  : > "$3/err"
  FAULTLINE_MAX_CONNECTIONS_PER_ADDRESS="${FAULTLINE_MAX_CONNECTIONS_PER_ADDRESS:-1000000}" \
    "$1" serve --data "$2" --port 0 --log-level warning "${@:4}" > "$3/out" 2> "$3/err" &
  server=$!
  for _ in $(seq 1 200); do grep -q "listening on" "$3/out" 2>/dev/null && break; sleep 0.05; done
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$3/out" | head -1)
  [ -n "$url" ] || { echo "error: the server did not start: $(cat "$3/err")" >&2; exit 1; }
}

# bench_stop: stops the server bench_serve started.
bench_stop() {
  kill "$server"; wait "$server" 2>/dev/null || true
  server=""
}

# bench_server_cpu PID: the CPU seconds a server process (a PostgreSQL postmaster) and its children have used: its
# own and its reaped children's times, plus each live child's (so that backends which ended between two readings
# still count). Fields of /proc/PID/stat after the command name: 2 = ppid, 12–15 = utime, stime, cutime, cstime.
bench_server_cpu() {
  python3 - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
def fields(p):
    try:
        text = open(f"/proc/{p}/stat").read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()
own = fields(pid)
ticks = sum(int(v) for v in own[11:15])
for p in os.listdir("/proc"):
    if p.isdigit():
        f = fields(p)
        if f and f[1] == pid:
            ticks += int(f[11]) + int(f[12])
print(ticks / os.sysconf("SC_CLK_TCK"))
PY
}
