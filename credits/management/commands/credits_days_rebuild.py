from django.core.management.base import BaseCommand, CommandError

from credits.days import days_rebuild
from credits.models import CreditAccount


class Command(BaseCommand):
    help = (
        "Derive the accounts' day totals (the organization page's spend charts) from their ledgers: the backfill "
        "of the months before the day totals, or a repair. Turns closed before their model and door were recorded "
        "count under neither (\"\")."
    )

    def add_arguments(self, parser):
        parser.add_argument("--month", help="only the accounts of this month (YYYY-MM); all of them by default")

    def handle(self, *args, month=None, **options):
        accounts = CreditAccount.objects.order_by("id")
        if month:
            if len(month) != 7 or month[4] != "-":
                raise CommandError("--month is YYYY-MM")
            accounts = accounts.filter(month=month)
        ids = list(accounts.values_list("id", flat=True))
        rows = sum(days_rebuild(account_id) for account_id in ids)
        self.stdout.write(f"Day totals rebuilt for {len(ids)} account(s): {rows} row(s).")
