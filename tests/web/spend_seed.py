"""A month of turns for the spend section's tests: every day of this month so
far, each person's turns on two models and through every door, each at its
own cost; and turns in the two months before."""

import uuid
from datetime import UTC, datetime, timedelta

from django.utils import timezone

from credits.models import Door
from credits.services import credits_reserve, credits_settle

MODELS = ("offline", "bedrock-claude-haiku-4-5")
DOORS = tuple(Door.values)


def turn_at(member, at: datetime, *, model: str, door: str, cost: int) -> None:
    turn_id = uuid.uuid4()
    credits_reserve(member, turn_id=turn_id, now=at, model=model, door=door)
    credits_settle(turn_id=turn_id, cost_micros=cost, now=at)


def seed_month(people, *, now: datetime | None = None) -> None:
    now = now or timezone.now()
    start = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    for day in range(now.astimezone(UTC).day):
        at = min(start + timedelta(days=day, minutes=1), now)
        for index, person in enumerate(people):
            turn_at(person.member, at, model=MODELS[(day + index) % 2], door=DOORS[(day + index) % len(DOORS)],
                    cost=10_000 * (day % 4 + 1) + 1_337 * index)
    earlier = start
    for months_back in (1, 2):
        earlier = (earlier - timedelta(days=1)).replace(day=1)
        turn_at(people[0].member, earlier + timedelta(hours=3), model=MODELS[0], door=Door.API,
                cost=250_000 * months_back)
