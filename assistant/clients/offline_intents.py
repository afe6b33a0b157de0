"""The offline demo model's requests in German, French and Italian (the
English ones are in offline.py), the follow-ups of a short exchange in all four
("open the second one", "delete it", "did the e-mail go out?", "what can you
render?"), and the language of a message that matches none.

Each pattern is (action, language, regex), searched case-insensitively; the
first match wins. No Django import.
"""

import re

_FLAGS = re.I | re.S
_TO = r"(?P<to>[^\s@]+@[^\s@]+?)"

# The e-mail forms first: the body of a mail may hold any of the other phrases.
EMAILS = [
    ("email", "de", re.compile(
        rf"(?:sende|schicke?|schreibe?) (?:eine )?e-?mail an {_TO}\s*(?::|mit dem text)\s*(?P<body>.+)", _FLAGS)),
    ("email", "fr", re.compile(
        rf"(?:envoie|envoyer|écris) (?:un )?(?:e-?mail|courriel) à {_TO}\s*:\s*(?P<body>.+)", _FLAGS)),
    ("email", "it", re.compile(
        rf"(?:invia|manda|scrivi) (?:un['’]\s?|una )?e-?mail a {_TO}\s*:\s*(?P<body>.+)", _FLAGS)),
]

_VERBS = {
    "read": ("open", "read", "show", "öffne", "lies", "zeig", "zeige", "ouvre", "lis", "affiche", "montre",
             "apri", "leggi", "mostra"),
    "delete": ("delete", "remove", "lösche", "lösch", "entferne", "supprime", "efface", "elimina", "cancella"),
}
VERB_ACTION = {verb: action for action, verbs in _VERBS.items() for verb in verbs}
# The note a follow-up names among those last listed: 1-based, -1 for the last.
ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "fifth": 5, "last": -1,
    "erste": 1, "zweite": 2, "dritte": 3, "vierte": 4, "fünfte": 5, "letzte": -1,
    "première": 1, "premier": 1, "deuxième": 2, "seconde": 2, "troisième": 3, "quatrième": 4,
    "cinquième": 5, "dernière": -1, "dernier": -1,
    "prima": 1, "primo": 1, "seconda": 2, "secondo": 2, "terza": 3, "terzo": 3, "quarta": 4, "quarto": 4,
    "quinta": 5, "quinto": 5, "ultima": -1, "ultimo": -1,
}


def _words(*words: str) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_EN_ORD = _words("first", "1st", "second", "2nd", "third", "3rd", "fourth", "fifth", "last")
_DE_ORD = _words("erste", "zweite", "dritte", "vierte", "fünfte", "letzte")
_FR_ORD = _words("première", "premier", "deuxième", "seconde", "second", "troisième", "quatrième", "cinquième",
                 "dernière", "dernier")
_IT_ORD = _words("prima", "primo", "seconda", "secondo", "terza", "terzo", "quarta", "quarto", "quinta", "quinto",
                 "ultima", "ultimo")
_END = r"\s*[.!?]*\s*$"

FOLLOW_UPS = [
    # A note of the last list, by its place; or "it": the note last spoken of.
    ("pick", "en", re.compile(
        rf"\b(?P<verb>open|read|show|delete|remove)\b(?: me)? the (?P<ordinal>{_EN_ORD})\b", _FLAGS)),
    ("pick", "en", re.compile(rf"\b(?P<verb>open|read|show|delete|remove) (?:it|that one|this one){_END}", _FLAGS)),
    ("pick", "de", re.compile(
        rf"\b(?P<verb>öffne|lies|zeige?|lösche?|entferne)\b(?: mir)? (?:die|den|das) (?P<ordinal>{_DE_ORD})[nr]?\b",
        _FLAGS)),
    ("pick", "de", re.compile(rf"\b(?P<verb>öffne|lies|zeige?|lösche?|entferne) (?:sie|es|ihn|diese){_END}", _FLAGS)),
    ("pick", "fr", re.compile(
        rf"\b(?P<verb>ouvre|lis|affiche|montre|supprime|efface)\b(?:-moi)? (?:la|le) (?P<ordinal>{_FR_ORD})\b",
        _FLAGS)),
    ("pick", "fr", re.compile(r"\b(?P<verb>ouvre|lis|affiche|montre|supprime|efface)-(?:la|le)\b", _FLAGS)),
    ("pick", "it", re.compile(
        rf"\b(?P<verb>apri|leggi|mostra|elimina|cancella)\b(?:mi)? (?:la|il|lo|l['’]) ?(?P<ordinal>{_IT_ORD})\b",
        _FLAGS)),
    ("pick", "it", re.compile(r"\b(?P<verb>apri|leggi|mostra|elimina|cancella)(?:la|lo)\b", _FLAGS)),
    # Did the e-mail go out? Answered from the cards the application told of.
    ("mail_status", "en", re.compile(
        r"\b(?:did|has) (?:the|my|that) e-?mail (?:go out|gone out|get sent|been sent|go through)"
        r"|\bwas (?:the|my|that) e-?mail sent\b", _FLAGS)),
    ("mail_status", "de", re.compile(
        r"\b(?:ist|wurde|ging) (?:die|meine) e-?mail\b.*?\b(?:raus|rausgegangen|hinaus|verschickt|gesendet|"
        r"versendet|abgeschickt|geschickt)\b", _FLAGS)),
    ("mail_status", "fr", re.compile(
        r"(?:\bl['’]\s?e-?mail|\ble (?:mail|courriel)|\bmon (?:e-?mail|courriel))\b.*?\b(?:parti|envoyé)\b", _FLAGS)),
    ("mail_status", "it", re.compile(
        r"(?:\bl['’]\s?e-?mail|\bla (?:mail|posta))\b.*?\b(?:partit[ao]|inviat[ao]|spedit[ao])\b", _FLAGS)),
    # What can you render? One reply with Markdown, a table, code and a formula.
    ("showcase", "en", re.compile(r"\bwhat (?:can|do) you (?:render|show|display|format)\b", _FLAGS)),
    ("showcase", "de", re.compile(r"\bwas kannst du (?:alles )?(?:darstellen|anzeigen|rendern)\b", _FLAGS)),
    ("showcase", "fr", re.compile(
        r"\b(?:que (?:peux|sais)-tu|qu['’]est-ce que tu (?:peux|sais)) (?:afficher|rendre|montrer)\b", _FLAGS)),
    ("showcase", "it", re.compile(r"\bcosa (?:puoi|sai) (?:mostrare|visualizzare|rendere)\b", _FLAGS)),
]

