"""The panel: the browser's component on host pages ({% assistant_panel %},
web/panel.py). It renders the same chat, sends through the same API with the
session, and shows the conversation its state names: that state is the door."""

import json

from tests.conformance.doors import BrowserDoor, card_pieces


class PanelDoor(BrowserDoor):
    name = "panel"

    def show_in_panel(self, client, conversation_id) -> int:
        response = client.post("/assistant/panel/state", json.dumps({"open": True, "conversationId": str(
            conversation_id)}), content_type="application/json")
        return response.status_code

    def shown(self, person, card):
        client = self.client(person)
        assert self.show_in_panel(client, card.thread_id) == 204
        return card_pieces(client.get("/assistant/panel/chat").content.decode(), card)

    def reply_shown(self, person, turn):
        client = self.client(person)
        assert self.show_in_panel(client, turn.thread_id) == 204
        return self.with_destination(person, client.get("/assistant/panel/chat").content.decode())

    def finds(self, who, kind, obj):
        if kind != "conversation":
            return super().finds(who, kind, obj)
        client = self.client(who) if who else self.anonymous()
        status = self.show_in_panel(client, obj.id)
        assert status in (204, 302, 401, 403, 404), status
        if status != 204:
            return False
        return str(obj.id) in client.get("/assistant/panel/chat").content.decode()
