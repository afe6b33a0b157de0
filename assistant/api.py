"""Chat and turn endpoints: thin views over assistant.chat and the selectors."""

from uuid import UUID

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.validators import RegexValidator
from django.http import JsonResponse
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from assistant import chat, chat_reply, live, page_context, selectors, service, turns
from assistant.doors import asked_door
from assistant.models import Turn
from assistant_engine.foundation.api_errors import ApiError, bad_request, conflict, not_found, unprocessable
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.foundation.serializers import StrictCharField, StrictSerializer, StrictUUIDField, parse_uuid
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from assistant_engine.providers.org_models import ModelNotAllowed
from conversations.api import BUSY, ModelField, model_not_allowed, parse_conversation_id
from conversations.files import FileAlreadyAttached, FileNotFound, FileNotOfMessage, FileNotReady, FileRefused
from conversations.models import Message
from conversations.selectors import ConversationNotFound
from conversations.services import ConversationBusy
from credits.services import CreditsExhausted, MemberCapReached

FULL = "This conversation is full: start a new conversation to go on."


# Whitespace as str.isspace() has it, spelled out: regex engines disagree on
# what `\s` covers (Python's includes U+001C–U+001F and U+0085, ECMAScript's
# U+FEFF), and a client must refuse exactly what the server refuses.
WHITESPACE = r"\t\n\u000b\f\r \u001c-\u001f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_BLANK_WITHOUT_NUL = rf"^[{WHITESPACE}]*[^{WHITESPACE}\u0000][^\u0000]*$"


class PageContextSerializer(StrictSerializer):
    id = StrictCharField(max_length=page_context.MAX_ID_CHARS, help_text="The object's id, as the host page has it.")

    def get_fields(self):
        # The kinds the toolsets declare (settings.ASSISTANT_TOOLSETS), read when
        # first used rather than at import: the schema lists exactly them.
        fields = super().get_fields()
        fields["kind"] = serializers.ChoiceField(
            choices=page_context.context_kinds(), help_text="A kind of object the host product declares."
        )
        return fields


# The bound is checked by the view, so that it answers its own code
# (too_many_files); the document states it as maxItems.
@extend_schema_field({"type": "array", "items": {"type": "string", "format": "uuid"},
                      "maxItems": settings.FILE_MAX_PER_MESSAGE, "uniqueItems": True})
class AttachmentIdsField(serializers.ListField):
    pass


class ChatRequestSerializer(StrictSerializer):
    # At least one character that is not whitespace, and no NUL (which the
    # database can't store). The pattern is the check itself, so the schema says
    # exactly what is refused; it runs in linear time (its parts don't overlap).
    message = StrictCharField(
        max_length=100_000, trim_whitespace=False,
        validators=[RegexValidator(NOT_BLANK_WITHOUT_NUL, message="The message is empty.")],
    )
    conversationId = StrictUUIDField(  # noqa: N815
        required=False, allow_null=True, help_text="Omitted or null: a new conversation is created."
    )
    attachments = AttachmentIdsField(
        child=StrictUUIDField(), required=False, default=list,
        help_text="Ids of the person's uploaded files (POST /api/files) that this message takes: at most "
        "FILE_MAX_PER_MESSAGE (5), each of them once and with one message only.",
    )
    context = PageContextSerializer(
        required=False, help_text="What the person has open in the product: checked against their rights "
        "(404 `not_found`), told to the model as kind, id and title."
    )
    model = ModelField(help_text="The conversation's model option from this turn on (GET /api/me/models; \"\": "
                       "the organization's). One the organization does not allow is 422 `model_not_allowed`, "
                       "a text not in the enum 400 `invalid`; nothing written.")


ChatResponse = inline_serializer("ChatAccepted", {
    "conversationId": serializers.UUIDField(), "turnId": serializers.UUIDField(), "messageId": serializers.UUIDField(),
    "contextDropped": serializers.BooleanField(required=False, help_text=(
        "True when the request's `context` names nothing of the person's any more (deleted, or never theirs): "
        "the message was sent without it. Stop sending that context.")),
})


PREFER_PARAMETER = OpenApiParameter(
    name="Prefer", type=OpenApiTypes.STR, location=OpenApiParameter.HEADER, required=False,
    description="`wait=N` (RFC 7240, N ≤ 60): answer 200 with the reply if the turn ends within N seconds.",
)

