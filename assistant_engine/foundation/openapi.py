"""What makes the OpenAPI document tell the whole truth, beside each view's own
`extend_schema`:

- every operation's error responses, in the one error shape of
  foundation/api_errors.py, with the exact `code` values it can answer: those every
  API view shares (authentication, organization, throttling, bodies, ids) are
  added here; a view declares its own with `extend_schema(extensions=errors(...))`;
- request bodies closed (`additionalProperties: false`), as StrictSerializer refuses
  unknown fields;
- JSON values that refuse `null` say so, and text fields that refuse NUL;
- path ids are UUIDs (the `api_id` converter of foundation/converters.py and
  PATH_CONVERTER_OVERRIDES): the views parse them and answer a malformed one
  with 400 `invalid_id`;
- OpenAPI links between operations (`postprocess_links`), so a client (and the
  stateful phase of schemathesis) can follow an id from one answer to the next.
"""

import inspect

from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ComponentIdentity, ResolvedComponent
from drf_spectacular.utils import extend_schema as spectacular_extend_schema
from rest_framework import status
from rest_framework.fields import CharField, ProhibitNullCharactersValidator, RegexValidator

# Every `code` the API answers, with its status. A code missing here can't be
# declared, so the document can't promise a status the server doesn't use.
ERROR_STATUS = {
    "invalid": status.HTTP_400_BAD_REQUEST,
    "invalid_id": status.HTTP_400_BAD_REQUEST,
    "invalid_page": status.HTTP_400_BAD_REQUEST,
    "invalid_last_event_id": status.HTTP_400_BAD_REQUEST,
    "too_many_messages": status.HTTP_400_BAD_REQUEST,
    "query_too_long": status.HTTP_400_BAD_REQUEST,
    "invalid_query": status.HTTP_400_BAD_REQUEST,
    "too_many_files": status.HTTP_400_BAD_REQUEST,
    "file_not_in_message": status.HTTP_400_BAD_REQUEST,
    "id_mismatch": status.HTTP_400_BAD_REQUEST,
    "instructions_too_long": status.HTTP_400_BAD_REQUEST,
    "invalid_format": status.HTTP_400_BAD_REQUEST,
    "malformed_json": status.HTTP_400_BAD_REQUEST,
    "organization_required": status.HTTP_400_BAD_REQUEST,
    "not_authenticated": status.HTTP_401_UNAUTHORIZED,
    "authentication_failed": status.HTTP_401_UNAUTHORIZED,
    "credits_exhausted": status.HTTP_402_PAYMENT_REQUIRED,
    "member_cap_reached": status.HTTP_402_PAYMENT_REQUIRED,
    "no_organization": status.HTTP_403_FORBIDDEN,
    "permission_denied": status.HTTP_403_FORBIDDEN,
    "token_organization_mismatch": status.HTTP_403_FORBIDDEN,
    "membership_suspended": status.HTTP_403_FORBIDDEN,
    "confirm_in_browser": status.HTTP_403_FORBIDDEN,
    "not_found": status.HTTP_404_NOT_FOUND,
    "organization_not_found": status.HTTP_404_NOT_FOUND,
    "not_acceptable": status.HTTP_406_NOT_ACCEPTABLE,
    "conversation_busy": status.HTTP_409_CONFLICT,
    "conversation_full": status.HTTP_409_CONFLICT,
    "turn_ended": status.HTTP_409_CONFLICT,
    "nothing_to_redo": status.HTTP_409_CONFLICT,
    "file_already_attached": status.HTTP_409_CONFLICT,
    "file_not_ready": status.HTTP_409_CONFLICT,
    "stale": status.HTTP_409_CONFLICT,
    "decided": status.HTTP_409_CONFLICT,
    "repeat": status.HTTP_409_CONFLICT,
    "expired": status.HTTP_410_GONE,
    "payload_too_large": status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    "conversation_too_large": status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    "file_too_large": status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    "organization_files_full": status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    "unsupported_media_type": status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
    # Well-formed requests refused for what the server holds (api_errors.unprocessable):
    # the organization's models, a file's bytes. Not a 400: nothing in the request
    # is malformed, and the document can't say which of its valid values these are.
    "model_not_allowed": status.HTTP_422_UNPROCESSABLE_ENTITY,
    "empty_file": status.HTTP_422_UNPROCESSABLE_ENTITY,
    "unsupported_file_type": status.HTTP_422_UNPROCESSABLE_ENTITY,
    "unreadable_pdf": status.HTTP_422_UNPROCESSABLE_ENTITY,
    "too_many_pages": status.HTTP_422_UNPROCESSABLE_ENTITY,
    "throttled": status.HTTP_429_TOO_MANY_REQUESTS,
    "unattached_files_limit": status.HTTP_429_TOO_MANY_REQUESTS,
    "files_still_reading": status.HTTP_429_TOO_MANY_REQUESTS,
    "queue_unavailable": status.HTTP_503_SERVICE_UNAVAILABLE,
    "model_unavailable": status.HTTP_503_SERVICE_UNAVAILABLE,
}

