"""The engine's maintenance jobs, for Celery beat (`assistant.kit.BEAT_SCHEDULE`).

Run by `celery -A <product> worker --beat` or a separate `celery -A <product>
beat`. Every job is idempotent and safe when two workers run it at once. A tick
that waited in the queue past the next one is dropped (`expires`): the next
tick does the same work.
"""

MINUTE = 60.0


def _every(seconds: float, task: str) -> dict:
    return {"task": task, "schedule": seconds, "options": {"expires": seconds}}


BEAT_SCHEDULE = {
    "fail-stuck-turns": _every(MINUTE, "assistant.fail_stuck_turns"),
    "sweep-queued-turns": _every(MINUTE, "assistant.sweep_queued_turns"),
    "expire-cards": _every(5 * MINUTE, "assistant.expire_cards"),
    "sweep-interrupted-cards": _every(5 * MINUTE, "assistant.sweep_interrupted_cards"),
    "continue-erasures": _every(5 * MINUTE, "assistant.continue_erasures"),
    "purge-telegram-updates": _every(60 * MINUTE, "telegram.purge_received_updates"),
    "purge-idle-threads": _every(60 * MINUTE, "assistant.purge_idle_threads"),
    "purge-staff-accesses": _every(24 * 60 * MINUTE, "assistant.purge_staff_accesses"),
    "purge-expired-tokens": _every(60 * MINUTE, "assistant.purge_expired_tokens"),
}
