"""The fingerprint of a proposed action (confirmation cards), in pure functions.

A card stores the SHA-256 of (tool name, input, snapshot of the data the action
touches). At the click the card is described again from current data and the
hash recomputed: any difference means the person would confirm something else
than what they saw, so nothing happens.

No Django import. The serialization must never depend on dict order, Python
version or locale, hence an explicit canonical form.
"""

import datetime
import decimal
import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import Any


def _canonical(value: Any) -> Any:
    """`value` as plain JSON types; refuses anything whose text form would be ambiguous."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {_key(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    if hasattr(value, "model_dump"):  # a pydantic model, e.g. a parsed tool input
        return _canonical(value.model_dump(mode="json"))
    raise TypeError(f"Cannot fingerprint a value of type {type(value).__name__}.")


def _key(key: Any) -> str:
    # Converting 1 to "1" would let {1: a} and {"1": b} collide: refuse instead.
    if not isinstance(key, str):
        raise TypeError(f"Mapping keys must be strings to be fingerprinted, got {type(key).__name__}.")
    return key


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, non-ASCII kept as is; NaN and infinities refused."""
    return json.dumps(
        _canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def snapshot_hash(tool_name: str, tool_input: Any, snapshot: Any) -> str:
    """SHA-256 (hex) of the canonical serialization of the three together."""
    payload = canonical_json({"tool": tool_name, "input": tool_input, "snapshot": snapshot})
    # surrogatepass: a lone surrogate from a model's input still hashes, stably.
    return hashlib.sha256(payload.encode("utf-8", errors="surrogatepass")).hexdigest()