ChatReply = inline_serializer("ChatReply", {
    "reply": serializers.CharField(), "conversationId": serializers.UUIDField(), "turnId": serializers.UUIDField(),
    "notice": serializers.CharField(required=False, help_text="A failed turn's notice for the person."),
    "failureKind": serializers.CharField(required=False, allow_null=True),
})


class ChatView(MemberAPIView):
    throttle_scopes = {"POST": "chat"}

    @extend_schema(
        operation_id="chat", parameters=[ORGANIZATION_PARAMETER, PREFER_PARAMETER], request=ChatRequestSerializer,
        responses={202: ChatResponse, 200: ChatReply},
        extensions=errors(
            "credits_exhausted", "member_cap_reached", "not_found", "conversation_busy", "conversation_full",
            "queue_unavailable", "model_unavailable", "model_not_allowed", "too_many_files", "file_already_attached",
            "file_not_ready", "unreadable_pdf", "too_many_pages",
        ),
    )
    def post(self, request):
        serializer = ChatRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        attachments = checked_attachments(serializer.validated_data["attachments"])
        declared = serializer.validated_data.get("context")
        context = resolved_context(self.member, declared)
        response = submitted_or_error(lambda: chat.chat_submit(
            self.member, message=serializer.validated_data["message"],
            conversation_id=serializer.validated_data.get("conversationId"), context=context,
            model=serializer.validated_data.get("model"), attachments=attachments, door=asked_door(request),
        ))
        if declared is not None and context is None:
            response.data["contextDropped"] = True
        return response


def checked_attachments(ids: list) -> list:
    if len(ids) > settings.FILE_MAX_PER_MESSAGE:
        raise bad_request("too_many_files", f"A message may take at most {settings.FILE_MAX_PER_MESSAGE} files.",
                          {"attachments": ["Too many files."]})
    if len(set(ids)) != len(ids):
        raise bad_request("invalid", "Each file once.", {"attachments": ["Each file once."]})
    return ids


def resolved_context(member, declared: dict | None) -> page_context.PageContext | None:
    """The page context, or None when it names nothing of the person's (any more): a page
    still showing a note the person just deleted must not make every message fail. Another
    person's object reads exactly as a deleted one: dropped, its title never told."""
    if declared is None:
        return None
    try:
        return page_context.resolve_page_context(member, kind=declared["kind"], object_id=declared["id"])
    except page_context.UnknownContextKind:  # the setting changed since validation
        raise bad_request("invalid", "No such kind of context in this product.") from None
    except page_context.ContextNotFound:
        return None


class EditRequestSerializer(StrictSerializer):
    # The same rules as a new message (POST /api/chat).
    message = StrictCharField(
        max_length=100_000, trim_whitespace=False,
        validators=[RegexValidator(NOT_BLANK_WITHOUT_NUL, message="The message is empty.")],
    )
    attachments = AttachmentIdsField(
        child=StrictUUIDField(), required=False,
        help_text="Omitted: the new version keeps all the files of the message it replaces. Given: only these "
        "of them (their ids as GET /api/conversations/{id} shows them on that message; [] keeps none). Another "
        "of the person's files is 400 `file_not_in_message`, a file that is not theirs 404 `not_found`; "
        "nothing written.",
    )


REDO_ERRORS = ("credits_exhausted", "not_found", "conversation_busy", "conversation_full", "nothing_to_redo",
               "queue_unavailable", "model_unavailable", "model_not_allowed")
EDIT_ERRORS = (*REDO_ERRORS, "file_not_in_message", "too_many_files")
VERSIONS = ("The replaced messages stay in the StoredConversation with `supersededAt` set (a previous version, "
            "never sent to the model again); the new version follows them. An edit supersedes the message and its "
            "reply at the same instant, so replies superseded earlier are that message's regenerated ones. "
            "Application events (`role: event`) are never superseded, and cards decided since the last turn are "
            "told to the new turn as to any other. A pending card of the replaced reply is withdrawn (status "
            "`cancelled`, `error` saying so), so that the new version proposing the same action can't have it "
            "done twice; it is not told to the model.")


