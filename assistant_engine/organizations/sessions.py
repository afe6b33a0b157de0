"""The session engine (`SESSION_ENGINE = "assistant_engine.organizations.sessions"`): Django's
database sessions, each row marked with its user so that closing a person's
access (an erasure) can delete their sessions.

Django takes the engine's `SessionStore` from this module; the store is defined
with its model (`PersonSession`) in models.py, since each names the other.
"""

from assistant_engine.organizations.models import SessionStore

__all__ = ["SessionStore"]
