import uuid

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.contrib.sessions.base_session import AbstractBaseSession
from django.core.validators import MinValueValidator
from django.db import models
from knox.models import AbstractAuthToken


class Organization(models.Model):
    class MemberModels(models.TextChoices):
        """Which model options a member may give a conversation (the API's
        `model`, the chat's model menu); the worker checks it again at every turn."""

        ORGANIZATION = "organization", "The organization's model only"
        LOCATION = "location", "Any model processed where the organization's is"
        ANY = "any", "Any model this deployment allows"

    class UntrustedWrites(models.TextChoices):
        """What a write tool does after the conversation read third-party content
        (assistant.trifecta.route_call), on every door."""

        CONFIRM = "confirm", "Held for the person to confirm"
        RUN = "run", "Made at once"

    class HistoryMode(models.TextChoices):
        """What the model is sent of a long conversation once it no longer fits
        the model's window (assistant/history_fit.py), on every door."""

        SUMMARIZE = "summarize", "Older messages summarized"
        WINDOW = "window", "The most recent messages only"
        # The hgdc seed's: a conversation is full at ASSISTANT_HISTORY_BYTES or the
        # model's window; a continuous one (Telegram) is never full, it uses the window.
        FULL = "full", "Everything, until the conversation is full"
        # The chlova seed's: the last HISTORY_WINDOW (20) messages before the turn, then the turn; nothing older.
        LAST = "last", "The last messages only (HISTORY_WINDOW)"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=60, unique=True)
    # Credits granted at the opening of every calendar month (1 credit = USD 0.01).
    monthly_credits = models.PositiveIntegerField(default=1000, validators=[MinValueValidator(0)])
    # The organization's model option (an id of providers/catalog.py's catalog);
    # empty: the deployment's ASSISTANT_MODEL. Checked against the allowed
    # options and the residency rules at every turn, not only when chosen.
    # db_default: rows written by code that predates the column (an older
    # migration state, a process still running the old release) stay valid.
    model_option = models.CharField(max_length=100, blank=True, default="", db_default="")
    member_models = models.CharField(max_length=20, choices=MemberModels.choices, default=MemberModels.ORGANIZATION,
                                     db_default=MemberModels.ORGANIZATION)
    history_mode = models.CharField(max_length=10, choices=HistoryMode.choices, default=HistoryMode.SUMMARIZE,
                                    db_default=HistoryMode.SUMMARIZE)
    untrusted_writes = models.CharField(max_length=10, choices=UntrustedWrites.choices,
                                        default=UntrustedWrites.CONFIRM, db_default=UntrustedWrites.CONFIRM)
    # The shares (whole percent) of the month's credits whose crossing e-mails
    # the admins (credits/alerts.py), e.g. "50,80,100", chosen by an admin;
    # empty: the deployment's CREDIT_ALERT_PERCENTS (organizations/alert_percents.py).
    credit_alert_percents = models.CharField(max_length=40, blank=True, default="", db_default="")
    # Monthly cap in credits for a member without a cap of their own; null: none.
    default_member_cap_credits = models.PositiveIntegerField(null=True, blank=True)
    # Told to the model in every turn of its members (organizations.instructions).
    instructions = models.TextField(blank=True, default="", db_default="")
    # The product's own key for this tenant (its store, team or account) when a
    # product's guard resolves people (settings.ASSISTANT_MEMBER_RESOLVER):
    # created on the tenant's first use (organizations/tenants.py). Null: one
    # of the engine's own organizations (the demo).
    tenant_key = models.CharField(max_length=200, null=True, blank=True, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Membership(models.Model):
    # Not a person's data for the staff access log (tests/admin/test_staff_access_everywhere.py).
    staff_access_exempt = "The account's administration (role, caps, suspension), which staff manage."

    class Role(models.TextChoices):
        MEMBER = "member", "Member"
        ADMIN = "admin", "Admin"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    # The person's monthly cap in credits in this organization; null: the
    # organization's default (which may be none).
    monthly_cap_credits = models.PositiveIntegerField(null=True, blank=True)
    # A suspended member keeps their data but passes no guard (403 membership_suspended).
    suspended_at = models.DateTimeField(null=True, blank=True)
    suspended_reason = models.CharField(max_length=300, blank=True, default="", db_default="")
    # The person's own instructions in this organization, after the organization's.
    instructions = models.TextField(blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="membership_unique_per_pair"),
        ]
        ordering = ["organization__name"]

    def __str__(self):
        return f"{self.user} in {self.organization} ({self.role})"

    @property
    def is_suspended(self) -> bool:
        return self.suspended_at is not None


