"""The sanitizer: nothing from a person, the model or a tool can run a script
or make the browser fetch anything when a message is shown."""

from html.parser import HTMLParser

import pytest

from assistant_engine.foundation.highlight import TOKEN_CLASSES
from assistant_engine.foundation.markdown import render_markdown, sanitize
from assistant_engine.foundation.markdown_math import MATH_CLASSES

NASTY = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">click</a>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](  javascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    "![tracker](https://evil.example/pixel.png)",
    "![x](javascript:alert(1))",
    '<iframe src="https://evil.example"></iframe>',
    "<style>body{display:none}</style>",
    '<svg onload="alert(1)"><circle/></svg>',
    '<div style="background:url(https://evil.example/x)">x</div>',
    "<<script>script>alert(1)<</script>/script>",
    '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
    "```html\n<script>alert(1)</script>\n```",
    "`<img src=x onerror=alert(1)>`",
    '[x](https://ok.example "a\\" onmouseover=\\"alert(1)")',
    # Coloured code and maths (issue 25): their spans carry text only.
    "```python\n<script>alert(1)</script>\n```",
    "```js\n</code></pre><img src=x onerror=alert(1)>\n```",
    "$</span><img src=x onerror=alert(1)>$",
    "\\(<script>alert(1)</script>\\)",
    "$$\n</div><iframe src=https://evil.example></iframe>\n$$",
]

ALLOWED_SCHEMES = ("http:", "https:", "mailto:")


class ActiveMarkup(HTMLParser):
    """What a browser would treat as markup in `html` (escaped text is not markup)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag not in {"p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li",
                       "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td",
                       "span", "div"}:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in {"src", "srcset", "style", "srcdoc", "formaction", "action"}:
                self.problems.append(f"{tag}[{name}]")
            if name == "class" and not set((value or "").split()) <= TOKEN_CLASSES | MATH_CLASSES:
                self.problems.append(f"class={value!r}")
            if name == "href" and not (value or "").strip().lower().startswith(ALLOWED_SCHEMES):
                self.problems.append(f"href={value!r}")

    handle_startendtag = handle_starttag


def active(html: str) -> list[str]:
    return ActiveMarkup(html).problems


@pytest.mark.parametrize("text", NASTY)
def test_nasty_markdown_renders_nothing_that_runs_or_loads(text):
    assert active(render_markdown(text)) == []


@pytest.mark.parametrize("html", [
    "<script>alert(1)</script><p>safe</p>",
    "<img src=https://evil.example/x.png onerror=alert(1)>",
    '<a href="javascript:alert(1)" onclick="alert(2)">x</a>',
    '<p style="color:red" onmouseover="alert(1)">x</p>',
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
])
def test_the_sanitizer_alone_also_removes_active_markup(html):
    # The second layer, on raw HTML (as if the Markdown renderer let it through).
    assert active(sanitize(html)) == []


def test_the_checker_sees_real_markup():
    assert active('<img src=x onerror=alert(1)><a href="javascript:x">y</a>') == [
        "<img>", "img[src]", "img[onerror]", "href='javascript:x'",
    ]


def test_script_in_a_message_is_shown_as_text():
    assert render_markdown("<script>alert(1)</script>") == "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"


def test_an_image_becomes_a_link_and_nothing_is_loaded():
    html = render_markdown("![the chart](https://example.com/chart.png)")
    assert "<img" not in html
    assert 'href="https://example.com/chart.png"' in html
    assert ">the chart</a>" in html


def test_links_open_safely():
    html = render_markdown("[docs](https://example.com/docs)")
    assert 'href="https://example.com/docs"' in html
    assert 'rel="noopener noreferrer nofollow"' in html
    assert 'target="_blank"' in html


def test_javascript_links_are_not_links():
    assert "href" not in render_markdown("[click](javascript:alert(1))")
    assert "href" not in sanitize('<a href="javascript:alert(1)">x</a>')


def test_relative_links_into_the_application_are_dropped():
    assert "href" not in render_markdown("[export](/api/me/export)")


def test_mailto_links_are_kept():
    assert 'href="mailto:anna@example.com"' in render_markdown("[Anna](mailto:anna@example.com)")


def test_ordinary_markdown_still_renders():
    html = render_markdown("# Plan\n\n**bold**, *italic*, `code`\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    for fragment in ("<h1>Plan</h1>", "<strong>bold</strong>", "<em>italic</em>", "<code>code</code>",
                     "<li>one</li>", "<td>1</td>"):
        assert fragment in html


def test_code_blocks_keep_their_content_as_text():
    html = render_markdown("```\n<b>not bold</b>\n```")
    assert "&lt;b&gt;not bold&lt;/b&gt;" in html


def test_empty_text_is_empty():
    assert render_markdown("") == ""
