"""Money maths of the credits, pure: no Django, no I/O, integers only.

All money is integer micro-dollars (1 USD = 1,000,000 micros); one credit is
USD 0.01 = 10,000 micros. Floats never appear, so no amount is ever off by a
rounding error that then accumulates in a ledger.

Rounding rules (the only two places where a division happens):

- ``request_micros`` rounds the *total* cost of a request **up** to the next
  micro-dollar: ``ceil(sum(tokens × price_per_mtok) / 1_000_000)``. The
  organization is never charged less than the provider bills, and at most one
  micro-dollar more per request.
- ``credits_from_micros`` rounds **down** (floor, towards negative infinity):
  a displayed balance never overstates what is left, and an overdrawn balance
  (a cost above the reservation) shows as negative, never as zero.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_CEILING, Decimal
from typing import Protocol

MICROS_PER_CREDIT = 10_000
TOKENS_PER_PRICE_UNIT = 1_000_000  # prices are quoted per million tokens


class ModelPrices(Protocol):
    """What the price maths needs of a model option (USD micros per million tokens)."""

    input_micros_per_mtok: int
    output_micros_per_mtok: int
    cache_write_micros_per_mtok: int
    cache_read_micros_per_mtok: int


class TokenUsage(Protocol):
    """What the price maths needs of a request's usage."""

    input_tokens: int
    output_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int


@dataclass(frozen=True)
class Usage:
    """A plain TokenUsage, for callers (and tests) that have none of their own."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0


def micros_from_credits(credits: int) -> int:
    """Exact: one credit is 10,000 micros."""
    return _require_int(credits, "credits") * MICROS_PER_CREDIT


def credits_from_micros(micros: int) -> int:
    """Whole credits in `micros`, rounded down (floor): see the module docstring."""
    return _require_int(micros, "micros") // MICROS_PER_CREDIT


def request_micros(model_option: ModelPrices, usage: TokenUsage) -> int:
    """The cost of one model request in micros, rounded up once on the total."""
    pairs = (
        (usage.input_tokens, model_option.input_micros_per_mtok),
        (usage.output_tokens, model_option.output_micros_per_mtok),
        (usage.cache_write_tokens, model_option.cache_write_micros_per_mtok),
        (usage.cache_read_tokens, model_option.cache_read_micros_per_mtok),
    )
    scaled_total = sum(
        _non_negative(tokens, "tokens") * _non_negative(price, "price") for tokens, price in pairs
    )
    return _ceil_div(scaled_total, TOKENS_PER_PRICE_UNIT)


def current_month(now: datetime) -> str:
    """The calendar month of `now` in UTC, as ``YYYY-MM``.

    A naive datetime is refused: its month would depend on the server's zone.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("current_month needs an aware datetime")
    return now.astimezone(UTC).strftime("%Y-%m")


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def _require_int(value: int, name: str) -> int:
    # bool is an int subclass; True credits is a bug, not one credit.
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return value


def _non_negative(value: int, name: str) -> int:
    if _require_int(value, name) < 0:
        raise ValueError(f"{name} must not be negative, got {value}")
    return value


def call_bound_micros(model_option: ModelPrices, *, input_tokens: int, output_tokens: int) -> int:
    """An upper bound of one model call's cost: every input token priced at the
    dearer of the input and cache-write prices (a provider may write any of
    them to its cache), every possible output token at the output price.
    Cache reads are cheaper than both, so they never raise the bound."""
    input_price = max(model_option.input_micros_per_mtok, model_option.cache_write_micros_per_mtok)
    scaled = _non_negative(input_tokens, "tokens") * input_price + _non_negative(
        output_tokens, "tokens"
    ) * model_option.output_micros_per_mtok
    return _ceil_div(scaled, TOKENS_PER_PRICE_UNIT)


def charged_micros(cost_micros: int, rate: Decimal) -> int:
    """What a cost is charged in credits at `rate` (0..1: the share charged when
    the organization's own key paid the provider), rounded up to the micro."""
    if not Decimal(0) <= rate <= Decimal(1):
        raise ValueError(f"rate must be between 0 and 1, got {rate}")
    return int((Decimal(_non_negative(cost_micros, "micros")) * rate).to_integral_value(rounding=ROUND_CEILING))
