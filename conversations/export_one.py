"""One conversation as a file to keep: its JSON as the API shows it, or
Markdown for people. Markdown holds what was said (the current version of
each message, and the tool calls by name), not what only the application
reads (its events blocks, previous versions, raw tool results).

No Django import.
"""

import json
import re

FORMATS = {"md": ("text/markdown; charset=utf-8", "md"), "json": ("application/json", "json")}

ROLE_HEADINGS = {"user": "You", "assistant": "Assistant"}


def _quoted_heading(text: str) -> str:
    # A title is one line of text, never Markdown structure of its own.
    return _inert_text(re.sub(r"\s+", " ", text).strip()) or "Conversation"


# --- A message's content, unable to start a heading or load anything -----------
# As the page renders it (assistant_engine/web/markdown.py: no raw HTML, only
# http(s) and mailto links, no remote images), so a reply or a pasted text
# can't forge a "## You" of its own, run script or fetch a tracking image
# wherever the file is opened. Code (fenced blocks, inline spans) is shown
# as written: it renders literally anyway.

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A line's start, through any block quote and list markers (a heading may sit in either).
_CONTAINERS = r"^((?:[ \t]*(?:>|[*+-][ \t]|\d{1,9}[.)][ \t]))*[ \t]*)"
_HEADING = re.compile(_CONTAINERS + "(#)")
_SETEXT_OR_RULE = re.compile(_CONTAINERS + r"([=\-])(?=[=\-\s]*$)")
_REFERENCE = re.compile(r"^( {0,3})\[(?=[^\]]*\]:)")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
_LINK_TO = re.compile(r"\]\(\s*<?\s*(?![Hh][Tt][Tt][Pp][Ss]?:|[Mm][Aa][Ii][Ll][Tt][Oo]:|[#/?.]|\s*\))")


def inert_markdown(content: str) -> str:
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
            lines.append(_inert_line(line))
    if fence is not None:  # an unclosed fence would swallow the rest of the file
        lines.append(fence)
    return "\n".join(lines)


def _inert_line(line: str) -> str:
    line = _HEADING.sub(r"\1\\\2", line)
    line = _SETEXT_OR_RULE.sub(r"\1\\\2", line)
    line = _REFERENCE.sub(r"\1\\[", line)
    parts, last = [], 0
    for span in _CODE_SPAN.finditer(line):
        parts += [_inert_text(line[last:span.start()]), span.group(0)]
        last = span.end()
    return "".join([*parts, _inert_text(line[last:])])


def _inert_text(text: str) -> str:
    """No raw HTML or autolink, no image, no link but to http(s), mailto or the page itself."""
    text = text.replace("<", "\\<").replace("![", "\\![")
    return _LINK_TO.sub("]\\(", text)


def conversation_markdown(document: dict) -> str:
    """The conversation `document` (conversation_to_json's shape) as Markdown."""
    lines = [f"# {_quoted_heading(document.get('title') or '')}", "",
             f"_{document['createdAt']} – {document['updatedAt']}_", ""]
    for message in document["messages"]:
        heading = ROLE_HEADINGS.get(message["role"])
        if heading is None or message.get("supersededAt"):
            continue
        lines += [f"## {heading}", ""]
        if message["content"]:
            lines += [inert_markdown(message["content"].strip()), ""]
        for call in message.get("toolCalls", []):
            lines += [f"- tool `{call['name'].replace('`', '')}`{' (failed)' if call.get('isError') else ''}"]
        if message.get("toolCalls"):
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def export_body(document: dict, fmt: str) -> str:
    if fmt == "md":
        return conversation_markdown(document)
    return json.dumps(document, ensure_ascii=False, indent=2)


def export_filename(document: dict, fmt: str) -> str:
    """An ASCII name from the title (a header can't carry anything else safely)."""
    stem = re.sub(r"[^A-Za-z0-9]+", "-", document.get("title") or "").strip("-")[:60].lower() or "conversation"
    return f"{stem}-{document['id'][:8]}.{FORMATS[fmt][1]}"
