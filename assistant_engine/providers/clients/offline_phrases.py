"""What the offline demo model says, in each language of the UI (en, de, fr,
it): `say(language, key, **fields)`. The English texts are the model's own
(tests pin them); the others say the same, and their help lists examples that
the model understands in that language (providers/clients/offline_intents.py).
The German texts say "Sie" throughout, the help's examples too (the model
understands them in the informal "du" as well).

No Django import.
"""

from assistant_engine.providers.clients.offline_showcase import SHOWCASE

LANGUAGES = ("en", "de", "fr", "it")

_EN = {
    "help": (
        "Hello! I am the offline demo model: I run on this machine without any network, "
        "so I only understand a few plain requests. Try one of these: "
        '"search my notes for budget" (then "open the second one" or "delete it"), "read my inbox", '
        '"create a note titled Groceries: milk and eggs", "read the note Groceries", '
        '"delete the note Groceries", "what can you render?", "did the e-mail go out?", '
        'or "email See you at noon to alice@example.com".'
    ),
    "no_open_note": "I don't know which note you mean: open a note in the product, then ask me again.",
    "already_done": (
        "You already confirmed this exact action in this conversation and it was carried out, "
        "so I am not proposing it a second time."
    ),
    "not_available": "I would use the tool {tool}, but it is not available here.",
    "no_match": 'No note matched "{query}", so I did nothing.',
    "error": "That did not work: {error}",
    "proposed": "I have proposed this on a card: {description}. It is yours to decide there.",
    "found": ("I found {count} note: {titles}.", "I found {count} notes: {titles}."),
    "no_notes": "No notes matched.",
    "inbox": ("Your inbox has {count} message: {lines}.", "Your inbox has {count} messages: {lines}."),
    "inbox_empty": "Your inbox is empty.",
    "note_says": 'The note "{title}" says: {body}',
    "deleted": 'I deleted the note "{title}".',
    "sent": 'I sent the e-mail "{subject}" to {to}.',
    "created": 'I created the note "{title}".',
    "done": "Done.",
    "which_one": "Which one do you mean? I listed: {items}.",
    "nothing_listed": "I have not listed any notes in this conversation yet: ask me to search your notes first.",
    "out_of_range": ("I listed only {count} note: {items}.", "I listed only {count} notes: {items}."),
    "mail_sent": 'Yes: you confirmed the e-mail "{subject}" to {to}, and it went out.',
    "mail_sending": 'You confirmed the e-mail "{subject}" to {to}; it was still being sent when I was told.',
    "mail_cancelled": 'No: you cancelled the e-mail "{subject}" to {to}, so nothing was sent.',
    "mail_expired": 'No: the card for the e-mail "{subject}" to {to} expired without a decision; nothing was sent.',
    "mail_failed": 'No: sending the e-mail "{subject}" to {to} failed.',
    "mail_unknown": (
        'I don\'t know: sending the e-mail "{subject}" to {to} was interrupted before its outcome was recorded. '
        "Look in your sent mail before sending it again."
    ),
    "mail_pending": 'Not yet: the e-mail "{subject}" to {to} waits for your confirmation on its card.',
    "mail_none": "I have not proposed any e-mail in this conversation.",
    "files": ("You attached {count} file.", "You attached {count} files."),
    "file_says": " says:",
    "file_image": ": an image, which I can't see (I am the offline demo model).",
    "file_no_text": ": I found no text in it.",
    "whoami": "You are {name}, in the organization {organization}.",
    "whoami_unknown": "I don't know who you are: this conversation doesn't say.",
}

