from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from assistant_engine.organizations.models import Membership, Organization
from assistant_engine.organizations.services import member_add


class Command(BaseCommand):
    help = "Add a user to an organization (optionally creating the user)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("username")
        parser.add_argument("--role", choices=Membership.Role.values, default=Membership.Role.MEMBER)
        parser.add_argument("--create-user", action="store_true")
        parser.add_argument("--password")

    def handle(self, *args, slug, username, role, create_user, password, **options):
        organization = Organization.objects.filter(slug=slug).first()
        if organization is None:
            raise CommandError(f"No organization with slug {slug!r}.")
        if create_user and not password:
            raise CommandError("--create-user needs --password.")
        try:
            membership = member_add(
                organization=organization, username=username, role=role,
                create_user=create_user, password=password,
            )
        except get_user_model().DoesNotExist as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{membership.user.get_username()} is {membership.role} of {organization.slug}.")
