"""The doors that are other programs' protocols: MCP (the real server, the
official client) and Telegram (the webhook's handler, the fake Bot API)."""

from assistant.models import ActionCard, Turn
from assistant_engine.surfaces.telegram import handlers
from assistant_engine.surfaces.telegram.follow import follow_turn
from assistant_engine.surfaces.telegram.models import StreamedReply
from assistant_engine.surfaces.telegram.services import callback_data
from conversations.models import Message
from tests.conformance.doors import READS, Door, Shown, visible
from tests.surfaces.mcp_server import mcp_session, run
from tests.telegram.conftest import click_update, message_update
from tests.telegram.test_linking import linked


class McpDoor(Door):
    """Each tools/call is the model's own; a session is a client's connection.
    Cards are proposed here and decided in the browser (the result's confirmUrl)."""

    name = "mcp"
    turns = confirms = False
    decided_in_person = True  # the MCP client holds the person's token

    @property
    def server(self):
        return self.request.getfixturevalue("mcp_server")

    def session(self, person, *steps):
        """The (tool, arguments) steps in one client session; their results."""
        token = person.mcp_token if person else None

        async def go():
            async with mcp_session(self.server.url, token) as session:
                return [await session.call_tool(*step) for step in steps]
        return run(go())

    def tools(self, person) -> list[str]:
        token = person.mcp_token

        async def go():
            async with mcp_session(self.server.url, token) as session:
                return [tool.name for tool in (await session.list_tools()).tools]
        return run(go())

    def no_turns(self):
        owner = self.request.getfixturevalue("owner")
        offered = self.tools(owner)
        assert offered and not any(word in name for name in offered for word in ("chat", "turn", "stop", "cancel"))

    def reads(self, person):
        results = self.session(person, *((tool.name, tool.input) for tool in READS if hasattr(tool, "name")))
        assert not any(result.is_error for result in results)

    def propose(self, person, steps_before, action, *, after=None):
        before = [(tool.name, tool.input) for tool in steps_before or [] if hasattr(tool, "name")]
        *_, result = self.session(person, *before, action)
        self.last_result = result
        if result.is_error:
            return None
        return ActionCard.objects.get(id=result.structured_content["cardId"])

    def shown(self, person, card):
        assert str(card.id) == self.last_result.structured_content["cardId"]
        return [Shown(self.last_result.content[0].text)]

    def finds(self, who, kind, obj):
        return None  # MCP names no conversation, card or turn: its tools name notes only

    def reads_note(self, person, note):
        [result] = self.session(person, ("read_note", {"note_id": note.id}))
        return note.body in result.content[0].text


class TelegramDoor(Door):
    """A linked person's private chat: messages and button clicks through the
    webhook's handler, replies and cards through the (fake) Bot API."""

    name = "telegram"

    def __init__(self, request):
        super().__init__(request)
        self.bot_api = request.getfixturevalue("telegram_on")
        request.getfixturevalue("settings").TELEGRAM_EDIT_INTERVAL_MS = 100
        self.telegram_ids = {}
        self.sent = {}

    def enter(self, person):
        telegram_id = 7001 + len(self.telegram_ids)
        linked(person, telegram_id)
        self.telegram_ids[person.user.id] = telegram_id

    def submit(self, person, text, conversation_id=None):
        # A chat continues its one conversation: `conversation_id` is where it is already.
        outcome = handlers.handle_update(message_update(self.telegram_ids[person.user.id], text))
        assert outcome.follow_turn, outcome.calls
        return Turn.objects.get(id=outcome.follow_turn)

    def delivered(self, turn):
        StreamedReply.objects.get_or_create(turn_id=turn.id, defaults={"chat_id": self.chat_of(turn)})
        before = len(self.bot_api.of("sendMessage"))
        assert follow_turn(turn.id, slice_seconds=5, sleep=lambda s: None) is False
        # What the chat got for this turn, in order (the row that tracked it is gone once delivered).
        self.sent[turn.id] = self.bot_api.of("sendMessage")[before:]

    def chat_of(self, turn):
        return self.telegram_ids[turn.user_id]

    def stop(self, person, turn):
        outcome = handlers.handle_update(message_update(self.telegram_ids[person.user.id], "/stop"))
        return str(handlers.STOPPING) in str(outcome.calls)

    def shown(self, person, card):
        reply = Message.objects.filter(turn_id=card.turn_id, role="assistant").order_by("seq").last().content
        messages = [call for call in self.sent[card.turn_id] if visible(call.params["text"]).strip() != reply]
        return [Shown(visible(call.params["text"]), confirm=bool(call.params.get("reply_markup")))
                for call in messages]

    def reply_shown(self, person, turn):
        markup = "\n".join(call.params["text"] for call in self.sent[turn.id])
        return markup, visible(markup)  # links are shown as text, whole: the chat itself

    def confirm(self, person, card, *, again=False):
        data = callback_data(card, confirm=True, again=again)
        outcome = handlers.handle_update(click_update(self.telegram_ids[person.user.id], data, message_id=55))
        answer = next(kwargs["text"] for name, kwargs in outcome.calls if name == "answer_callback")
        if answer == "Done.":
            return "done"
        if answer == handlers.CARD_NOT_FOUND:
            return "not_found"
        return "repeat" if answer == handlers.CARD_REFUSALS[handlers.cards.CardRepeat] else answer

    def finds(self, who, kind, obj):
        """A card by its buttons' data (Cancel), a turn by /stop; a chat names no conversation."""
        telegram_id = self.telegram_ids.get(who.user.id, 7999) if who else 7999  # 7999: linked to no one
        if kind == "card":
            handlers.handle_update(click_update(telegram_id, callback_data(obj, confirm=False), message_id=55))
        elif kind == "turn":
            handlers.handle_update(message_update(telegram_id, "/stop"))
        else:
            return None
        obj.refresh_from_db()
        return obj.status == "cancelled"
