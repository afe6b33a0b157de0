"""No import cycle between any two of our modules, across packages too.

import-linter's contracts (pyproject.toml, `lint-imports` in `make test`) keep
the layers; its `acyclic_siblings` looks inside one package at a time, so a
cycle through two packages (config's celery.py imports the assistant, which
imports config) is this test's to find.
"""

import tomllib
from pathlib import Path

import grimp

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def our_packages() -> list[str]:
    with PYPROJECT.open("rb") as file:
        return tomllib.load(file)["tool"]["importlinter"]["root_packages"]


def our_apps() -> list[str]:
    """The parts of the layout, each held to its share: the engine's namespace counts as its packages."""
    with PYPROJECT.open("rb") as file:
        contracts = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    return next(contract["ancestors"] for contract in contracts if contract["id"] == "no-cycles")


def import_cycles(graph: grimp.ImportGraph) -> set[tuple[str, ...]]:
    """Every cycle that some direct import closes, as its shortest loop of
    modules, starting from its smallest name (so each cycle is listed once)."""
    cycles = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                loop = (importer, *back[:-1])
                start = loop.index(min(loop))
                cycles.add(loop[start:] + loop[:start])
    return cycles


def graph_of(*imports: tuple[str, str]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for importer, imported in imports:
        graph.add_import(importer=importer, imported=imported)
    return graph


def test_no_import_cycle_between_our_modules():
    graph = grimp.build_graph(*our_packages(), cache_dir=None)  # imports inside functions count too
    assert import_cycles(graph) == set()


def test_a_cycle_through_two_packages_is_found():
    graph = graph_of(
        ("config.celery", "assistant_engine.providers.catalog"),
        ("assistant_engine.providers.catalog", "config.celery"),
        ("assistant.loop", "assistant_engine.providers.catalog"),
    )
    assert import_cycles(graph) == {("assistant_engine.providers.catalog", "config.celery")}


def test_a_longer_cycle_is_found_once_and_imports_that_only_point_down_are_not_cycles():
    graph = graph_of(
        ("assistant_engine.web.views", "assistant.chat"), ("assistant.chat", "assistant.tasks"),
        ("assistant.tasks", "assistant.loop"), ("assistant.loop", "assistant.chat"),
        ("assistant.loop", "conversations.models"), ("assistant_engine.web.views", "conversations.models"),
    )
    assert import_cycles(graph) == {("assistant.chat", "assistant.tasks", "assistant.loop")}
    graph = graph_of(("assistant_engine.web.views", "assistant.chat"), ("assistant.chat", "conversations.models"))
    assert import_cycles(graph) == set()


ROOT = PYPROJECT.parent
MAX_SHARE = 0.30  # of the code, for any one app (issue 26): a part that grows past it hides a part of the design
MAX_MODULE_LINES = 400


def code_lines(package: str) -> dict[str, int]:
    """Lines of each module of a package of ours, migrations left out (generated)."""
    return {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py"))
        if "migrations" not in path.parts
    }


def test_no_app_holds_more_than_30_percent_of_the_code():
    lines = {package: sum(code_lines(package).values()) for package in our_apps()}
    total = sum(lines.values())
    shares = {package: round(count / total, 3) for package, count in lines.items()}
    assert {package: share for package, share in shares.items() if share > MAX_SHARE} == {}, shares


def script_lines() -> dict[str, int]:
    """Lines of each of our browser modules (the vendored libraries left out)."""
    return {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for path in sorted((ROOT / "assistant_engine" / "web" / "static").rglob("*.js"))
        if "vendor" not in path.parts
    }


def test_no_module_over_400_lines():
    modules = {path: count for package in our_apps() for path, count in code_lines(package).items()}
    modules |= script_lines()
    over = {path: count for path, count in modules.items() if count > MAX_MODULE_LINES}
    assert over == {}
