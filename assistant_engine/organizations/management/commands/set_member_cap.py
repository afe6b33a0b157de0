from django.core.management.base import BaseCommand, CommandError

from assistant_engine.foundation.people import by_login
from assistant_engine.organizations.models import Membership
from assistant_engine.organizations.services import member_cap_set


def cap_credits(raw: str) -> int | None:
    """`none` lifts the cap; otherwise whole credits, zero or more."""
    if raw.strip().lower() == "none":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise CommandError(f"CREDITS must be a whole number of credits or 'none', got {raw!r}.") from None
    if value < 0:
        raise CommandError("CREDITS must be zero or more.")
    return value


class Command(BaseCommand):
    help = "Set a member's monthly cap in credits in an organization ('none' lifts it)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("username")
        parser.add_argument("credits", help="whole credits, or 'none'")

    def handle(self, *args, slug, username, credits, **options):
        cap = cap_credits(credits)
        membership = (
            Membership.objects.select_related("user")
            .filter(organization__slug=slug, **by_login(username, "user__"))
            .first()
        )
        if membership is None:
            raise CommandError(f"{username!r} is not a member of an organization {slug!r}.")
        member_cap_set(membership=membership, credits=cap, actor_id=None)
        shown = "no cap" if cap is None else f"a cap of {cap} credits a month"
        self.stdout.write(f"{username} has {shown} in {slug}.")
