#!/usr/bin/env bash
# Start or stop a throw-away PostgreSQL server for the test run, from Debian's
# binaries, listening on 127.0.0.1 only. PostgreSQL refuses to run as root, so
# the server runs as the `postgres` system user that Debian's package creates.
#   scripts/pg.sh start DIR PORT   prints the DATABASE_URL to use
#     (PG_OPTIONS: more server settings, e.g. "-c shared_preload_libraries=pg_stat_statements")
#   scripts/pg.sh stop DIR
set -euo pipefail

bindir() {
  local initdb
  initdb=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)
  [ -n "$initdb" ] || { echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }
  dirname "$initdb"
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    dir=$2; port=$3; bin=$(bindir)
    rm -rf "$dir"; mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >/dev/null
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-h 127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 ${PG_OPTIONS:-}" \
      start >/dev/null
    echo "postgres://postgres@127.0.0.1:$port/assistant"
    ;;
  stop)
    dir=$2; bin=$(bindir)
    [ -d "$dir/data" ] && as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
