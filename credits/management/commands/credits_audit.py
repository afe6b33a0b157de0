from django.core.management.base import BaseCommand, CommandError

from credits.days import days_rebuild
from credits.ledger import usage_rebuild
from credits.selectors import USAGE_FIELDS, credits_audit_mismatches


class Command(BaseCommand):
    help = (
        "Re-derive every credit account's totals from its ledger; "
        "exit non-zero and name each account and field that differs."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--rebuild-totals", action="store_true",
            help="first rebuild the people's month totals and the day totals of each account whose totals differ "
                 "from its ledger (the account's own totals and the ledger are never changed)",
        )

    def handle(self, *args, rebuild_totals=False, **options):
        if rebuild_totals:
            found = credits_audit_mismatches()
            drifted = {mismatch.account_id for mismatch in found if mismatch.field.split(" ")[0] in USAGE_FIELDS}
            for account_id in sorted(drifted):
                usage_rebuild(account_id)
            self.stdout.write(f"People's month totals rebuilt for {len(drifted)} account(s).")
            drifted_days = {mismatch.account_id for mismatch in found if mismatch.field.startswith("day ")}
            for account_id in sorted(drifted_days):
                days_rebuild(account_id)
            self.stdout.write(f"Day totals rebuilt for {len(drifted_days)} account(s).")
        mismatches = credits_audit_mismatches()
        for mismatch in mismatches:
            self.stderr.write(str(mismatch))
        if mismatches:
            raise CommandError(f"{len(mismatches)} credit account total(s) differ from their ledger.")
        self.stdout.write("Credit accounts match their ledgers.")
