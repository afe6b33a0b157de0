"""The doors a person reaches the assistant through, each behind the same small
adapter, so one test per promise runs against every door (issue 22, point 10).

A turn runs in this process with a scripted model (tests/fakes/scripted.py):
the loop is the same for every door; what a door adds is how a message gets
in, how a card gets out, how Stop and Confirm come back. Those go through the
door's real entry points: the test client on the pages and the API the page's
script calls, the webhook's update handler and the fake Bot API, the MCP
server under uvicorn with the official client.
"""

import html
import json
import re
from dataclasses import dataclass

from django.test import Client
from django.urls import get_resolver

from assistant.loop import run_turn
from assistant.models import ActionCard, Turn
from conversations.models import ToolCall
from tests.assistant.conftest import PRICED_OPTION, Clock
from tests.fakes.scripted import ScriptedClient, call, say

LONG_BODY = " ".join(f"word{n:04d}" for n in range(780))  # 7,019 characters, every word distinct
READS = call(("search_notes", {"query": ""}), ("read_inbox", {}))


def send(body: str = LONG_BODY) -> tuple[str, dict]:
    return ("send_email", {"to": "bob@example.com", "subject": "Lunch", "body": body})


@dataclass
class Shown:
    """One piece of what a person sees of a card, in order; `confirm`: a Confirm is offered with it."""

    text: str
    confirm: bool = False


