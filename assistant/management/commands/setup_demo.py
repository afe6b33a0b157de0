"""`make run`: create, once, a demo organization with a demo login and a staff login."""

import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from assistant_engine.organizations.models import Membership, Organization
from assistant_engine.providers.catalog import selected_option

DEMO_ORGANIZATION = "demo"
# A proper name, as an organization's is, read alike in every language of the
# product (issue 34.6: an English phrase in the header of German pages).
DEMO_ORGANIZATION_NAME = "Demo"
EARLIER_DEMO_NAME = "Demo organization"  # what earlier versions called it: renamed once
DEMO_USER, DEMO_PASSWORD = "demo", "demo-password"  # noqa: S105 - a local demo login, printed on purpose
STAFF_USER, STAFF_PASSWORD = "admin", "admin-password"  # noqa: S105


class Command(BaseCommand):
    help = "Create the demo organization, a demo person and a staff login (idempotent)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            # It creates a staff login with a published password: never on a real deployment.
            raise CommandError("setup_demo runs only with DEBUG on (it creates admin / admin-password).")
        with transaction.atomic():
            organization, created = Organization.objects.get_or_create(
                slug=DEMO_ORGANIZATION, defaults={"name": DEMO_ORGANIZATION_NAME, "monthly_credits": 1000}
            )
            Organization.objects.filter(pk=organization.pk, name=EARLIER_DEMO_NAME).update(name=DEMO_ORGANIZATION_NAME)
            person = self._user(DEMO_USER, DEMO_PASSWORD, staff=False)
            staff = self._user(STAFF_USER, STAFF_PASSWORD, staff=True)
            Membership.objects.get_or_create(organization=organization, user=person)
            Membership.objects.get_or_create(organization=organization, user=staff,
                                             defaults={"role": Membership.Role.ADMIN})
        if created:  # once: a note the person deleted stays deleted when `make run` starts again
            call_command("seed_demo_workspace", DEMO_ORGANIZATION, DEMO_USER, verbosity=0)
        option = selected_option()
        site = f"http://127.0.0.1:{os.environ.get('PORT', '8000')}"  # scripts/run.sh serves on PORT
        self.stdout.write(
            # The product first: its pages with the assistant panel; the chat page stays at /.
            f"\n  The demo product (notes, inbox, sent mail, with the assistant panel): {site}/notes/\n"
            f"  The assistant's own chat page: {site}/\n"
            f"  Log in as {DEMO_USER} / {DEMO_PASSWORD}\n"
            f"  {STAFF_USER} / {STAFF_PASSWORD}: the demo organization's administrator ({site}/organization/)"
            f" and staff ({site}/admin/)\n"
            f"  Model: {option.label}"
            + ("" if option.label == option.processing_label else f" ({option.processing_label})")
            + "\n"
        )

    @staticmethod
    def _user(username: str, password: str, *, staff: bool):
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User.objects.create_user(username=username, password=password, is_staff=staff, is_superuser=staff)
        return user
