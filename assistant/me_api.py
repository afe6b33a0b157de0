"""GET /api/me/export: the person's own data in the active organization, as a download."""

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema

from config.downloads import download_response
from organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from organizations.personal_data import export_user_stream


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
