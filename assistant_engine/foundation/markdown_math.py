"""Maths in Markdown: `$…$`, `$$…$$`, `\\(…\\)` and `\\[…\\]` become elements whose
text is the TeX, escaped like any text (never HTML); the browser typesets them
with KaTeX (static/web/math.js), and without it the TeX stays readable.

    <span class="math">E=mc^2</span>                       inline
    <span class="math math--display">…</span>              display, inside a paragraph
    <div class="math math--display">…</div>                display, a block of its own

Dollars follow the convention of Pandoc, GitHub and mdit-py-plugins' own
option for prose with prices: no space just inside the dollars and no digit
just after the closing one (`allow_space=False`, `allow_digits=False`), so
"$5 and $10" stays text while "$x$" is maths. `\\(…\\)` and `\\[…\\]` (what
models often write) are this module's own inline rule: texmath's "brackets"
block rule would drop the rest of the line after `\\]`.
"""

from html import escape

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from mdit_py_plugins.dollarmath import dollarmath_plugin

MATH_CLASSES = frozenset({"math", "math--display"})
_BRACKETS = {"\\(": ("\\)", "math_inline"), "\\[": ("\\]", "math_inline_double")}


def math_plugin(md: MarkdownIt) -> None:
    dollarmath_plugin(md, allow_labels=False, allow_space=False, allow_digits=False, allow_blank_lines=False,
                      double_inline=True)
    md.inline.ruler.before("escape", "math_brackets", _math_brackets)
    md.add_render_rule("math_inline", _render("span", "math"))
    md.add_render_rule("math_inline_double", _render("span", "math math--display"))
    md.add_render_rule("math_block", _render("div", "math math--display", block=True))


def _render(tag: str, classes: str, *, block: bool = False):
    def render(self, tokens, idx, options, env) -> str:
        tex = escape(tokens[idx].content.strip(), quote=False)
        return f'<{tag} class="{classes}">{tex}</{tag}>' + ("\n" if block else "")
    return render


def _math_brackets(state: StateInline, silent: bool) -> bool:
    """`\\(TeX\\)` inline, `\\[TeX\\]` displayed; not empty, within the paragraph."""
    opening = state.src[state.pos:state.pos + 2]
    if opening not in _BRACKETS:
        return False
    closing, token_type = _BRACKETS[opening]
    start = state.pos + 2
    # The last closer of the paragraph, found once: a text of many openers and
    # no closer costs one scan, not one per opener.
    lasts = state.__dict__.setdefault("math_last_closers", {})
    key = (closing, state.posMax)  # a link's label is parsed with a nearer end
    if key not in lasts:
        lasts[key] = state.src.rfind(closing, 0, state.posMax)
    end = state.src.find(closing, start, state.posMax) if lasts[key] >= start else -1
    if end < 0 or not state.src[start:end].strip():
        return False
    if not silent:
        token = state.push(token_type, "math", 0)
        token.content = state.src[start:end]
        token.markup = opening
    state.pos = end + 2
    return True
