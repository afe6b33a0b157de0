"""The offline demo model's answer to "what can you render?": one reply with
Markdown, a table, a fenced code block and a formula (inline `$…$` and a
`$$…$$` block), in each language of the UI.

No Django import.
"""

_CODE = '''```python
def total(prices: list[float]) -> float:
    """The sum of the prices, rounded to cents."""
    return round(sum(prices), 2)
```'''

_FORMULA = "$$\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n$$"


def _reply(intro: str, styles: str, items: tuple[str, str], table: tuple[str, str, str, str, str], code: str,
           formula: str) -> str:
    head_tool, head_does, search, send, create = table
    return "\n\n".join([
        f"## {intro}",
        styles,
        f"- {items[0]}\n- {items[1]}",
        f"| {head_tool} | {head_does} |\n|---|---|\n| `search_notes` | {search} |\n"
        f"| `send_email` | {send} |\n| `create_note` | {create} |",
        code,
        _CODE,
        formula,
        _FORMULA,
    ])


SHOWCASE = {
    "en": _reply(
        "What I can show",
        "**Bold**, *italic*, `inline code` and [links](https://example.com).",
        ("A list,", "with items."),
        ("Tool", "What it does", "finds your notes", "proposes an e-mail on a card", "writes a note"),
        "Code, highlighted:",
        "A formula, inline $E = mc^2$ or on its own line:",
    ),
    "de": _reply(
        "Was ich darstellen kann",
        "**Fett**, *kursiv*, `Code im Text` und [Links](https://example.com).",
        ("Eine Liste,", "mit Einträgen."),
        ("Werkzeug", "Was es tut", "findet Ihre Notizen", "schlägt eine E-Mail auf einer Karte vor",
         "schreibt eine Notiz"),
        "Code, hervorgehoben:",
        "Eine Formel, im Text $E = mc^2$ oder auf eigener Zeile:",
    ),
    "fr": _reply(
        "Ce que je peux afficher",
        "**Gras**, *italique*, `code en ligne` et [liens](https://example.com).",
        ("Une liste,", "avec des éléments."),
        ("Outil", "Ce qu'il fait", "trouve vos notes", "propose un e-mail sur une carte", "écrit une note"),
        "Du code, coloré :",
        "Une formule, dans le texte $E = mc^2$ ou sur sa propre ligne :",
    ),
    "it": _reply(
        "Cosa posso mostrare",
        "**Grassetto**, *corsivo*, `codice nel testo` e [link](https://example.com).",
        ("Un elenco,", "con voci."),
        ("Strumento", "Cosa fa", "trova le tue note", "propone un'e-mail su una scheda", "scrive una nota"),
        "Codice, evidenziato:",
        "Una formula, nel testo $E = mc^2$ o su una riga propria:",
    ),
}
