"""The shop's tools for the assistant: one read, one confirm (docs/install.md).

Each acts with the person's rights: the Member names the store (the tenant
key the shop's guard gave) and the person; another store's order is not found.
"""

from typing import Literal

from django.db.models import F
from pydantic import BaseModel, Field

from assistant.kit import Description, Member, Tool, ToolInput, ToolNotFound, Toolset
from orders.models import Order


def orders_of(member: Member):
    """The one door to orders: those of the member's store."""
    return Order.objects.filter(store__key=member.tenant)


class ListOrdersInput(ToolInput):
    status: Literal["open", "shipped", "cancelled"] | None = Field(default=None,
                                                                   description="Only orders with this status.")


class OrderSummary(BaseModel):
    number: int
    customer: str
    total: str
    status: str


class ListOrdersOutput(BaseModel):
    orders: list[OrderSummary]


class CancelOrderInput(ToolInput):
    number: int = Field(ge=1, description="The order's number, as list_orders gives it.")


class CancelOrderOutput(BaseModel):
    number: int
    status: str


def list_orders(member: Member, params: ListOrdersInput) -> dict:
    orders = orders_of(member)
    if params.status:
        orders = orders.filter(status=params.status)
    return {"orders": [{"number": o.number, "customer": o.customer, "total": str(o.total), "status": o.status}
                       for o in orders[:50]]}


def _own_order(member: Member, number: int) -> Order:
    try:
        return orders_of(member).get(number=number)
    except Order.DoesNotExist:
        raise ToolNotFound(f"No order {number}.") from None


def describe_cancel_order(member: Member, params: CancelOrderInput) -> Description:
    order = _own_order(member, params.number)
    return Description(text=f"Cancel order {order.number} of {order.customer} ({order.total})",
                       snapshot={"number": order.number, "status": order.status, "total": str(order.total)})


def perform_cancel_order(member: Member, params: CancelOrderInput) -> dict:
    order = _own_order(member, params.number)
    # Only an open order changes; done twice, the second finds none to change.
    orders_of(member).filter(pk=order.pk, status=Order.Status.OPEN).update(
        status=Order.Status.CANCELLED, changes=F("changes") + 1)
    return {"number": order.number, "status": Order.Status.CANCELLED}


TOOLSET = Toolset(
    name="shop",
    tools=(
        Tool(
            name="list_orders",
            title="List orders",
            description="List the orders of the person's store, newest first: number, customer, total, status.",
            tool_class="read",
            private=True,
            input=ListOrdersInput,
            output=ListOrdersOutput,
            run=list_orders,
        ),
        Tool(
            name="cancel_order",
            title="Cancel an order",
            description="Cancel one open order of the person's store, by its number.",
            tool_class="confirm",
            input=CancelOrderInput,
            output=CancelOrderOutput,
            describe=describe_cancel_order,
            perform=perform_cancel_order,
            shows=frozenset({"private"}),  # its description names the order's customer and total
        ),
    ),
)
