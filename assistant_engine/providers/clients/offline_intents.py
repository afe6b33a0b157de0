"""The offline demo model's requests in German, French and Italian (the
English ones are in offline.py), the follow-ups of a short exchange in all four
("open the second one", "delete it", "did the e-mail go out?", "what can you
render?"), and the language of a message that matches none.

Each pattern is (action, language, regex), searched case-insensitively; the
first match wins. No Django import.
"""

import re

_FLAGS = re.I | re.S

_VERBS = {
    "read": ("open", "read", "show", "öffne", "lies", "zeig", "zeige", "öffnen", "lesen", "zeigen", "ouvre", "lis",
             "affiche", "montre", "apri", "leggi", "mostra"),
    "delete": ("delete", "remove", "lösche", "lösch", "entferne", "löschen", "entfernen", "supprime", "efface",
               "elimina", "cancella"),
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


def _table(rows: str, **parts: str) -> list[tuple[str, str, re.Pattern[str]]]:
    """(action, language, regex) from lines "action language regex" (`{part}`s filled in)."""
    lines = [line.split(None, 2) for line in rows.strip().splitlines() if not line.lstrip().startswith("#")]
    return [(action, language, re.compile(regex.format(**parts), _FLAGS)) for action, language, regex in lines]


# The e-mail forms first: the body of a mail may hold any of the other phrases.
EMAILS = _table(r"""
email de {de_send} (?:eine )?e-?mail an {to}\s*(?::|mit dem text)\s*(?P<body>.+)
email fr (?:envoie|envoyer|écris) (?:un )?(?:e-?mail|courriel) à {to}\s*:\s*(?P<body>.+)
email it (?:invia|manda|scrivi) (?:un['’]\s?|una )?e-?mail a {to}\s*:\s*(?P<body>.+)
""", to=r"(?P<to>[^\s@]+@[^\s@]+?)", de_send=r"(?:sende|schicke?|schreibe?|(?:senden|schicken|schreiben) sie)")

FOLLOW_UPS = _table(r"""
# A note of the last list, by its place; or "it": the note last spoken of.
pick en \b(?P<verb>open|read|show|delete|remove)\b(?: me)? the (?P<ordinal>{en})\b
pick en \b(?P<verb>open|read|show|delete|remove) (?:it|that one|this one){end}
pick de \b(?P<verb>{de_verb})\b(?: sie)?(?: mir)? (?:die|den|das) (?P<ordinal>{de})[nr]?\b
pick de \b(?P<verb>{de_verb})(?: sie)? (?:sie|es|ihn|diese){end}
pick fr \b(?P<verb>ouvre|lis|affiche|montre|supprime|efface)\b(?:-moi)? (?:la|le) (?P<ordinal>{fr})\b
pick fr \b(?P<verb>ouvre|lis|affiche|montre|supprime|efface)-(?:la|le)\b
pick it \b(?P<verb>apri|leggi|mostra|elimina|cancella)\b(?:mi)? (?:la|il|lo|l['’]) ?(?P<ordinal>{it})\b
pick it \b(?P<verb>apri|leggi|mostra|elimina|cancella)(?:la|lo)\b
# Did the e-mail go out? Answered from the cards the application told of.
mail_status en \b(?:did|has) (?:the|my|that) e-?mail (?:go out|gone out|get sent|been sent|go through)
mail_status en \bwas (?:the|my|that) e-?mail sent\b
mail_status de \b(?:ist|wurde|ging) (?:die|meine) e-?mail\b.*?\b(?:raus|rausgegangen|hinaus|verschickt)\b
mail_status de \b(?:ist|wurde) (?:die|meine) e-?mail\b.*?\b(?:gesendet|versendet|abgeschickt|geschickt)\b
mail_status fr (?:\bl['’]\s?e-?mail|\ble (?:mail|courriel)|\bmon (?:e-?mail|courriel))\b.*?\b(?:parti|envoyé)\b
mail_status it (?:\bl['’]\s?e-?mail|\bla (?:mail|posta))\b.*?\b(?:partit[ao]|inviat[ao]|spedit[ao])\b
# What can you render? One reply with Markdown, a table, code and a formula.
showcase en \bwhat (?:can|do) you (?:render|show|display|format)\b
showcase de \bwas (?:kannst du|können sie) (?:alles )?(?:darstellen|anzeigen|rendern)\b
showcase fr \b(?:que (?:peux|sais)-tu|qu['’]est-ce que tu (?:peux|sais)) (?:afficher|rendre|montrer)\b
showcase it \bcosa (?:puoi|sai) (?:mostrare|visualizzare|rendere)\b
""", en=_EN_ORD, de=_DE_ORD, fr=_FR_ORD, it=_IT_ORD, end=r"\s*[.!?]*\s*$",
    # The informal forms ("öffne") and the formal ones ("öffnen Sie", the help's).
    de_verb=_words("öffne", "lies", "zeige", "zeig", "lösche", "lösch", "entferne",
                   "öffnen", "lesen", "zeigen", "löschen", "entfernen"))

# The chat page's examples and the help's, as the catalogs (locale/) and offline_phrases word them.
REQUESTS = _table(r"""
# Who am I? From the system prompt (the person's name and organization).
whoami de \bwer bin ich\b
whoami fr \bqui suis[- ]je\b
whoami it \bchi sono(?: io)?\b
# Delete the note the person has open.
delete_open de \b(?:lösche|lösch|löschen sie|entferne|entfernen sie) (?:diese|die offene) notiz\b
delete_open fr \b(?:supprime|supprimez|efface|effacez) cette note\b
delete_open it \b(?:elimina|cancella) questa nota\b
# "This note": the one the person has open (a page context, assistant/page_context.py).
this_note de \b(?:(?:fasse|fassen sie) diese notiz zusammen|(?:lies|lesen sie) diese notiz|was steht in dieser notiz)\b
this_note fr \b(?:résume|lis) cette note\b
this_note it \b(?:riassumi|leggi) questa nota\b
search de notizen nach (?P<query>.+?) durchsuchen
search de (?:durchsuche|durchsuchen sie) (?:meine |die )?notizen nach (?P<query>.+)
search de \b(?:suche|such|durchsuch|suchen sie) (?:in )?(?:meinen |den )?notizen nach (?P<query>.+)
search fr \b(?:re)?cherch(?:er|e|ez) dans (?:mes |les )?notes (?P<query>.+)
search it \bcerca nelle (?:mie )?note (?P<query>.+)
search fr (?:re)?cherch(?:er|e) (?P<query>.+?) dans (?:mes |les )?notes
search it cerca (?P<query>.+?) nelle (?:mie )?note
inbox de posteingang (?:lesen|anzeigen)|(?:lies|zeige?|(?:lesen|zeigen) sie)(?: mir)? meinen posteingang
inbox fr boîte de réception
inbox it casella di posta
create de notiz (?:mit dem titel )?(?P<title>.+?) (?:erstellen|anlegen)(?:\s*:\s*(?P<body>.*))?$
create de {de_make} eine (?:neue )?notiz (?:mit dem titel )?(?P<title>.+?)(?:\s*:\s*(?P<body>.*))?$
create fr (?:créer|crée) une note (?:intitulée )?(?P<title>.+?)(?:\s*:\s*(?P<body>.*))?$
create it crea una nota (?:intitolata )?(?P<title>.+?)(?:\s*:\s*(?P<body>.*))?$
delete de notiz (?P<query>.+?) löschen
delete de (?:lösche|löschen sie) (?:die |meine )?notiz (?P<query>.+)
delete fr supprimer? (?:la )?note (?P<query>.+)
delete it elimina (?:la )?nota (?P<query>.+)
read de (?:lies|lesen sie) (?:die |meine )?notiz (?P<query>.+)
read fr lis (?:la )?note (?P<query>.+)
read it leggi (?:la )?nota (?P<query>.+)
""", de_make=r"(?:erstelle|lege|(?:erstellen|legen) sie)")

# Words common in everyday sentences of each language: the language of a
# message no pattern matched (the help is then given in it).
_COMMON = {
    "en": "i you my me the a an and is are what how please for with not hello thanks weather today can it to do",
    "de": "ich du sie mein meine meinen die der das und nicht ist was wie bitte kannst können eine einen hallo "
          "danke wetter heute mir mit",
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
