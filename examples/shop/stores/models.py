"""The shop's tenants: stores, and who works in each."""

from django.conf import settings
from django.db import models


class Store(models.Model):
    key = models.SlugField(unique=True)  # the stable key the assistant keeps its organization under
    name = models.CharField(max_length=200)

    def __str__(self):
        return self.name


class StoreMember(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        CLERK = "clerk", "Clerk"

    store = models.ForeignKey(Store, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="store_memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.CLERK)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["store", "user"], name="one_membership_per_store")]

    def __str__(self):
        return f"{self.user} in {self.store}"
