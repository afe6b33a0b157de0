from datetime import date

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from assistant_engine.foundation.openapi import extend_schema
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from credits.selectors import credits_summary, person_credits


class PersonCreditsSerializer(serializers.Serializer):
    capCredits = serializers.IntegerField(source="cap_credits", help_text="The person's monthly cap.")  # noqa: N815
    spentCredits = serializers.IntegerField(  # noqa: N815
        source="spent_credits", help_text="Used and held by the turns they started this month.")
    remainingCredits = serializers.IntegerField(  # noqa: N815
        source="remaining_credits", help_text="What they may still spend: their cap's rest, at most the "
        "organization's remaining credits.")
    runOutOn = serializers.SerializerMethodField(help_text=(  # noqa: N815
        "The day (UTC) they reach their cap at the pace of their month so far; null when the pace lasts "
        "the month (or nothing was spent yet)."))

    def get_runOutOn(self, person) -> date | None:  # noqa: N802
        return person.run_out_on()


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
    runOutOn = serializers.SerializerMethodField(help_text=(  # noqa: N815
        "For the organization's admins: the day (UTC) the month's credits run out at the month's pace so far "
        "(used and reserved since the 1st); null when they last the month, nothing was spent yet, or for "
        "other members."))
    person = serializers.SerializerMethodField(help_text=(
        "Null when the person has no monthly cap; else what they may still spend of it this month."))

    def get_runOutOn(self, summary) -> date | None:  # noqa: N802
        return summary.run_out_on() if self.context["member"].is_admin else None

    @extend_schema_field(PersonCreditsSerializer(allow_null=True))
    def get_person(self, summary):
        person = person_credits(self.context["member"], summary)
        return PersonCreditsSerializer(person).data if person else None


class CreditsView(MemberAPIView):
    """The active organization's credits for the current month (1 credit = 10,000 micro-dollars)."""

    @extend_schema(operation_id="credits_get", parameters=[ORGANIZATION_PARAMETER], responses=CreditsSummarySerializer)
    def get(self, request):
        summary = credits_summary(self.member)
        return Response(CreditsSummarySerializer(summary, context={"member": self.member}).data)
