from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from assistant_engine.foundation.people import by_login
from assistant_engine.organizations.members import member_from_membership
from assistant_engine.organizations.models import Membership
from assistant_engine.surfaces.telegram.linking import link_code_create


class Command(BaseCommand):
    help = "Print a one-time code linking a Telegram account to USERNAME in an organization (and nothing else)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--organization", required=True, help="the organization's slug")

    def handle(self, *args, username, organization, **options):
        user = get_user_model().objects.filter(**by_login(username)).first()
        membership = (
            Membership.objects.select_related("organization")
            .filter(user=user, organization__slug=organization).first() if user else None
        )
        if membership is None:
            raise CommandError(f"{username} is not a member of {organization}.")
        self.stdout.write(link_code_create(member_from_membership(membership)).code)
