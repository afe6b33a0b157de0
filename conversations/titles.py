"""Conversation titles (pure; no Django import)."""

import re

TITLE_LENGTH = 60
_WHITESPACE = re.compile(r"\s+")


def collapse_whitespace(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def derive_title(text: str, length: int = TITLE_LENGTH) -> str:
    """The first user message with whitespace collapsed, cut to `length` characters."""
    return collapse_whitespace(text)[:length].rstrip()


def choose_title(given: str | None, first_user_message: str | None, length: int = TITLE_LENGTH) -> str:
    """A title given by the client wins (collapsed and cut too); otherwise derived."""
    if given and collapse_whitespace(given):
        return collapse_whitespace(given)[:length].rstrip()
    return derive_title(first_user_message or "", length)