class OrganizationChange(models.Model):
    """One change to an organization's settings (model, keys, caps, members):
    who, what, when. Append-only; shown to the organization's admins, in words
    (web/changes.py says each kind as a sentence)."""

    class Kind(models.TextChoices):
        # `detail` of each kind, as the services write it (web/changes.py reads it back):
        MODEL = "model", "The organization's model chosen"  # the option's id, or "the deployment's model"
        PROVIDER_KEY_SAVED = "provider_key_saved", "A provider key saved"  # "<provider> <hint>"
        PROVIDER_KEY_REMOVED = "provider_key_removed", "A provider key removed"  # "<provider>"
        MEMBER_CAP = "member_cap", "A member's monthly cap set"  # "<username>: <n> credits" or "<username>: no cap"
        DEFAULT_CAP = "default_cap", "The default monthly cap set"  # "<n> credits" or "no cap"
        MEMBER_SUSPENDED = "member_suspended", "A member suspended"  # "<username>: <reason>"
        MEMBER_RESTORED = "member_restored", "A member's suspension lifted"  # "<username>"
        INSTRUCTIONS = "instructions", "The organization's instructions changed"  # "<n> characters" or "cleared"
        MEMBER_MODELS = "member_models", "The models members may choose"  # a MemberModels value
        HISTORY_MODE = "history_mode", "What the model is sent of long conversations"  # a HistoryMode value
        UNTRUSTED_WRITES = "untrusted_writes", "Writes after third-party content"  # an UntrustedWrites value
        CREDIT_ALERTS = "credit_alerts", "The credit alerts' thresholds"  # "50,80,100" or "the deployment's"
        CREDITS_GRANTED = "credits_granted", "Credits granted by staff"  # "<n> credits: <reason>"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="changes")
    at = models.DateTimeField(db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Kept when the actor's account is deleted ("" for an operator's command).
    actor_username = models.CharField(max_length=150, blank=True, default="")
    action = models.CharField(max_length=40, choices=Kind.choices)
    # What changed, never a secret (a key appears by its hint only).
    detail = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self):
        return f"{self.action} in {self.organization_id} at {self.at:%Y-%m-%d %H:%M}"


class StaffAccess(models.Model):
    """One staff view of a person's data: the access log (append-only).

    Here, at the bottom of the layout, because every admin page that shows a
    person's data writes to it, and the conversations admin may import only
    this app. Rows are written by `organizations.access_log.staff_access_record`
    and never changed: the admin is read-only and `save()` refuses an update.
    Two writes remove them: the retention job (`STAFF_ACCESS_RETENTION_DAYS`)
    and an erasure, which removes the person from the rows about them (the
    staff member's trace stays, without whose data it was) and, for an erased
    staff member, keeps only their username on the rows of what they opened.
    """
    # Not a person's data for the staff access log (tests/admin/test_staff_access_everywhere.py).
    staff_access_exempt = "The log itself, read by superusers only."

    class Kind(models.TextChoices):
        CONVERSATION = "conversation", "Conversation"
        TURN = "turn", "Turn"
        CARD = "card", "Confirmation card"
        EXPORT = "export", "Personal-data export"
        ERASURE = "erasure", "Start of an erasure"
        NOTE = "note", "Note"
        INBOX_MESSAGE = "inbox_message", "Inbox message"
        SENT_EMAIL = "sent_email", "Sent e-mail"
        FEEDBACK = "feedback", "Feedback on a reply"
        ACCOUNT = "account", "Account"
        LEDGER_ENTRY = "ledger_entry", "Ledger row of a turn"
        USAGE_EXPORT = "usage_export", "Operators' export of usage, turns or ledger"

    at = models.DateTimeField(db_index=True)
    staff = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="staff_accesses_made"
    )
    # Kept when the staff account is deleted, so the trace still says who it was.
    staff_username = models.CharField(max_length=150)
    # Null once the person is erased (or for an object whose person was erased before).
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="staff_accesses"
    )
    organization = models.ForeignKey(Organization, on_delete=models.SET_NULL, null=True, related_name="+")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # The id of what was opened (a conversation, turn or card); empty for an export.
    object_id = models.CharField(max_length=64, blank=True, default="")
    # The admin page it was seen on.
    path = models.CharField(max_length=500)

    class Meta:
        indexes = [models.Index(fields=["person", "organization", "-at"], name="staff_access_person_recent")]
        verbose_name = "staff access"
        verbose_name_plural = "staff accesses"

    def __str__(self):
        return f"{self.staff_username} · {self.kind} {self.object_id} at {self.at:%Y-%m-%d %H:%M}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ValueError("The staff access log is append-only: a row is never changed.")
        super().save(*args, **kwargs)


