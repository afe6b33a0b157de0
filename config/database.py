"""The database settings from DATABASE_URL: SQLite's locking, PostgreSQL's pool."""

import dj_database_url

from assistant_engine.foundation.env import env_int


def database_from_url(url: str) -> dict:
    # Without a pool (SQLite; PostgreSQL with DATABASE_POOL_SIZE=0) a worker
    # thread keeps its connection; the ASGI web process sets 0
    # (scripts/serve.sh): its sync code runs in short-lived threads.
    config = dj_database_url.parse(url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # SQLite serializes writers: IMMEDIATE takes the write lock at BEGIN, so
        # two transactions can never both read a balance and then both write it
        # (credits); WAL lets the web process read while a worker writes.
        config["CONN_MAX_AGE"] = 0
        config["OPTIONS"] = {
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    elif config["ENGINE"] == "django.db.backends.postgresql" and (pool_size := env_int("DATABASE_POOL_SIZE", 10)):
        # A pool per process (psycopg_pool, through Django): a thread takes a
        # connection for its queries and gives it back (close() returns it),
        # so a worker's hundreds of turn threads, waiting on their models
        # without one (assistant.loop), share a few. Django refuses a pool
        # with persistent connections.
        config["CONN_MAX_AGE"] = 0
        config["OPTIONS"] = {**config.get("OPTIONS", {}), "pool": {
            "min_size": 1, "max_size": pool_size, "timeout": env_int("DATABASE_POOL_TIMEOUT", 30, minimum=1),
        }}
    return config
