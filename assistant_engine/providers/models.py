"""The organizations' own provider keys (sealed, providers/sealing.py)."""

from django.conf import settings
from django.db import models

from assistant_engine.organizations.models import Organization


class ProviderKey(models.Model):
    """An organization's own key for a model provider, sealed (providers/sealing.py).

    The plaintext is never stored nor shown again: only `hint` is.
    """
    # Not a person's data for the staff access log (tests/admin/test_staff_access_everywhere.py).
    staff_access_exempt = "An organization's key; the user is its author, and only a hint is shown."

    class Provider(models.TextChoices):
        INFOMANIAK = "infomaniak", "Infomaniak AI Services (Switzerland)"
        BEDROCK = "bedrock", "AWS Bedrock (EU)"
        ANTHROPIC = "anthropic", "Anthropic (US)"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="provider_keys")
    provider = models.CharField(max_length=20, choices=Provider.choices)
    sealed = models.TextField(editable=False)
    hint = models.CharField(max_length=8, editable=False)
    # Anonymized (set null) when its author is erased; the key stays the organization's.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Moved from the assistant app with its table (migrations: providers 0001, assistant 0012).
        db_table = "assistant_providerkey"
        constraints = [
            models.UniqueConstraint(fields=["organization", "provider"], name="provider_key_one_per_provider"),
        ]

    def __str__(self):
        return f"{self.get_provider_display()} key {self.hint}"
