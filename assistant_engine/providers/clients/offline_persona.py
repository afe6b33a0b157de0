"""What the offline demo model takes from the system prompt: who the person
is ("who am I?"), and the instructions it can visibly follow — a name to be
called by, a language to answer in, a closing line — so that a tester sees
the instructions feature work without a real model (issue 34.3).

The organization's instructions win over the person's where both say the
same kind of thing, as the system prompt tells a real model
(assistant/instructions.py). No Django import.
"""

import re
from dataclasses import dataclass

# assistant.instructions.IDENTITY_LINE, as the system prompt carries it.
_IDENTITY = re.compile(r"^The signed-in person: (?P<name>.+), in the organization (?P<organization>.+)\.$", re.M)
_SECTION = r"<{tag}>\n(.*?)\n</{tag}>"
_FLAGS = re.I | re.M
# A name: up to 40 characters, ending at punctuation, the line's end or "and" (in each language).
_NAME = (r"[\"'“„«]?(?P<value>[^\s\"“”„«».,;!?][^\"“”„«».,;!?\n]{0,39}?)[\"'”“»]?"
         r"(?=\s+(?:and|und|et|e)\s|\s*[.,;!?]|\s*$)")
_CALLED = [re.compile(pattern + _NAME, _FLAGS) for pattern in (
    r"\bcall me\s+", r"\b(?:nenne|nennen sie) mich\s+", r"\b(?:appelle|appelez)-moi\s+", r"\bchiamami\s+")]
_LANGUAGE_NAMES = {
    "en": ("english", "englisch", "anglais", "inglese"),
    "de": ("german", "deutsch", "allemand", "tedesco"),
    "fr": ("french", "französisch", "français", "francese"),
    "it": ("italian", "italienisch", "italien", "italiano"),
}
_LANGUAGE_WORDS = "|".join(word for words in _LANGUAGE_NAMES.values() for word in words)
_ANSWER_IN = re.compile(
    r"\b(?:answer|reply|respond|write|antworte|antworten sie|schreibe|réponds|répondez|écris|rispondi|scrivi)"
    rf"\s+(?:always\s+|immer\s+|toujours\s+|sempre\s+)?(?:in|auf|en)\s+(?P<value>{_LANGUAGE_WORDS})\b", _FLAGS)
_CLOSING = re.compile(
    r"\b(?:end|close|finish|sign off|sign)\s+(?:every|each|all)?\s*(?:reply|answer|message|replies|answers)?\s*"
    r"with|\bbeende (?:jede|alle) (?:antwort|antworten|nachricht) mit|\btermine (?:chaque|toutes? les?) "
    r"(?:réponse|message)s? (?:par|avec)|\btermina (?:ogni|tutte le) (?:risposta|risposte|messaggio) con",
    _FLAGS)


@dataclass(frozen=True)
class Persona:
    name: str = ""  # what the person asked to be called
    language: str = ""  # a language an instruction asks the answers in
    closing: str = ""  # a line every reply ends with


def identity(system: str) -> tuple[str, str] | None:
    """(the person's name, the organization's) as the system prompt says them."""
    match = _IDENTITY.search(system)
    return (match.group("name"), match.group("organization")) if match else None


def persona_of(system: str) -> Persona:
    sections = [_section(system, "organization_instructions"), _section(system, "person_instructions")]
    return Persona(name=_first(sections, _CALLED), language=_language(sections), closing=_closing(sections))


def personalize(text: str, persona: Persona) -> str:
    """A final reply as the instructions ask: addressed by name, with the closing line."""
    if not text:
        return text
    if persona.name:
        text = f"{persona.name}, {text}"
    return f"{text}\n\n{persona.closing}" if persona.closing else text


def _section(system: str, tag: str) -> str:
    match = re.search(_SECTION.format(tag=tag), system, re.S)
    return match.group(1) if match else ""


def _first(sections: list[str], patterns: list[re.Pattern[str]]) -> str:
    for section in sections:  # the organization's first: where both say it, theirs wins
        for pattern in patterns:
            match = pattern.search(section)
            if match:
                return match.group("value").strip()
    return ""


def _language(sections: list[str]) -> str:
    word = _first(sections, [_ANSWER_IN]).lower()
    return next((code for code, words in _LANGUAGE_NAMES.items() if word in words), "")


def _closing(sections: list[str]) -> str:
    for section in sections:
        match = _CLOSING.search(section)
        if match:
            line = section[match.end():].split("\n", 1)[0].strip().lstrip(":").strip()
            line = line.strip("\"'“”„«» ").rstrip(".").strip("\"'“”„«» ")
            if line:
                return line[:120]
    return ""
