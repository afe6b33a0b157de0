from django.conf import settings
from django.db import models

from assistant_engine.organizations.models import Organization


class McpReads(models.Model):
    """When a person's MCP clients last read private data, and third-party
    content, in one organization: the trifecta guard's state, shared by every
    session and web process (surfaces/mcp/record.py). One row per person and
    organization, also the lock that orders their calls."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    private_at = models.DateTimeField(null=True, blank=True)
    untrusted_at = models.DateTimeField(null=True, blank=True)
    # Where the third-party content read since `untrusted_at`'s window began
    # came from (the latest few): what a card proposed after it names.
    untrusted_sources = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "user"], name="mcp_reads_one_per_member")]

    def __str__(self):
        return f"MCP reads of user {self.user_id} in organization {self.organization_id}"
