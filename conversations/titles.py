"""Conversation titles (pure; no Django import)."""

import re

from markdown_it import MarkdownIt

TITLE_LENGTH = 60
_WHITESPACE = re.compile(r"\s+")
# The same Markdown the UI renders (tables on), parsed only to read its text.
_MARKDOWN = MarkdownIt("commonmark").enable("table")
_INLINE_TEXT = {"text", "code_inline", "softbreak", "hardbreak", "image"}


def collapse_whitespace(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def markdown_plain_text(text: str) -> str:
    """The words of a Markdown text without its syntax: `# Plan **this**` → `Plan this`,
    a table's cells separated by spaces, a link's text without its address."""
    words: list[str] = []
    for token in _MARKDOWN.parse(text):
        if token.type == "inline":
            words.extend(" " if child.type.endswith("break") else child.content
                         for child in token.children or [] if child.type in _INLINE_TEXT)
            words.append(" ")
        elif token.type in ("fence", "code_block"):
            words.extend([token.content, " "])
    return collapse_whitespace("".join(words))


def derive_title(text: str, length: int = TITLE_LENGTH) -> str:
    """The first user message as plain text (no Markdown syntax), whitespace
    collapsed, cut to `length` characters."""
    return (markdown_plain_text(text) or collapse_whitespace(text))[:length].rstrip()


def choose_title(given: str | None, first_user_message: str | None, length: int = TITLE_LENGTH) -> str:
    """A title given by the client wins (collapsed and cut too); otherwise derived."""
    if given and collapse_whitespace(given):
        return collapse_whitespace(given)[:length].rstrip()
    return derive_title(first_user_message or "", length)
