"""Per-person throttling of MCP tool calls, with DRF's rate throttle (same cache,
same maths, same settings: THROTTLE_RATES["mcp"]) as the API's (foundation/throttles.py)."""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from assistant_engine.organizations.members import Member


class McpPersonThrottle(SimpleRateThrottle):
    """Keyed by the person, as the API's person throttles: all their tokens,
    sessions and organizations share the rate."""

    scope = "mcp"

    def __init__(self, member: Member):
        self.member = member
        super().__init__()

    def get_rate(self):
        # Read per call, so a changed setting (tests, a reload) applies at once.
        return settings.THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.member.user_id}


def seconds_to_wait(member: Member) -> int | None:
    """None when the call may go ahead (and it is counted); else seconds until it may."""
    throttle = McpPersonThrottle(member)
    if throttle.rate is None or throttle.allow_request(request=None, view=None):
        return None
    return max(1, round(throttle.wait() or 1))
