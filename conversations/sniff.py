"""What a file is, judged from its bytes alone (never from its name).

An allow-list of five binary formats, recognised by the signatures their
specifications fix, and UTF-8 text. A small explicit sniffer rather than a
library: the broad ones (puremagic, python-magic) rank hundreds of guesses
where this needs a yes or no for five, and filetype is no longer maintained.
Text a browser would sniff as HTML or XML (SVG included) is refused: a file
must never become active content (WHATWG MIME Sniffing, "identifying an
unknown MIME type").
"""

import re

PDF = "application/pdf"
PNG = "image/png"
JPEG = "image/jpeg"
GIF = "image/gif"
WEBP = "image/webp"
TEXT = "text/plain"
IMAGES = frozenset({PNG, JPEG, GIF, WEBP})

# The WHATWG patterns that make a browser treat bytes as HTML, each followed by
# a space or `>` (the "tag-terminating byte"), and XML (SVG) documents.
_HTML_TAGS = (b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font",
              b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p", b"<!--")
_MARKUP_PREFIXES = (b"<?xml", b"<svg")
_WHITESPACE = b"\t\n\x0c\r "
# Control characters a text file never holds (tab, newlines, form feed and escape
# are fine). A regular expression: a character loop in Python took a second of a
# web process's CPU on a 10 MB upload.
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")


def sniff(data: bytes) -> str | None:
    """The media type of `data`, or None when it is none of the accepted kinds."""
    if data.startswith(b"%PDF-"):
        return PDF
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return GIF
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return WEBP
    return TEXT if text_of(data) is not None else None


def text_of(data: bytes) -> str | None:
    """`data` as text: strict UTF-8 (a byte-order mark dropped), no control
    characters, and nothing a browser would take for HTML or XML."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if _CONTROL.search(text) or looks_like_markup(data):
        return None
    return text


def looks_like_markup(data: bytes) -> bool:
    head = data.removeprefix(b"\xef\xbb\xbf").lstrip(_WHITESPACE)[:512].lower()
    if head.startswith(_MARKUP_PREFIXES):
        return True
    for tag in _HTML_TAGS:
        if head.startswith(tag) and head[len(tag):len(tag) + 1] in (b" ", b">"):
            return True
    return False
