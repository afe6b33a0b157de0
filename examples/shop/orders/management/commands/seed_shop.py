"""Two stores, their people and orders: what the example's test and a first look need."""

from accounts.models import User
from django.core.management.base import BaseCommand
from stores.models import Store, StoreMember

from orders.models import Order

PEOPLE = [("ada@corner.example", "Ada Owner", "corner", "owner"),
          ("carl@corner.example", "Carl Clerk", "corner", "clerk"),
          ("olga@harbour.example", "Olga Other", "harbour", "owner")]
ORDERS = [("corner", 1041, "Mme Dubois", "42.00"), ("corner", 1042, "M. Keller", "18.50"),
          ("harbour", 7, "Ms Brown", "99.90")]


class Command(BaseCommand):
    help = "Create the example's two stores, three people (password: shop-pass) and orders."

    def handle(self, *args, **options):
        stores = {key: Store.objects.get_or_create(key=key, defaults={"name": f"{key.title()} Store"})[0]
                  for key in ("corner", "harbour")}
        for email, name, store, role in PEOPLE:
            user = User.objects.filter(email=email).first() or User.objects.create_user(
                email, "shop-pass", full_name=name)
            StoreMember.objects.get_or_create(store=stores[store], user=user, defaults={"role": role})
        for store, number, customer, total in ORDERS:
            Order.objects.get_or_create(store=stores[store], number=number,
                                        defaults={"customer": customer, "total": total})
        self.stdout.write("seeded")
