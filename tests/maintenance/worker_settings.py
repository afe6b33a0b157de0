"""Settings of the workers these tests start: the test settings, with the
offline model's pause between chunks taken from the worker's environment (the
test settings make it instant), so a test can make a turn last long enough to
kill its worker in the middle."""

from assistant_engine.foundation.env import env_int
from config.settings_test import *  # noqa: F403

OFFLINE_MODEL_CHUNK_DELAY_MS = env_int("OFFLINE_MODEL_CHUNK_DELAY_MS", 0)
