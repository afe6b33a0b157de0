"""A production deployment never answers real people with the demo model by
accident: with DEBUG off and ASSISTANT_MODEL empty, the system check
providers.E001 fails, so the servers refuse to start and `check --deploy`
fails, unless Infomaniak's credentials are set (then Infomaniak, the seeds'
default, is the model) or the demo model is named (ASSISTANT_MODEL=offline)."""

import os
import subprocess
import sys

import pytest
from django.core import checks

from assistant_engine.foundation.startup import STARTUP
from assistant_engine.providers.catalog import selected_option
from tests.workers import PROJECT


@pytest.fixture
def production(settings):
    settings.DEBUG = False
    settings.ASSISTANT_MODEL = ""
    settings.INFOMANIAK_AI_TOKEN = settings.INFOMANIAK_AI_PRODUCT_ID = ""
    return settings


def deploy_errors() -> list[checks.CheckMessage]:
    """The errors of the checks a server runs at its start (foundation.startup), as `check --deploy` runs them."""
    return [message for message in checks.run_checks(include_deployment_checks=True, tags=[STARTUP])
            if message.is_serious()]


def test_no_model_named_in_production_is_refused(production):
    [error] = deploy_errors()
    assert error.id == "assistant_providers.E001"
    assert "ASSISTANT_MODEL=offline" in error.msg


def test_the_check_is_a_deploy_check_only(production):
    """Management commands (migrate, the key commands) still run: only servers and `check --deploy` refuse."""
    assert [message.id for message in checks.run_checks(tags=[STARTUP]) if message.is_serious()] == []


def test_the_demo_model_named_explicitly_is_accepted(production):
    production.ASSISTANT_MODEL = "offline"
    assert deploy_errors() == []
    assert selected_option().id == "offline"


def test_infomaniak_credentials_make_it_the_default(production):
    production.INFOMANIAK_AI_TOKEN, production.INFOMANIAK_AI_PRODUCT_ID = "ik-token", "1234"
    assert deploy_errors() == []
    assert selected_option().id == "infomaniak-qwen3"


def test_development_keeps_the_demo_model_as_default(production):
    production.DEBUG = True
    production.INFOMANIAK_AI_TOKEN, production.INFOMANIAK_AI_PRODUCT_ID = "ik-token", "1234"
    assert "assistant_providers.E001" not in [message.id for message in deploy_errors()]
    assert selected_option().id == "offline"


def production_env(**extra: str) -> dict[str, str]:
    # Not the browser tests' DJANGO_ALLOW_ASYNC_UNSAFE either: `check --deploy` refuses it (async.E001).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INFOMANIAK_", "ASSISTANT_MODEL", "DJANGO_ALLOW_ASYNC_UNSAFE"))}
    return env | {"DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0", "SECRET_KEY": "x",
                  "ASSISTANT_KEYS_SECRET": "x", "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
                  **extra}


@pytest.mark.parametrize(("model", "refused"), [("", True), ("offline", False)])
def test_the_asgi_app_refuses_to_start_without_a_model_named(model, refused):
    started = subprocess.run([sys.executable, "-c", "import config.asgi"], cwd=PROJECT, capture_output=True,
                             text=True, env=production_env(ASSISTANT_MODEL=model), timeout=60)
    assert (started.returncode != 0) is refused, started.stderr[-2000:]
    assert ("ImproperlyConfigured" in started.stderr) is refused


@pytest.mark.parametrize(("model", "refused"), [("", True), ("offline", False)])
def test_check_deploy_fails_without_a_model_named(model, refused):
    checked = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=PROJECT, capture_output=True,
                             text=True, env=production_env(ASSISTANT_MODEL=model), timeout=60)
    assert (checked.returncode != 0) is refused, checked.stderr[-2000:]
    assert ("assistant_providers.E001" in checked.stderr) is refused


@pytest.mark.worker
@pytest.mark.parametrize("process", ["worker", "beat"])
def test_a_worker_or_beat_refuses_to_start_without_a_model_named(tmp_path, process):
    """The apps' start-up checks are registered when they run (Celery's Django fix-up loads the apps first)."""
    options = ["--concurrency=1", "--without-gossip"] if process == "worker" else ["-s", str(tmp_path / "schedule")]
    started = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "config", process, *options],
        cwd=PROJECT, capture_output=True, text=True, timeout=60,
        env=production_env(CELERY_BROKER_URL="filesystem://", BROKER_DIR=str(tmp_path), RUN_DIR=str(tmp_path)),
    )
    assert started.returncode != 0
    assert "Refusing to start" in started.stdout + started.stderr
