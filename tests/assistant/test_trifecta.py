"""The trifecta guard, exhaustively: every class × flags × taint × mode."""

import itertools

import pytest

from assistant.trifecta import CLEAN, Route, Taint, is_trifecta, route_call, taint_after

CLASSES = ["read", "write", "confirm", "send"]
FLAG_SETS = [
    frozenset(),
    frozenset({"private"}),
    frozenset({"untrusted"}),
    frozenset({"private", "untrusted"}),
]
TAINTS = [Taint(read_private=p, read_untrusted=u) for p, u in itertools.product([False, True], repeat=2)]
MODES = ["warn", "block"]


def expected_route(tool_class: str, taint: Taint, mode: str) -> Route:
    if tool_class == "write":  # held for the person after third-party content (issue 33)
        return Route.PROPOSE_WRITE if taint.read_untrusted else Route.RUN
    both = taint.read_private and taint.read_untrusted
    table = {
        ("read", False): Route.RUN,
        ("read", True): Route.RUN,
        ("write", False): Route.RUN,
        ("write", True): Route.RUN,
        ("confirm", False): Route.PROPOSE,
        ("confirm", True): Route.PROPOSE,
        ("send", False): Route.PROPOSE,
        ("send", True): Route.PROPOSE_WITH_WARNING if mode == "warn" else Route.REFUSE,
    }
    return table[(tool_class, both)]


@pytest.mark.parametrize("tool_class", CLASSES)
@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda flags: "+".join(sorted(flags)) or "no-flags")
@pytest.mark.parametrize(
    "taint", TAINTS, ids=lambda t: f"private={t.read_private},untrusted={t.read_untrusted}"
)
def test_taint_after_adds_the_flags_and_never_removes_a_taint(tool_class, flags, taint):
    after = taint_after(taint, tool_class, flags)

    assert after.read_private == (taint.read_private or "private" in flags)
    assert after.read_untrusted == (taint.read_untrusted or "untrusted" in flags)


@pytest.mark.parametrize("tool_class", CLASSES)
@pytest.mark.parametrize(
    "taint", TAINTS, ids=lambda t: f"private={t.read_private},untrusted={t.read_untrusted}"
)
@pytest.mark.parametrize("mode", MODES)
def test_route_for_every_class_taint_and_mode(tool_class, taint, mode):
    assert route_call(tool_class, taint, mode) == expected_route(tool_class, taint, mode)


@pytest.mark.parametrize(
    "taint", TAINTS, ids=lambda t: f"private={t.read_private},untrusted={t.read_untrusted}"
)
def test_is_trifecta_only_with_both_taints(taint):
    assert is_trifecta(taint) is (taint.read_private and taint.read_untrusted)


