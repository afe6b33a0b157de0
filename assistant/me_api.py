"""The person's own: GET /api/me/export (their data in the active organization, as a download), their
instructions to the assistant (GET/PUT /api/me/instructions) and the models they may choose (GET /api/me/models)."""

from django.db import transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from assistant_engine.foundation.api_errors import bad_request
from assistant_engine.foundation.downloads import download_response
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.foundation.serializers import StrictCharField, StrictSerializer
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from assistant_engine.organizations.instructions import (
    INSTRUCTIONS_MAX_CHARS,
    InstructionsTooLong,
    NotAdmin,
    instructions_get,
    my_instructions_set,
    organization_instructions_set,
)
from assistant_engine.organizations.personal_data import export_user_stream
from assistant_engine.providers.org_models import member_options, rule_of


class MyExportView(MemberAPIView):
    @extend_schema(
        operation_id="me_export", parameters=[ORGANIZATION_PARAMETER], responses={200: OpenApiTypes.OBJECT},
        description="Everything of the person in the organization: conversations (messages, raw tool results), "
        "cards, turns with their costs, notes, mail, and `staffAccesses` (`[{at, what, objectId}]`: when staff "
        "looked at the person's data, never who). A JSON attachment.",
    )
    def get(self, request):
        # Streamed as it is read, like the staff exports: memory holds a few
        # conversations at a time, not the document (which grows with the person's history).
        filename = f"personal-data-{self.member.organization_slug or self.member.organization_id}-" \
            f"{timezone.now():%Y%m%d}.json"
        response = download_response(request, export_user_stream(self.member), content_type="application/json",
                                     filename=filename)
        response["Cache-Control"] = "no-store"
        return response


class InstructionsSerializer(StrictSerializer):
    person = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, help_text=(
        f"The person's own instructions in this organization (at most {INSTRUCTIONS_MAX_CHARS} characters)."))
    organization = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, help_text=(
        f"The organization's instructions (at most {INSTRUCTIONS_MAX_CHARS} characters): its admins only "
        "(403 `permission_denied` otherwise)."))


InstructionsResponse = inline_serializer("Instructions", {
    "organization": serializers.CharField(allow_blank=True), "person": serializers.CharField(allow_blank=True),
    "maxChars": serializers.IntegerField(), "canSetOrganization": serializers.BooleanField(),
})


def instructions_json(member) -> dict:
    current = instructions_get(member)
    return {"organization": current.organization, "person": current.person, "maxChars": INSTRUCTIONS_MAX_CHARS,
            "canSetOrganization": member.is_admin}


class MyInstructionsView(MemberAPIView):
    @extend_schema(operation_id="me_instructions", parameters=[ORGANIZATION_PARAMETER],
                   responses=InstructionsResponse,
                   description="The instructions added to the assistant's system prompt in this organization: the "
                   "organization's, then the person's own.")
    def get(self, request):
        return Response(instructions_json(self.member))

    @extend_schema(operation_id="me_instructions_set", parameters=[ORGANIZATION_PARAMETER],
                   request=InstructionsSerializer, responses=InstructionsResponse,
                   extensions=errors("instructions_too_long"),
                   description="Set the person's own instructions (`person`) and, for an organization admin, the "
                   "organization's (`organization`); \"\" clears them. Over the bound: 400 "
                   "`instructions_too_long`, nothing written.")
    def put(self, request):
        serializer = InstructionsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            with transaction.atomic():  # both or neither
                if "organization" in data:
                    organization_instructions_set(self.member, text=data["organization"])
                if "person" in data:
                    my_instructions_set(self.member, text=data["person"])
        except NotAdmin:
            raise PermissionDenied("Only the organization's admins set its instructions.") from None
        except InstructionsTooLong:
            raise bad_request("instructions_too_long", f"Instructions are limited to {INSTRUCTIONS_MAX_CHARS} "
                              "characters.", {name: ["At most 4000 characters."] for name in data}) from None
        return Response(instructions_json(self.member))


ModelOptionResponse = inline_serializer("ModelChoice", {
    "id": serializers.CharField(), "label": serializers.CharField(), "processing": serializers.CharField(),
    "location": serializers.CharField(),
}, many=True)


class MyModelsView(MemberAPIView):
    @extend_schema(operation_id="me_models", parameters=[ORGANIZATION_PARAMETER],
                   responses=ModelOptionResponse,
                   description="The model options a conversation may be given in this organization (PATCH "
                   "/api/conversations/{id} `model`, POST /api/chat `model`).")
    def get(self, request):
        options = member_options(self.member.organization_id, rule_of(self.member))
        return Response([{"id": option.id, "label": option.label, "processing": option.processing_label,
                          "location": option.location} for option in options])
