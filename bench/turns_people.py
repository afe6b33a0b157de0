"""bench/turns.py's side-by-side measurement (issue 36.3, `--spread`): N people
of ONE organization posting one turn each at the same moment, against N people
each in their own organization, on the same stack in the same run. What it
shows is whether one organization's submissions queue behind each other (on
its credit account's row): the time until every post is answered (the web
side's) and until every turn ended, one organization ÷ many.

The spreads run interleaved (one, many, one, many…) so the machine's drift
weighs on both alike; each figure is the median of its rounds.
"""

import statistics
import subprocess
import sys
from pathlib import Path

ONE, MANY = "one", "many"
# People are made in bulk without a password (a hash each would take minutes
# at 400 people): they post with their API token only.
SEED = """
import django, sys; django.setup()
from django.contrib.auth import get_user_model
from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Membership, Organization
from assistant_engine.organizations.tokens import create_token
spread, people = sys.argv[1], int(sys.argv[2])
orgs = Organization.objects.bulk_create(
    Organization(slug=f"spread-{spread}-{n}", name=f"Spread {spread} {n}", monthly_credits=10_000_000)
    for n in range(1 if spread == "one" else people))
users = get_user_model().objects.bulk_create(
    get_user_model()(username=f"spread-{spread}-{n}", password="!") for n in range(people))
members = Membership.objects.bulk_create(
    Membership(organization=orgs[n % len(orgs)], user=user, role="member") for n, user in enumerate(users))
for member in members:
    print(create_token(Member(member.organization_id, member.user_id, "member", "bench"), days=1)[1])
"""


def seed_people(env: dict[str, str], root: Path, spread: str, people: int) -> list[str]:
    """`people` persons with a token each: all in one organization (ONE) or each in their own (MANY)."""
    output = subprocess.check_output([sys.executable, "-c", SEED, spread, str(people)], env=env, cwd=root,
                                     text=True)
    tokens = output.strip().splitlines()[-people:]  # after the start-up's log lines
    assert len(tokens) == people, output
    return tokens


def measure_spreads(run_turns, base: str, observer_url: str, tokens: dict[str, list[str]], rounds: int) -> dict:
    """Each spread's people post one turn each, `rounds` times, interleaved.
    `run_turns(base, tokens, observer_url)`: bench/turns.py's (seconds until
    the last turn ended, statuses with `posted_s`, turn ids)."""
    raw: dict[str, dict[str, list[float]]] = {spread: {"posted": [], "ended": []} for spread in tokens}
    for _ in range(rounds):
        for spread, its_tokens in tokens.items():
            ended, statuses, _ = run_turns(base, its_tokens, observer_url)
            assert statuses.get("done", 0) == len(its_tokens), statuses
            raw[spread]["posted"].append(statuses["posted_s"])
            raw[spread]["ended"].append(round(ended, 1))
    return {"people": len(tokens[ONE]), "rounds": rounds, "raw": raw,
            "median": {spread: {figure: statistics.median(values) for figure, values in figures.items()}
                       for spread, figures in raw.items()}}


def spread_table(spreads: dict) -> str:
    """The two spreads' rows and their ratio (one organization ÷ many)."""
    people, median, raw = spreads["people"], spreads["median"], spreads["raw"]

    def cell(spread: str, figure: str) -> str:
        values = ", ".join(f"{value:.1f}" for value in raw[spread][figure])
        return f"{median[spread][figure]:.1f} s ({values})"

    def ratio(figure: str) -> str:
        return f"{median[ONE][figure] / max(median[MANY][figure], 0.05):.2f}"

    return (
        f"\n{people} people posting one turn each at once, median of {spreads['rounds']} interleaved rounds "
        "(each round's figure in brackets):\n\n"
        "| people posting at once | all posts answered (`posted_s`) | all turns ended | target |\n"
        "|---|---|---|---|\n"
        f"| {people} people of one organization | {cell(ONE, 'posted')} | {cell(ONE, 'ended')} | |\n"
        f"| {people} people of {people} organizations | {cell(MANY, 'posted')} | {cell(MANY, 'ended')} | |\n"
        f"| ratio one organization ÷ many | {ratio('posted')} | {ratio('ended')} | posts ≤ 1.5 |\n"
    )
