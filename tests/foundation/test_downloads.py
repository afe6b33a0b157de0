"""Exports stay streamed under ASGI: Django reads a plain iterator whole before
serving it asynchronously, so the download hands it over chunk by chunk."""

import json

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient

from tests.conversations.factories import make_thread
from tests.streamed import streamed_json


async def _get_async(path: str, token: str):
    response = await AsyncClient().get(path, headers={"Authorization": f"Bearer {token}"})
    return response, b"".join([chunk async for chunk in response.streaming_content]).decode()


def test_the_personal_export_is_an_async_stream_under_asgi_and_the_same_document(owner, colleague):
    make_thread(owner, title="mine", messages=3)
    make_thread(colleague, title="not mine", messages=1)
    response, body = async_to_sync(_get_async)("/api/me/export", owner.token)

    assert response.status_code == 200 and response.streaming and response.is_async
    assert response["Content-Disposition"].startswith('attachment; filename="personal-data-acme-')
    served = json.loads(body)
    wsgi_served = streamed_json(owner.client.get("/api/me/export"))
    assert [c["title"] for c in served["conversations"]] == ["mine"]
    assert {**served, "exportedAt": None} == {**wsgi_served, "exportedAt": None}


def test_under_wsgi_the_plain_iterator_is_served_as_it_is(owner):
    response = owner.client.get("/api/me/export")

    assert response.streaming and not response.is_async


@pytest.fixture(autouse=True)
def _db(db):
    return db