_DE = {
    "help": (
        "Hallo! Ich bin das Offline-Demomodell: Ich laufe ohne Netzwerk auf diesem Rechner "
        "und verstehe nur ein paar einfache Bitten. Versuchen Sie zum Beispiel: "
        '"durchsuchen Sie meine Notizen nach Budget" (dann "öffnen Sie die zweite" oder "löschen Sie sie"), '
        '"lesen Sie meinen Posteingang", "erstellen Sie eine Notiz mit dem Titel Einkauf: Milch und Eier", '
        '"lesen Sie die Notiz Einkauf", "löschen Sie die Notiz Einkauf", "was können Sie darstellen?", '
        '"ist die E-Mail rausgegangen?" oder "senden Sie eine E-Mail an alice@example.com: Bis Mittag".'
    ),
    "no_open_note": (
        "Ich weiss nicht, welche Notiz Sie meinen: Öffnen Sie eine Notiz im Produkt und fragen Sie mich "
        "dann noch einmal."
    ),
    "already_done": (
        "Sie haben genau diese Aktion in dieser Unterhaltung schon bestätigt, und sie wurde ausgeführt; "
        "ich schlage sie nicht ein zweites Mal vor."
    ),
    "not_available": "Ich würde das Werkzeug {tool} verwenden, aber es ist hier nicht verfügbar.",
    "no_match": 'Keine Notiz passt zu "{query}", also habe ich nichts getan.',
    "error": "Das hat nicht geklappt: {error}",
    "proposed": "Ich habe das auf einer Karte vorgeschlagen: {description}. Sie entscheiden dort.",
    "found": ("Ich habe {count} Notiz gefunden: {titles}.", "Ich habe {count} Notizen gefunden: {titles}."),
    "no_notes": "Keine Notiz passt.",
    "inbox": ("Ihr Posteingang hat {count} Nachricht: {lines}.", "Ihr Posteingang hat {count} Nachrichten: {lines}."),
    "inbox_empty": "Ihr Posteingang ist leer.",
    "note_says": 'Die Notiz "{title}" sagt: {body}',
    "deleted": 'Ich habe die Notiz "{title}" gelöscht.',
    "sent": 'Ich habe die E-Mail "{subject}" an {to} gesendet.',
    "created": 'Ich habe die Notiz "{title}" erstellt.',
    "done": "Erledigt.",
    "which_one": "Welche meinen Sie? Ich habe aufgelistet: {items}.",
    "nothing_listed": (
        "Ich habe in dieser Unterhaltung noch keine Notizen aufgelistet: Bitten Sie mich zuerst, "
        "Ihre Notizen zu durchsuchen."
    ),
    "out_of_range": ("Ich habe nur {count} Notiz aufgelistet: {items}.",
                     "Ich habe nur {count} Notizen aufgelistet: {items}."),
    "mail_sent": 'Ja: Sie haben die E-Mail "{subject}" an {to} bestätigt, und sie ist rausgegangen.',
    "mail_sending": 'Sie haben die E-Mail "{subject}" an {to} bestätigt; sie wurde gerade noch gesendet.',
    "mail_cancelled": 'Nein: Sie haben die E-Mail "{subject}" an {to} abgebrochen, es wurde nichts gesendet.',
    "mail_expired": (
        'Nein: Die Karte der E-Mail "{subject}" an {to} ist ohne Entscheidung abgelaufen; '
        "es wurde nichts gesendet."
    ),
    "mail_failed": 'Nein: Das Senden der E-Mail "{subject}" an {to} ist fehlgeschlagen.',
    "mail_unknown": (
        'Ich weiss es nicht: Das Senden der E-Mail "{subject}" an {to} wurde unterbrochen, bevor sein Ergebnis '
        "festgehalten wurde. Sehen Sie in Ihren gesendeten E-Mails nach, bevor Sie sie noch einmal senden."
    ),
    "mail_pending": 'Noch nicht: Die E-Mail "{subject}" an {to} wartet auf Ihre Bestätigung auf ihrer Karte.',
    "mail_none": "Ich habe in dieser Unterhaltung keine E-Mail vorgeschlagen.",
    "files": ("Sie haben {count} Datei angehängt.", "Sie haben {count} Dateien angehängt."),
    "file_says": " sagt:",
    "file_image": ": ein Bild, das ich nicht sehen kann (ich bin das Offline-Demomodell).",
    "file_no_text": ": Ich habe keinen Text darin gefunden.",
    "whoami": "Sie sind {name}, in der Organisation {organization}.",
    "whoami_unknown": "Ich weiss nicht, wer Sie sind: Diese Unterhaltung sagt es nicht.",
}

