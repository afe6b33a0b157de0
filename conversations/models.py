import uuid

from django.conf import settings
from django.db import models

from organizations.models import Organization


class Thread(models.Model):
    class Status(models.TextChoices):
        IDLE = "idle", "Idle"
        RESPONDING = "responding", "Responding"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="threads")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="threads")
    title = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField()
    # Not auto_now: an offline client's upsert sets it to the version it sends
    # (last write wins by this value).
    updated_at = models.DateTimeField()
    last_activity_at = models.DateTimeField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.IDLE)
    # The seq the next message takes: every write path keeps it (append, upsert,
    # the turn's end), so an append needs no MAX(seq). The thread row is locked
    # by whoever appends (or the thread is `responding`: only its worker writes).
    next_seq = models.PositiveIntegerField(default=0)
    # The size of the history as the model is sent it (assistant/history.py),
    # kept by the turn's end so a submission checks the bound without reading
    # the history; None when unknown (after an upsert or a stuck turn): it is
    # then measured from the history once.
    history_bytes = models.PositiveBigIntegerField(null=True, blank=True, default=0)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "user", "-updated_at"], name="thread_owner_recent"),
            models.Index(fields=["last_activity_at"], name="thread_last_activity"),
        ]

    def __str__(self):
        return self.title or str(self.id)


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"
        TOOL = "tool", "Tool"
        EVENT = "event", "Event"

    class Status(models.TextChoices):
        COMPLETE = "complete", "Complete"
        STREAMING = "streaming", "Streaming"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    # Explicit order within the thread; never inferred from timestamps.
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=10, choices=Role.choices)
    content = models.TextField(blank=True, default="")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.COMPLETE)
    # A note for the person about this message (why a reply stopped short);
    # shown in the UI, never sent to the model.
    notice = models.CharField(max_length=300, blank=True, default="")
    # The turn that wrote this message, by id: conversations must not import
    # the assistant app.
    turn_id = models.UUIDField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["thread", "seq"], name="message_seq_unique_in_thread"),
        ]

    def __str__(self):
        return f"{self.role} #{self.seq}"


class ToolCall(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="tool_calls")
    # Order of the calls within their message.
    position = models.PositiveIntegerField(default=0)
    tool_use_id = models.CharField(max_length=200)
    name = models.CharField(max_length=200)
    input = models.JSONField(default=dict, blank=True)
    # The raw result, stored whole (no size limit); only the copy sent to the
    # model is truncated.
    result = models.JSONField(null=True, blank=True)
    is_error = models.BooleanField(default=False)
    created_at = models.DateTimeField()
    # Null while the tool runs (the SSE stream reports started / finished).
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["message_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["message", "position"], name="toolcall_position_unique"),
        ]

    def __str__(self):
        return f"{self.name} ({self.tool_use_id})"
