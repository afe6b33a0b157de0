"""Concurrent re-uploads of one conversation (several devices of one person):
the thread lock makes each upsert see the rows the previous one left, so the
diff never mixes two versions and the newest `updatedAt` wins whole."""

import uuid
from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from conversations.models import Message, ToolCall
from tests.conversations.factories import BASE_TIME, iso, stored_conversation
from tests.conversations.test_api import detail_url
from tests.races import race

DEVICES = 6


@pytest.mark.django_db(transaction=True)
def test_concurrent_reuploads_leave_exactly_the_newest_version(owner):
    base = stored_conversation()
    assert owner.client.put(detail_url(base["id"]), base, format="json").status_code == 200
    token = owner.token
    versions = []
    for device in range(DEVICES):
        # Each device reorders, edits and adds: the versions disagree on every row.
        added = {"id": str(uuid.uuid4()), "role": "user", "content": f"from device {device}",
                 "createdAt": iso(BASE_TIME)}
        first, second = base["messages"]
        messages = [added, {**second, "content": f"edited on {device}"}, first] if device % 2 else [first, added]
        versions.append({**base, "updatedAt": iso(BASE_TIME + timedelta(hours=2, minutes=device)),
                         "messages": messages})

    def upload(index: int) -> int:
        client = APIClient()  # one client per thread
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return client.put(detail_url(base["id"]), versions[index], format="json").status_code

    assert race(DEVICES, upload) == [200] * DEVICES
    newest = versions[-1]
    stored = owner.client.get(detail_url(base["id"])).json()
    assert stored["updatedAt"] == newest["updatedAt"]
    assert [(m["id"], m["content"]) for m in stored["messages"]] == [
        (m["id"], m["content"]) for m in newest["messages"]
    ]
    assert Message.objects.count() == len(newest["messages"])
    assert ToolCall.objects.count() == 1
