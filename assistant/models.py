import uuid

from django.conf import settings
from django.db import models

from assistant_engine.organizations.models import Organization
from conversations.models import Message, Thread


class Turn(models.Model):
    """One run of the assistant in answer to one user message.

    The database, not the broker, is the truth about turns: a sweeper finds
    turns that no worker took or finished.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        # Stopped by its person (POST /api/turns/{id}/cancel): queued, or at the loop's next safe point.
        CANCELLED = "cancelled", "Cancelled"

    class FailureKind(models.TextChoices):
        API = "api", "Model provider error"
        TIMEOUT = "timeout", "Timed out"
        BOUNDS = "bounds", "Hit a bound"
        TOOL = "tool", "Tool failure"
        CREDITS = "credits", "Credits"
        QUEUE = "queue", "Never picked up"
        SUSPENDED = "suspended", "Membership suspended"
        # The conversation's model is no longer among those the organization allows.
        MODEL = "model", "Model not allowed"
        INTERNAL = "internal", "Internal error"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(Thread, on_delete=models.SET_NULL, null=True, related_name="turns")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="turns")
    # Kept (with the person removed) after an erasure: accounting needs the costs.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="turns")
    user_message = models.ForeignKey(Message, on_delete=models.SET_NULL, null=True, related_name="+")
    model_option = models.CharField(max_length=100)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    failure_kind = models.CharField(max_length=10, choices=FailureKind.choices, blank=True, default="")
    steps = models.PositiveIntegerField(default=0)
    tool_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    cache_write_tokens = models.PositiveBigIntegerField(default=0)
    cache_read_tokens = models.PositiveBigIntegerField(default=0)
    # The month (UTC, YYYY-MM) whose credit account holds the reservation.
    credit_month = models.CharField(max_length=7, blank=True, default="")
    reserved_micros = models.BigIntegerField(default=0)
    # Which key paid the model: "deployment", or the hint of the organization's
    # own key ("" until the worker chose). Credits are charged at
    # CREDITS_OWN_KEY_RATE of the cost on an organization's own key.
    key_source = models.CharField(max_length=16, blank=True, default="", db_default="")
    cost_micros = models.BigIntegerField(default=0)
    # Trifecta guard state: has this turn read private data / untrusted content?
    read_private = models.BooleanField(default=False)
    read_untrusted = models.BooleanField(default=False)
    enqueue_attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the queued-turn sweeper published it again (it does so once).
    requeued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Set by the person's Stop on a running turn; the loop reads it at its safe points.
    cancel_requested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "created_at"], name="turn_status_created"),
            models.Index(fields=["status", "started_at"], name="turn_status_started"),
            # The admin's changelist (newest first) and the turns export of a period,
            # for everyone or one organization: a range of the index, not a scan of all turns.
            models.Index(fields=["created_at"], name="turn_created"),
            models.Index(fields=["organization", "created_at"], name="turn_org_created"),
        ]

    def __str__(self):
        return f"turn {self.id} ({self.status})"


# A turn in one of these never changes again.
ENDED_STATUSES = (Turn.Status.DONE, Turn.Status.FAILED, Turn.Status.CANCELLED)


class ActionCard(models.Model):
    """A confirm/send action proposed by the model, waiting for the person's click.

    `snapshot_hash` fingerprints the tool, its input and the current state of
    what the action touches: a click performs the action only if a fresh
    description still has the same fingerprint.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        CONFIRMED = "confirmed", "Confirmed"
        CANCELLED = "cancelled", "Cancelled"
        EXPIRED = "expired", "Expired"
        FAILED = "failed", "Failed"
        # Confirmed, but the action was cut short (its process died) before
        # its outcome was recorded: it may or may not have happened.
        OUTCOME_UNKNOWN = "outcome_unknown", "Outcome unknown"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="action_cards")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="action_cards")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="action_cards")
    turn = models.ForeignKey(Turn, on_delete=models.SET_NULL, null=True, related_name="action_cards")
    tool_call = models.ForeignKey(
        "conversations.ToolCall", on_delete=models.SET_NULL, null=True, related_name="action_cards"
    )
    tool_name = models.CharField(max_length=200)
    tool_input = models.JSONField(default=dict)
    description = models.TextField()
    snapshot_hash = models.CharField(max_length=64)
    trifecta_warning = models.BooleanField(default=False)
    # Proposed in a context that held third-party content: a write held for the person's check
    # (Route.PROPOSE_WRITE), or a delete or a send then; its card says so.
    after_untrusted = models.BooleanField(default=False, db_default=False)
    # ... and where that content came from, as the card names it ("mail from x@y", "file z.pdf").
    sources = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True, default="")
    # Set once the decision has been delivered to the model as an application event.
    event_delivered_at = models.DateTimeField(null=True, blank=True)
    # When a card of the same conversation with the same fingerprint was
    # confirmed (its effect done, or maybe done): this one would do it twice,
    # so it says so and needs an explicit second confirmation.
    identical_done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "expires_at"], name="card_status_expiry"),
            models.Index(fields=["thread", "event_delivered_at"], name="card_thread_events"),
            models.Index(fields=["created_at"], name="card_created"),  # the admin's list, newest first
            # The interrupted-card sweep (cards_mark_interrupted) reads only the
            # confirmed cards without an outcome: a handful, whatever the table's size.
            models.Index(fields=["decided_at"], name="card_confirmed_no_outcome",
                         condition=models.Q(status="confirmed", result__isnull=True)),
        ]

    def __str__(self):
        return f"{self.tool_name} card ({self.status})"


class Erasure(models.Model):
    """The erasure of one person, run in batches until done.

    Kept in the assistant app, which runs the jobs (organizations stays free
    of them). Once the person's row is deleted, `user` is null and only the
    number `subject_id` remains, so staff can follow the erasure without the
    person being identifiable.
    """
    # Not a person's data for the staff access log (tests/admin/test_staff_access_everywhere.py).
    staff_access_exempt = "The erasure's progress; its start is recorded (Kind.ERASURE)."

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    subject_id = models.BigIntegerField(help_text="The erased user's id (nothing else about them is kept).")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    batches = models.PositiveIntegerField(default=0)
    # Rows deleted so far, by eraser name.
    counts = models.JSONField(default=dict, blank=True)
    blocked_by = models.CharField(max_length=60, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject_id"], condition=models.Q(status="running"), name="erasure_one_running_per_person"
            ),
        ]
        indexes = [models.Index(fields=["status", "updated_at"], name="erasure_status_updated")]
        # Viewing users (auth.view_user) is not enough to download everything a person has.
        permissions = [("export_personal_data", "Can download a person's personal data export")]

    def __str__(self):
        return f"erasure of user #{self.subject_id} ({self.status})"


class WorkerBeat(models.Model):
    """A running Celery worker's heartbeat (assistant.service): written every
    WORKER_BEAT_SECONDS by each worker process, deleted when it stops cleanly."""

    name = models.CharField(max_length=255, primary_key=True)  # Celery's hostname and the process id
    beat_at = models.DateTimeField()
    started_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["beat_at"], name="workerbeat_beat_at")]

    def __str__(self) -> str:
        return self.name
