"""Markdown that can't start a heading of its own or load anything.

For the Markdown export (export_one.py), opened in whatever viewer the person
has: as the page renders a message (assistant_engine/foundation/markdown.py: no raw
HTML, only http(s) and mailto links, no remote images), a reply or a pasted
text can't forge a "## You", run script or fetch a tracking image. Code
(fenced blocks, inline spans) is kept as written: it renders literally anyway.

Every step is linear in the line's length: the text is the person's, the
model's or a tool's, and a pattern that backtracks could be made to spin.

No Django import.
"""

import re

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ORDERED_MARKER = re.compile(r"\d{1,9}[.)][ \t]")
_SETEXT_OR_RULE = re.compile(r"[=\-][=\-\s]*$")
_REFERENCE = re.compile(r" {0,3}\[(?=[^\]]*\]:)")
_BACKTICKS = re.compile(r"`+")
# A link to the web as the model writes it, its destination shown as text in the export (every quantifier
# bounded, so a line full of brackets stays linear).
_WEB_LINK = re.compile(r"\[([^\[\]\n]{0,500})\]\(\s{0,20}<?(https?://[^\s()<>`]{1,2000})>?(?:\s{1,20}\"[^\"\n]{0,500}\")?\s{0,20}\)",
                       re.IGNORECASE)
_LINK_TO = re.compile(r"\]\(\s*(?:<\s*)?(?![Hh][Tt][Tt][Pp][Ss]?:|[Mm][Aa][Ii][Ll][Tt][Oo]:|[#/?.]|\))")


def inert_markdown(content: str, *, links_as_text: bool = False) -> str:
    """`links_as_text`: every link to the web written out whole, not clickable (the
    model's replies: a link's query string can carry the person's data out, issue 33)."""
    lines, fence = [], None
    for line in content.splitlines():
        opening = _FENCE.match(line)
        if fence is not None:  # inside a fenced block: literal until its own fence
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            lines.append(line)
        elif opening:
            fence = opening.group(1)
            lines.append(line)
        else:
            lines.append(_inert_line(line, links_as_text))
    if fence is not None:  # an unclosed fence would swallow the rest of the file
        lines.append(fence)
    return "\n".join(lines)


def inert_text(text: str) -> str:
    """No raw HTML or autolink, no image, no link but to http(s), mailto or the page itself."""
    text = text.replace("<", "\\<").replace("![", "\\![")
    return _LINK_TO.sub("]\\(", text)


def _link_as_text(match: re.Match) -> str:
    return f"{match.group(1)} (`{match.group(2)}`)"


def _inert_line(line: str, links_as_text: bool = False) -> str:
    start = _block_start(line)
    if line.startswith("#", start) or _SETEXT_OR_RULE.match(line, start):  # a heading, an underline, a rule
        line = line[:start] + "\\" + line[start:]
    if reference := _REFERENCE.match(line):  # a link reference definition: its target could be anything
        line = line[:reference.end() - 1] + "\\" + line[reference.end() - 1:]
    def inert(text: str) -> str:
        return inert_text(_WEB_LINK.sub(_link_as_text, text) if links_as_text else text)

    parts, last = [], 0
    for span_start, span_end in _code_spans(line):
        parts += [inert(line[last:span_start]), line[span_start:span_end]]
        last = span_end
    return "".join([*parts, inert(line[last:])])


def _block_start(line: str) -> int:
    """Where a line's own text starts, past any block quote and list markers (a heading may sit in either)."""
    at = 0
    while True:
        while at < len(line) and line[at] in " \t":
            at += 1
        if line.startswith(">", at):
            at += 1
        elif line[at:at + 1] in ("*", "+", "-") and line[at + 1:at + 2] in (" ", "\t"):
            at += 2
        elif ordered := _ORDERED_MARKER.match(line, at):
            at = ordered.end()
        else:
            return at


def _code_spans(line: str) -> list[tuple[int, int]]:
    """The inline code spans, as CommonMark pairs them: a run of backticks
    closes at the next run of the same length (a run with none is literal)."""
    runs = [(run.start(), run.end()) for run in _BACKTICKS.finditer(line)]
    next_same: list[int | None] = [None] * len(runs)
    following: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        next_same[index], following[length] = following.get(length), index
    spans, index = [], 0
    while index < len(runs):
        closing = next_same[index]
        if closing is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[closing][1]))
        index = closing + 1
    return spans
