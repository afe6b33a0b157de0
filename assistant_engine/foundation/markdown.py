"""Markdown from people, the model and tools, rendered to HTML that is safe to show.

Two layers, so that a mistake in one is caught by the other:

1. markdown-it-py with raw HTML off: `<script>` in a message becomes text.
   Images are rendered as plain links, so nothing is fetched when a message
   is shown (a remote image would tell a third party who read what, and when).
2. nh3 (ammonia) cleans the result against an allow-list: no script, style,
   iframe, img or event-handler attribute can survive; links may only be
   http(s) or mailto, absolute, and get `rel="noopener noreferrer nofollow"`.
   The only classes it keeps are the code colours' (foundation/highlight.py) on
   spans and the maths' (foundation/markdown_math.py) on spans and divs.

The pages also send a Content-Security-Policy (config/settings.py) as a third layer.
"""

import re
from html import escape

import nh3
from markdown_it import MarkdownIt

from assistant_engine.foundation.highlight import HIGHLIGHT_TEXT_CHARS, TOKEN_CLASSES, highlight_code
from assistant_engine.foundation.markdown_math import MATH_CLASSES, math_plugin

ALLOWED_TAGS = frozenset({
    "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "a",
    "table", "thead", "tbody", "tr", "th", "td", "span", "div",
})
# `data-lang` names a code block's language (the page shows it by the Copy button).
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "pre": {"data-lang"}}
_LANGUAGE = re.compile(r"[\w+#.-]{1,20}")
URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"

_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags={"script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math"},
    attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
    # Each class value is checked on its own: anything else is dropped.
    allowed_classes={"span": set(TOKEN_CLASSES | MATH_CLASSES), "div": set(MATH_CLASSES)},
    url_schemes=set(URL_SCHEMES),
    # A relative link would point into this application (e.g. at an API URL).
    url_relative="deny",
    link_rel=LINK_REL,
    set_tag_attribute_values={"a": {"target": "_blank"}},
    strip_comments=True,
)


def _image_as_link(self, tokens, idx, options, env) -> str:
    """`![alt](src)` becomes a link to src labelled with alt: nothing is loaded."""
    token = tokens[idx]
    label = self.renderInline(token.children or [], options, env) or escape(token.attrGet("src") or "")
    src = escape(str(token.attrGet("src") or ""), quote=True)
    return f'<a href="{src}">{label}</a>'


def _fence_with_language(self, tokens, idx, options, env) -> str:
    """A fenced code block, its language (the info string's first word, if it
    looks like one) in `data-lang`, coloured when Pygments knows the language."""
    token = tokens[idx]
    words = token.info.split()
    language = words[0] if words and _LANGUAGE.fullmatch(words[0]) else ""
    attribute = f' data-lang="{escape(language, quote=True)}"' if language else ""
    # One text's blocks share a budget (env is per render): a reply of many large blocks
    # is coloured up to HIGHLIGHT_TEXT_CHARS, the rest shown plain.
    spent = env.get("highlighted_chars", 0)
    coloured = None
    if spent + len(token.content) <= HIGHLIGHT_TEXT_CHARS:
        coloured = highlight_code(token.content, language)
        env["highlighted_chars"] = spent + len(token.content) if coloured else spent
    return f"<pre{attribute}><code>{coloured or escape(token.content)}</code></pre>\n"


def _parser() -> MarkdownIt:
    # linkify: bare URLs become links (nh3 then keeps only http, https and mailto).
    parser = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": True}).enable(
        ["table", "strikethrough", "linkify"])
    parser.use(math_plugin)
    parser.add_render_rule("image", _image_as_link)
    parser.add_render_rule("fence", _fence_with_language)
    # Linkify finds ftp:// and others too: only the schemes nh3 keeps become links at all.
    parser.validateLink = _linkable
    return parser


def _linkable(url: str) -> bool:
    scheme, colon, _ = url.partition(":")
    return bool(colon) and scheme.lower() in URL_SCHEMES


_MARKDOWN = _parser()


def sanitize(html: str) -> str:
    return _CLEANER.clean(html)


def render_markdown(text: str) -> str:
    """Safe HTML for `text` (Markdown), ready to be marked safe in a template."""
    if not text:
        return ""
    return sanitize(_MARKDOWN.render(text))
