"""The thresholds of an organization's credit alerts (credits/alerts.py): the
whole percentages of the month's credits whose crossing e-mails its admins.
An admin chooses them on the organization page; none chosen, the deployment's
settings.CREDIT_ALERT_PERCENTS apply."""

import re

from django.conf import settings

MAX_THRESHOLDS = 5
# "50, 80,100" or "50 80 100": whole numbers, by commas or spaces.
SEPARATORS = re.compile(r"[\s,]+")


class InvalidThresholds(ValueError):
    """Not whole percentages from 1 to 100, or too many of them."""


def parse_percents(text: str) -> tuple[int, ...]:
    """What an admin wrote, as sorted distinct percentages; () for nothing
    written (the deployment's then). Raises InvalidThresholds."""
    parts = [part for part in SEPARATORS.split(text.strip()) if part]
    if not all(part.isascii() and part.isdigit() and len(part) <= 3 for part in parts):
        raise InvalidThresholds(text)
    percents = tuple(sorted({int(part) for part in parts}))
    if len(percents) > MAX_THRESHOLDS or any(not 1 <= percent <= 100 for percent in percents):
        raise InvalidThresholds(text)
    return percents


def stored(percents: tuple[int, ...]) -> str:
    """As Organization.credit_alert_percents keeps them ("" for the deployment's)."""
    return ",".join(str(percent) for percent in percents)


def alert_percents(chosen: str) -> tuple[int, ...]:
    """The thresholds that apply: the organization's stored choice, else the deployment's."""
    if chosen:
        try:
            return parse_percents(chosen)
        except InvalidThresholds:
            pass  # written by hand past the service: the deployment's rather than none
    return tuple(settings.CREDIT_ALERT_PERCENTS)
