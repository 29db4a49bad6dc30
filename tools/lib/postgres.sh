# Sourced by tools/test: a throwaway PostgreSQL server for the storage conformance tests (issue #14).
# `faultline_start_test_postgres` installs Debian's postgresql when it is missing, makes a cluster in a temporary
# folder, starts it on a free loopback port, exports FAULTLINE_TEST_POSTGRES_URL, and stops and removes it when
# the calling shell exits. The tests' cluster runs with fsync=off: it is thrown away, and what they check is the
# stores' behaviour, not the server's durability. Benchmarks set FAULTLINE_PG_FSYNC=on (the server's default).

faultline_start_test_postgres() {
  faultline_apt_install postgresql
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$bin/initdb" ] || { echo "error: no PostgreSQL server binaries under /usr/lib/postgresql" >&2; return 1; }
  FAULTLINE_PG_DIR=$(mktemp -d /tmp/faultline-pg.XXXXXX)
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # initdb refuses to run as root: as root, the cluster belongs to the postgres user.
  local as=()
  if [ "$(id -u)" = "0" ]; then
    chown postgres "$FAULTLINE_PG_DIR"
    as=(runuser -u postgres --)
  fi
  FAULTLINE_PG_STOP=("${as[@]}" "$bin/pg_ctl" -D "$FAULTLINE_PG_DIR/db" stop -m immediate)
  "${as[@]}" "$bin/initdb" -D "$FAULTLINE_PG_DIR/db" -A trust -U postgres --no-sync >/dev/null
  "${as[@]}" "$bin/pg_ctl" -D "$FAULTLINE_PG_DIR/db" -w -l "$FAULTLINE_PG_DIR/log" \
    -o "-p $port -k $FAULTLINE_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=${FAULTLINE_PG_FSYNC:-off} -c max_connections=400" \
    start >/dev/null
  trap faultline_stop_test_postgres EXIT
  export FAULTLINE_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  echo "==> PostgreSQL $("$bin/postgres" --version | awk '{print $3}') for the tests at $FAULTLINE_TEST_POSTGRES_URL" >&2
}

faultline_stop_test_postgres() {
  [ -n "${FAULTLINE_PG_DIR:-}" ] || return 0
  "${FAULTLINE_PG_STOP[@]}" >/dev/null 2>&1 || true
  rm -rf "$FAULTLINE_PG_DIR"
}