def visible(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def card_pieces(page: str, card) -> list[Shown]:
    """A server-rendered card (templates/web/_card.html): what comes before its Confirm button, then the button."""
    section = re.search(rf'<section[^>]*id="card-{card.id}".*?</section>', page, re.S).group(0)
    before, button, _ = re.split(r'(<button[^>]*data-card-action="confirm"[^>]*>.*?</button>)', section,
                                 maxsplit=1, flags=re.S)
    return [Shown(visible(before)), Shown(visible(button), confirm=True)]


def routes(urlconf_module: str) -> list[str]:
    return [str(pattern.pattern) for pattern in get_resolver(urlconf_module).url_patterns]


class Door:
    """The adapter every door implements. `turns`: the door runs turns (False:
    it must offer no way to run one, see `no_turns`); `confirms`: a card can be
    confirmed through it; `proposes`: a card can be proposed through it;
    `decided_in_person`: a program holding the person's API token proposes
    through it, so that token can't confirm what it proposed."""

    name = ""
    turns = True
    confirms = True
    proposes = True
    decided_in_person = False

    def __init__(self, request):
        self.request = request

    def enter(self, person) -> None:
        """Whatever makes the door usable by `person` (a Telegram link…)."""

    # --- turns --------------------------------------------------------------
    def submit(self, person, text: str, conversation_id=None) -> Turn:
        raise NotImplementedError

    def play(self, person, *steps, text="Go", conversation_id=None) -> Turn:
        turn = self.submit(person, text, conversation_id)
        Turn.objects.filter(id=turn.id).update(model_option=PRICED_OPTION)
        run_turn(turn.id, client=ScriptedClient(*steps), clock=Clock())
        self.delivered(turn)
        turn.refresh_from_db()
        return turn

    def delivered(self, turn: Turn) -> None:
        """After the turn: what the door does to bring its reply out."""

    def stop(self, person, turn: Turn) -> bool:
        """Ask to stop `turn` through the door; whether the door accepted."""
        raise NotImplementedError

    def submit_on_model(self, person, text: str, model: str) -> str | None:
        """Start a conversation on `model` through the door: "accepted", the
        refusal's code, or None when the door offers no way to name a model."""
        return None

    def no_turns(self) -> None:
        """For a door without turns: assert it offers no way to run one."""
        raise AssertionError(f"{self.name} runs turns")

    # --- cards ----------------------------------------------------------------
    def propose(self, person, steps_before, action, *, after=None) -> ActionCard | None:
        """Propose `action` (after `steps_before` in the same turn; after the turn
        `after` in the next one); the card, or None when the guard refused it."""
        conversation_id = getattr(after, "thread_id", None) or getattr(after, "id", None)
        steps = [step for step in (steps_before, call(action)) if step]
        turn = self.play(person, *steps, say("Card."), text="Do it", conversation_id=conversation_id)
        return ActionCard.objects.filter(turn=turn).first()

    def reads(self, person):
        """A private read and an untrusted read in one turn (or session): the handle `propose` continues after."""
        return self.play(person, READS, say("Read."))

    def shown(self, person, card: ActionCard) -> list[Shown]:
        raise NotImplementedError

    def confirm(self, person, card: ActionCard, *, again: bool = False) -> str:
        """"done", "repeat" (the card needs the second confirmation), "not_found"."""
        raise NotImplementedError

    def reply_shown(self, person, turn: Turn) -> tuple[str, str] | None:
        """How the door shows `turn`'s reply: its markup, and the text where the
        person reads a link's whole destination before it is followed (for a
        page: the interstitial its link opens). None: the door gives the reply
        as written to a client that renders it (the API)."""
        return None

    # --- tenancy ----------------------------------------------------------------
    def finds(self, who, kind: str, obj) -> bool | None:
        """Whether `who` (a Person or None: anonymous) finds `obj` of `kind`
        ("conversation", "card", "turn") through the door; None: the door has
        no way to name an object of that kind."""
        raise NotImplementedError

    def reads_note(self, person, note) -> bool | None:
        """Whether `person` gets `note`'s body through the door's tools (None: no tools)."""
        turn = self.play(person, call(("read_note", {"note_id": note.id})), say("Read."))
        result = ToolCall.objects.get(message__turn_id=turn.id, name="read_note").result
        return note.body in str(result)


class ApiDoor(Door):
    """/api/: a token's client (the generated client, other products)."""

    name = "api"

    def client(self, person):
        return person.client

    def submit(self, person, text, conversation_id=None):
        body = {"message": text, **({"conversationId": str(conversation_id)} if conversation_id else {})}
        response = self.client(person).post("/api/chat", json.dumps(body), content_type="application/json")
        assert response.status_code == 202, response.content
        return Turn.objects.get(id=response.json()["turnId"])

    def stop(self, person, turn):
        response = self.client(person).post(f"/api/turns/{turn.id}/cancel")
        return response.status_code in (200, 202)

    def submit_on_model(self, person, text, model):
        body = json.dumps({"message": text, "model": model})
        response = self.client(person).post("/api/chat", body, content_type="application/json")
        return "accepted" if response.status_code == 202 else response.json()["code"]

    def shown(self, person, card):
        shown = self.client(person).get(f"/api/cards/{card.id}").json()["presentation"]
        texts = [notice["text"] for notice in shown["notices"]] + [shown["title"], shown["description"]]
        return [Shown("\n".join(texts)), Shown(shown["confirmLabel"], confirm=True)]

    def confirm(self, person, card, *, again=False):
        body = {"hash": card.snapshot_hash, **({"acknowledgeRepeat": True} if again else {})}
        response = self.client(person).post(f"/api/cards/{card.id}/confirm", json.dumps(body),
                                            content_type="application/json")
        if response.status_code == 200:
            return "done"
        return {404: "not_found", 409: response.json().get("code")}.get(response.status_code, response.status_code)

    def anonymous(self):
        from rest_framework.test import APIClient

        return APIClient()

    def finds(self, who, kind, obj):
        client = self.client(who) if who else self.anonymous()
        url = {"conversation": f"/api/conversations/{obj.id}", "card": f"/api/cards/{obj.id}",
               "turn": f"/api/turns/{obj.id}"}[kind]
        status = client.get(url).status_code
        assert status in (200, 401, 403, 404), status
        return status == 200


class BrowserDoor(ApiDoor):
    """The pages (server-rendered cards) and the API the page's script calls, with a session."""

    name = "browser"

    def client(self, person):
        client = Client()
        client.force_login(person.user)
        return client

    def anonymous(self):
        return Client()

    def shown(self, person, card):
        return card_pieces(self.client(person).get(f"/c/{card.thread_id}/").content.decode(), card)

    def reply_shown(self, person, turn):
        return self.with_destination(person, self.client(person).get(f"/c/{turn.thread_id}/messages").content.decode())

    def with_destination(self, person, markup: str) -> tuple[str, str]:
        """The page, and what the interstitial its first link to another host opens shows."""
        link = re.search(r'href="(/out/\?to=[^"]+)"', markup)
        page = self.client(person).get(html.unescape(link.group(1))).content.decode() if link else ""
        return markup, visible(page)

    def finds(self, who, kind, obj):
        client = self.client(who) if who else self.anonymous()
        url = {"conversation": f"/c/{obj.id}/", "card": f"/cards/{obj.id}/", "turn": f"/api/turns/{obj.id}"}[kind]
        status = client.get(url).status_code
        assert status in (200, 302, 401, 403, 404), status
        return status == 200


class AiMemoryDoor(Door):
    """/ai/: the esm-ai-memory contract, a conversation store: no turns, no cards."""

    name = "ai"
    turns = confirms = proposes = False

    def no_turns(self):
        assert not any(re.search(r"chat|turn|cancel|confirm", route) 
                   for route in routes("assistant_engine.surfaces.ai_memory.urls"))

    def finds(self, who, kind, obj):
        if kind != "conversation":
            return None
        client = who.client if who else ApiDoor.anonymous(self)
        found = [client.get(f"/ai/conversations/{name}").status_code for name in (obj.external_id, str(obj.id))
                 if name]
        assert set(found) <= {200, 401, 403, 404}, found
        return 200 in found

    def reads_note(self, person, note):
        return None

    def reads(self, person):
        """Sessions of another client: a conversation it stored with the reads its model made."""
        from conversations.models import Thread

        at = "2026-12-01T10:00:00Z"
        reads = [{"id": f"call-{name}", "name": name, "input": {}, "result": {"items": ["…"]}}
                 for name in ("search_notes", "read_inbox")]
        document = {"id": "mail-1", "title": "Mail", "createdAt": at, "updatedAt": at, "messages": [
            {"id": "m1", "role": "user", "content": "Read my notes and inbox", "createdAt": at},
            {"id": "m2", "role": "assistant", "content": "Read.", "createdAt": at, "toolCalls": reads}]}
        response = person.client.put("/ai/conversations/mail-1", document, format="json")
        assert response.status_code in (200, 201), response.content
        return Thread.objects.get(external_id="mail-1")