# Any API view: the authentication and organization guards, content
# negotiation, throttling. 401 and 429 are documented for every operation so
# that token authentication and rate limits fit without touching each view.
EVERY_OPERATION = (
    "organization_required", "not_authenticated", "authentication_failed", "no_organization",
    "permission_denied", "token_organization_mismatch", "membership_suspended", "organization_not_found",
    "not_acceptable", "throttled",
)
# An operation that reads a JSON body: the parser, the serializer, the body limit.
WITH_BODY = ("invalid", "malformed_json", "payload_too_large", "unsupported_media_type")
# An operation with an id in its path: the view parses it.
WITH_PATH_ID = ("invalid_id",)

# Codes whose answer carries the card as it now is (assistant/cards_api.py).
CARD_CODES = frozenset({"stale", "decided", "expired", "repeat", "confirm_in_browser"})
CARD_COMPONENT = "ActionCard"

ERROR_CODES_KEY = "x-error-codes"


def errors(*codes: str) -> dict:
    """`extend_schema(extensions=errors("not_found", "conversation_busy"))`:
    the codes this operation answers beyond those every operation shares."""
    unknown = [code for code in codes if code not in ERROR_STATUS]
    if unknown:
        raise ValueError(f"Unknown error codes {unknown}: add them to foundation.openapi.ERROR_STATUS.")
    return {ERROR_CODES_KEY: list(codes)}


def error_schema(status_code: int, codes: list[str]) -> dict:
    properties = {
        "code": {"type": "string", "enum": codes},
        "detail": {"type": "string", "description": "For people; not stable."},
    }
    if status_code in (status.HTTP_400_BAD_REQUEST, status.HTTP_422_UNPROCESSABLE_ENTITY):
        properties["fields"] = {
            "type": "object",
            "description": 'Messages by dotted field path ("messages.2.role").',
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        }
    if CARD_CODES & set(codes):
        properties["card"] = {"$ref": f"#/components/schemas/{CARD_COMPONENT}"}
    return {"type": "object", "additionalProperties": False, "required": ["code", "detail"], "properties": properties}


# PostgreSQL can't store NUL in text: DRF's CharField refuses it (its
# ProhibitNullCharactersValidator), and the schema says so.
WITHOUT_NUL = r"^[^\u0000]*$"


