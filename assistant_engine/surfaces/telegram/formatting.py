"""The assistant's Markdown as Telegram accepts it, in messages under 4,096.

Telegram's HTML parse mode knows a few tags (b, i, s, u, code, pre, a,
blockquote) and nothing else: markdown-it (raw HTML off, so the model's or a
tool's markup is shown as text) renders the Markdown, and the result is
folded into those tags, blocks becoming line breaks. A message is at most
4,096 characters after entities are parsed; chunks are cut on line breaks
where possible, every tag open at a cut is closed there and opened again in
the next chunk, so each chunk parses on its own.
"""

import html
import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

MESSAGE_LIMIT = 4096

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("strikethrough")

_INLINE = {"strong": "b", "b": "b", "em": "i", "i": "i", "s": "s", "del": "s", "code": "code", "a": "a"}
_BLOCK_END = {"p": "\n\n", "h1": "\n\n", "h2": "\n\n", "h3": "\n\n", "h4": "\n\n", "h5": "\n\n", "h6": "\n\n",
              "li": "\n", "pre": "\n\n", "blockquote": "\n", "ul": "\n", "ol": "\n"}
_TAG = re.compile(r"<(/?)([a-z]+)([^>]*)>")
_SAFE_URL = re.compile(r"^(https?|tg|mailto):", re.I)


def markdown_to_telegram(text: str) -> str:
    """Telegram HTML for the Markdown `text`."""
    folder = _Folder()
    folder.feed(_markdown.render(text))
    folder.close()
    return "".join(folder.out).strip()


def escape(text: str) -> str:
    return html.escape(text, quote=False)


class _Folder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self.lists: list[list[int]] = []  # per open list: [next number] (ol) or [] (ul)
        # Per open link: its destination and where its label starts in `out` ("" when not a safe link).
        self.links: list[tuple[str, int]] = []
        self.in_pre = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "a":
            href = attributes.get("href") or ""
            # Never a label over a hidden destination (issue 33.3): the label, then the address in
            # full, which Telegram makes clickable itself (its link previews are off: bot.py).
            self.links.append((href if _SAFE_URL.match(href) else "", len(self.out)))
        elif tag in _INLINE:
            self.out.append(f"<{_INLINE[tag]}>")
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.out.append("<b>")
        elif tag == "pre":
            self.in_pre += 1
            self.out.append("<pre>")
        elif tag == "blockquote":
            self.out.append("<blockquote>")
        elif tag in ("ul", "ol"):
            self.lists.append([int(attributes.get("start") or 1)] if tag == "ol" else [])
        elif tag == "li":
            numbering = self.lists[-1] if self.lists else []
            if numbering:
                self.out.append(f"{numbering[0]}. ")
                numbering[0] += 1
            else:
                self.out.append("• ")
        elif tag == "br":
            self.out.append("\n")
        elif tag == "hr":
            self.out.append("——————\n\n")
        elif tag == "img":
            self.out.append(escape(attributes.get("alt") or ""))

    def handle_endtag(self, tag):
        if tag == "a" and self.links:
            href, start = self.links.pop()
            label = html.unescape(re.sub(r"<[^>]*>", "", "".join(self.out[start:])))
            if href and label.strip() != href:
                self.out.append(f" ({escape(href)})")
        elif tag in _INLINE:
            self.out.append(f"</{_INLINE[tag]}>")
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.out.append("</b>")
        elif tag in ("pre", "blockquote"):
            self.in_pre -= tag == "pre"
            self.out.append(f"</{tag}>")
        if tag in ("ul", "ol") and self.lists:
            self.lists.pop()
        if tag in _BLOCK_END:
            self.out.append(_BLOCK_END[tag])

    def handle_data(self, data):
        # The line breaks markdown-it puts between block tags are not text.
        if self.in_pre or data.strip():
            self.out.append(escape(data))

    def handle_entityref(self, name):
        self.out.append(f"&{name};")

    def handle_charref(self, name):
        self.out.append(f"&#{name};")


def telegram_length(text: str) -> int:
    """Telegram counts UTF-16 code units (an emoji outside the BMP is two)."""
    return len(text.encode("utf-16-le")) // 2


def split_message(telegram_html: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Chunks of at most `limit` units each, markup included (so the text
    Telegram counts is shorter still), every chunk well-formed on its own."""
    splitter = _Splitter(limit)
    for closing, name, markup, text in _tokens(telegram_html):
        if closing:
            splitter.close(markup)
        elif markup:
            splitter.open(name, markup)
        else:
            splitter.add_text(text)
    splitter.flush()
    return splitter.chunks


class _Splitter:
    """Invariant: the current chunk plus the closers of its open tags fit the limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[str] = []
        self.open_tags: list[tuple[str, str]] = []  # (name, opening markup)
        self.current = ""

    def _closers(self) -> str:
        return "".join(f"</{name}>" for name, _ in reversed(self.open_tags))

    def _reopened(self) -> str:
        return "".join(markup for _, markup in self.open_tags)

    def _room(self) -> int:
        return self.limit - telegram_length(self.current) - telegram_length(self._closers())

    def close(self, markup: str) -> None:
        self.current += markup  # its closer was already counted
        self.open_tags.pop()

    def open(self, name: str, markup: str) -> None:
        if telegram_length(markup) + len(name) + 3 + 1 > self._room():
            self.flush()
        self.current += markup
        self.open_tags.append((name, markup))

    def add_text(self, text: str) -> None:
        while text:
            room = self._room()
            if telegram_length(text) <= room:
                self.current += text
                return
            cut = _cut_point(text, room)
            if cut == 0 and self.current != self._reopened():
                self.flush()  # the line starts the next chunk
                continue
            if cut == 0:  # a chunk of its own can't hold this line: cut it anywhere
                cut = _hard_cut(text, max(room, 1))
            self.current += text[:cut]
            text = text[cut:]
            self.flush()

    def flush(self) -> None:
        chunk = (self.current + self._closers()).strip()
        if _visible(chunk).strip():
            self.chunks.append(chunk)
        self.current = self._reopened()


def _tokens(telegram_html: str):
    """(closing, tag name, markup, text): either a tag or a run of text."""
    position = 0
    for match in _TAG.finditer(telegram_html):
        if match.start() > position:
            yield False, "", "", telegram_html[position:match.start()]
        yield bool(match.group(1)), match.group(2), match.group(0), ""
        position = match.end()
    if position < len(telegram_html):
        yield False, "", "", telegram_html[position:]


def _cut_point(text: str, room: int) -> int:
    """The last line break (else space) within `room` units; 0 if none."""
    if room <= 0:
        return 0
    window = _prefix_within(text, room)
    for separator in ("\n\n", "\n", " "):
        index = window.rfind(separator)
        if index > 0:
            return index + len(separator)
    return 0


def _hard_cut(text: str, room: int) -> int:
    """At most `room` units, never inside an entity (`&amp;`)."""
    cut = len(_prefix_within(text, room))
    amp = text.rfind("&", 0, cut)
    if amp != -1 and text.find(";", amp) >= cut:
        cut = amp
    return max(cut, 1)


def _prefix_within(text: str, room: int) -> str:
    units, end = 0, 0
    for end, char in enumerate(text):  # noqa: B007
        units += 2 if ord(char) > 0xFFFF else 1
        if units > room:
            return text[:end]
    return text


def _visible(chunk: str) -> str:
    return html.unescape(_TAG.sub("", chunk))
