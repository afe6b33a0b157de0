"""Dates as an esm-ai-memory client writes them: ISO 8601 strings or epoch milliseconds."""

from datetime import UTC, datetime, timedelta

from rest_framework import serializers

# datetime's own range, in epoch milliseconds (years 1 to 9999 would not fit
# every database; 1970..9999 is what a JavaScript client's clock produces).
_MAX_EPOCH_MS = 253402300799999
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ClientDateField(serializers.Field):
    """A datetime from an ISO 8601 string or a number of epoch milliseconds."""

    default_error_messages = {"invalid": "Must be an ISO 8601 date-time or a number of epoch milliseconds."}

    def to_internal_value(self, data):
        if isinstance(data, bool):
            self.fail("invalid")
        if isinstance(data, int | float):
            if not 0 <= data <= _MAX_EPOCH_MS:
                self.fail("invalid")
            # Exact for whole milliseconds (a float division could be off by a microsecond).
            return EPOCH + timedelta(milliseconds=data)
        if isinstance(data, str):
            try:
                return serializers.DateTimeField().to_internal_value(data)
            except serializers.ValidationError:
                self.fail("invalid")
        self.fail("invalid")

    def to_representation(self, value):
        return serializers.DateTimeField().to_representation(value)


def as_client_writes(moment: datetime, like) -> int | str:
    """A server date in the format the client used for that field (`like`):
    a client that compares epoch numbers must get a number back."""
    if isinstance(like, int | float) and not isinstance(like, bool):
        return (moment - EPOCH) // timedelta(milliseconds=1)
    return serializers.DateTimeField().to_representation(moment)
