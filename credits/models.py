"""Monthly credit accounts per organization, and the ledger that explains them.

Every change to an account is one LedgerEntry carrying signed deltas, so an
account's three totals are the sums of its ledger's deltas (`credits_audit`
checks it). All amounts are integer micro-dollars (see credits/money.py).

Turns belong to the assistant app, which credits must not import: a turn is
referenced by its UUID only.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from assistant_engine.organizations.models import Organization


class Door(models.TextChoices):
    """The door a turn came through (the organization page's spend by door):
    the conversation's own door when another door holds it (a Telegram chat,
    the day's MCP conversation, a conversation an /ai/ client uploaded), else
    where it was asked: the chat page, a host page's panel, or the API with a
    token. "" for turns settled before doors were recorded (and for callers
    that don't say, such as scripts)."""

    BROWSER = "browser", "Browser"
    PANEL = "panel", "Panel"
    API = "api", "API"
    AI_MEMORY = "ai", "/ai/"
    MCP = "mcp", "MCP"
    TELEGRAM = "telegram", "Telegram"


class CreditAccount(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="credit_accounts")
    month = models.CharField(max_length=7, help_text="Calendar month in UTC, YYYY-MM.")
    granted_micros = models.BigIntegerField(
        default=0, help_text="Monthly allowance at opening + staff grants."
    )
    # used + reserved never exceeds granted (the ledger enforces it, the
    # constraint below is the backstop): a model call is made only once its
    # upper bound is reserved.
    used_micros = models.BigIntegerField(default=0)
    reserved_micros = models.BigIntegerField(default=0, help_text="Held by turns that have not ended yet.")
    opened_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-month", "organization__name"]
        constraints = [
            # Opening is race-safe because of this: a second concurrent opener
            # hits IntegrityError and reads the first one's row.
            models.UniqueConstraint(fields=["organization", "month"], name="credit_account_one_per_month"),
            models.CheckConstraint(
                condition=Q(granted_micros__gte=0), name="credit_account_granted_non_negative"
            ),
            models.CheckConstraint(condition=Q(used_micros__gte=0), name="credit_account_used_non_negative"),
            models.CheckConstraint(
                condition=Q(reserved_micros__gte=0), name="credit_account_reserved_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(used_micros__lte=F("granted_micros") - F("reserved_micros")),
                name="credit_account_never_overdrawn",
            ),
        ]
        permissions = [("grant_credits", "Can grant credits to an organization")]

    def __str__(self):
        return f"{self.organization} {self.month}"

    @property
    def remaining_micros(self) -> int:
        return self.granted_micros - self.used_micros - self.reserved_micros


class LedgerEntry(models.Model):
    class Kind(models.TextChoices):
        OPEN = "open", "Month opened"
        GRANT = "grant", "Staff grant"
        RESERVE = "reserve", "Reserved at turn start"
        EXTEND = "extend", "Reserved before a model call"
        SETTLE = "settle", "Settled at turn end"
        RELEASE = "release", "Released (no model call)"
        STUCK = "stuck", "Stuck turn: reservation kept as cost"

    CLOSING_KINDS = (Kind.SETTLE, Kind.STUCK, Kind.RELEASE)
    HOLDING_KINDS = (Kind.RESERVE, Kind.EXTEND)
    TURN_KINDS = (*HOLDING_KINDS, *CLOSING_KINDS)

    # PROTECT: a ledger row is never deleted through its account.
    account = models.ForeignKey(CreditAccount, on_delete=models.PROTECT, related_name="entries")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    turn_id = models.UUIDField(null=True, blank=True, db_index=True)
    granted_delta = models.BigIntegerField(default=0, help_text="Micros added to granted_micros.")
    used_delta = models.BigIntegerField(default=0, help_text="Micros added to used_micros.")
    reserved_delta = models.BigIntegerField(default=0, help_text="Micros added to reserved_micros.")
    # Who caused the movement: a person (the member starting a turn, the staff
    # member granting) or a job (the worker settling, the stuck-turn sweeper).
    # SET_NULL: erasing a person must not erase the organization's accounting.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    job = models.CharField(max_length=60, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    # A turn's rows name its model option and door (as its start reservation was
    # told them), so a close can add to the day's totals (DayUsage) without
    # reading the turn; "" on the other kinds and on rows written before.
    model = models.CharField(max_length=100, blank=True, default="", db_default="")
    door = models.CharField(max_length=10, choices=Door.choices, blank=True, default="", db_default="")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "ledger entries"
        # The admin's date drill-down (its first and last entry, one probe per
        # period): ranges of this index, never a sort of the ledger.
        indexes = [
            models.Index(fields=["created_at"], name="ledger_created"),
            # An account's entries in order (the ledger export, the audit): a
            # range of this index, not a walk of the whole ledger's key.
            models.Index(fields=["account", "id"], name="ledger_account_in_order"),
        ]
        constraints = [
            # Idempotency backstop (the services also check under the turn's
            # lock): a turn is reserved at most once and closed at most once.
            models.UniqueConstraint(
                fields=["turn_id"],
                condition=Q(kind__in=["settle", "stuck", "release"]),
                name="ledger_one_close_per_turn",
            ),
            models.UniqueConstraint(
                fields=["turn_id"], condition=Q(kind="reserve"), name="ledger_one_reserve_per_turn"
            ),
            models.UniqueConstraint(
                fields=["account"], condition=Q(kind="open"), name="ledger_one_open_per_account"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=["open", "grant"]) | Q(turn_id__isnull=False),
                name="ledger_turn_kinds_name_turn",
            ),
        ]

    def __str__(self):
        return f"{self.kind} on {self.account_id}"


class MemberMonthUsage(models.Model):
    """One person's turns in one account (an organization's month): how many
    they started, what those turns used and still hold. The sums of the
    ledger's turn rows by the actor of each turn's start reservation, kept by
    the ledger's one write (credits/ledger.py) in the same transaction (the
    upsert locks the row: one person's starts are serialized on it, for their
    cap), so the organization page, the usage export and the cap
    check read a person's month in one row instead of summing the organization's
    ledger (`credits_audit` checks the sums).

    An erased person's rows keep counting, under no one (user NULL, as the ledger's actor).
    """

    # No index of its own: the unique (account, user) constraint's starts with the account.
    account = models.ForeignKey(CreditAccount, on_delete=models.PROTECT, related_name="usages", db_index=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    turns = models.PositiveIntegerField(default=0)
    used_micros = models.BigIntegerField(default=0)
    reserved_micros = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "user"], name="usage_one_per_person_and_account"),
        ]

    def __str__(self):
        return f"{self.user_id} in {self.account_id}"


