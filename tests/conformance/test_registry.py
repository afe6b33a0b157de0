"""A door with no adapter fails here: every package under surfaces/, the
browser (web/), the API, and the panel of host pages (its template tag) must be
in the registry, each adapter saying what it offers (turns, cards, Confirm)."""

import importlib.util
from pathlib import Path

import pytest

from tests.conformance.doors import Door
from tests.conformance.registry import DOORS, MODULES

PROJECT = Path(__file__).resolve().parents[2] / "assistant_engine"


def door_modules() -> set[str]:
    """The modules that open a door, as found on disk."""
    found = {"assistant_engine.web", "assistant.api"}
    found |= {f"assistant_engine.surfaces.{path.parent.name}" for path in (PROJECT / "surfaces").glob("*/__init__.py")}
    # The panel: the browser's component on host pages, through a template tag or its own module.
    found |= {f"assistant_engine.web.{path.stem}" for path in (PROJECT / "web").glob("panel*.py")}
    found |= {f"assistant_engine.web.templatetags.{path.stem}"
              for path in (PROJECT / "web" / "templatetags").glob("*.py") if path.stem != "__init__"}
    return found


def test_every_door_module_has_an_adapter():
    registered = {module for modules in MODULES.values() for module in modules}
    assert door_modules() - registered == set(), "a door without a conformance adapter (tests/conformance/)"
    assert set(MODULES) == set(DOORS)
    assert all(importlib.util.find_spec(module) for module in registered), "a registered door is gone"


def test_the_guard_sees_a_new_door(tmp_path, monkeypatch):
    """The guard itself: a package under surfaces/ it does not know fails it."""
    monkeypatch.setattr("tests.conformance.test_registry.PROJECT", tmp_path)
    (tmp_path / "surfaces" / "whatsapp").mkdir(parents=True)
    (tmp_path / "surfaces" / "whatsapp" / "__init__.py").touch()
    (tmp_path / "web" / "templatetags").mkdir(parents=True)
    (tmp_path / "web" / "templatetags" / "assistant.py").touch()
    registered = {module for modules in MODULES.values() for module in modules}
    expected = {"assistant_engine.surfaces.whatsapp", "assistant_engine.web.templatetags.assistant"}
    assert door_modules() - registered == expected - registered


@pytest.mark.parametrize("name", sorted(DOORS))
def test_each_adapter_implements_what_it_declares(name):
    door = DOORS[name]

    def own(method):
        return getattr(door, method) is not getattr(Door, method)

    assert own("finds")
    assert door.turns == (own("submit") and own("stop")) and door.turns != own("no_turns")
    assert not door.confirms or own("confirm")
    assert not door.proposes or own("shown")