class RegenerateView(MemberAPIView):
    throttle_scopes = {"POST": "chat"}

    @extend_schema(operation_id="conversation_regenerate", parameters=[ORGANIZATION_PARAMETER], request=None,
                   responses={202: ChatResponse}, extensions=errors(*REDO_ERRORS),
                   description="A new reply to the last user message, through the normal submission (credits, "
                   "bounds, cards). " + VERSIONS)
    def post(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        return submitted_or_error(lambda: chat.chat_regenerate(self.member, conversation_id=thread_id,
                                                               door=asked_door(request)))


class EditView(MemberAPIView):
    throttle_scopes = {"POST": "chat"}

    @extend_schema(operation_id="conversation_edit", parameters=[ORGANIZATION_PARAMETER],
                   request=EditRequestSerializer, responses={202: ChatResponse}, extensions=errors(*EDIT_ERRORS),
                   description="The last user message edited and resent (the new one's `replaces` names the "
                   "old one). " + VERSIONS)
    def post(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        serializer = EditRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        keep = serializer.validated_data.get("attachments")
        if keep is not None:
            keep = checked_attachments(keep)
        return submitted_or_error(lambda: chat.chat_edit(
            self.member, conversation_id=thread_id, message=serializer.validated_data["message"], attachments=keep,
            door=asked_door(request)))


def submitted_or_error(submit) -> Response:
    """Runs a submission (chat, regenerate, edit) and maps its refusals to the one error shape."""
    try:
        submitted = submit()
    except ModelNotAllowed:
        raise model_not_allowed() from None
    except chat.NothingToRedo:
        raise conflict("nothing_to_redo", "This conversation has no message of yours to answer again.") from None
    except ConversationNotFound:
        raise not_found("No such conversation.") from None
    except FileNotFound:
        raise not_found("No such file.") from None
    except FileNotOfMessage:
        raise bad_request("file_not_in_message", "An edited message keeps only files of the message it replaces.",
                          {"attachments": ["Not a file of the message it replaces."]}) from None
    except FileAlreadyAttached:
        raise conflict("file_already_attached", "This file already goes with another message.") from None
    except FileNotReady:
        raise conflict("file_not_ready", "A PDF of this message is still being read: send it in a moment.") from None
    except FileRefused as refusal:
        raise unprocessable(refusal.code, refusal.detail) from None
    except ConversationBusy:
        raise conflict("conversation_busy", BUSY) from None
    except chat.ConversationFull:
        raise conflict("conversation_full", FULL) from None
    except MemberCapReached:
        raise ApiError(status_code=status.HTTP_402_PAYMENT_REQUIRED, code="member_cap_reached",
                       detail="You have reached your monthly limit in this organization.") from None
    except CreditsExhausted:
        raise ApiError(status_code=status.HTTP_402_PAYMENT_REQUIRED, code="credits_exhausted",
                       detail="Your organization has used its credits for this month.") from None
    except chat.QueueUnavailable:
        raise ApiError(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code="queue_unavailable",
                       detail="The assistant is not available right now; your message was not sent. "
                       "Please try again.") from None
    except ImproperlyConfigured:
        raise ApiError(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code="model_unavailable",
                       detail="No model is available right now.") from None
    return Response(
        {"conversationId": str(submitted.thread_id), "turnId": str(submitted.turn_id),
         "messageId": str(submitted.message_id)},
        status=status.HTTP_202_ACCEPTED,
    )


def parse_turn_id(raw: str) -> UUID:
    try:
        return parse_uuid(raw)
    except ValueError:
        raise bad_request("invalid_id", "The turn id must be a UUID.", {"id": ["Must be a UUID."]}) from None


TurnResponse = inline_serializer("TurnStatus", {
    "id": serializers.UUIDField(),
    "conversationId": serializers.UUIDField(allow_null=True, help_text="Null once the conversation is deleted."),
    "status": serializers.ChoiceField(choices=Turn.Status.choices),
    "failureKind": serializers.ChoiceField(choices=Turn.FailureKind.choices, allow_null=True),
    "steps": serializers.IntegerField(),
    "messageIds": serializers.ListField(child=serializers.UUIDField()),
    "costMicros": serializers.IntegerField(), "reservedMicros": serializers.IntegerField(),
    "serviceDown": serializers.BooleanField(help_text=(
        "True while the turn is still queued after SERVICE_DOWN_SECONDS (15 by default) and no worker has "
        "written its heartbeat lately: the service is not answering. The turn is kept and runs when it is back.")),
    "notice": serializers.CharField(allow_null=True, help_text=(
        "What to tell the person, in the request's language (while `serviceDown`), else null.")),
})


class TurnView(MemberAPIView):
    @extend_schema(
        operation_id="turn_get", parameters=[ORGANIZATION_PARAMETER], responses=TurnResponse,
        extensions=errors("not_found"),
    )
    def get(self, request, turn_id: str):
        turn = turn_or_404(self.member, turn_id)
        message_ids = Message.objects.filter(turn_id=turn.id).order_by("seq").values_list("client_id", flat=True)
        return Response({
            "id": str(turn.id), "conversationId": str(turn.thread_id) if turn.thread_id else None,
            "status": turn.status, "failureKind": turn.failure_kind or None, "steps": turn.steps,
            "messageIds": [str(i) for i in message_ids], "costMicros": turn.cost_micros,
            "reservedMicros": turn.reserved_micros, **service_status(turn),
        })


def service_status(turn: Turn) -> dict:
    down = service.service_down(turn)
    return {"serviceDown": down, "notice": gettext(service.SERVICE_DOWN_NOTICE) if down else None}


def turn_or_404(member, raw_id: str):
    try:
        return selectors.turn_get_for_member(member, parse_turn_id(raw_id))
    except selectors.TurnNotFound:
        raise not_found("No such turn.") from None


CancelResponse = inline_serializer("TurnCancel", {
    "id": serializers.UUIDField(),
    "status": serializers.ChoiceField(choices=["cancelled", "running"], help_text=(
        "`cancelled`: the turn was queued and is ended (no cost). `running`: its worker stops it at the next "
        "safe point, then the turn ends `cancelled` with the text so far and the credits actually spent.")),
})


class TurnCancelView(MemberAPIView):
    # Counted with the card clicks, not the messages: a Stop must not use up the person's sends.
    throttle_scopes = {"POST": "cards"}

    @extend_schema(operation_id="turn_cancel", parameters=[ORGANIZATION_PARAMETER], request=None,
                   responses={200: CancelResponse, 202: CancelResponse}, extensions=errors("not_found", "turn_ended"))
    def post(self, request, turn_id: str):
        parsed = parse_turn_id(turn_id)
        try:
            result = turns.turn_cancel(self.member, turn_id=parsed)
        except selectors.TurnNotFound:
            raise not_found("No such turn.") from None
        except turns.TurnEnded:
            raise conflict("turn_ended", "This reply has already ended.") from None
        code = status.HTTP_200_OK if result.status == "cancelled" else status.HTTP_202_ACCEPTED
        return Response({"id": str(result.turn_id), "status": result.status}, status=code)


def chat_endpoint():
    """POST /api/chat: ChatView, and with `Prefer: wait=N` an async wait for the
    reply (assistant.chat_reply) that holds no thread while it waits."""
    drf_view = ChatView.as_view()

    def submit_then_release(request, *args, **kwargs):
        response = drf_view(request, *args, **kwargs)
        if response.status_code == status.HTTP_202_ACCEPTED and chat_reply.requested_wait(
                request.headers.get("Prefer")):
            live.release_database()  # no connection held while the request waits
        return response

    submit = sync_to_async(submit_then_release)

    @csrf_exempt  # as DRF's own as_view(): SessionAuthentication enforces CSRF itself
    async def endpoint(request, *args, **kwargs):
        wait = chat_reply.requested_wait(request.headers.get("Prefer"))
        response = await submit(request, *args, **kwargs)
        if not wait or response.status_code != status.HTTP_202_ACCEPTED:
            return response
        reply = await chat_reply.wait_for_reply(UUID(response.data["turnId"]), wait)
        if reply is not None:
            response = JsonResponse(reply, status=status.HTTP_200_OK)
        response["Preference-Applied"] = f"wait={wait}"
        return response

    # The schema generator (drf-spectacular) finds the DRF view through these.
    endpoint.cls, endpoint.initkwargs = drf_view.cls, drf_view.initkwargs
    return endpoint
