from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from credits.selectors import credits_summary
from organizations.api import ORGANIZATION_PARAMETER, MemberAPIView


class CreditsSummarySerializer(serializers.Serializer):
    month = serializers.CharField(help_text="Calendar month in UTC, YYYY-MM.")
    monthlyCredits = serializers.IntegerField(source="monthly_credits")  # noqa: N815
    grantedCredits = serializers.IntegerField(source="granted_credits")  # noqa: N815
    usedCredits = serializers.IntegerField(source="used_credits")  # noqa: N815
    reservedCredits = serializers.IntegerField(source="reserved_credits")  # noqa: N815
    remainingCredits = serializers.IntegerField(  # noqa: N815
        source="remaining_credits", help_text="Whole credits, rounded down; negative when overdrawn."
    )
    grantedMicros = serializers.IntegerField(source="granted_micros")  # noqa: N815
    usedMicros = serializers.IntegerField(source="used_micros")  # noqa: N815
    reservedMicros = serializers.IntegerField(source="reserved_micros")  # noqa: N815
    remainingMicros = serializers.IntegerField(source="remaining_micros")  # noqa: N815


class CreditsView(MemberAPIView):
    """The active organization's credits for the current month (1 credit = 10,000 micro-dollars)."""

    @extend_schema(operation_id="credits_get", parameters=[ORGANIZATION_PARAMETER], responses=CreditsSummarySerializer)
    def get(self, request):
        return Response(CreditsSummarySerializer(credits_summary(self.member)).data)