class ApiAutoSchema(AutoSchema):
    """Adds the error responses of each operation and the NUL rule of text
    fields (see the module docstring)."""

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        refuses_nul = any(isinstance(v, ProhibitNullCharactersValidator) for v in field.validators)
        # A field with its own pattern says it all (ours exclude NUL too).
        has_pattern = any(isinstance(v, RegexValidator) for v in field.validators)
        if direction == "request" and isinstance(field, CharField) and refuses_nul and not has_pattern \
                and _plain_string(schema):
            schema["pattern"] = WITHOUT_NUL
        return schema

    def get_description(self) -> str:
        # A view's own docstring only: the inherited one of MemberAPIView
        # speaks to the code's readers, not to the API's.
        handler = getattr(self.view, self.method.lower(), None)
        return inspect.getdoc(handler) if handler and handler.__doc__ else own_doc(type(self.view))

    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is not None:
            operation.pop(ERROR_CODES_KEY, None)
        return operation

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for status_code, codes in sorted(self._error_codes_by_status().items()):
            responses[str(status_code)] = {
                "description": "Refused: " + ", ".join(f"`{code}`" for code in codes) + ".",
                "content": {"application/json": {"schema": self._error_component(status_code, codes).ref}},
            }
        return responses

    def _error_component(self, status_code: int, codes: list[str]) -> ResolvedComponent:
        """One component per set of codes, shared by the operations that answer
        exactly those (a generated client gets one error class for each)."""
        name = "Error" + "".join(part.capitalize() for code in codes for part in code.split("_"))
        component = ResolvedComponent(
            name=name, type=ResolvedComponent.SCHEMA, schema=error_schema(status_code, codes),
            object=ComponentIdentity(name),
        )
        self.registry.register_on_missing(component)
        return component

    def _error_codes_by_status(self) -> dict[int, list[str]]:
        codes = list(EVERY_OPERATION)
        if self.method in ("POST", "PUT", "PATCH"):
            codes += WITH_BODY
        if "{" in self.path:  # every path parameter of this API is an id
            codes += WITH_PATH_ID
        codes += self.get_extensions().get(ERROR_CODES_KEY, [])
        by_status: dict[int, list[str]] = {}
        for code in dict.fromkeys(codes):
            by_status.setdefault(ERROR_STATUS[code], []).append(code)
        return by_status


def _plain_string(schema: dict) -> bool:
    return schema.get("type") == "string" and not {"pattern", "format", "enum"} & set(schema)


def own_doc(cls: type) -> str:
    """The class's own docstring, not one inherited from a base class."""
    doc = cls.__dict__.get("__doc__")
    return inspect.cleandoc(doc) if doc else ""


class StrictSerializerExtension(OpenApiSerializerExtension):
    """A StrictSerializer refuses unknown fields: its request body is closed.

    The read-only fields it emits are accepted back (a client may send what it
    read) and ignored: they stay in the request schema, as "anything, ignored".
    """

    target_class = "assistant_engine.foundation.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if own_doc(type(self.target)):
            schema["description"] = own_doc(type(self.target))
        else:  # not StrictSerializer's docstring, which is about the code
            schema.pop("description", None)
        if direction != "request":
            return schema
        properties = schema.setdefault("properties", {})
        for name, field in self.target.fields.items():
            if field.read_only and name not in properties:
                properties[name] = {"description": "Sent back by clients as they read it; ignored."}
        schema["additionalProperties"] = False
        return schema


class StorableJSONFieldExtension(OpenApiSerializerFieldExtension):
    """Any JSON value; `null` only where the field allows it."""

    target_class = "assistant_engine.foundation.serializers.StorableJSONField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        if self.target.allow_null:
            return {"nullable": True}
        return {"anyOf": [
            {"type": "object", "additionalProperties": True}, {"type": "array", "items": {}},
            {"type": "string"}, {"type": "number"}, {"type": "boolean"},
        ]}


# --- Links -------------------------------------------------------------------------

