"""`manage.py assistant_models`: the catalog, the selected option, and why an
option cannot be used now."""

from io import StringIO

import pytest
from django.core.management import call_command

from assistant_engine.providers.catalog import CATALOG


@pytest.fixture(autouse=True)
def nothing_configured(settings):
    for name in (
        "ASSISTANT_MODEL",
        "INFOMANIAK_AI_TOKEN",
        "INFOMANIAK_AI_PRODUCT_ID",
        "INFOMANIAK_AI_BASE_URL",
    ):
        setattr(settings, name, "")
    for name in ("BEDROCK_REGION", "BEDROCK_API_KEY", "ANTHROPIC_API_KEY"):
        setattr(settings, name, "")
    settings.DEBUG = False
    settings.ASSISTANT_ALLOW_US_PROCESSING = False


def lines() -> dict[str, str]:
    """The command's output, one line per option id."""
    out = StringIO()
    call_command("assistant_models", stdout=out)
    rows = {}
    for line in out.getvalue().splitlines():
        words = line[2:].split()
        if words and words[0] in {option.id for option in CATALOG}:
            rows[words[0]] = line
    return rows


def test_lists_every_option_with_provider_model_location_and_prices():
    rows = lines()

    assert set(rows) == {option.id for option in CATALOG}
    haiku = rows["bedrock-claude-haiku-4-5"]
    for field in ("bedrock", "eu.anthropic.claude-haiku-4-5-20251001-v1:0", "EU", "$1.00/$5.00/$1.25/$0.10"):
        assert field in haiku
    assert "$3.00/$15.00/$3.75/$0.30" in rows["anthropic-claude-sonnet-4-6"]
    assert " CH " in rows["infomaniak-apertus-70b"]


def test_on_a_fresh_machine_offline_is_selected_and_the_others_say_what_is_missing():
    rows = lines()

    assert rows["offline"].startswith("* ") and rows["offline"].endswith("usable")
    assert not rows["bedrock-claude-haiku-4-5"].startswith("*")
    assert "BEDROCK_API_KEY is not set" in rows["bedrock-claude-haiku-4-5"]
    assert "INFOMANIAK_AI_TOKEN is not set" in rows["infomaniak-qwen3"]
    assert "ASSISTANT_ALLOW_US_PROCESSING" in rows["anthropic-claude-haiku-4-5"]


def test_marks_the_configured_option_and_shows_it_usable(settings):
    settings.BEDROCK_REGION = "eu-central-2"
    settings.BEDROCK_API_KEY = "k"
    settings.ASSISTANT_MODEL = "bedrock-claude-sonnet-4-6"

    rows = lines()

    assert rows["bedrock-claude-sonnet-4-6"].startswith("* ")
    assert rows["bedrock-claude-sonnet-4-6"].endswith("usable")
    assert not rows["offline"].startswith("*")


def test_shows_a_residency_refusal(settings):
    settings.BEDROCK_REGION = "eu-west-2"
    settings.BEDROCK_API_KEY = "k"

    assert "BEDROCK_REGION eu-west-2 is not an EU or Swiss region" in lines()["bedrock-claude-haiku-4-5"]


def test_says_when_the_configured_option_is_unknown(settings):
    settings.ASSISTANT_MODEL = "gpt-17"
    out = StringIO()

    call_command("assistant_models", stdout=out)

    assert "ASSISTANT_MODEL='gpt-17' is not a known option." in out.getvalue()
    assert not any(line.startswith("*") for line in out.getvalue().splitlines())


def test_without_assistant_model_production_stars_infomaniak_as_the_server_would_use_it(settings):
    """Issue 34.13: the star is the option production actually uses (catalog.selected_option)."""
    from assistant_engine.providers.catalog import INFOMANIAK_DEFAULT_ID, selected_option

    settings.INFOMANIAK_AI_TOKEN, settings.INFOMANIAK_AI_PRODUCT_ID = "token", "4242"
    rows = lines()
    assert selected_option().id == INFOMANIAK_DEFAULT_ID
    assert rows[INFOMANIAK_DEFAULT_ID].startswith("* ")
    assert [option for option, row in rows.items() if row.startswith("* ")] == [INFOMANIAK_DEFAULT_ID]
