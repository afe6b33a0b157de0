"""One conversation as a file to keep: its JSON as the API shows it, or
Markdown for people. Markdown holds what was said (the current version of
each message, and the tool calls by name), not what only the application
reads (its events blocks, previous versions, raw tool results).

No Django import.
"""

import json
import re

from conversations.inert_markdown import inert_markdown, inert_text

FORMATS = {"md": ("text/markdown; charset=utf-8", "md"), "json": ("application/json", "json")}

ROLE_HEADINGS = {"user": "You", "assistant": "Assistant"}


def _quoted_heading(text: str) -> str:
    # A title is one line of text, never Markdown structure of its own.
    return inert_text(re.sub(r"\s+", " ", text).strip()) or "Conversation"


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
            # The model's links written out whole (as on Telegram): a file has no interstitial.
            lines += [inert_markdown(message["content"].strip(), links_as_text=message["role"] == "assistant"), ""]
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
