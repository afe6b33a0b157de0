"""Coloured code and maths in the server's rendering (issue 25): Pygments spans
whose classes the sanitizer filters, TeX carried as text in `.math` elements,
dollars in prose left alone, and the code colours' stylesheet (generated,
committed, readable in both themes)."""

import re
from html import unescape
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_engine.foundation.highlight import (
    BACKGROUND,
    HIGHLIGHT_MAX_CHARS,
    HIGHLIGHT_TEXT_CHARS,
    PALETTE,
    TOKEN_CLASSES,
    highlight_code,
    stylesheet,
)
from assistant_engine.foundation.markdown import render_markdown, sanitize
from tests.web.test_markdown import active

ROOT = Path(__file__).resolve().parents[2]


def text_of(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def code_of(html: str) -> str:
    """The text of the one code block in `html`."""
    [code] = re.findall(r"<code>(.*?)</code>", html, re.DOTALL)
    return text_of(code)


def maths(html: str) -> list[tuple[str, str]]:
    """(classes, TeX) of each maths element."""
    return [(classes, unescape(tex)) for _, classes, tex in
            re.findall(r'<(span|div) class="(math[^"]*)">(.*?)</\1>', html, re.DOTALL)]


# --- Code ----------------------------------------------------------------------

def test_a_named_fence_is_coloured_and_keeps_its_exact_text():
    code = 'def greet(name):\n    return f"Hi {name}"  # say it\n'
    html = render_markdown(f"```python\n{code}```")
    assert '<span class="tok-k">def</span>' in html and '<span class="tok-nf">greet</span>' in html
    assert '<span class="tok-c1"># say it</span>' in html
    assert code_of(html) == code  # what Copy copies


@pytest.mark.parametrize("fence", ["```\nx = 1\n```", "```no-such-language\nx = 1\n```"])
def test_an_unnamed_or_unknown_fence_is_shown_plain(fence):
    assert "<span" not in render_markdown(fence)


def test_a_script_in_a_fence_stays_text():
    html = render_markdown("```html\n<script>alert(1)</script>\n```")
    assert '<span class="tok-nt">script</span>' in html and "<script" not in html
    assert code_of(html) == "<script>alert(1)</script>\n"


def test_a_block_past_the_bound_is_shown_plain():
    code = "x = 1\n" * (HIGHLIGHT_MAX_CHARS // 6 + 1)
    assert highlight_code(code, "python") is None
    assert "<span" not in render_markdown(f"```python\n{code}```")


def test_a_texts_blocks_share_one_budget_the_rest_shown_plain():
    """Many large blocks in one reply: Pygments' time is bounded per text, not per block."""
    block = "y = 2\n" * (HIGHLIGHT_MAX_CHARS // 6)  # each under the per-block bound
    count = HIGHLIGHT_TEXT_CHARS // len(block) + 3
    html = render_markdown("\n".join(f"```python\n{block}```" for _ in range(count)))
    coloured = [part for part in html.split("<pre")[1:] if "tok-" in part]
    assert len(coloured) == HIGHLIGHT_TEXT_CHARS // len(block) and count > len(coloured)
    assert html.count("<pre") == count


def test_the_sanitizer_keeps_only_the_colour_and_maths_classes():
    html = sanitize('<span class="tok-k evil">a</span><span class="math btn" onclick="x()">b</span>'
                    '<div class="math math--display tok-k">c</div><p class="tok-k">d</p>'
                    '<span class="skip-link">e</span>')
    assert html == ('<span class="tok-k">a</span><span class="math">b</span>'
                    '<div class="math math--display">c</div><p>d</p><span class="">e</span>')


def test_markup_that_looks_like_a_class_stays_text():
    html = render_markdown('<span class="tok-k">x</span> and <div class="math">y</div>')
    assert "<span" not in html and "<div" not in html


# --- Maths ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("Einstein: $E=mc^2$.", [("math", "E=mc^2")]),
    ("$$\n\\frac{a}{b}\n$$", [("math math--display", "\\frac{a}{b}")]),
    ("so \\(a<b\\) holds", [("math", "a<b")]),
    ("\\[\n\\sum_i x_i\n\\]", [("math math--display", "\\sum_i x_i")]),
    ("between $$x^2$$ and text", [("math math--display", "x^2")]),
    ("\\[x\\] and more on the line", [("math math--display", "x")]),
])
def test_each_way_of_writing_maths(text, expected):
    assert maths(render_markdown(text)) == expected


def test_the_rest_of_the_line_after_a_display_formula_is_kept():
    assert "and more on the line" in render_markdown("\\[x\\] and more on the line")


def test_tex_that_looks_like_markup_stays_text():
    html = render_markdown("$</span><img src=x onerror=alert(1)>$")
    assert "<img" not in html and "</span><img" not in html
    assert maths(html) == [("math", "</span><img src=x onerror=alert(1)>")]


@pytest.mark.parametrize("text", [
    "It costs $5 and $10.",
    "Plans from $5-$10 a month",
    "$5, $10 or $20",
    "between $ 5 and $ 10",
    "I paid 5$ and then 6$",
    "Escaped: \\$x\\$",
    "Code: `$x$`",
    "A lone \\( opener",
])
def test_dollars_in_prose_stay_text(text):
    html = render_markdown(text)
    assert maths(html) == []
    assert "$" in text_of(html) or "(" in text_of(html)


def test_prices_and_a_formula_in_one_sentence():
    html = render_markdown("It costs $5, and $x$ is the count; $10 with tax.")
    assert maths(html) == [("math", "x")]
    assert "It costs $5, and" in text_of(html) and "$10 with tax" in text_of(html)


# --- The colours' stylesheet ---------------------------------------------------

def contrast(foreground: str, background: str) -> float:
    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_committed_stylesheet_is_the_generated_one():
    assert (ROOT / "assistant_engine/web/static/assistant/highlight.css").read_text() == stylesheet()


def test_every_colour_reads_at_4_5_to_1_in_both_themes():
    app_css = (ROOT / "assistant_engine/web/static/assistant/app.css").read_text()
    assert f"--surface-2: light-dark({BACKGROUND[0]}, {BACKGROUND[1]});" in app_css  # the block's background
    for token, (light, dark, _) in PALETTE.items():
        if light:
            assert contrast(light, BACKGROUND[0]) >= 4.5, token
            assert contrast(dark, BACKGROUND[1]) >= 4.5, token


def test_every_class_a_span_can_carry_has_a_rule():
    css = stylesheet()
    assert {f"tok-{name}" for name in re.findall(r"\.tok-([\w-]+)", css)} == TOKEN_CLASSES


# --- Any text ------------------------------------------------------------------

PIECES = ["$", "$$", "\\(", "\\)", "\\[", "\\]", "```", "```python\n", "```html\n", "\n", " ", "x", "5",
          "<script>", "</span>", "<img src=x onerror=alert(1)>", 'class="evil"', "`", "\\", "{", "}", "&"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_any_mix_of_maths_code_and_markup_renders_nothing_active(text):
    html = render_markdown(text)
    assert active(html) == []
    for classes, _ in maths(html):
        assert classes in ("math", "math math--display")