class PersonSession(AbstractBaseSession):
    """A browser session that knows whose it is (Django's documented way to
    extend the database session store), so an erasure deletes the person's
    sessions with one indexed query instead of decoding every session."""

    # Not a foreign key: a session may outlive its user row by a moment, and
    # the session store must never fail on that.
    user_id = models.BigIntegerField(null=True, db_index=True)

    @classmethod
    def get_session_store_class(cls):
        return SessionStore


class SessionStore(DatabaseSessionStore):
    """The store of the session engine (`organizations.sessions`): Django's
    database sessions, each row marked with its user. It lives beside its model,
    as in Django's documented example, because each names the other."""

    @classmethod
    def get_model_class(cls):
        return PersonSession

    def create_model_instance(self, data):
        session = super().create_model_instance(data)
        session.user_id = user_id_of(data)
        return session

    # Django's async save builds the row on its own (it does not call the sync method).
    async def acreate_model_instance(self, data):
        session = await super().acreate_model_instance(data)
        session.user_id = user_id_of(data)
        return session


def user_id_of(data: dict) -> int | None:
    try:
        return int(data.get(SESSION_KEY))
    except (TypeError, ValueError):  # anonymous, or a user model with non-integer keys
        return None


class ApiToken(AbstractAuthToken):
    """A person's API token (django-rest-knox): only its SHA-512 digest is stored,
    it expires, and it acts in exactly one organization (KNOX_TOKEN_MODEL).

    `public_id` names the token in the UI and its URLs: the digest is the primary
    key and `token_key` is the start of the secret itself, so neither is shown
    whole (its owner's page shows its first PREFIX_SHOWN characters, to tell
    their tokens apart).
    """
    # Not a person's data for the staff access log (tests/admin/test_staff_access_everywhere.py).
    staff_access_exempt = "A token's name and dates, which staff may revoke; never the token."

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=80, blank=True)
    # When a request last authenticated with it, to the minute (organizations/tokens.py).
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Accepted at /mcp only, never by the API (organizations/tokens.py): the
    # MCP client that holds it can't confirm a card, nor start a turn whose
    # card it would confirm.
    mcp_only = models.BooleanField(default=False)

    PREFIX_SHOWN = 8

    class Meta:
        ordering = ["-created"]
        verbose_name, verbose_name_plural = "API token", "API tokens"
        # The expired-token purge reads the expired ones only.
        indexes = [models.Index(fields=["expiry"], name="apitoken_expiry")]

    @property
    def prefix(self) -> str:
        return self.token_key[:self.PREFIX_SHOWN]

    def __str__(self):
        return f"{self.name or 'token'} of {self.user_id} in {self.organization_id}"


class PersonPreferences(models.Model):
    """What a person chose for themselves, whatever the organization: kept on the
    account so it follows them to another browser (applied at login)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences")
    # One of settings.LANGUAGES; empty: the browser's.
    language = models.CharField(max_length=10, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "person preferences"

    def __str__(self):
        return f"Preferences of {self.user}"
