"""The schemathesis hooks and check set aside only what they say, and the
tenancy check does catch a leak (so a quiet run means something)."""

import json
from types import SimpleNamespace

import pytest

from tests.api_contract import st_hooks

OLIVIA = {"userId": 1, "conversations": ["c-olivia"], "cards": ["k-olivia"], "turns": ["t-olivia"],
          "texts": ["olivia trip"]}
COLIN = {"userId": 2, "conversations": ["c-colin"], "cards": ["k-colin"], "turns": ["t-colin"],
         "texts": ["colin trip"]}


@pytest.fixture(autouse=True)
def seed_file(tmp_path, monkeypatch):
    path = tmp_path / "seed.json"
    path.write_text(json.dumps({"people": {"olivia": OLIVIA, "colin": COLIN},
                                "tokens": {"Token o": "olivia", "Token c": "colin"}}))
    monkeypatch.setenv("API_CONTRACT_SEED", str(path))
    st_hooks.seed.cache_clear()
    st_hooks.SENT.clear()
    st_hooks.CLAIMED.clear()
    yield
    st_hooks.seed.cache_clear()
    st_hooks.SENT.clear()
    st_hooks.CLAIMED.clear()


def answer(status: int, body: dict, who: str = "Token o", sent: bytes = b"", method: str = "GET"):
    return SimpleNamespace(status_code=status, text=json.dumps(body), json=lambda: body,
                           request=SimpleNamespace(headers={"Authorization": who}, body=sent, method=method))


def case(path_parameters=None, body=None, operation_id="card_get"):
    operation = SimpleNamespace(definition=SimpleNamespace(raw={"operationId": operation_id}))
    return SimpleNamespace(path_parameters=path_parameters or {}, body=body, operation=operation)


def test_the_tenancy_check_fails_on_a_2xx_for_the_other_persons_object():
    with pytest.raises(AssertionError, match="another person's object"):
        st_hooks.seeded_objects_stay_private(None, answer(200, {"id": "x"}), case({"card_id": "k-colin"}))
    st_hooks.seeded_objects_stay_private(None, answer(404, {"code": "not_found"}), case({"card_id": "k-colin"}))
    st_hooks.seeded_objects_stay_private(None, answer(200, {"id": "k-olivia"}), case({"card_id": "k-olivia"}))


def test_the_tenancy_check_fails_when_the_other_persons_data_shows():
    with pytest.raises(AssertionError, match="another person's data"):
        st_hooks.seeded_objects_stay_private(None, answer(200, {"results": [{"title": "colin trip 1"}]}), case())
    with pytest.raises(AssertionError, match="another person's data"):  # and the other way round
        st_hooks.seeded_objects_stay_private(None, answer(200, {"id": "c-olivia"}, who="Token c"), case())


def test_a_text_the_person_sent_is_theirs_when_shown_back_but_ids_still_count():
    # The stateful phase can carry colin's title into olivia's PATCH: her own conversation then holds it.
    renamed = answer(200, {"id": "c-olivia", "title": "colin trip 1"}, sent=b'{"title": "colin trip 1"}')
    st_hooks.seeded_objects_stay_private(None, renamed, case())
    st_hooks.seeded_objects_stay_private(None, answer(200, {"results": [{"title": "colin trip 1"}]}), case())
    with pytest.raises(AssertionError, match="another person's data"):
        st_hooks.seeded_objects_stay_private(None, answer(200, {"id": "c-colin"}, sent=b"c-colin"), case())
    with pytest.raises(AssertionError, match="another person's data"):  # colin never sent it
        st_hooks.seeded_objects_stay_private(None, answer(200, {"title": "olivia trip"}, who="Token c"), case())


def test_an_id_of_the_others_uploaded_as_ones_own_conversation_is_ones_own_from_then_on():
    """PUT /api/conversations/{id} maps ids per person: olivia's upload under colin's id is her conversation."""
    mine = {"conversation": {"id": "c-colin", "userId": 1, "title": "hers"}}
    st_hooks.seeded_objects_stay_private(None, answer(200, mine, method="PUT"), case({"conversation_id": "c-colin"}))
    st_hooks.seeded_objects_stay_private(None, answer(200, {"id": "c-colin"}), case({"conversation_id": "c-colin"}))
    with pytest.raises(AssertionError, match="another person's data"):  # colin's texts still count
        st_hooks.seeded_objects_stay_private(None, answer(200, {"id": "c-colin", "title": "colin trip 0"}), case())


def test_a_put_answered_with_the_others_conversation_is_a_leak():
    theirs = {"conversation": {"id": "c-colin", "userId": 2}}
    with pytest.raises(AssertionError, match="another person's object"):
        st_hooks.seeded_objects_stay_private(None, answer(200, theirs, method="PUT"),
                                             case({"conversation_id": "c-colin"}))


def test_no_accepted_negative_data_is_set_aside():
    # UUID fields refuse numbers and booleans now (issue 18): nothing of the kind is excused.
    accepted = SimpleNamespace(code="ST201")
    assert st_hooks.filter_failure(None, accepted, case(body={"id": False}), answer(200, {})) is True
    assert st_hooks.filter_failure(None, accepted, case(body={"messages": [{"id": 5}]}), answer(200, {})) is True
    assert st_hooks.filter_failure(None, accepted, case(body={"message": 5}), answer(200, {})) is True
    assert st_hooks.filter_failure(None, accepted, case(body={"id": "x"}), answer(200, {})) is True


def test_only_the_rules_json_schema_cannot_state_are_set_aside_among_rejected_positive_data():
    rejected = SimpleNamespace(code="ST202")
    later = answer(400, {"code": "invalid", "fields": {"createdAt": ["Must not be later than updatedAt."]}})
    assert st_hooks.filter_failure(None, rejected, case(), later) is False
    # An updatedAt ahead of the clock is accepted now (issue 34.11): such a refusal would be a finding.
    future = answer(400, {"code": "invalid", "fields": {"updatedAt": ["Must not be in the future."]}})
    assert st_hooks.filter_failure(None, rejected, case(), future) is True
    both = answer(400, {"code": "invalid",
                        "fields": {"createdAt": ["Must not be later than updatedAt."], "title": ["x"]}})
    assert st_hooks.filter_failure(None, rejected, case(), both) is True
    assert st_hooks.filter_failure(None, rejected, case(), answer(400, {"code": "invalid_page"})) is True
    # A file refused for its bytes, a model the organization doesn't allow: documented 422s
    # since issue 34.15, which the run accepts as such; a 400 of theirs would be a finding.
    for code in ("unsupported_file_type", "empty_file", "unreadable_pdf", "too_many_pages", "model_not_allowed"):
        refused = answer(400, {"code": code, "detail": "..."})
        assert st_hooks.filter_failure(None, rejected, case(operation_id="file_upload"), refused) is True
    assert st_hooks.filter_failure(None, rejected, case(), answer(400, {"code": "too_many_files"})) is True


def test_only_a_crash_of_the_tool_itself_is_run_again():
    import subprocess

    from tests.api_contract.test_schemathesis import TOOL_CRASH, only_the_tool_crashed

    def run(code, out):
        return subprocess.CompletedProcess([], code, stdout=out)

    assert only_the_tool_crashed(run(1, f"... {TOOL_CRASH} ...\nErrors:\n  Runtime Error: 1"))
    assert not only_the_tool_crashed(run(1, f"{TOOL_CRASH}\nFailures:\n  ST101 Server error: 1"))
    assert not only_the_tool_crashed(run(1, "Failures:\n  ST101 Server error: 1"))
    assert not only_the_tool_crashed(run(0, TOOL_CRASH))
