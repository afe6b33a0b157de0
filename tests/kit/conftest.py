"""The example product's fixtures: a real redis-server and headless Chromium,
as the other suites start them."""

from tests.maintenance.conftest import redis_server  # noqa: F401 (a fixture)
from tests.web.conftest import chromium  # noqa: F401 (a fixture)