# (operation, status) -> {link name: (target operation, parameters, request body)}.
# Runtime expressions point into the answer: `$response.body#/turnId`.
LINKS = {
    ("chat", "202"): {
        "GetTurn": ("turn_get", {"turn_id": "$response.body#/turnId"}, None),
        "GetConversation": ("conversation_get", {"conversation_id": "$response.body#/conversationId"}, None),
        "DeleteConversation": ("conversation_delete", {"conversation_id": "$response.body#/conversationId"}, None),
    },
    ("conversations_list", "200"): {
        "GetConversation": ("conversation_get", {"conversation_id": "$response.body#/results/0/id"}, None),
        "DeleteConversation": ("conversation_delete", {"conversation_id": "$response.body#/results/0/id"}, None),
        "ChatInConversation": ("chat", {}, {"message": "Hello", "conversationId": "$response.body#/results/0/id"}),
    },
    ("conversation_get", "200"): {
        "PutConversation": ("conversation_put", {"conversation_id": "$response.body#/id"}, "$response.body"),
        "GetCard": ("card_get", {"card_id": "$response.body#/cards/0/id"}, None),
        "ChatInConversation": ("chat", {}, {"message": "Hello", "conversationId": "$response.body#/id"}),
    },
    ("conversation_put", "200"): {
        "GetConversation": ("conversation_get", {"conversation_id": "$response.body#/conversation/id"}, None),
        "Regenerate": ("conversation_regenerate", {"conversation_id": "$response.body#/conversation/id"}, None),
        "EditLastMessage": ("conversation_edit", {"conversation_id": "$response.body#/conversation/id"}, None),
        "GiveFeedback": ("message_feedback", {"message_id": "$response.body#/conversation/messages/0/id"}, None),
    },
    ("conversation_regenerate", "202"): {
        "GetTurn": ("turn_get", {"turn_id": "$response.body#/turnId"}, None),
    },
    ("conversation_edit", "202"): {
        "GetTurn": ("turn_get", {"turn_id": "$response.body#/turnId"}, None),
    },
    ("turn_get", "200"): {
        "GetConversation": ("conversation_get", {"conversation_id": "$response.body#/conversationId"}, None),
        "FollowEvents": ("turn_events", {"turn_id": "$response.body#/id"}, None),
        "CancelTurn": ("turn_cancel", {"turn_id": "$response.body#/id"}, None),
        "GiveFeedback": ("message_feedback", {"message_id": "$response.body#/messageIds/0"}, None),
    },
    ("card_get", "200"): {
        "ConfirmCard": ("card_confirm", {"card_id": "$response.body#/id"}, {"hash": "$response.body#/hash"}),
        "CancelCard": ("card_cancel", {"card_id": "$response.body#/id"}, {}),
        "GetConversation": ("conversation_get", {"conversation_id": "$response.body#/conversationId"}, None),
    },
}


def postprocess_links(result, generator, request, public):
    """Adds LINKS to the operations' success responses."""
    operations = {
        operation["operationId"]: operation
        for path_item in result.get("paths", {}).values()
        for operation in path_item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    for (source, status_code), links in LINKS.items():
        response = operations[source]["responses"][status_code]
        response["links"] = {
            name: _link(target, parameters, body) for name, (target, parameters, body) in links.items()
        }
    return result


def _link(target: str, parameters: dict, body) -> dict:
    link = {"operationId": target}
    if parameters:
        link["parameters"] = parameters
    if body is not None:
        link["requestBody"] = body
    return link


# Read-only fields an answer leaves out when empty; drf-spectacular makes every
# read-only field required. A message's files are absent when it has none, so
# that a conversation without files reads as before (the /ai/ door's documents).
OPTIONAL_IN_ANSWERS = {"Message": ("attachments", "afterReading")}


def postprocess_optional_fields(result, generator, request, public):
    schemas = result.get("components", {}).get("schemas", {})
    for component, names in OPTIONAL_IN_ANSWERS.items():
        schema = schemas.get(component)
        if schema and "required" in schema:
            schema["required"] = [name for name in schema["required"] if name not in names]
    return result


def extend_schema(**kwargs):
    """drf-spectacular's extend_schema for the engine's API methods, built on
    ApiAutoSchema whatever the product's DEFAULT_SCHEMA_CLASS: drf-spectacular
    bases a method's schema on that setting and can't rebase it on the view's
    own schema when the setting is DRF's AutoSchema (a product that doesn't use
    drf-spectacular)."""
    decorate = spectacular_extend_schema(**kwargs)

    def decorator(method):
        if inspect.isclass(method) or "schema" in getattr(method, "kwargs", {}):
            return decorate(method)
        method.schema = ApiAutoSchema  # the base extend_schema looks for first
        try:
            return decorate(method)
        finally:
            del method.schema

    return decorator
