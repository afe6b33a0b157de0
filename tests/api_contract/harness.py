"""A real API server process on the test database, the people who use it, and
their seeded data: shared by the schemathesis run and the generated client."""

import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from assistant import proposals
from assistant.models import ActionCard, Turn
from assistant_engine.tools import framework
from assistant_engine.tools.registry import get_tool
from conversations.files import file_upload
from tests.fakes.files import png
from tests.web.conftest import make_conversation
from tests.workers import PROJECT, stop_process_group, worker_environment
from workspace.models import Note


def auth_header(person) -> tuple[str, str]:
    """The one place that says how a program authenticates to the API: the
    person's API token (hashed in the database, bound to their organization)."""
    return "Authorization", f"Bearer {person.token}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class Server:
    url: str
    log_path: Path

    def requests_served(self) -> int:
        """Requests the server answered, from its access log (the truth, whatever the client counts)."""
        return len(self.statuses_served())

    def statuses_served(self) -> list[int]:
        """The status of each answer, in its access log's order."""
        return [int(status) for status in ACCESS_LINE.findall(self.log_path.read_text(errors="replace"))]


# runserver's access log: [01/Dec/2026 00:31:30] "GET /api/… HTTP/1.1" 404 78
ACCESS_LINE = re.compile(r'^\[[^\]]+\] "[A-Z]+ \S* HTTP/1\.1" (\d{3}) ', re.MULTILINE)


@contextmanager
def api_server(*, log_path: Path | None = None, **env: str):
    """`manage.py runserver` (threaded, no reloader) on the test database and a
    free port; yields the Server. Its log stays in .run/ for a failed run."""
    port = free_port()
    log_path = log_path or Path(settings.RUN_DIR) / f"api-server-{os.getpid()}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=PROJECT, env=worker_environment(**env), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for_port(port, process, log_path)
            yield Server(url=f"http://127.0.0.1:{port}", log_path=log_path)
        finally:
            stop_process_group(process)


def wait_for_port(port: int, process: subprocess.Popen, log_path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The API server exited:\n{log_path.read_text(errors='replace')[-3000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"The API server did not listen on {port}:\n{log_path.read_text(errors='replace')[-3000:]}")


# --- Seeded data ------------------------------------------------------------------


def seed_person(person, *, label: str) -> dict:
    """Conversations with messages and tool calls, a finished turn, notes and
    pending cards of every kind of action; returns their ids."""
    threads = [make_conversation(person, title=f"{label} trip {n}", content=f"{label} plans {n}") for n in range(3)]
    notes = [
        Note.objects.create(organization=person.organization, owner=person.user, title=f"{label} note {n}",
                            body=f"{label} private body {n}")
        for n in range(3)
    ]
    cards = [propose(person, threads[0], "delete_note", {"note_id": note.id}) for note in notes]
    cards.append(propose(person, threads[1], "send_email",
                         {"to": "bob@example.com", "subject": f"{label} lunch", "body": "Noon?"}))
    turns = list(Turn.objects.filter(thread__in=threads).values_list("id", flat=True))
    files = [file_upload(person.member, name=f"{label}.txt", data=f"{label} file text".encode()),
             file_upload(person.member, name=f"{label}.png", data=png())]
    return {
        "userId": person.user.id,
        "conversations": [str(thread.id) for thread in threads],
        "cards": [str(card.id) for card in cards],
        "turns": [str(turn_id) for turn_id in turns],
        "files": [str(attachment.id) for attachment in files],
        # Texts only this person's data holds (titles, messages, note bodies shown in cards, a file's text).
        "texts": [f"{label} trip", f"{label} plans", f"{label} note", f"{label} lunch", f"{label} file"],
    }


def propose(person, thread, tool_name: str, tool_input: dict) -> ActionCard:
    """A pending card as the loop leaves it (through proposals.propose)."""
    turn = Turn.objects.create(
        thread=thread, organization=person.organization, user=person.user, model_option="offline",
        status=Turn.Status.DONE,
    )
    tool = get_tool(tool_name)
    proposals.propose(person.member, turn=turn, tool=tool, tool_input=framework.parse_input(tool, tool_input),
                      tool_call=None, warning=False)
    return ActionCard.objects.get(turn=turn)
