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


def transactions(admin_url: str) -> int:
    """Committed + rolled back transactions of the app's database: with Django's
    autocommit, one per query outside an atomic block."""
    with psycopg.connect(admin_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'assistant'"
        ).fetchone()
        return int(row[0])


def backends(admin_url: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as connection:
        return int(connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'assistant'").fetchone()[0])


def at_rest(admin_url: str, settle: float, window: float) -> dict:
    """Queries per second while nothing happens but open streams waiting.
    PostgreSQL publishes an idle backend's counters within 10 s: settle first."""
    time.sleep(settle)
    before = transactions(admin_url)
    time.sleep(window)
    after = transactions(admin_url)
    return {"queries_per_second": round((after - before) / window, 2), "window_seconds": window,
            "db_backends": backends(admin_url)}


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "rss":
        print(rss_kib(int(args[0])))
    elif command == "wait-streams":
        print(wait_streams(os.environ["REDIS_URL"], args[0].split(","), int(args[1]), float(args[2])))
    elif command == "at-rest":
        print(json.dumps(at_rest(args[0], float(args[1]), float(args[2]))))
    else:
        raise SystemExit(f"unknown command {command}")
