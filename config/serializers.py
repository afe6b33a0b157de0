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
