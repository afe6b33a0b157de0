"""Serving tests: the live stream (Redis pub/sub), the production server and
its start-up rules. Redis is a real redis-server started by the test run."""

import pytest

from tests.maintenance.conftest import redis_server  # noqa: F401  (the session's real redis-server)


@pytest.fixture
def live_redis(redis_server, settings):  # noqa: F811
    """REDIS_URL set for this process: the loop publishes, streams subscribe."""
    redis_server.client.flushall()
    settings.REDIS_URL = redis_server.url
    return redis_server
