"""Measurements of the running stack for bench/loadtest.sh (stdlib, redis, psycopg)."""

import json
import os
import sys
import time

import psycopg
import redis


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def open_streams(redis_url: str, turn_ids: list[str]) -> int:
    client = redis.Redis.from_url(redis_url)
    return sum(count for _, count in client.pubsub_numsub(*(f"turn:{t}:events" for t in turn_ids)))


def wait_streams(redis_url: str, turn_ids: list[str], wanted: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    count = 0
    while time.monotonic() < deadline:
        count = open_streams(redis_url, turn_ids)
        if count >= wanted:
            return count
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


def at_rest(admin_url: str, server_log: str, window: float) -> dict:
    """Statements the app's database received while nothing happened but open
    streams waiting (counted in PostgreSQL's own log: autovacuum and this probe,
    which uses another database, are not counted)."""
    log_statements(admin_url)
    time.sleep(1)  # the reload reaches every backend
    with open(server_log, errors="replace") as log:
        log.seek(0, os.SEEK_END)
        time.sleep(window)
        lines = [line for line in log.read().splitlines() if line.startswith("[assistant] ") and "statement:" in line]
    return {"queries_per_second": round(len(lines) / window, 2), "window_seconds": window,
            "queries": len(lines), "first": [line[:160] for line in lines[:5]], "db_backends": backends(admin_url)}


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "rss":
        print(rss_kib(int(args[0])))
    elif command == "wait-streams":
        print(wait_streams(os.environ["REDIS_URL"], args[0].split(","), int(args[1]), float(args[2])))
    elif command == "at-rest":
        print(json.dumps(at_rest(args[0], args[1], float(args[2]))))
    else:
        raise SystemExit(f"unknown command {command}")
