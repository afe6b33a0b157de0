"""Bare URLs become links (still only http, https, mailto) and a fenced code
block names its language."""

import pytest

from assistant_engine.foundation.markdown import render_markdown


def test_bare_urls_become_links_that_open_safely():
    html = render_markdown("see https://example.com/a?b=1 or www.example.org, or write to me@example.com")
    assert '<a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer nofollow">' in html
    assert '<a href="http://www.example.org"' in html
    assert '<a href="mailto:me@example.com"' in html


@pytest.mark.parametrize("text", ["javascript:alert(1)", "data:text/html,<b>x</b>", "ftp://example.com/file",
                                  "vbscript:msgbox(1)", "file:///etc/passwd"])
def test_other_schemes_stay_text(text):
    assert "<a " not in render_markdown(f"look {text} here")


def test_a_code_block_names_its_language():
    assert render_markdown("```python\nprint(1)\n```") == (
        '<pre data-lang="python"><code><span class="tok-nb">print</span>(<span class="tok-mi">1</span>)\n'
        '</code></pre>\n')
    assert render_markdown("```\nplain\n```") == "<pre><code>plain\n</code></pre>\n"


def test_a_hostile_info_string_names_no_language():
    html = render_markdown('```"><script>alert(1)</script>\nx\n```')
    assert "data-lang" not in html and "<script" not in html
