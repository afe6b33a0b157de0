import uuid

from django.conf import settings
from django.db import models

from assistant_engine.organizations.models import Organization

API_ID_PREFIX = "api:"


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
    # The esm-ai-memory door (/ai/) lets the client choose any string as id:
    # it is kept here, unique per person (never across people), while `id`,
    # the storage key, is the server's own random UUID; /api/ keeps showing
    # `id`. Empty: the client knows the conversation by `id` itself.
    # "api:<uuid>": an /api/ upload (PUT) named it by a UUID another
    # conversation already has: ids are the person's own (see `api_id`).
    external_id = models.CharField(max_length=200, blank=True, default="")
    # The last /ai/ upload's document without its messages, as the client's
    # JSON text (key order and date formats kept: a jsonb column would reorder
    # keys). Empty after an /api/ upload, which has no fields of its own.
    client_json = models.TextField(blank=True, default="")
    # Where the conversation is held: "" for the browser and the API,
    # "telegram" for a Telegram chat (the sidebar marks it).
    surface = models.CharField(max_length=20, blank=True, default="")
    # A continuous conversation is never full: the model gets a window of its
    # most recent messages (assistant/history_window.py) instead of all of it.
    continuous = models.BooleanField(default=False)
    # The seq the next message takes: every write path keeps it (append, upsert,
    # the turn's end), so an append needs no MAX(seq). The thread row is locked
    # by whoever appends (or the thread is `responding`: only its worker writes).
    next_seq = models.PositiveIntegerField(default=0)
    # The size of the history as the model is sent it (assistant/history.py),
    # kept by the turn's end so a submission checks the bound without reading
    # the history; None when unknown (after an upsert or a stuck turn): it is
    # then measured from the history once.
    history_bytes = models.PositiveBigIntegerField(null=True, blank=True, default=0)
    # The model option chosen for this conversation (among those its
    # organization allows: providers.org_models); "" is the organization's.
    model_option = models.CharField(max_length=100, blank=True, default="", db_default="")
    # Where the newest Summary ends (its through_seq); 0: none. Read with the
    # thread, so a turn of a conversation never summarized asks for no summary.
    summary_seq = models.PositiveIntegerField(default=0, db_default=0)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "user", "-updated_at"], name="thread_owner_recent"),
            models.Index(fields=["last_activity_at"], name="thread_last_activity"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["organization", "user", "external_id"], condition=~models.Q(external_id=""),
                                    name="thread_external_id_unique_per_person"),
        ]

    def __str__(self):
        return self.title or str(self.id)

    @property
    def api_id(self) -> uuid.UUID:
        """The id /api/ names it by for its owner: the UUID the person uploaded
        it under (PUT /api/conversations/{id}), else its own."""
        if self.external_id.startswith(API_ID_PREFIX):
            return uuid.UUID(self.external_id.removeprefix(API_ID_PREFIX))
        return self.id


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"
        TOOL = "tool", "Tool"
        EVENT = "event", "Event"
        # A client's own system prompt (esm-ai-memory's StoredMessage allows it):
        # kept and given back, never sent to the model (assistant/history.py).
        SYSTEM = "system", "System"

    class Status(models.TextChoices):
        COMPLETE = "complete", "Complete"
        STREAMING = "streaming", "Streaming"
        FAILED = "failed", "Failed"

    # The server's own key: tool calls and turns link to it, and it never
    # changes while the message exists.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    # The id the API shows ("id" in a StoredConversation). Offline clients
    # choose it, so it is unique within its thread only: two people, or two
    # conversations, may pick the same one. A message the application writes
    # is known by its primary key (see save()).
    client_id = models.UUIDField(editable=False)
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
    # As on Thread: the /ai/ client's own string id when it is not a UUID.
    external_id = models.CharField(max_length=200, blank=True, default="")
    # As on Thread: the message as the /ai/ client sent it (its `content`
    # stored once, in `content`, and null here); empty when the last write of
    # this message came from elsewhere.
    client_json = models.TextField(blank=True, default="")
    # Versions (regenerate, edit and resend): a replaced message stays, marked
    # here, shown as a previous version and never sent to the model again.
    superseded_at = models.DateTimeField(null=True, blank=True)
    # On an edited user message: the API id (client_id) of the message it replaces.
    replaces = models.UUIDField(null=True, blank=True)
    # On a reply written after third-party content was read: where that content
    # came from ("mail from x@y", "file z.pdf"), shown under the reply (issue 33.4).
    after_reading = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["thread", "seq"], name="message_seq_unique_in_thread"),
            models.UniqueConstraint(fields=["thread", "client_id"], name="message_client_id_unique_in_thread"),
        ]

    def __str__(self):
        return f"{self.role} #{self.seq}"

    def save(self, *args, **kwargs):
        # Messages the application appends (chat, the turn loop) have no
        # client: their API id is their primary key, so a turn's message ids
        # (progress events, GET /api/turns/{id}) need no second lookup.
        if self.client_id is None:
            self.client_id = self.id
        super().save(*args, **kwargs)


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


