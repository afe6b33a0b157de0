"""Logs carry ids, kinds, counts and durations: never a message's text nor a
tool's result, whatever a caller passes in `extra`."""

import json
import logging
import sys

from assistant import maintenance
from assistant.loop import run_turn
from config.logging import JsonLinesFormatter, ReadableFormatter
from conversations.models import Message, ToolCall
from tests.maintenance.conftest import queued_turn
from workspace.models import Note

SECRETS = ("Quetzalcoatl", "xylophone-lagoon")


def everything_in(record: logging.LogRecord) -> str:
    """The record as any handler could see it: message, args, every attribute,
    and both of our formatters' lines."""
    return "\n".join([
        record.getMessage(), repr(record.args), *(repr(value) for value in vars(record).values()),
        JsonLinesFormatter().format(record), ReadableFormatter().format(record),
    ])


def test_a_full_turn_and_the_jobs_log_no_message_text_nor_tool_result(owner, caplog):
    caplog.set_level(logging.DEBUG)
    Note.objects.create(organization=owner.organization, owner=owner.user, title="Quetzalcoatl plans",
                        body="Meet at the xylophone-lagoon at noon")
    turn = queued_turn(owner, message="Search my notes for Quetzalcoatl")
    run_turn(turn.id)  # the offline model: a search_notes call, then a summary quoting the result
    maintenance.fail_stuck_turns()
    maintenance.sweep_queued_turns()
    maintenance.purge_idle_threads()

    turn.refresh_from_db()
    assert turn.status == "done"
    call = ToolCall.objects.get(message__turn_id=turn.id)
    assert "xylophone-lagoon" in json.dumps(call.result)
    assert "Quetzalcoatl" in Message.objects.filter(turn_id=turn.id, role="assistant").last().content
    finished = next(r for r in caplog.records if r.getMessage() == "turn_finished")
    line = json.loads(JsonLinesFormatter().format(finished))
    assert line["turn_id"] == str(turn.id) and line["tool_calls"] == 1 and line["status"] == "done"
    assert isinstance(line["duration_ms"], int) and line["organization_id"] == owner.organization.id
    assert sum(r.getMessage() == "job_finished" for r in caplog.records) == 3
    for record in caplog.records:
        text = everything_in(record)
        for secret in SECRETS:
            assert secret not in text, (record.name, record.getMessage())


def test_the_json_formatter_keeps_ids_kinds_counts_and_drops_text():
    logger = logging.getLogger("assistant.test")
    record = logger.makeRecord(
        "assistant.test", logging.INFO, __file__, 1, "turn_finished", None, None,
        extra={"turn_id": "t-1", "failure_kind": "timeout", "steps": 3, "duration_ms": 12, "done": True,
               "content": "Quetzalcoatl", "result": {"body": "xylophone-lagoon"}, "status": "x" * 500},
    )
    line = json.loads(JsonLinesFormatter().format(record))
    assert line["event"] == "turn_finished" and line["level"] == "INFO" and line["logger"] == "assistant.test"
    assert {k: line[k] for k in ("turn_id", "failure_kind", "steps", "duration_ms", "done")} == {
        "turn_id": "t-1", "failure_kind": "timeout", "steps": 3, "duration_ms": 12, "done": True}
    assert not {"content", "result", "status"} & set(line)


def test_an_exception_is_logged_by_type_and_frames_without_its_message():
    try:
        raise ValueError("the person wrote Quetzalcoatl")
    except ValueError:
        record = logging.getLogger("x").makeRecord("x", logging.ERROR, __file__, 1, "tool_crashed", None,
                                                   sys.exc_info())
    line = json.loads(JsonLinesFormatter().format(record))
    assert line["exc_type"] == "ValueError" and line["exc_frames"]
    assert "Quetzalcoatl" not in json.dumps(line)


def test_production_logs_are_json_lines_and_development_logs_are_readable(settings):
    from config import settings as project_settings

    formatter = project_settings.LOGGING["handlers"]["console"]["formatter"]
    assert formatter == ("readable" if project_settings.DEBUG else "json")
    record = logging.getLogger("assistant.jobs").makeRecord(
        "assistant.jobs", logging.INFO, __file__, 1, "job_finished", None, None,
        extra={"job": "fail_stuck_turns", "failed": 2, "duration_ms": 5})
    assert ReadableFormatter().format(record).endswith("job_finished job=fail_stuck_turns failed=2 duration_ms=5")

