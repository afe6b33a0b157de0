from django.db import models
from stores.models import Store


class Order(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        SHIPPED = "shipped", "Shipped"
        CANCELLED = "cancelled", "Cancelled"

    store = models.ForeignKey(Store, on_delete=models.CASCADE, related_name="orders")
    number = models.PositiveIntegerField()
    customer = models.CharField(max_length=200)
    total = models.DecimalField(max_digits=10, decimal_places=2)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # How many times the order changed status: a cancellation confirmed twice changes it once.
    changes = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-number"]
        constraints = [models.UniqueConstraint(fields=["store", "number"], name="order_number_per_store")]

    def __str__(self):
        return f"Order {self.number}"
