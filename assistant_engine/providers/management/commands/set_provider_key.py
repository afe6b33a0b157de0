import sys

from django.core.management.base import BaseCommand, CommandError

from assistant_engine.organizations.models import Organization
from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.org_models import KeyRefused, ProviderNotConfigured, provider_key_save


class Command(BaseCommand):
    help = (
        "Store an organization's own key for a model provider, read from standard input "
        "(never from an argument: arguments show in `ps` and shell histories). The key is "
        "verified with one cheap call to the provider first; a refused key is not stored."
    )

    # Tests pass a stream in place of standard input (call_command(..., stdin=...)).
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("provider", choices=ProviderKey.Provider.values)

    def handle(self, *args, slug, provider, **options):
        organization = Organization.objects.filter(slug=slug).first()
        if organization is None:
            raise CommandError(f"No organization with slug {slug!r}.")
        plaintext = options.get("stdin", sys.stdin).readline().strip()
        if not plaintext:
            raise CommandError("No key on standard input (pipe it: `... | manage.py set_provider_key SLUG PROVIDER`).")
        try:
            key = provider_key_save(None, organization_id=organization.pk, provider=provider, plaintext=plaintext)
        except ProviderNotConfigured:
            raise CommandError(
                f"This server can't call {provider} (see `manage.py assistant_models`); nothing was stored."
            ) from None
        except KeyRefused as refusal:
            raise CommandError(f"The provider refused the key ({refusal.kind}); nothing was stored.") from None
        self.stdout.write(f"{organization.slug} now uses its own {provider} key {key.hint}.")
