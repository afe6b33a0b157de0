"""The person's language: chosen in the header (or on the login page), kept on
their account and in the language cookie that Django's LocaleMiddleware reads,
and put back in that cookie at each login so it follows them to any browser.

Not Django's `set_language` view: that one keeps the choice in the cookie only.
"""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from assistant_engine.organizations.services import preferred_language, preferred_language_set

LANGUAGE_CODES = frozenset(code for code, _name in settings.LANGUAGES)


def remember_language(response: HttpResponse, language: str) -> HttpResponse:
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME, language,
        max_age=settings.LANGUAGE_COOKIE_AGE, path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN, secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY, samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )
    return response


def _safe_next(request) -> str:
    next_url = request.POST.get("next") or ""
    if url_has_allowed_host_and_scheme(next_url, {request.get_host()}, require_https=request.is_secure()):
        return next_url
    return reverse("web-chat")


@require_POST
def choose_language(request):
    """POST {language, next}: the page again in that language (CSRF-protected, so
    another site can't switch it)."""
    language = request.POST.get("language", "")
    if language not in LANGUAGE_CODES:
        return HttpResponse("Unknown language.", status=400, content_type="text/plain")
    if request.user.is_authenticated:
        preferred_language_set(user_id=request.user.pk, language=language)
    translation.activate(language)
    return remember_language(HttpResponseRedirect(_safe_next(request)), language)


class LoginView(auth_views.LoginView):
    """Django's login, then the language the person chose on another browser."""

    def form_valid(self, form):
        response = super().form_valid(form)
        language = preferred_language(user_id=form.get_user().pk)
        return remember_language(response, language) if language in LANGUAGE_CODES else response
