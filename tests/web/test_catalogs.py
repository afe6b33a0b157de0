"""The committed translation catalogs: every string of the code is in them, every
one is translated (none fuzzy), and the compiled .mo files are the .po files'
(they are committed, as Django commits its own, so `make run` needs no gettext)."""

import gettext
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

LOCALE = Path(settings.LOCALE_PATHS[0])
LANGUAGES = [code for code, _name in settings.LANGUAGES if code != "en"]
DOMAINS = ["django", "djangojs"]
CATALOGS = [(language, domain) for language in LANGUAGES for domain in DOMAINS]
# What makemessages leaves out: not the product's strings (tests, tooling) or not sources.
IGNORED = [".venv", ".run", "staticfiles", "tests", "bench", "docs", "scripts", "locale"]


def po(language: str, domain: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"{domain}.po"


def msgids(path: Path) -> set[str]:
    """The msgids of a .po file (multi-line ones joined), without the header."""
    ids, current = set(), None
    for line in path.read_text().splitlines():
        if line.startswith("msgid "):
            current = [line[len("msgid "):]]
        elif current is not None and line.startswith('"'):
            current.append(line)
        elif current is not None:
            ids.add("".join(part.strip()[1:-1] for part in current))
            current = None
    return ids - {""}


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_every_string_is_translated(language, domain):
    result = subprocess.run(["msgfmt", "--check", "--statistics", "-o", os.devnull, str(po(language, domain))],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+ translated messages\.\n", result.stderr), result.stderr


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_the_compiled_catalog_is_the_source(language, domain, tmp_path):
    compiled = tmp_path / "fresh.mo"
    subprocess.run(["msgfmt", "-o", str(compiled), str(po(language, domain))], check=True)
    committed = po(language, domain).with_suffix(".mo")
    with compiled.open("rb") as fresh, committed.open("rb") as kept:
        assert gettext.GNUTranslations(kept)._catalog == gettext.GNUTranslations(fresh)._catalog, (
            f"{committed} is stale: run `manage.py compilemessages`")


def test_the_catalogs_hold_every_string_of_the_code(tmp_path):
    """makemessages on a copy of the sources finds no string the catalogs lack."""
    base = Path(settings.BASE_DIR)
    copy = tmp_path / "project"
    shutil.copytree(base, copy, ignore=shutil.ignore_patterns(*IGNORED, "*.pyc", "__pycache__", "*.sqlite3", ".git"))
    env = {**os.environ, "SECRET_KEY": "catalogs", "DEBUG": "1", "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("DATABASE_URL", None)
    fresh = copy / LOCALE.relative_to(base)
    fresh.mkdir(parents=True)
    for domain in DOMAINS:
        subprocess.run(
            [sys.executable, "manage.py", "makemessages", "-d", domain, "-l", LANGUAGES[0], "--no-location",
             *[arg for ignored in IGNORED for arg in ("-i", ignored)]],
            cwd=copy, env=env, check=True, capture_output=True,
        )
        found = msgids(fresh / LANGUAGES[0] / "LC_MESSAGES" / f"{domain}.po")
        for language in LANGUAGES:
            missing = found - msgids(po(language, domain))
            assert not missing, f"{language}/{domain}.po lacks {sorted(missing)[:5]}: run makemessages"


# The names makemessages (xgettext) reads as translation calls; a string passed to any other
# name is never extracted, so it stays English whatever the catalogs say.
EXTRACTED_NAMES = {"_", "gettext", "gettext_lazy", "gettext_noop", "ngettext", "ngettext_lazy", "pgettext",
                   "pgettext_lazy", "npgettext", "npgettext_lazy"}
TRANSLATION_IMPORT = re.compile(r"from django\.utils\.translation import (.+)")


def test_translation_functions_keep_names_makemessages_reads():
    """A Telegram string imported `gettext_lazy as _lazy` was never extracted (and
    makemessages then dropped its translation as obsolete)."""
    base = Path(settings.BASE_DIR)
    unread = []
    for path in base.rglob("*.py"):
        if set(path.relative_to(base).parts) & set(IGNORED):
            continue
        for match in TRANSLATION_IMPORT.finditer(path.read_text()):
            for name in match.group(1).strip("()").split(","):
                imported, _as, alias = name.strip().partition(" as ")
                if alias and alias not in EXTRACTED_NAMES and imported in EXTRACTED_NAMES:
                    unread.append(f"{path.relative_to(base)}: {name.strip()}")
    assert unread == []
