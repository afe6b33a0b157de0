"""Confirmation card endpoints: thin views over assistant.cards.

GET  /api/cards/{id}          the card
POST /api/cards/{id}/confirm  {"hash": the fingerprint the person was shown}
POST /api/cards/{id}/cancel   {}

Another person's card is 404, like one that does not exist. A refusal (409
`stale` or `decided`, 410 `expired`) carries the card as it now is, so the
page can show it.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

from django.core.validators import RegexValidator
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from assistant import cards
from assistant.progress import card_json
from assistant_engine.foundation.api_errors import ApiError, bad_request, not_found
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.foundation.serializers import StrictBooleanField, StrictCharField, StrictSerializer, parse_uuid
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from assistant_engine.organizations.models import ApiToken

SHA256_HEX = r"^[0-9a-f]{64}$"

REFUSALS = {
    cards.CardStale: (
        status.HTTP_409_CONFLICT, "stale",
        "This action changed since it was shown to you; nothing was done. Ask the assistant again.",
    ),
    cards.CardDecided: (status.HTTP_409_CONFLICT, "decided", "This card was already decided; nothing was done."),
    cards.CardRepeat: (
        status.HTTP_409_CONFLICT, "repeat",
        "An identical action was already confirmed in this conversation; nothing was done. Confirm again with "
        "acknowledgeRepeat to do it a second time.",
    ),
    cards.CardExpired: (status.HTTP_410_GONE, "expired", "This card has expired; nothing was done."),
    cards.CardNeedsPerson: (
        status.HTTP_403_FORBIDDEN, "confirm_in_browser",
        "A program proposed this action with your API token, so a token can't confirm it: open the "
        "conversation signed in (the card's confirmUrl) and confirm it there; nothing was done.",
    ),
}

CardResponse = inline_serializer("ActionCard", {
    "id": serializers.UUIDField(), "toolName": serializers.CharField(), "input": serializers.JSONField(),
    "description": serializers.CharField(),
    "hash": serializers.RegexField(SHA256_HEX, help_text="SHA-256 of what the action would do, lowercase hex."),
    "status": serializers.ChoiceField(choices=cards.Status.choices),
    "trifectaWarning": serializers.BooleanField(), "expiresAt": serializers.DateTimeField(),
    "decidedAt": serializers.DateTimeField(allow_null=True), "result": serializers.JSONField(allow_null=True),
    "error": serializers.CharField(allow_null=True), "toolCallId": serializers.CharField(allow_null=True),
    "conversationId": serializers.UUIDField(),
    "identicalDoneAt": serializers.DateTimeField(
        allow_null=True, help_text="When an identical action (same fingerprint) was confirmed in this conversation."),
    "presentation": inline_serializer("CardPresentation", {
        "notices": inline_serializer("CardNotice", {
            "kind": serializers.ChoiceField(choices=["trifecta", "repeat"]), "text": serializers.CharField(),
        }, many=True),
        "title": serializers.CharField(), "description": serializers.CharField(),
        "acknowledgementRequired": serializers.BooleanField(), "confirmLabel": serializers.CharField(),
    }, help_text="What to show, in this order: the notices (warnings) first, then the title, then the whole "
                 "description. Never offer Confirm without all of it."),
})
DECIDE_ERRORS = errors("not_found", "stale", "decided", "expired", "repeat")
CONFIRM_ERRORS = errors("not_found", "stale", "decided", "expired", "repeat", "confirm_in_browser")


class ConfirmRequestSerializer(StrictSerializer):
    # The length bounds make `$` (which also matches before a final newline) exact.
    hash = StrictCharField(
        min_length=64, max_length=64,
        validators=[RegexValidator(SHA256_HEX, message="Must be a SHA-256 in lowercase hex (64 characters).")],
        help_text="The card's fingerprint (SHA-256, hex) as the person was shown it.",
    )
    acknowledgeRepeat = StrictBooleanField(  # noqa: N815
        required=False, default=False,
        help_text="The person saw that an identical action was already done here and confirms it again; "
        "without it such a card is refused (409 `repeat`).",
    )


class CancelRequestSerializer(StrictSerializer):
    """No fields: anything sent is refused rather than silently ignored."""


def parse_card_id(raw: str) -> UUID:
    try:
        return parse_uuid(raw)
    except ValueError:
        raise bad_request("invalid_id", "The card id must be a UUID.", {"id": ["Must be a UUID."]}) from None


@contextmanager
def card_errors() -> Iterator[None]:
    """The services' refusals as API errors."""
    try:
        yield
    except cards.CardNotFound:
        raise not_found("No such card.") from None
    except cards.CardRefused as refusal:
        status_code, code, detail = REFUSALS[type(refusal)]
        raise ApiError(
            status_code=status_code, code=code, detail=detail, extra={"card": card_json(refusal.card)}
        ) from None


class CardView(MemberAPIView):
    @extend_schema(
        operation_id="card_get", parameters=[ORGANIZATION_PARAMETER], responses=CardResponse,
        extensions=errors("not_found"),
    )
    def get(self, request, card_id: str):
        with card_errors():
            card = cards.card_get_for_member(self.member, parse_card_id(card_id))
        return Response(card_json(card))


class CardConfirmView(MemberAPIView):
    throttle_scopes = {"POST": "cards"}

    @extend_schema(
        operation_id="card_confirm", parameters=[ORGANIZATION_PARAMETER], request=ConfirmRequestSerializer,
        responses=CardResponse, extensions=CONFIRM_ERRORS,
        description="Performs the action once, if it is still exactly what the person was shown. A refusal "
        "(409 `stale`/`decided`/`repeat`, 410 `expired`) carries the card as it now is. A card proposed over "
        "MCP is confirmed by the person signed in (a session), never with an API token: 403 "
        "`confirm_in_browser`.",
    )
    def post(self, request, card_id: str):
        parsed_id = parse_card_id(card_id)
        body = ConfirmRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        with card_errors():
            card = cards.card_confirm(self.member, card_id=parsed_id, shown_hash=body.validated_data["hash"],
                                      acknowledged_repeat=body.validated_data["acknowledgeRepeat"],
                                      with_token=isinstance(request.auth, ApiToken))
        return Response(card_json(card))


class CardCancelView(MemberAPIView):
    throttle_scopes = {"POST": "cards"}

    @extend_schema(
        operation_id="card_cancel", parameters=[ORGANIZATION_PARAMETER], request=CancelRequestSerializer,
        responses=CardResponse, extensions=errors("not_found", "decided", "expired"),
    )
    def post(self, request, card_id: str):
        parsed_id = parse_card_id(card_id)
        CancelRequestSerializer(data=request.data).is_valid(raise_exception=True)
        with card_errors():
            card = cards.card_cancel(self.member, card_id=parsed_id)
        return Response(card_json(card))

