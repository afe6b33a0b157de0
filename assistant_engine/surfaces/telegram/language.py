"""The language a person is answered in on Telegram: the one they chose in the
web app (organizations.PersonPreferences, the header's choice), else their
Telegram app's (`from.language_code` of the update) when the product speaks it,
else settings.LANGUAGE_CODE. Resolved once per update or follow task, which
renders everything it sends under `translation.override` of it."""

from django.conf import settings
from django.utils import translation

from assistant_engine.organizations.models import PersonPreferences


def supported(code: str | None) -> str:
    """`code` as one of settings.LANGUAGES ("de-CH" → "de"), or '' when not spoken."""
    if not code:
        return ""
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return ""


def chosen_language(telegram_user_id: int) -> str:
    """The web app's choice of the person this account speaks for now (one query), or ''."""
    return supported(
        PersonPreferences.objects.filter(
            user__telegram_links__telegram_user_id=telegram_user_id, user__telegram_links__active=True
        ).values_list("language", flat=True).first()
    )


def language_for(telegram_user_id: int | None, language_code: str | None) -> str:
    chosen = chosen_language(telegram_user_id) if telegram_user_id is not None else ""
    return chosen or supported(language_code) or settings.LANGUAGE_CODE
