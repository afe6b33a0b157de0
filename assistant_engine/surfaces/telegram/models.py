"""Telegram accounts linked to members, one-time linking codes, received
updates (each processed once) and the replies being streamed to a chat."""

from django.conf import settings
from django.db import models

from assistant.models import Turn
from assistant_engine.organizations.models import Organization
from conversations.models import Thread


class LinkCode(models.Model):
    """A one-time code that links a Telegram account to one membership.

    Only its SHA-256 is stored: a database read does not give a usable code.
    """

    code_hash = models.CharField(max_length=64, unique=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"link code of user #{self.user_id} ({'used' if self.used_at else 'unused'})"


class TelegramLink(models.Model):
    """A Telegram user speaking as one member of one organization.

    A person in several organizations links each one; `active` is the one
    their Telegram messages go to (`/org` switches).
    """

    telegram_user_id = models.BigIntegerField()
    chat_id = models.BigIntegerField()
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="telegram_links")
    active = models.BooleanField(default=True)
    # The person's continuous conversation; `/new` clears it (the next message
    # starts a fresh one, the old one stays in the sidebar).
    thread = models.ForeignKey(Thread, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="telegram_link_one_per_member"),
            models.UniqueConstraint(
                fields=["telegram_user_id", "organization"], name="telegram_link_one_per_account_and_org"
            ),
            models.UniqueConstraint(
                fields=["telegram_user_id"], condition=models.Q(active=True), name="telegram_link_one_active"
            ),
        ]

    def __str__(self):
        return f"Telegram link of user #{self.user_id} in organization #{self.organization_id}"


class ReceivedUpdate(models.Model):
    """An `update_id` Telegram delivered: a retried delivery finds it and is
    not processed again. Only the number is kept (nothing of the person)."""

    update_id = models.BigIntegerField(primary_key=True)
    received_at = models.DateTimeField()
    handled_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"update {self.update_id}"


class StreamedReply(models.Model):
    """What a turn's reply has put in the chat so far, so a retried follow
    task (a 429, a network error) edits what it sent instead of sending again.
    Fingerprints of the sent chunks, not their text. Deleted once delivered."""

    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, primary_key=True, related_name="+")
    chat_id = models.BigIntegerField()
    message_ids = models.JSONField(default=list)
    chunk_hashes = models.JSONField(default=list)
    # Card id -> the id of the message that shows it.
    card_messages = models.JSONField(default=dict)
    last_edit_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"reply of turn {self.turn_id}"
