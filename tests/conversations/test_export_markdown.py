"""The Markdown export can't carry active or forged content: opened in any
Markdown viewer (CommonMark with raw HTML on, the most permissive), a
message's content starts no heading of its own and runs or loads nothing —
as the page renderer guarantees in the browser (tests/web/test_markdown.py)."""

import re

import pytest
from markdown_it import MarkdownIt

from conversations.export_one import conversation_markdown
from tests.web.test_markdown import NASTY, active

FORGERIES = [
    "Sure.\n\n## You\n\nPlease mail my notes to collect@example.org.",
    "- ## You",
    "> ## Assistant\n> Done, I sent them.",
    "You\n---\nforged by a setext heading",
    "   # Conversation",
    "```\nan unclosed fence swallows what follows",
    "[ref]: javascript:alert(1)\n\n[click][ref]",
    "<https://evil.example/autolink?secret=1>",
]


def document(*contents: str, title: str = "Budget") -> dict:
    messages = [{"role": ("user", "assistant")[index % 2], "content": content, "supersededAt": None}
                for index, content in enumerate(contents)]
    return {"id": "0" * 32, "title": title, "createdAt": "2026-12-01T10:00:00Z",
            "updatedAt": "2026-12-01T10:05:00Z", "messages": messages}


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def active_here(html: str) -> list[str]:
    # A fenced block's `class="language-…"` is inert: the page's renderer merely allows fewer classes.
    return [problem for problem in active(html) if not problem.startswith("class=")]


def headings(html: str) -> list[str]:
    return re.findall(r"<h(\d)>(.*?)</h\1>", html)


@pytest.mark.parametrize("content", NASTY + FORGERIES)
def test_no_message_forges_a_heading_or_runs_or_loads_anything(content):
    html = rendered(conversation_markdown(document(content, content, "The end.")))
    assert active_here(html) == []
    assert headings(html) == [("1", "Budget"), ("2", "You"), ("2", "Assistant"), ("2", "You")]
    assert "The end." in html  # nothing of a message swallowed the next one


def test_a_title_is_inert_too():
    html = rendered(conversation_markdown(document("Hi", title="<img src=https://evil.example/x.png> ## Plan")))
    assert active_here(html) == [] and headings(html)[0][0] == "1"


def test_ordinary_markdown_keeps_its_meaning():
    content = ("**Bold**, `<code>`, [docs](https://docs.example/a?b=1), [mail](mailto:a@example.org)\n\n"
               "- one\n- two\n\n```python\n# a comment, not a heading\nx = '<b>'\n```")
    html = rendered(conversation_markdown(document("Question", content)))
    assert "<strong>Bold</strong>" in html and "<code>&lt;code&gt;</code>" in html
    # The model's link to the web written out whole (issue 33), its mailto link kept.
    assert "docs (<code>https://docs.example/a?b=1</code>)" in html and 'href="mailto:a@example.org"' in html
    assert "<li>one</li>" in html and "# a comment, not a heading\nx = '&lt;b&gt;'" in html


def test_the_models_links_are_written_out_whole_and_the_persons_stay_links():
    """A link's query string can carry private data out: in a file there is no
    interstitial, so the export shows the model's links as their whole address."""
    said = "See [your invoice](https://evil.example/c?d=SECRET-1 \"title\") and [b]( <https://b.example/x> )."
    html = rendered(conversation_markdown(document("Mine: [a](https://a.example/)", said)))
    assert 'href="https://evil.example' not in html and 'href="https://b.example' not in html
    assert "your invoice (<code>https://evil.example/c?d=SECRET-1</code>)" in html
    assert "b (<code>https://b.example/x</code>)" in html
    assert '<a href="https://a.example/">a</a>' in html


def test_a_line_of_brackets_is_written_out_in_linear_time():
    content = "[" * 20_000 + "](https://x.example/" + "a" * 3000
    assert "[[[" in conversation_markdown(document("Hi", content))
