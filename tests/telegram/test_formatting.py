"""Markdown → Telegram HTML, and the 4,096 split."""

import html
import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_engine.surfaces.telegram.formatting import (
    MESSAGE_LIMIT,
    markdown_to_telegram,
    split_message,
    telegram_length,
)

ALLOWED = {"b", "i", "s", "u", "code", "pre", "a", "blockquote"}


class _Checker(HTMLParser):
    """Fails on a tag Telegram does not know or a tag closed out of order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.text = [], []

    def handle_starttag(self, tag, attrs):
        assert tag in ALLOWED, tag
        self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack.pop() == tag, tag

    def handle_data(self, data):
        self.text.append(data)


def well_formed_text(chunk: str) -> str:
    checker = _Checker()
    checker.feed(chunk)
    checker.close()
    assert checker.stack == [], chunk
    return "".join(checker.text)


def test_markdown_becomes_the_tags_telegram_accepts():
    out = markdown_to_telegram("# Plan\n\n**Bold**, *it*, ~~gone~~, `x<y`, [site](https://example.com?a=1&b=2)\n\n"
                               "- one\n- two\n\n1. first\n2. second\n\n```\na < b\n```\n> quoted")
    assert out == (
        "<b>Plan</b>\n\n<b>Bold</b>, <i>it</i>, <s>gone</s>, <code>x&lt;y</code>, "
        'site (https://example.com?a=1&amp;b=2)\n\n• one\n• two\n\n1. first\n2. second\n\n'
        "<pre><code>a &lt; b\n</code></pre>\n\n<blockquote>quoted\n\n</blockquote>"
    )
    well_formed_text(out)


def test_a_link_never_hides_its_destination():
    """Issue 33.3: an obedient model can hide private data in a link's query string behind a label."""
    out = markdown_to_telegram("Your [invoice](https://evil.example/c?iban=CH00) and https://example.org/x")
    assert out == "Your invoice (https://evil.example/c?iban=CH00) and https://example.org/x"
    assert "<a " not in out


def test_raw_html_and_unsafe_links_are_shown_as_text():
    out = markdown_to_telegram('<script>alert(1)</script> <b onclick="x">hi</b> [x](javascript:alert(1))')
    assert "<script>" not in out and "<b onclick" not in out and "<a " not in out
    assert "&lt;script&gt;" in out
    well_formed_text(out)


def test_a_short_reply_is_one_message():
    assert split_message("<b>Hello</b>") == ["<b>Hello</b>"]


def test_a_long_reply_is_cut_on_line_breaks_with_tags_reopened():
    paragraph = ("word " * 150).strip()
    source = "\n\n".join(f"**{paragraph}**" for _ in range(12))
    chunks = split_message(markdown_to_telegram(source))
    assert len(chunks) >= 2
    for chunk in chunks:
        assert telegram_length(chunk) <= MESSAGE_LIMIT
        assert chunk.startswith("<b>") and chunk.endswith("</b>")
        well_formed_text(chunk)


def test_a_line_longer_than_a_message_is_cut_anywhere_but_inside_an_entity():
    chunks = split_message("&amp;" * 2000)
    assert all(telegram_length(c) <= MESSAGE_LIMIT for c in chunks)
    assert "".join(html.unescape(c) for c in chunks) == "&" * 2000


def test_emoji_count_twice_as_telegram_counts_them():
    chunks = split_message("😀" * 3000)
    assert [telegram_length(c) for c in chunks] == [4096, 1904]


markdown_pieces = st.sampled_from(["word ", "**bold** ", "*it* ", "`code` ", "\n", "\n\n", "- item\n", "😀",
                                   "a & b < c ", "```\npre\n\nblock\n```\n", "> quote\n", "[l](https://x.y) "])


@settings(max_examples=60, deadline=None)
@given(st.lists(markdown_pieces, max_size=900), st.integers(120, MESSAGE_LIMIT))
def test_every_chunk_fits_parses_alone_and_nothing_is_lost(pieces, limit):
    rendered = markdown_to_telegram("".join(pieces))
    chunks = split_message(rendered, limit)
    for chunk in chunks:
        assert telegram_length(chunk) <= limit
    joined = "".join(well_formed_text(chunk) for chunk in chunks)
    assert re.sub(r"\s+", "", joined) == re.sub(r"\s+", "", well_formed_text(rendered))
