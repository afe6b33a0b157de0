"""API throttles (DRF): per person for the actions that cost (chat submissions,
uploads, card decisions), per client address for anonymous requests.

Rates are settings (THROTTLE_RATES, from the environment), read on every
request so a test can set one; a rate of None does not throttle. A refusal is
429 `throttled` with `Retry-After` (foundation/api_errors.py keeps DRF's header).
"""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle


class _SettingsRateThrottle(SimpleRateThrottle):
    def get_rate(self):
        return settings.THROTTLE_RATES.get(self.scope)


class AnonymousThrottle(_SettingsRateThrottle):
    """Requests without a valid identity, per client address."""

    scope = "anon"

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class PersonActionThrottle(_SettingsRateThrottle):
    """A person's costly actions: a view names its scope per HTTP method in
    `throttle_scopes` (e.g. {"PUT": "uploads"}); other methods are not counted.
    Per person, across their organizations and tokens."""

    def __init__(self):
        # The scope depends on the view and method: the rate is chosen in allow_request.
        pass

    def allow_request(self, request, view):
        self.scope = getattr(view, "throttle_scopes", {}).get(request.method)
        if self.scope is None or not request.user.is_authenticated:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}
