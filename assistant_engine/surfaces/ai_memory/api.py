"""The esm-ai-memory contract at /ai/conversations, as the seed's backend adapter calls it.

Thin views over conversations' selectors and services (the same upsert as
PUT /api/conversations/{id}); the person is implicit (token or session, and
the token's or session's organization), as on /api/.
"""

from rest_framework import status
from rest_framework.response import Response

from assistant_engine.foundation.api_errors import bad_request, not_found
from assistant_engine.foundation.openapi import extend_schema
from assistant_engine.organizations.api import MemberAPIView
from assistant_engine.surfaces.ai_memory import documents, ids
from conversations import selectors
from conversations.api import delete_or_error, upsert_or_error

# EXCLUDED: the /ai/ endpoints are left out of the OpenAPI document on
# purpose. Their contract is the esm-ai-memory seed's (documented in the
# README), not this API's: open documents the server keeps verbatim, ids and
# dates in the client's forms, none of the API's strict-body promises.


def parse_client_id(raw: str) -> str:
    if not ids.is_client_id(raw):
        raise bad_request("invalid_id", "The conversation id must be 1 to 200 letters, digits, '-', '_', ':' or '.'.",
                          {"id": ["Invalid id."]})
    return raw


class AiConversationListView(MemberAPIView):
    @extend_schema(exclude=True)  # see EXCLUDED above
    def get(self, request):
        threads = selectors.thread_list(self.member)
        return Response([documents.render_summary(thread) for thread in threads])


class AiConversationDetailView(MemberAPIView):
    throttle_scopes = {"PUT": "uploads"}  # the same allowance as PUT /api/conversations/{id}

    @extend_schema(exclude=True)  # see EXCLUDED above
    def get(self, request, conversation_id: str):
        return Response(documents.render_conversation(self._thread(self._thread_id(conversation_id))))

    @extend_schema(exclude=True)  # see EXCLUDED above
    def put(self, request, conversation_id: str):
        client_id = parse_client_id(conversation_id)
        serializer = documents.ConversationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if serializer.validated_data["id"] != client_id:
            raise bad_request("id_mismatch", "The body's id differs from the URL's.", {"id": ["Must match the URL."]})
        data = documents.conversation_data(request.data, serializer.validated_data)
        outcome = upsert_or_error(self.member, data)
        return Response(documents.render_conversation(self._thread(outcome.thread.id)))

    @extend_schema(exclude=True)  # see EXCLUDED above
    def delete(self, request, conversation_id: str):
        delete_or_error(self.member, self._thread_id(conversation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _thread_id(self, conversation_id: str):
        """The server's key of the person's conversation of that client id, or 404."""
        found = selectors.thread_by_client_id(self.member, parse_client_id(conversation_id))
        thread_id = found.values_list("id", flat=True).first()
        if thread_id is None:
            raise not_found("No such conversation.")
        return thread_id

    def _thread(self, thread_id):
        try:
            return selectors.thread_with_messages(self.member, thread_id)
        except selectors.ConversationNotFound:
            raise not_found("No such conversation.") from None
