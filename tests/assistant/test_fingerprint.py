"""Fingerprints of proposed actions: canonical, stable, sensitive to any change."""

import datetime
import decimal
import hashlib
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from assistant.fingerprint import canonical_json, snapshot_hash

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)

SNAPSHOT = {"id": 7, "title": "Plan", "body": "Budget", "updated_at": "2026-01-02T03:04:05+00:00"}


def test_canonical_json_sorts_keys_without_whitespace():
    assert canonical_json({"b": 1, "a": [1, {"d": None, "c": True}]}) == '{"a":[1,{"c":true,"d":null}],"b":1}'


def test_key_order_does_not_matter():
    first = {"title": "Plan", "id": 7, "nested": {"x": 1, "y": 2}}
    second = {"nested": {"y": 2, "x": 1}, "id": 7, "title": "Plan"}

    assert canonical_json(first) == canonical_json(second)
    assert snapshot_hash("delete_note", {"note_id": 7}, first) == snapshot_hash(
        "delete_note", {"note_id": 7}, second
    )


@given(st.dictionaries(st.text(), json_values, max_size=6))
def test_any_key_order_gives_the_same_hash(value):
    reversed_order = dict(reversed(list(value.items())))

    assert snapshot_hash("t", {}, value) == snapshot_hash("t", {}, reversed_order)


def test_dates_decimals_and_uuids_become_strings():
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    value = {"at": when, "day": datetime.date(2026, 1, 2), "price": decimal.Decimal("1.50"), "id": ident}

    assert canonical_json(value) == (
        '{"at":"2026-01-02T03:04:05+00:00","day":"2026-01-02",'
        '"id":"12345678-1234-5678-1234-567812345678","price":"1.50"}'
    )
    assert canonical_json(value) == canonical_json(dict(value))


def test_tuples_serialize_like_lists_and_pydantic_models_like_their_dump():
    class Input(BaseModel):
        note_id: int

    assert canonical_json((1, 2)) == canonical_json([1, 2])
    assert snapshot_hash("t", Input(note_id=3), {}) == snapshot_hash("t", {"note_id": 3}, {})


def test_hash_is_sha256_hex_of_the_canonical_triple():
    expected = hashlib.sha256(
        canonical_json({"tool": "delete_note", "input": {"note_id": 7}, "snapshot": SNAPSHOT}).encode()
    ).hexdigest()

    digest = snapshot_hash("delete_note", {"note_id": 7}, SNAPSHOT)

    assert digest == expected
    assert len(digest) == 64 and int(digest, 16) >= 0


@pytest.mark.parametrize(
    ("name", "tool_input", "snapshot"),
    [
        ("send_email", {"note_id": 7}, SNAPSHOT),
        ("delete_note", {"note_id": 8}, SNAPSHOT),
        ("delete_note", {"note_id": "7"}, SNAPSHOT),
        ("delete_note", {"note_id": 7, "extra": None}, SNAPSHOT),
        ("delete_note", {"note_id": 7}, {**SNAPSHOT, "title": "Plan "}),
        ("delete_note", {"note_id": 7}, {**SNAPSHOT, "body": "budget"}),
        ("delete_note", {"note_id": 7}, {**SNAPSHOT, "updated_at": "2026-01-02T03:04:06+00:00"}),
        ("delete_note", {"note_id": 7}, {k: v for k, v in SNAPSHOT.items() if k != "body"}),
        ("delete_note", {"note_id": 7}, {**SNAPSHOT, "id": 7.5}),
        ("delete_note", {"note_id": 7}, {**SNAPSHOT, "id": True}),
    ],
)
def test_any_change_in_name_input_or_snapshot_changes_the_hash(name, tool_input, snapshot):
    assert snapshot_hash(name, tool_input, snapshot) != snapshot_hash("delete_note", {"note_id": 7}, SNAPSHOT)


def test_moving_a_value_between_input_and_snapshot_changes_the_hash():
    assert snapshot_hash("t", {"a": 1}, {}) != snapshot_hash("t", {}, {"a": 1})


@given(json_values, json_values)
def test_different_values_give_different_hashes(first, second):
    if canonical_json(first) != canonical_json(second):
        assert snapshot_hash("t", {}, first) != snapshot_hash("t", {}, second)


def test_unicode_is_kept_as_is_and_hashes_stably():
    snapshot = {"title": "Réunion à Zürich 🇨🇭", "body": "日本語 — “quotes”"}

    assert canonical_json(snapshot) == '{"body":"日本語 — “quotes”","title":"Réunion à Zürich 🇨🇭"}'
    assert snapshot_hash("t", {}, snapshot) == snapshot_hash(
        "t", {}, {"body": "日本語 — “quotes”", "title": "Réunion à Zürich 🇨🇭"}
    )
    # Pinned: the hash of a given action never changes across versions.
    pinned = "8411383afcf8d36f419b18ddc6d9431f338893a36ff4e69e4c48da4b6e48bd92"
    assert snapshot_hash("t", {}, snapshot) == pinned


def test_composed_and_decomposed_accents_are_different_data():
    assert snapshot_hash("t", {}, {"title": "é"}) != snapshot_hash("t", {}, {"title": "e\u0301"})


def test_a_lone_surrogate_still_hashes():
    assert len(snapshot_hash("t", {"text": "\ud800"}, {})) == 64


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {"x": float("-inf")}])
def test_nan_and_infinity_are_refused(value):
    with pytest.raises(ValueError):
        canonical_json(value)


@pytest.mark.parametrize("value", [{1: "a"}, {("a",): 1}, {"set": {1, 2}}, object()])
def test_ambiguous_values_are_refused(value):
    with pytest.raises(TypeError):
        canonical_json(value)


def test_the_module_imports_no_django():
    import assistant.fingerprint as module

    assert "django" not in open(module.__file__, encoding="utf-8").read()
