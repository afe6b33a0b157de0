from django.core.management.base import BaseCommand, CommandError

from credits.selectors import credits_audit_mismatches


class Command(BaseCommand):
    help = (
        "Re-derive every credit account's totals from its ledger; "
        "exit non-zero and name each account and field that differs."
    )

    def handle(self, *args, **options):
        mismatches = credits_audit_mismatches()
        for mismatch in mismatches:
            self.stderr.write(str(mismatch))
        if mismatches:
            raise CommandError(f"{len(mismatches)} credit account total(s) differ from their ledger.")
        self.stdout.write("Credit accounts match their ledgers.")
