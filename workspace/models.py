"""The host product's own data: the things the assistant's tools act on."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from assistant_engine.organizations.models import Organization


class Note(models.Model):
    """A private note: only its owner, in its organization, may see it."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="notes")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notes")
    title = models.CharField(max_length=200)
    body = models.TextField(blank=True, default="")
    # Written by the assistant while third-party content was in its context:
    # the note may carry that content (or instructions planted in it), so
    # reading it back taints the context as untrusted (assistant/trifecta.py).
    written_from_untrusted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "owner", "-updated_at"], name="note_owner_recent")]

    def __str__(self):
        return self.title


class InboxMessage(models.Model):
    """A message received by a person. Sender, subject and body are third-party
    content: the assistant treats them as untrusted."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="inbox_messages")
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="inbox_messages"
    )
    sender = models.CharField(max_length=254)  # as received: not necessarily a valid address
    subject = models.CharField(max_length=300, blank=True, default="")
    body = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "recipient", "-received_at"], name="inbox_recipient_recent")
        ]

    def __str__(self):
        return f"{self.sender}: {self.subject}"


class SentEmail(models.Model):
    """A record of an email sent through the product's email backend."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="sent_emails")
    sender = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sent_emails")
    from_address = models.CharField(max_length=254)
    to = models.EmailField()
    subject = models.CharField(max_length=300)
    body = models.TextField()
    sent_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "sender", "-sent_at"], name="sentemail_sender_recent")
        ]

    def __str__(self):
        return f"to {self.to}: {self.subject}"