_FR = {
    "help": (
        "Bonjour ! Je suis le modèle de démonstration hors ligne : je tourne sur cette machine sans réseau "
        "et ne comprends que quelques demandes simples. Essayez par exemple : "
        '"cherche budget dans mes notes" (puis "ouvre la deuxième" ou "supprime-la"), '
        '"lis ma boîte de réception", "crée une note intitulée Courses : lait et œufs", '
        '"lis la note Courses", "supprime la note Courses", "que peux-tu afficher ?", '
        '"l\'e-mail est-il parti ?" ou "envoie un e-mail à alice@example.com : À midi".'
    ),
    "no_open_note": "Je ne sais pas de quelle note vous parlez : ouvrez une note dans le produit, puis redemandez-moi.",
    "already_done": (
        "Vous avez déjà confirmé exactement cette action dans cette conversation et elle a été effectuée ; "
        "je ne la propose pas une seconde fois."
    ),
    "not_available": "J'utiliserais l'outil {tool}, mais il n'est pas disponible ici.",
    "no_match": 'Aucune note ne correspond à "{query}", je n\'ai donc rien fait.',
    "error": "Cela n'a pas fonctionné : {error}",
    "proposed": "Je l'ai proposé sur une carte : {description}. C'est à vous d'en décider.",
    "found": ("J'ai trouvé {count} note : {titles}.", "J'ai trouvé {count} notes : {titles}."),
    "no_notes": "Aucune note ne correspond.",
    "inbox": ("Votre boîte de réception contient {count} message : {lines}.",
              "Votre boîte de réception contient {count} messages : {lines}."),
    "inbox_empty": "Votre boîte de réception est vide.",
    "note_says": 'La note "{title}" dit : {body}',
    "deleted": 'J\'ai supprimé la note "{title}".',
    "sent": 'J\'ai envoyé l\'e-mail "{subject}" à {to}.',
    "created": 'J\'ai créé la note "{title}".',
    "done": "C'est fait.",
    "which_one": "Laquelle voulez-vous dire ? J'ai listé : {items}.",
    "nothing_listed": (
        "Je n'ai encore listé aucune note dans cette conversation : demandez-moi d'abord de chercher dans vos notes."
    ),
    "out_of_range": ("Je n'ai listé que {count} note : {items}.", "Je n'ai listé que {count} notes : {items}."),
    "mail_sent": 'Oui : vous avez confirmé l\'e-mail "{subject}" à {to}, et il est parti.',
    "mail_sending": 'Vous avez confirmé l\'e-mail "{subject}" à {to} ; il était encore en cours d\'envoi.',
    "mail_cancelled": 'Non : vous avez annulé l\'e-mail "{subject}" à {to}, rien n\'a été envoyé.',
    "mail_expired": (
        'Non : la carte de l\'e-mail "{subject}" à {to} a expiré sans décision ; rien n\'a été envoyé.'
    ),
    "mail_failed": 'Non : l\'envoi de l\'e-mail "{subject}" à {to} a échoué.',
    "mail_unknown": (
        'Je ne sais pas : l\'envoi de l\'e-mail "{subject}" à {to} a été interrompu avant que son résultat soit '
        "enregistré. Vérifiez vos e-mails envoyés avant de le renvoyer."
    ),
    "mail_pending": 'Pas encore : l\'e-mail "{subject}" à {to} attend votre confirmation sur sa carte.',
    "mail_none": "Je n'ai proposé aucun e-mail dans cette conversation.",
    "files": ("Vous avez joint {count} fichier.", "Vous avez joint {count} fichiers."),
    "file_says": " dit :",
    "file_image": " : une image, que je ne peux pas voir (je suis le modèle de démonstration hors ligne).",
    "file_no_text": " : je n'y ai trouvé aucun texte.",
    "whoami": "Vous êtes {name}, dans l’organisation {organization}.",
    "whoami_unknown": "Je ne sais pas qui vous êtes : cette conversation ne le dit pas.",
}

