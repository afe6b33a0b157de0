"""Schemathesis hooks and a check for the contract run (loaded by the `st`
process, which has no Django: the seeded ids come from the JSON file named by
API_CONTRACT_SEED, written by tests/api_contract/test_schemathesis.py).

- Path ids: besides random UUIDs (almost always 404), the fuzzer also draws the
  seeded ids of both people, so it reaches the code behind an id, and tries
  each person's objects as the other.
- `seeded_objects_stay_private`: a person never gets a 2xx on the other's
  object, and never sees the other's ids or texts in any answer.
- Two rules are documented on their fields but JSON Schema can't state them:
  a conversation's `createdAt` not later than its `updatedAt` (a rule between
  two fields), and message ids unique within a conversation (`uniqueItems`
  compares whole items, not one key). (An `updatedAt` ahead of the server's
  clock is accepted since issue 34.11: nothing to set aside.) A refusal for one of
  these reasons alone is set aside (`filter_failure`, INEXPRESSIBLE); nothing
  else is. (A file refused for its bytes and a model the organization doesn't
  allow are documented 422s since issue 34.15, not set aside.)
"""

import json
import os
import uuid
from functools import cache

import schemathesis
from hypothesis import strategies as st

# Path parameter -> the seed's key of ids of that kind.
ID_KINDS = {"conversation_id": "conversations", "card_id": "cards", "turn_id": "turns", "file_id": "files"}


@cache
def seed() -> dict:
    with open(os.environ["API_CONTRACT_SEED"]) as file:
        return json.load(file)


def is_uuid(value) -> bool:
    if not isinstance(value, str):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def seeded_ids(kind: str) -> list[str]:
    return sorted(i for person in seed()["people"].values() for i in person[kind])


@schemathesis.hook
def flatmap_path_parameters(ctx, path_parameters):
    if not path_parameters:
        return st.just(path_parameters)
    names = [name for name in path_parameters if name in ID_KINDS and is_uuid(path_parameters[name])]
    if not names:
        return st.just(path_parameters)
    [name] = names  # one id per path in this API
    known = st.sampled_from(seeded_ids(ID_KINDS[name])).map(lambda value: {**path_parameters, name: value})
    return st.one_of(st.just(path_parameters), known)


# What each person sent so far. Schemathesis's stateful phase may carry a value
# read by one identity into the other's request (a title of colin's in olivia's
# PATCH): shown back to her, it is her own data, not a leak. Ids still count.
SENT: dict[str, list[str]] = {}


def _sent_by(person: str, request) -> list[str]:
    body = getattr(request, "body", None) or b""
    SENT.setdefault(person, []).append(body.decode(errors="replace") if isinstance(body, bytes) else str(body))
    return SENT[person]


# Conversation ids are each person's own on /api/ (an upload under the other's id
# makes a conversation of one's own, as on /ai/): once a person's PUT under an id
# of the other's was answered with a conversation of theirs (their userId), that
# id names their own conversation for them. Texts still count.
CLAIMED: dict[str, set[str]] = {}


def _claimed_by(person: str, response, case) -> set[str]:
    claimed = CLAIMED.setdefault(person, set())
    conversation_id = (case.path_parameters or {}).get("conversation_id")
    if conversation_id and response.request.method == "PUT" and 200 <= response.status_code < 300:
        owner = ((response.json() or {}).get("conversation") or {}).get("userId")
        if owner == seed()["people"][person].get("userId"):
            claimed.add(conversation_id)
    return claimed


@schemathesis.check
def seeded_objects_stay_private(ctx, response, case):
    """The other person's objects are not found, and nothing of theirs shows."""
    person = seed()["tokens"].get(response.request.headers.get("Authorization", ""))
    if person is None:  # anonymous or a forged credential: the 401 checks cover it
        return
    sent = _sent_by(person, response.request)
    claimed = _claimed_by(person, response, case)
    others = [data for name, data in seed()["people"].items() if name != person]
    requested = set((case.path_parameters or {}).values()) - claimed
    try:
        text = response.text or ""
    except UnicodeDecodeError:  # a file's content (an image): its bytes may still hold a leaked id
        text = response.content.decode("utf-8", "replace")
    for other in others:
        their_ids = {value for kind in ID_KINDS.values() for value in other.get(kind, [])} - claimed
        if requested & their_ids and 200 <= response.status_code < 300:
            raise AssertionError(f"{person} got {response.status_code} on another person's object")
        leaked = [value for value in their_ids if value in text]
        leaked += [value for value in other["texts"] if value in text and not any(value in body for body in sent)]
        if leaked:
            raise AssertionError(f"{person} was shown another person's data: {leaked[:3]}")


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    """False (set aside) only for the cases described above."""
    return not (failure.code == "ST202" and refused_only_for_an_inexpressible_rule(response))


# The `fields` of a 400 that only such a rule produces.
INEXPRESSIBLE = (
    {"createdAt": ["Must not be later than updatedAt."]},
    {"messages": ["Message ids must be unique within a conversation."]},
)


def refused_only_for_an_inexpressible_rule(response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return body.get("fields", {}) in INEXPRESSIBLE
