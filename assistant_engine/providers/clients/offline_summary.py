"""The offline demo model's summary of earlier messages (a request with
`purpose="summary"`): deterministic, so a demo and the tests see the same one.

It keeps the previous summary's points and adds one per thing the person said
in the transcript, the newest MAX_POINTS in all: a summary extended turn after
turn stays bounded, as a real model's does.
"""

from assistant_engine.providers.clients.base import ModelRequest, UserText

HEAD = "Earlier in this conversation, the person:"
MAX_POINTS = 30
POINT_CHARS = 100
PERSON = "Person: "
# assistant.summaries' words for the parts of the request (the provider layer can't import it).
TRANSCRIPT_HEAD = "Transcript to add:"


def offline_summary(request: ModelRequest) -> str:
    text = "\n".join(item.text for item in request.history if isinstance(item, UserText))
    previous, _head, transcript = text.partition(TRANSCRIPT_HEAD)
    points = [line for line in previous.splitlines() if line.startswith("- ")]
    for line in transcript.splitlines():
        if line.startswith(PERSON):
            said = " ".join(line.removeprefix(PERSON).split())
            points.append("- " + (said if len(said) <= POINT_CHARS else said[: POINT_CHARS - 1] + "…"))
    return "\n".join([HEAD, *points[-MAX_POINTS:]])
