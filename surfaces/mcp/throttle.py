"""Per-person throttling of MCP tool calls, with DRF's rate throttle (same cache, same maths)."""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from organizations.members import Member


class McpPersonThrottle(SimpleRateThrottle):
    """Keyed by the person in their organization, not by token or address:
    several tokens or clients of one person share the rate."""

    scope = "mcp"

    def __init__(self, member: Member):
        self.member = member
        super().__init__()

    def get_rate(self):
        # Read per call, so a changed setting (tests, a reload) applies at once.
        return settings.MCP_THROTTLE_RATE

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope,
                                    "ident": f"{self.member.organization_id}:{self.member.user_id}"}


def seconds_to_wait(member: Member) -> int | None:
    """None when the call may go ahead (and it is counted); else seconds until it may."""
    throttle = McpPersonThrottle(member)
    if throttle.allow_request(request=None, view=None):
        return None
    return max(1, round(throttle.wait() or 1))