# The chat page's examples and the help's, as the catalogs (locale/) and offline_phrases word them.
REQUESTS = [
    ("search", "de", re.compile(r"notizen nach (?P<query>.+?) durchsuchen", _FLAGS)),
    ("search", "de", re.compile(r"durchsuche (?:meine |die )?notizen nach (?P<query>.+)", _FLAGS)),
    ("search", "fr", re.compile(r"(?:re)?cherch(?:er|e) (?P<query>.+?) dans (?:mes |les )?notes", _FLAGS)),
    ("search", "it", re.compile(r"cerca (?P<query>.+?) nelle (?:mie )?note", _FLAGS)),
    ("inbox", "de", re.compile(r"posteingang (?:lesen|anzeigen)|(?:lies|zeige?)(?: mir)? meinen posteingang", _FLAGS)),
    ("inbox", "fr", re.compile(r"boîte de réception", _FLAGS)),
    ("inbox", "it", re.compile(r"casella di posta", _FLAGS)),
    ("create", "de", re.compile(
        r"notiz (?:mit dem titel )?(?P<title>.+?) (?:erstellen|anlegen)(?:\s*:\s*(?P<body>.*))?$", _FLAGS)),
    ("create", "de", re.compile(
        r"(?:erstelle|lege) eine (?:neue )?notiz (?:mit dem titel )?(?P<title>.+?)(?:\s*:\s*(?P<body>.*))?$",
        _FLAGS)),
    ("create", "fr", re.compile(
        r"(?:créer|crée) une note (?:intitulée )?(?P<title>.+?)(?:\s*:\s*(?P<body>.*))?$", _FLAGS)),
    ("create", "it", re.compile(r"crea una nota (?:intitolata )?(?P<title>.+?)(?:\s*:\s*(?P<body>.*))?$", _FLAGS)),
    ("delete", "de", re.compile(r"notiz (?P<query>.+?) löschen", _FLAGS)),
    ("delete", "de", re.compile(r"lösche (?:die |meine )?notiz (?P<query>.+)", _FLAGS)),
    ("delete", "fr", re.compile(r"supprimer? (?:la )?note (?P<query>.+)", _FLAGS)),
    ("delete", "it", re.compile(r"elimina (?:la )?nota (?P<query>.+)", _FLAGS)),
    ("read", "de", re.compile(r"lies (?:die |meine )?notiz (?P<query>.+)", _FLAGS)),
    ("read", "fr", re.compile(r"lis (?:la )?note (?P<query>.+)", _FLAGS)),
    ("read", "it", re.compile(r"leggi (?:la )?nota (?P<query>.+)", _FLAGS)),
]

# Words common in everyday sentences of each language: the language of a
# message no pattern matched (the help is then given in it).
_COMMON = {
    "en": "i you my me the a an and is are what how please for with not hello thanks weather today can it to do",
    "de": "ich du mein meine meinen die der das und nicht ist was wie bitte kannst eine einen hallo danke "
          "wetter heute mir mit",
    "fr": "je tu vous mes mon ma les le une un et est dans quel quelle que qui bonjour merci pour avec pas "
          "temps fait aujourd'hui",
    "it": "io mi mio mia mie miei il lo gli una uno è nelle nella che cosa come ciao grazie per con non oggi "
          "tempo",
}
_COMMON_WORDS = {language: frozenset(words.split()) for language, words in _COMMON.items()}


def detect_language(text: str) -> str | None:
    """The language most of the text's common words belong to; None on a tie or none."""
    words = re.findall(r"[\w'’]+", text.lower())
    scores = sorted(((sum(word in common for word in words), language)
                     for language, common in _COMMON_WORDS.items()), reverse=True)
    (best, language), (second, _) = scores[0], scores[1]
    return language if best and best > second else None


# assistant.instructions.LANGUAGE_LINE, as the system prompt carries the person's choice.
_CHOSEN = re.compile(r"^The person's language \(their choice in the product\): (\w{2})\.$", re.M)


def chosen_language(system: str) -> str | None:
    """The language the person chose, when the system prompt says it."""
    match = _CHOSEN.search(system)
    return match.group(1) if match else None
