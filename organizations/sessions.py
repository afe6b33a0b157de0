"""The session engine (`SESSION_ENGINE = "organizations.sessions"`): Django's
database sessions, each row marked with its user so that closing a person's
access (an erasure) can delete their sessions."""

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore


class SessionStore(DatabaseSessionStore):
    @classmethod
    def get_model_class(cls):
        from organizations.models import PersonSession

        return PersonSession

    def create_model_instance(self, data):
        session = super().create_model_instance(data)
        session.user_id = user_id_of(data)
        return session

    # Django's async save builds the row on its own (it does not call the sync method).
    async def acreate_model_instance(self, data):
        session = await super().acreate_model_instance(data)
        session.user_id = user_id_of(data)
        return session


def user_id_of(data: dict) -> int | None:
    try:
        return int(data.get(SESSION_KEY))
    except (TypeError, ValueError):  # anonymous, or a user model with non-integer keys
        return None
