import re
from uuid import UUID

from rest_framework import serializers

# The canonical text form only (RFC 9562, any case): what `format: uuid` means.
# uuid.UUID() alone also takes braces, "urn:uuid:" and bare hex, and DRF's
# UUIDField takes JSON numbers (5 became UUID(int=5)).
_UUID_TEXT = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def parse_uuid(raw) -> UUID:
    """A UUID from its canonical string, or ValueError for anything else."""
    if not isinstance(raw, str) or not _UUID_TEXT.match(raw):
        raise ValueError("not a UUID string")
    return UUID(raw)


class StrictSerializer(serializers.Serializer):
    """Refuses unknown fields instead of silently dropping them.

    Read-only fields the API itself emits are accepted (and ignored), so a
    client may send back what it read.
    """

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A string, and only a string: 12 or true is a type error, not "12".

    Kept as sent (no trimming): what is stored is what the client wrote, and
    the length and pattern the schema states apply to exactly that.
    """

    default_error_messages = {"not_a_string": "Must be a string."}

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class StrictUUIDField(serializers.UUIDField):
    """A UUID string, and only that: 5, false or a bare hex string is refused."""

    def to_internal_value(self, data):
        try:
            return parse_uuid(data)
        except ValueError:
            self.fail("invalid", value=data)


class StrictBooleanField(serializers.BooleanField):
    """true or false, and only those: DRF's BooleanField also takes 0, 1,
    "yes", "off", … which the schema (a JSON boolean) does not allow."""

    default_error_messages = {"not_a_boolean": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("not_a_boolean")
        return data


def unstorable_text(value) -> str | None:
    """Why a JSON value can't be stored and read back, or None.

    Lone UTF-16 surrogates can't be encoded as UTF-8 and NUL is refused by
    PostgreSQL: either would make the row unreadable or the write fail. The
    walk is iterative, so any nesting the parser accepted is checked.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if "\x00" in item:
                return "Null characters are not allowed."
            if any("\ud800" <= char <= "\udfff" for char in item):
                return "Lone surrogate characters are not allowed."
    return None


class StorableJSONField(serializers.JSONField):
    """Any JSON value that the database can store and give back unchanged."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        problem = unstorable_text(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value
