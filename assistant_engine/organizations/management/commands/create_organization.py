from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from assistant_engine.organizations.services import organization_create


class Command(BaseCommand):
    help = "Create an organization with its monthly credit allowance."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", required=True)
        parser.add_argument("--monthly-credits", type=int, required=True)

    def handle(self, *args, slug, name, monthly_credits, **options):
        if monthly_credits < 0:
            raise CommandError("--monthly-credits must be zero or more.")
        try:
            organization = organization_create(slug=slug, name=name, monthly_credits=monthly_credits)
        except IntegrityError:
            raise CommandError(f"An organization with slug {slug!r} already exists.") from None
        self.stdout.write(f"Created organization {organization.slug} ({organization.monthly_credits} credits/month).")
