from rest_framework import serializers


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
    """A string, and only a string: 12 or true is a type error, not "12"."""

    default_error_messages = {"not_a_string": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)