class Summary(models.Model):
    """What the model is sent instead of a conversation's older messages once
    they no longer fit its window (assistant/summaries.py): written by the
    model in a turn's step of its own, extended (never remade) when the
    window fills again. The messages themselves stay, whole: the API, the
    export and /ai/ show them as they were; only what the model is sent
    changes. The newest summary of a thread is the one in use."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="summaries")
    # The messages it stands for: every one with a seq below this.
    through_seq = models.PositiveIntegerField()
    content = models.TextField()
    # The trifecta marks of what it summarizes (a summary of an inbox message
    # is still third-party content; of a note, still private data).
    read_private = models.BooleanField(default=False)
    read_untrusted = models.BooleanField(default=False)
    # The turn whose step wrote it (billed to that turn), by id as Message.turn_id.
    turn_id = models.UUIDField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["thread_id", "through_seq"]
        indexes = [models.Index(fields=["thread", "-through_seq"], name="summary_thread_newest")]

    def __str__(self):
        return f"summary of {self.thread_id} through #{self.through_seq}"


class MessageFeedback(models.Model):
    """The person's 👍/👎 on one reply of their own conversation, with an
    optional word. One per message: giving it again updates it."""

    class Rating(models.TextChoices):
        UP = "up", "👍"
        DOWN = "down", "👎"

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="feedback")
    rating = models.CharField(max_length=4, choices=Rating.choices)
    comment = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["-updated_at"], name="feedback_recent")]

    def __str__(self):
        return f"{self.get_rating_display()} on {self.message_id}"
class Attachment(models.Model):
    """A file the person attached to a message (uploaded first, unattached
    until a message claims it). Kept in the database, not under MEDIA: every
    web process and worker on any machine reads it without a shared volume,
    and it goes in the same transaction as its message (a purge, an erasure
    or a deleted conversation leaves no orphan file behind)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, null=True, blank=True,
                                related_name="attachments")
    # The name as the person's computer had it: shown, never used to judge the type.
    name = models.CharField(max_length=255)
    # Judged from the content (conversations/sniff.py).
    media_type = models.CharField(max_length=50)
    size = models.PositiveIntegerField()
    data = models.BinaryField()
    # What a model that can't read the file itself is sent: a text file's text,
    # or the text extracted from a PDF. Empty for an image.
    text = models.TextField(blank=True, default="")
    pages = models.PositiveIntegerField(default=0)
    # What the file weighs in the history bound and the credit hold (conversations/files.py).
    model_bytes = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()

    class State(models.TextChoices):
        READY = "ready"
        READING = "reading"  # a PDF whose text a worker is reading (conversations/pdf_reading.py)
        REFUSED = "refused"  # ... and could not: `refusal` says why; no message takes it

    state = models.CharField(max_length=10, choices=State.choices, default=State.READY)
    refusal = models.CharField(max_length=30, blank=True, default="")
    # Its place among its message's files, in the order the person attached them.
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["created_at"], name="attachment_created")]

    def __str__(self):
        return self.name

    def content(self) -> bytes:
        """The file's bytes. A text file is stored once, as its text (a
        byte-order mark dropped); older rows may still keep the bytes too."""
        return bytes(self.data) if self.data else self.text.encode()
