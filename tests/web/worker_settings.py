"""Settings of the Celery worker that the browser tests start (see browser.py).

The test settings, plus a visible stream: the offline model waits a little
between its chunks (the test settings make it instant).
"""

from assistant_engine.foundation.env import env_int
from config.settings_test import *  # noqa: F403

OFFLINE_MODEL_CHUNK_DELAY_MS = env_int("OFFLINE_MODEL_CHUNK_DELAY_MS", 20)
