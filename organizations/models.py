import uuid

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from knox.models import AbstractAuthToken


class Organization(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=60, unique=True)
    # Credits granted at the opening of every calendar month (1 credit = USD 0.01).
    monthly_credits = models.PositiveIntegerField(default=1000, validators=[MinValueValidator(0)])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        MEMBER = "member", "Member"
        ADMIN = "admin", "Admin"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="membership_unique_per_pair"),
        ]
        ordering = ["organization__name"]

    def __str__(self):
        return f"{self.user} in {self.organization} ({self.role})"


class ApiToken(AbstractAuthToken):
    """A person's API token (django-rest-knox): only its SHA-512 digest is stored,
    it expires, and it acts in exactly one organization (KNOX_TOKEN_MODEL).

    `public_id` names the token in the UI and its URLs: the digest is the primary
    key and `token_key` is the start of the secret itself, so neither is shown.
    """

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=80, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"{self.name or 'token'} of {self.user_id} in {self.organization_id}"
