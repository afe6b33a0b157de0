"""Seal every organization's provider key again under ASSISTANT_KEYS_SECRET.

Run after rotating the secret (the old one in ASSISTANT_KEYS_SECRET_FALLBACKS),
then drop the fallback. Prints counts only, never a key.
"""

from django.core.management.base import BaseCommand, CommandError

from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.sealing import reseal_all


class Command(BaseCommand):
    help = "Seal every provider key again under the current ASSISTANT_KEYS_SECRET."

    def handle(self, *args, **options):
        resealed, unreadable = reseal_all(ProviderKey)
        self.stdout.write(f"{resealed} provider key(s) sealed again.")
        if unreadable:
            raise CommandError(
                f"{len(unreadable)} provider key(s) open under no configured secret (ids {unreadable}): "
                "enter them again in the admin."
            )
