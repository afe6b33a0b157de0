from django.apps import AppConfig


class AssistantConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "assistant"

    def ready(self) -> None:
        _register_conversation_cards()
        _register_personal_data()
        _register_model_check()
        _connect_worker_signals()


def _connect_worker_signals() -> None:
    """Its workers' start-up checks and heartbeat, and its task modules beside
    tasks.py (which `app.autodiscover_tasks()` alone would not import), under
    any product's Celery app."""
    from assistant import card_tasks, maintenance_tasks, worker_signals  # noqa: F401 - registers the tasks

    worker_signals.connect()


def _register_conversation_cards() -> None:
    """GET /api/conversations/{id} shows the thread's cards (conversations can't import us)."""
    from assistant.cards import thread_cards_json
    from conversations.extensions import register_conversation_extra

    register_conversation_extra("cards", thread_cards_json)


def _register_personal_data() -> None:
    """Its part of a person's export and erasure (organizations.personal_data)."""
    from assistant import personal_data

    personal_data.register()


def _register_model_check() -> None:
    """PATCH /api/conversations/{id} {model}: which options the organization allows is ours to say."""
    from assistant_engine.providers.org_models import choosable_option_ids, option_allowed, rule_of
    from conversations.extensions import register_models

    register_models(check=lambda member, option_id: option_allowed(member.organization_id, option_id,
                                                                   rule_of(member)),
                    choices=choosable_option_ids)
