"""The peer's copy of the host product's notes (the same 50 rows as ours)."""

from django.conf import settings
from django.db import models


class Note(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    title = models.CharField(max_length=200)
    body = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "peer_notes"

    def __str__(self):
        return self.title
