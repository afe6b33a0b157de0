"""The pure money maths: examples for the stated rounding, properties for the invariants."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from credits.money import (
    MICROS_PER_CREDIT,
    Usage,
    credits_from_micros,
    current_month,
    micros_from_credits,
    request_micros,
)


@dataclass(frozen=True)
class Prices:
    input_micros_per_mtok: int = 0
    output_micros_per_mtok: int = 0
    cache_write_micros_per_mtok: int = 0
    cache_read_micros_per_mtok: int = 0


# USD 1 / 5 / 1.25 / 0.10 per million tokens.
HAIKU_LIKE = Prices(1_000_000, 5_000_000, 1_250_000, 100_000)

credits_values = st.integers(min_value=-(10**12), max_value=10**12)
micros_values = st.integers(min_value=-(10**16), max_value=10**16)
token_counts = st.integers(min_value=0, max_value=10**9)
prices = st.builds(Prices, *[st.integers(min_value=0, max_value=10**9)] * 4)
usages = st.builds(Usage, *[token_counts] * 4)


# --- credits <-> micros -------------------------------------------------------


def test_one_credit_is_ten_thousand_micros():
    assert micros_from_credits(1) == 10_000 == MICROS_PER_CREDIT
    assert micros_from_credits(3) == 30_000


@pytest.mark.parametrize(
    ("micros", "credits"),
    [(0, 0), (9_999, 0), (10_000, 1), (19_999, 1), (-1, -1), (-10_000, -1), (-10_001, -2)],
)
def test_credits_from_micros_rounds_down_towards_negative_infinity(micros, credits):
    assert credits_from_micros(micros) == credits


@pytest.mark.parametrize("bad", [1.0, "3", True, None])
def test_money_functions_refuse_non_integers(bad):
    with pytest.raises(TypeError):
        micros_from_credits(bad)
    with pytest.raises(TypeError):
        credits_from_micros(bad)


@given(credits_values)
def test_credits_round_trip_exactly_through_micros(credits):
    assert credits_from_micros(micros_from_credits(credits)) == credits


@given(st.integers(min_value=0, max_value=10**12))
def test_micros_from_non_negative_credits_are_non_negative(credits):
    assert micros_from_credits(credits) >= 0


@given(micros_values)
def test_floored_credits_never_overstate_and_lose_less_than_one_credit(micros):
    credits = credits_from_micros(micros)
    assert micros_from_credits(credits) <= micros < micros_from_credits(credits + 1)


@given(micros_values, micros_values)
def test_credits_from_micros_is_monotonic(a, b):
    low, high = sorted((a, b))
    assert credits_from_micros(low) <= credits_from_micros(high)


@given(credits_values, credits_values)
def test_micros_from_credits_is_strictly_monotonic(a, b):
    if a < b:
        assert micros_from_credits(a) < micros_from_credits(b)


# --- request_micros ------------------------------------------------------------


def test_request_cost_from_each_kind_of_token():
    usage = Usage(input_tokens=1_000, output_tokens=500, cache_write_tokens=2_000, cache_read_tokens=10_000)
    # 1000×1 + 500×5 + 2000×1.25 + 10000×0.10 USD per million = 1000 + 2500 + 2500 + 1000 micros
    assert request_micros(HAIKU_LIKE, usage) == 7_000


def test_request_cost_rounds_the_total_up_to_the_next_micro():
    # One cached token at USD 0.10 per million costs 0.1 micro: charged 1.
    assert request_micros(HAIKU_LIKE, Usage(cache_read_tokens=1)) == 1
    # Ten of them cost exactly 1 micro; rounding is on the total, not per kind.
    assert request_micros(HAIKU_LIKE, Usage(cache_read_tokens=10)) == 1
    assert request_micros(HAIKU_LIKE, Usage(cache_read_tokens=5, input_tokens=0)) == 1
    assert request_micros(Prices(cache_read_micros_per_mtok=100_000), Usage(cache_read_tokens=11)) == 2


def test_request_cost_refuses_negative_tokens_or_prices():
    with pytest.raises(ValueError, match="tokens"):
        request_micros(HAIKU_LIKE, Usage(output_tokens=-1))
    with pytest.raises(ValueError, match="price"):
        request_micros(Prices(input_micros_per_mtok=-1), Usage(input_tokens=1))


def test_request_cost_accepts_any_object_with_the_attributes():
    class Option:
        input_micros_per_mtok = 3_000_000
        output_micros_per_mtok = 15_000_000
        cache_write_micros_per_mtok = 3_750_000
        cache_read_micros_per_mtok = 300_000

    class TurnUsage:
        input_tokens = 1_000_000
        output_tokens = 0
        cache_write_tokens = 0
        cache_read_tokens = 0

    assert request_micros(Option(), TurnUsage()) == 3_000_000


def _exact_scaled_total(option: Prices, usage: Usage) -> int:
    return (
        usage.input_tokens * option.input_micros_per_mtok
        + usage.output_tokens * option.output_micros_per_mtok
        + usage.cache_write_tokens * option.cache_write_micros_per_mtok
        + usage.cache_read_tokens * option.cache_read_micros_per_mtok
    )


@given(prices, usages)
def test_request_cost_is_the_exact_cost_rounded_up_by_less_than_one_micro(option, usage):
    scaled = _exact_scaled_total(option, usage)
    cost = request_micros(option, usage)
    assert cost >= 0
    assert (cost - 1) * 1_000_000 < scaled <= cost * 1_000_000


@given(prices, usages)
def test_request_cost_is_exact_when_the_total_is_whole_micros(option, usage):
    scaled = _exact_scaled_total(option, usage)
    if scaled % 1_000_000 == 0:
        assert request_micros(option, usage) == scaled // 1_000_000


@given(prices, usages, st.sampled_from(list(Usage.__dataclass_fields__)), token_counts)
def test_request_cost_never_falls_when_tokens_grow(option, usage, field, extra):
    more = Usage(**{**usage.__dict__, field: getattr(usage, field) + extra})
    assert request_micros(option, more) >= request_micros(option, usage)


@given(prices, usages, st.sampled_from(list(Prices.__dataclass_fields__)), st.integers(0, 10**9))
def test_request_cost_never_falls_when_a_price_grows(option, usage, field, extra):
    dearer = Prices(**{**option.__dict__, field: getattr(option, field) + extra})
    assert request_micros(dearer, usage) >= request_micros(option, usage)


@given(prices)
def test_no_tokens_cost_nothing(option):
    assert request_micros(option, Usage()) == 0


# --- current_month --------------------------------------------------------------


def test_current_month_is_the_utc_month():
    assert current_month(datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)) == "2026-01"
    assert current_month(datetime(2026, 2, 1, 0, 0, tzinfo=UTC)) == "2026-02"
    # 00:30 on 1 February in Zurich (UTC+1) is still January in UTC.
    assert current_month(datetime(2026, 2, 1, 0, 30, tzinfo=timezone(timedelta(hours=1)))) == "2026-01"
    # 23:30 on 31 December in New York (UTC-5) is already January in UTC.
    assert current_month(datetime(2025, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-5)))) == "2026-01"


def test_current_month_refuses_a_naive_datetime():
    with pytest.raises(ValueError, match="aware"):
        current_month(datetime(2026, 1, 1))  # noqa: DTZ001


# Hypothesis takes naive bounds and attaches the drawn time zone itself.
NAIVE_BOUNDS = {"min_value": datetime(1971, 1, 1), "max_value": datetime(9998, 12, 1)}  # noqa: DTZ001


@given(st.datetimes(**NAIVE_BOUNDS, timezones=st.timezones()))
def test_current_month_of_any_aware_datetime_is_its_utc_year_and_month(moment):
    utc = moment.astimezone(UTC)
    month = current_month(moment)
    assert month == f"{utc.year:04d}-{utc.month:02d}"
    assert len(month) == 7 and month[4] == "-"