@pytest.mark.parametrize("tool_class", CLASSES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("first", FLAG_SETS, ids=lambda f: "+".join(sorted(f)) or "no-flags")
@pytest.mark.parametrize("second", FLAG_SETS, ids=lambda f: "+".join(sorted(f)) or "no-flags")
def test_two_calls_then_a_call_of_each_class(tool_class, mode, first, second):
    """A turn's story: two tool calls with these flags, then one call of `tool_class`."""
    taint = taint_after(taint_after(CLEAN, "read", first), "read", second)
    both = bool({"private"} & (first | second)) and bool({"untrusted"} & (first | second))

    assert is_trifecta(taint) is both
    assert route_call(tool_class, taint, mode) == expected_route(tool_class, taint, mode)


def test_the_order_of_the_reads_does_not_matter():
    private_then_untrusted = taint_after(taint_after(CLEAN, "read", {"private"}), "read", {"untrusted"})
    untrusted_then_private = taint_after(taint_after(CLEAN, "read", {"untrusted"}), "read", {"private"})

    assert private_then_untrusted == untrusted_then_private == Taint(True, True)


@pytest.mark.parametrize("mode", MODES)
def test_an_organization_that_lets_writes_run_gets_them_run_after_anything(mode):
    for taint in TAINTS:
        assert route_call("write", taint, mode, untrusted_writes="run") == Route.RUN
    with pytest.raises(ValueError):
        route_call("write", CLEAN, mode, untrusted_writes="sometimes")


def test_a_send_after_inbox_and_notes_is_warned_or_refused():
    taint = taint_after(CLEAN, "read", ["untrusted"])  # read_inbox
    assert route_call("send", taint, "block") == Route.PROPOSE
    taint = taint_after(taint, "read", ["private"])  # search_notes

    assert route_call("send", taint, "warn") == Route.PROPOSE_WITH_WARNING
    assert route_call("send", taint, "block") == Route.REFUSE
    assert route_call("confirm", taint, "block") == Route.PROPOSE
    assert route_call("write", taint, "block") == Route.PROPOSE_WRITE


def test_clean_is_untainted():
    assert CLEAN == Taint(read_private=False, read_untrusted=False)
    assert not is_trifecta(CLEAN)


def test_route_values_are_plain_strings():
    assert [route.value for route in Route] == ["run", "propose", "propose_write", "propose_with_warning", "refuse"]


@pytest.mark.parametrize("bad_class", ["", "READ", "delete", None])
def test_unknown_class_is_refused(bad_class):
    with pytest.raises(ValueError, match="Unknown tool class"):
        taint_after(CLEAN, bad_class, [])
    with pytest.raises(ValueError, match="Unknown tool class"):
        route_call(bad_class, CLEAN, "warn")


@pytest.mark.parametrize("bad_flags", [["secret"], ["private", "Private"], ["untrusted", ""]])
def test_unknown_flag_is_refused(bad_flags):
    with pytest.raises(ValueError, match="Unknown tool flags"):
        taint_after(CLEAN, "read", bad_flags)


@pytest.mark.parametrize("bad_mode", ["", "WARN", "off", None])
def test_unknown_mode_is_refused(bad_mode):
    with pytest.raises(ValueError, match="Unknown trifecta mode"):
        route_call("send", Taint(True, True), bad_mode)


def test_the_module_imports_no_django():
    import assistant.trifecta as module

    source = open(module.__file__, encoding="utf-8").read()
    assert "django" not in source


# --- The taint of a context (the history sent to the model) -------------------------

from assistant.trifecta import TAINTED, SeenCall, context_taint, taint_of_call, taint_union  # noqa: E402


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda flags: "+".join(sorted(flags)) or "no-flags")
@pytest.mark.parametrize("marks", FLAG_SETS, ids=lambda marks: "+".join(sorted(marks)) or "no-marks")
def test_a_vouched_call_is_tainted_by_its_flags_and_its_results_marks(flags, marks):
    taint = taint_of_call(SeenCall(flags=flags, marks=marks))

    assert taint == Taint("private" in flags | marks, "untrusted" in flags | marks)


@pytest.mark.parametrize("marks", FLAG_SETS, ids=lambda marks: "+".join(sorted(marks)) or "no-marks")
def test_a_call_nobody_vouches_for_counts_as_both(marks):
    assert taint_of_call(SeenCall(flags=None, marks=marks)) == TAINTED


def test_the_context_is_the_union_of_its_calls_whatever_their_order():
    calls = [SeenCall(frozenset({"private"})), SeenCall(frozenset()), SeenCall(frozenset(), frozenset({"untrusted"}))]

    for ordering in itertools.permutations(calls):
        assert context_taint(ordering) == TAINTED
    assert context_taint([]) == CLEAN
    assert context_taint(calls[:2]) == Taint(read_private=True)


def test_an_unknown_flag_or_mark_is_a_programming_error():
    with pytest.raises(ValueError, match="Unknown tool flags"):
        taint_of_call(SeenCall(frozenset({"secret"})))
    with pytest.raises(ValueError, match="Unknown tool flags"):
        taint_of_call(SeenCall(frozenset(), frozenset({"secret"})))


@pytest.mark.parametrize("first", TAINTS, ids=str)
@pytest.mark.parametrize("second", TAINTS, ids=str)
def test_union_never_removes_a_taint(first, second):
    union = taint_union(first, second)

    assert union.read_private == (first.read_private or second.read_private)
    assert union.read_untrusted == (first.read_untrusted or second.read_untrusted)


def test_the_guard_stays_pure():
    import ast
    import pathlib

    source = pathlib.Path(__file__).resolve().parents[2] / "assistant" / "trifecta.py"
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
    assert imported <= {"collections", "dataclasses", "enum"}