class DayUsage(models.Model):
    """What an account's turns used on one day (UTC), per model option and
    door: the organization page's spend charts by day and by door read these
    rows (at most days × models × doors per month, whatever the number of
    people and turns) instead of summing the ledger. Kept by the ledger's one
    write (credits/ledger.py) when a turn closes with a cost (settle, stuck),
    in the same transaction, its row locked by the upsert; `credits_days_rebuild`
    derives them from the ledger (the backfill). A turn closed after its month
    ended counts on that month's last day: the sums of an account's days are
    its used total."""

    # No index of its own: the unique constraint's starts with the account.
    account = models.ForeignKey(CreditAccount, on_delete=models.PROTECT, related_name="days", db_index=False)
    day = models.DateField()
    model = models.CharField(max_length=100, blank=True, default="")
    door = models.CharField(max_length=10, choices=Door.choices, blank=True, default="")
    turns = models.PositiveIntegerField(default=0, help_text="Turns closed with a cost (settled or stuck).")
    used_micros = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "day", "model", "door"], name="day_usage_one_per_grain"),
        ]

    def __str__(self):
        return f"{self.day} {self.model} {self.door} in {self.account_id}"


class CreditAlert(models.Model):
    """That an account's use crossed one alert threshold (a percentage of its
    grant, settings.CREDIT_ALERT_PERCENTS), or a person's of their cap
    (settings.CREDIT_ALERT_CAP_PERCENT): the organization's admins were told
    once. The unique constraints are what make it once per threshold and month
    (and person), however many turns cross it at the same moment (credits/alerts.py)."""

    account = models.ForeignKey(CreditAccount, on_delete=models.CASCADE, related_name="alerts", db_index=False)
    # None: the organization's credits; else this person's cap (None again once they are erased).
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="+")
    percent = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField()
    # How many admins the e-mail went to (0 when none had an address).
    emailed = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            # Two partial constraints, since NULLs are distinct in a unique one (on PostgreSQL and SQLite alike).
            models.UniqueConstraint(fields=["account", "percent"], condition=Q(user__isnull=True),
                                    name="credit_alert_once_per_month"),
            models.UniqueConstraint(fields=["account", "user", "percent"], condition=Q(user__isnull=False),
                                    name="credit_alert_once_per_person_and_month"),
        ]

    def __str__(self):
        whose = f"user {self.user_id}'s cap" if self.user_id else "the grant"
        return f"{self.percent} % of {whose} in account {self.account_id}"
