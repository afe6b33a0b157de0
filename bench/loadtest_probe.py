"""Measurements of the running stack for bench/loadtest.sh (stdlib, psycopg)."""

import json
import os
import sys
import time

import psycopg


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def open_connections(port: int) -> int:
    """Established TCP connections to the web process's port (server side):
    during the streams-at-rest run, one per open stream."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                count += 1
    return count


def wait_streams(port: int, wanted: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    count = 0
    while time.monotonic() < deadline:
        count = open_connections(port)
        if count >= wanted:
            time.sleep(3)  # the last ones finish their catch-up read
            return open_connections(port)
        time.sleep(0.5)
    return count


def backends(admin_url: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as connection:
        return int(connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'assistant'").fetchone()[0])


def log_statements(admin_url: str) -> None:
    """PostgreSQL logs every statement, prefixed by its database's name."""
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute("ALTER SYSTEM SET log_statement = 'all'")
        connection.execute("ALTER SYSTEM SET log_line_prefix = '[%d] '")
        connection.execute("SELECT pg_reload_conf()")


def _statements(log) -> list[str]:
    return [line for line in log.read().splitlines() if line.startswith("[assistant] ") and "statement:" in line]


def at_rest(admin_url: str, server_log: str, window: float, settle_limit: float = 60) -> dict:
    """Statements the app's database received while nothing happened but open
    streams waiting (counted in PostgreSQL's own log: autovacuum and this probe,
    which uses another database, are not counted). Connections the kernel
    accepted may still be waiting for the web process: first wait for a quiet
    second (at most `settle_limit` s; a stream that polled would never be quiet)."""
    log_statements(admin_url)
    time.sleep(1)  # the reload reaches every backend
    started = time.monotonic()
    with open(server_log, errors="replace") as log:
        log.seek(0, os.SEEK_END)
        while time.monotonic() - started < settle_limit:
            time.sleep(1)
            if not _statements(log):
                break
        settled = time.monotonic() - started
        time.sleep(window)
        lines = _statements(log)
    return {"queries_per_second": round(len(lines) / window, 2), "window_seconds": window,
            "settled_seconds": round(settled, 1), "queries": len(lines), "first": [line[:160] for line in lines[:5]],
            "db_backends": backends(admin_url)}


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "rss":
        print(rss_kib(int(args[0])))
    elif command == "wait-streams":
        print(wait_streams(int(args[0]), int(args[1]), float(args[2])))
    elif command == "at-rest":
        print(json.dumps(at_rest(args[0], args[1], float(args[2]))))
    else:
        raise SystemExit(f"unknown command {command}")
