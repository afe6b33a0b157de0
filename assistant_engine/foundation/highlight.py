"""Code blocks coloured on the server by Pygments, as `<span class="tok-…">`.

- The language is the fence's info string (```python); an unnamed fence, or a
  name Pygments does not know, is not coloured. No guessing: `guess_lexer`
  runs every lexer's heuristics (slow) and is often wrong on the short snippets
  and command outputs that unnamed fences usually hold.
- Each span's class is the token type's short Pygments name (its nearest
  standard ancestor), with the `tok-` prefix so that it cannot meet a class of
  the page; foundation/markdown.py's nh3 allow-list keeps exactly these classes.
- The colours are one stylesheet, web/static/assistant/highlight.css, made by
  `python -m assistant_engine.foundation.highlight > web/static/assistant/highlight.css` from PALETTE: a light
  and a dark value per token type (CSS `light-dark()`, as static/web/app.css),
  each at least 4.5:1 against the code block's background in its theme
  (tests/web/test_markdown_code_math.py checks both the ratios and that the committed
  file is this module's output).
- Pygments takes 3 to 6 µs a character (bench/README.md), and a conversation
  is rendered whenever it is shown, so again after each turn: a block longer
  than HIGHLIGHT_MAX_CHARS is shown plain, so are a text's blocks past
  HIGHLIGHT_TEXT_CHARS in all, and the last HIGHLIGHT_CACHE blocks
  coloured are kept (per process; a 10,000-character block and its HTML: about 35 KB).
"""

from functools import lru_cache
from html import escape
from itertools import groupby

from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES, Token, _TokenType
from pygments.util import ClassNotFound

HIGHLIGHT_MAX_CHARS = 10_000
# All the blocks of one text together (foundation/markdown.py): the rest of a long reply stays plain.
HIGHLIGHT_TEXT_CHARS = 20_000
HIGHLIGHT_CACHE = 128
CLASS_PREFIX = "tok-"

# The code block's background (app.css: `.prose pre`, --surface-2), light and dark.
BACKGROUND = ("#f8f9f8", "#1d2725")
# Each colour once, light and dark (GitHub's hues, darkened or lightened to read
# at 4.5:1 on BACKGROUND), and the token types it colours. A subtype takes its
# nearest listed ancestor's style; anything else keeps the text colour.
COLOURS = {
    "red": ("#b3261e", "#ff8b80"),
    "brown": ("#8a4a00", "#f0b36b"),
    "purple": ("#6431b0", "#d2a8ff"),
    "blue": ("#1a4f9c", "#9cc8ff"),
    "green": ("#1d6b2f", "#86dd9a"),
    "grey": ("#5c6864", "#a9b6b2"),  # app.css's --muted
}
TOKENS = {
    "red": (Token.Keyword, Token.Operator.Word, Token.Comment.Preproc, Token.Generic.Deleted, Token.Generic.Error,
            Token.Generic.Traceback, Token.Error),
    "brown": (Token.Keyword.Type, Token.Name.Builtin, Token.Name.Attribute),
    "purple": (Token.Name.Function, Token.Name.Class, Token.Name.Decorator, Token.Name.Exception,
               Token.Generic.Subheading),
    "blue": (Token.Name.Namespace, Token.Name.Constant, Token.Name.Variable, Token.Name.Label, Token.Name.Entity,
             Token.Literal.String.Escape, Token.Literal.String.Interpol, Token.Literal.String.Regex,
             Token.Literal.Number, Token.Literal.Date, Token.Generic.Heading),
    "green": (Token.Name.Tag, Token.Literal.String, Token.Comment.PreprocFile, Token.Generic.Inserted),
    "grey": (Token.Comment, Token.Generic.Prompt, Token.Generic.Output),
}
FONTS = {
    Token.Comment: "font-style: italic;",
    Token.Comment.Preproc: "font-style: normal;",
    Token.Comment.PreprocFile: "font-style: normal;",
    Token.Generic.Heading: "font-weight: bold;",
    Token.Generic.Subheading: "font-weight: bold;",
    Token.Generic.Emph: "font-style: italic;",
    Token.Generic.Strong: "font-weight: bold;",
    Token.Generic.EmphStrong: "font-style: italic; font-weight: bold;",
}
# token type: (light colour, dark colour, font)
PALETTE: dict[_TokenType, tuple[str, str, str]] = {
    token: (*COLOURS[colour], FONTS.get(token, "")) for colour, tokens in TOKENS.items() for token in tokens
}
PALETTE.update({token: ("", "", font) for token, font in FONTS.items() if token not in PALETTE})


def _class_of(ttype: _TokenType) -> str:
    """The short name of the nearest token type Pygments names, if the palette
    colours it (plain text, punctuation, names: no span)."""
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return CLASS_PREFIX + STANDARD_TYPES[ttype] if _style_of(ttype) else ""


@lru_cache(maxsize=HIGHLIGHT_CACHE)
def highlight_code(code: str, language: str) -> str | None:
    """`code` as escaped HTML with coloured spans, or None (not coloured: show it plain)."""
    if not language or len(code) > HIGHLIGHT_MAX_CHARS:
        return None
    try:
        # stripnl/ensurenl off: the spans hold exactly `code` (Copy copies the text).
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    parts = []
    for css_class, tokens in groupby(lexer.get_tokens(code), key=lambda token: _class_of(token[0])):
        text = escape("".join(value for _, value in tokens), quote=False)
        parts.append(f'<span class="{css_class}">{text}</span>' if css_class else text)
    return "".join(parts)


def _style_of(ttype: _TokenType) -> tuple[str, str, str] | None:
    while ttype not in PALETTE:
        if ttype.parent is None:
            return None
        ttype = ttype.parent
    return PALETTE[ttype]


def stylesheet() -> str:
    """web/static/assistant/highlight.css: one rule per token class that has a style."""
    lines = [
        "/* Generated by `python -m assistant_engine.foundation.highlight` from its PALETTE: do not edit. */",
        "/* Code blocks' colours (Pygments token classes), light and dark; each >= 4.5:1 on the block. */",
    ]
    rules: dict[str, list[str]] = {}
    for ttype, name in sorted(STANDARD_TYPES.items(), key=lambda item: item[1]):
        if not _class_of(ttype):
            continue
        light, dark, extra = _style_of(ttype)
        declaration = " ".join(filter(None, [f"color: light-dark({light}, {dark});" if light else "", extra]))
        rules.setdefault(declaration, []).append(f".prose pre .{CLASS_PREFIX}{name}")
    for declaration, selectors in rules.items():
        lines.append(f"{', '.join(selectors)} {{ {declaration} }}")
    return "\n".join(lines) + "\n"


TOKEN_CLASSES = frozenset(filter(None, map(_class_of, STANDARD_TYPES)))

if __name__ == "__main__":
    print(stylesheet(), end="")
