"""An API token for operators and scripts: prints the token and nothing else."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from assistant_engine.foundation.people import by_login
from assistant_engine.organizations.members import NoOrganization, OrganizationNotFound, resolve_member
from assistant_engine.organizations.tokens import MAX_TOKEN_DAYS, MAX_TOKENS_PER_PERSON, TooManyTokens, create_token


class Command(BaseCommand):
    help = "Create an API token of USERNAME acting in one organization; prints only the token (shown once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--organization", required=True, help="slug of the organization the token acts in")
        parser.add_argument("--days", type=int, default=settings.API_TOKEN_DAYS,
                            help=f"lifetime, 1 to {MAX_TOKEN_DAYS} days (default API_TOKEN_DAYS)")
        parser.add_argument("--name", default="", help="a label shown on the tokens page")
        parser.add_argument("--mcp-only", action="store_true",
                            help="accepted at /mcp only, never by the API (for an MCP client)")

    def handle(self, *args, username, organization, days, name, mcp_only, **options):
        user = get_user_model().objects.filter(**by_login(username), is_active=True).first()
        if user is None:
            raise CommandError(f"No active user {username!r}.")
        try:
            member = resolve_member(user, organization)
        except (NoOrganization, OrganizationNotFound):
            raise CommandError(f"{username!r} is not a member of {organization!r}.") from None
        try:
            _, token = create_token(member, days=days, name=name or "created by create_token", mcp_only=mcp_only)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        except TooManyTokens:
            raise CommandError(
                f"{username!r} already holds {MAX_TOKENS_PER_PERSON} tokens in {organization!r}: revoke one first."
            ) from None
        self.stdout.write(token)