_IT = {
    "help": (
        "Ciao! Sono il modello dimostrativo offline: funziono su questa macchina senza rete "
        "e capisco solo poche richieste semplici. Prova per esempio: "
        '"cerca budget nelle mie note" (poi "apri la seconda" o "eliminala"), '
        '"leggi la mia casella di posta", "crea una nota intitolata Spesa: latte e uova", '
        '"leggi la nota Spesa", "elimina la nota Spesa", "cosa puoi mostrare?", '
        '"l\'e-mail è partita?" o "invia un\'e-mail a alice@example.com: A mezzogiorno".'
    ),
    "no_open_note": "Non so di quale nota parli: apri una nota nel prodotto, poi chiedimelo di nuovo.",
    "already_done": (
        "Hai già confermato esattamente questa azione in questa conversazione ed è stata eseguita; "
        "non la propongo una seconda volta."
    ),
    "not_available": "Userei lo strumento {tool}, ma qui non è disponibile.",
    "no_match": 'Nessuna nota corrisponde a "{query}", quindi non ho fatto nulla.',
    "error": "Non ha funzionato: {error}",
    "proposed": "L'ho proposto su una scheda: {description}. Sta a te decidere lì.",
    "found": ("Ho trovato {count} nota: {titles}.", "Ho trovato {count} note: {titles}."),
    "no_notes": "Nessuna nota corrisponde.",
    "inbox": ("La tua casella di posta ha {count} messaggio: {lines}.",
              "La tua casella di posta ha {count} messaggi: {lines}."),
    "inbox_empty": "La tua casella di posta è vuota.",
    "note_says": 'La nota "{title}" dice: {body}',
    "deleted": 'Ho eliminato la nota "{title}".',
    "sent": 'Ho inviato l\'e-mail "{subject}" a {to}.',
    "created": 'Ho creato la nota "{title}".',
    "done": "Fatto.",
    "which_one": "Quale intendi? Ho elencato: {items}.",
    "nothing_listed": "Non ho ancora elencato note in questa conversazione: chiedimi prima di cercare nelle tue note.",
    "out_of_range": ("Ho elencato solo {count} nota: {items}.", "Ho elencato solo {count} note: {items}."),
    "mail_sent": 'Sì: hai confermato l\'e-mail "{subject}" a {to}, ed è partita.',
    "mail_sending": 'Hai confermato l\'e-mail "{subject}" a {to}; era ancora in invio.',
    "mail_cancelled": 'No: hai annullato l\'e-mail "{subject}" a {to}, non è stato inviato nulla.',
    "mail_expired": 'No: la scheda dell\'e-mail "{subject}" a {to} è scaduta senza decisione; non è partito nulla.',
    "mail_failed": 'No: l\'invio dell\'e-mail "{subject}" a {to} non è riuscito.',
    "mail_unknown": (
        'Non lo so: l\'invio dell\'e-mail "{subject}" a {to} è stato interrotto prima che ne fosse registrato '
        "l'esito. Controlla la posta inviata prima di rinviarla."
    ),
    "mail_pending": 'Non ancora: l\'e-mail "{subject}" a {to} attende la tua conferma sulla sua scheda.',
    "mail_none": "Non ho proposto nessuna e-mail in questa conversazione.",
    "files": "Hai allegato {count} file.",
    "file_says": " dice:",
    "file_image": ": un'immagine, che non posso vedere (sono il modello dimostrativo offline).",
    "file_no_text": ": non vi ho trovato alcun testo.",
    "whoami": "Sei {name}, nell’organizzazione {organization}.",
    "whoami_unknown": "Non so chi sei: questa conversazione non lo dice.",
}

TEXTS = {"en": _EN, "de": _DE, "fr": _FR, "it": _IT}
for _language, _texts in TEXTS.items():
    _texts["showcase"] = SHOWCASE[_language]


def say(language: str, key: str, **fields: object) -> str:
    """The text `key` in `language` (English for any other), its fields filled in
    (a text without fields, the showcase's formula, keeps its braces)."""
    text = TEXTS.get(language, _EN)[key]
    if isinstance(text, tuple):  # (singular, plural), chosen by `count` (each of these languages has two forms)
        text = text[0] if fields.get("count") == 1 else text[1]
    return text.format(**fields) if fields else text
