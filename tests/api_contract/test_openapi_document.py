"""What the OpenAPI document says, point by point (issue 18, "What the schema
gets wrong today", 1–5), and that the server does what it says."""

import re

import pytest

from assistant.models import Turn
from assistant_engine.foundation import api_errors
from assistant_engine.foundation.openapi import ERROR_STATUS
from tests.conversations.factories import make_thread, stored_conversation

pytestmark = pytest.mark.django_db


@pytest.fixture
def document(client) -> dict:
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def test_the_document_is_valid_openapi(document):
    from drf_spectacular.validation import validate_schema

    validate_schema(document)  # the OpenAPI 3.0 meta-schema; it does not follow references, so:
    components = document["components"]["schemas"]
    assert {ref.rsplit("/", 1)[1] for ref in references(document)} <= set(components)
    assert document["components"]["schemas"]["Conversation"]["properties"]["cards"]["items"] == {
        "$ref": "#/components/schemas/ActionCard"}


def test_the_document_is_generated_without_a_warning(tmp_path):
    from django.core.management import call_command

    # --fail-on-warn: an unresolvable serializer, a name collision, … fail here.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))


def references(node):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from references(value)
    elif isinstance(node, list):
        for value in node:
            yield from references(value)


def operations(document):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def operation(document, operation_id: str) -> dict:
    return next(op for _, _, op in operations(document) if op["operationId"] == operation_id)


def component(document, ref_or_schema: dict) -> dict:
    if "$ref" in ref_or_schema:
        return document["components"]["schemas"][ref_or_schema["$ref"].rsplit("/", 1)[1]]
    return ref_or_schema


def json_schema(document, op: dict, status: str) -> dict:
    return component(document, op["responses"][status]["content"]["application/json"]["schema"])


def error_codes(document, op: dict, status: str) -> list[str]:
    return component(document, json_schema(document, op, status)["properties"]["code"])["enum"]


# --- 1. Pagination -------------------------------------------------------------------


def test_the_conversation_list_is_documented_as_the_page_it_answers(document):
    op = operation(document, "conversations_list")
    page = json_schema(document, op, "200")
    assert set(page["properties"]) == {"count", "next", "previous", "results"}
    assert page["properties"]["results"]["items"]["$ref"].endswith("/ConversationSummary")
    parameters = {p["name"]: p["schema"] for p in op["parameters"] if p["in"] == "query"}
    assert parameters == {
        "page": {"type": "integer", "minimum": 1},
        "pageSize": {"type": "integer", "minimum": 1, "maximum": 200},
        "q": {"type": "string", "maxLength": 200},  # the search (issue 17)
    }
    assert "not_found" in error_codes(document, op, "404")  # a page past the last one
    assert "invalid_page" in error_codes(document, op, "400")


@pytest.mark.parametrize("query", [{"pageSize": "abc"}, {"pageSize": "0"}, {"pageSize": "201"}, {"page": "0"},
                                   {"page": "-1"}, {"page": "last"}, {"pageSize": "²"}])
def test_a_page_or_page_size_out_of_its_documented_range_is_400(owner, query):
    response = owner.client.get("/api/conversations", query)
    assert response.status_code == 400 and response.json()["code"] == "invalid_page"


def test_a_page_past_the_last_one_is_404_and_the_page_size_is_honoured(owner):
    for n in range(3):
        make_thread(owner, title=f"t{n}")
    assert owner.client.get("/api/conversations", {"page": "999"}).json()["code"] == "not_found"
    page = owner.client.get("/api/conversations", {"pageSize": "2", "page": "2"}).json()
    assert page["count"] == 3 and len(page["results"]) == 1 and page["next"] is None


# --- 2. Errors -----------------------------------------------------------------------


def test_every_operation_documents_the_shared_refusals_in_the_one_error_shape(document):
    for path, method, op in operations(document):
        where = f"{method.upper()} {path}"
        assert set(error_codes(document, op, "401")) == {"not_authenticated", "authentication_failed"}, where
        assert "throttled" in error_codes(document, op, "429"), where  # and an upload's own storage bounds
        assert {"no_organization", "permission_denied", "membership_suspended"} <= set(
            error_codes(document, op, "403")), where
        assert "organization_required" in error_codes(document, op, "400"), where
        assert "organization_not_found" in error_codes(document, op, "404"), where
        for status, response in op["responses"].items():
            if status >= "400":
                schema = component(document, response["content"]["application/json"]["schema"])
                assert schema["required"] == ["code", "detail"] and schema["additionalProperties"] is False, where


def test_operations_with_a_body_document_its_refusals(document):
    for _, method, op in operations(document):
        if method in ("post", "put"):
            assert {"invalid", "malformed_json"} <= set(error_codes(document, op, "400"))
            assert error_codes(document, op, "413")[0] == "payload_too_large"
            assert error_codes(document, op, "415") == ["unsupported_media_type"]
            assert "fields" in json_schema(document, op, "400")["properties"]


def test_each_operation_documents_its_own_codes(document):
    chat = operation(document, "chat")
    assert error_codes(document, chat, "402") == ["credits_exhausted", "member_cap_reached"]
    assert error_codes(document, chat, "409") == ["conversation_busy", "conversation_full", "file_already_attached",
                                                  "file_not_ready"]
    assert error_codes(document, chat, "422") == ["model_not_allowed", "unreadable_pdf", "too_many_pages"]
    assert "too_many_files" in error_codes(document, chat, "400")
    upload = operation(document, "file_upload")
    assert error_codes(document, upload, "413") == ["payload_too_large", "file_too_large", "organization_files_full"]
    assert error_codes(document, upload, "429") == ["throttled", "unattached_files_limit", "files_still_reading"]
    assert error_codes(document, upload, "422") == ["empty_file", "unsupported_file_type"]
    assert error_codes(document, chat, "503") == ["queue_unavailable", "model_unavailable"]
    put = operation(document, "conversation_put")
    assert error_codes(document, put, "409") == ["conversation_busy"]
    edit = operation(document, "conversation_edit")
    assert {"file_not_in_message", "too_many_files"} <= set(error_codes(document, edit, "400"))
    assert "not_found" in error_codes(document, edit, "404")
    assert "too_many_messages" in error_codes(document, put, "400")
    assert "id_mismatch" not in error_codes(document, put, "400")  # the body's id is ignored: the URL names it
    assert "conversation_too_large" in error_codes(document, put, "413")
    assert error_codes(document, operation(document, "conversation_delete"), "409") == ["conversation_busy"]
    confirm = operation(document, "card_confirm")
    assert error_codes(document, confirm, "409") == ["stale", "decided", "repeat"]
    assert error_codes(document, confirm, "410") == ["expired"]
    assert json_schema(document, confirm, "409")["properties"]["card"]["$ref"].endswith("/ActionCard")
    assert "409" not in operation(document, "credits_get")["responses"]


# Issue 34.15: requests of the documented shape that the server won't carry out for what it holds.
UNPROCESSABLE = {"model_not_allowed", "empty_file", "unsupported_file_type", "unreadable_pdf", "too_many_pages"}


def test_a_valid_request_the_organization_or_the_bytes_refuse_is_a_documented_422_never_a_400(document):
    by_operation = {op["operationId"]: set(error_codes(document, op, "422"))
                    for _, _, op in operations(document) if "422" in op["responses"]}
    assert set().union(*by_operation.values()) == UNPROCESSABLE
    assert by_operation == {
        "chat": {"model_not_allowed", "unreadable_pdf", "too_many_pages"},
        "conversation_rename": {"model_not_allowed"},
        "conversation_regenerate": {"model_not_allowed"}, "conversation_edit": {"model_not_allowed"},
        "file_upload": {"empty_file", "unsupported_file_type"},
    }
    for _, _, op in operations(document):
        assert not UNPROCESSABLE & set(error_codes(document, op, "400")) if "400" in op["responses"] else True
    assert "fields" in json_schema(document, operation(document, "chat"), "422")["properties"]
    assert {code for code, status in ERROR_STATUS.items() if status == 422} == UNPROCESSABLE


def test_every_code_the_error_handler_can_give_is_known_to_the_document():
    assert set(api_errors._CODES.values()) - {"method_not_allowed"} <= set(ERROR_STATUS)


def test_an_undeclared_code_cannot_be_documented():
    from assistant_engine.foundation.openapi import errors

    with pytest.raises(ValueError, match="not_a_code"):
        errors("not_a_code")


# --- 3. Path ids ---------------------------------------------------------------------


def test_path_ids_are_uuids_and_a_malformed_one_is_a_documented_400(document, owner):
    for path, _, op in operations(document):
        for parameter in (p for p in op["parameters"] if p["in"] == "path"):
            assert parameter["schema"] == {"type": "string", "format": "uuid"}, path
        if "{" in path:
            assert "invalid_id" in error_codes(document, op, "400"), path
    response = owner.client.get("/api/cards/not-a-uuid")
    assert response.status_code == 400 and response.json()["code"] == "invalid_id"


# --- 4. Closed bodies ----------------------------------------------------------------


def request_schemas(document, schema: dict, seen=None):
    """The schema and every object schema nested in it."""
    seen = seen if seen is not None else set()
    schema = component(document, schema)
    if id(schema) in seen:
        return
    seen.add(id(schema))
    if schema.get("type") == "object":
        yield schema
    for child in (*schema.get("properties", {}).values(), schema.get("items") or {}):
        if "$ref" in child or child.get("type") in ("object", "array"):
            yield from request_schemas(document, child, seen)


def test_every_request_body_is_closed(document):
    def body_types(op):
        return op.get("requestBody", {}).get("content", {})

    bodies = [body_types(op)["application/json"]["schema"]
              for _, _, op in operations(document) if "application/json" in body_types(op)]
    # The one multipart body: a file upload (POST /api/files).
    [upload] = [op for _, _, op in operations(document) if "multipart/form-data" in body_types(op)]
    assert upload["operationId"] == "file_upload"
    assert len(bodies) == 8  # chat, put, confirm, cancel; rename and edit (issue 17); instructions, feedback (issue 25)
    checked = [schema for body in bodies for schema in request_schemas(document, body)]
    assert len(checked) >= 6  # with the nested messages and tool calls
    assert all(schema["additionalProperties"] is False for schema in checked)


def test_an_unknown_field_is_refused_as_the_document_says(owner):
    response = owner.client.post("/api/chat", {"message": "Hi", "colour": "red"}, format="json")
    assert response.status_code == 400 and response.json()["fields"] == {"colour": ["Unknown field."]}


# --- 5. Patterns and nullability ------------------------------------------------------


def test_a_card_hash_is_64_lowercase_hex(document, owner):
    schema = component(document, {"$ref": "#/components/schemas/ConfirmRequestRequest"})["properties"]["hash"]
    assert schema["pattern"] == "^[0-9a-f]{64}$" and schema["minLength"] == schema["maxLength"] == 64
    # "$" also matches before a final newline: the length bound makes the pattern exact.
    response = owner.client.post(f"/api/cards/{Turn().id}/confirm", {"hash": "a" * 64 + "\n"}, format="json")
    assert response.status_code == 400 and "hash" in response.json()["fields"]


def test_a_tool_call_input_may_be_any_json_but_null(document, owner):
    schema = component(document, {"$ref": "#/components/schemas/ToolCallRequest"})["properties"]["input"]
    assert "nullable" not in schema and {s["type"] for s in schema["anyOf"]} == {
        "object", "array", "string", "number", "boolean"}
    conversation = stored_conversation()
    conversation["messages"][1]["toolCalls"][0]["input"] = None
    response = owner.client.put(f"/api/conversations/{conversation['id']}", conversation, format="json")
    assert response.status_code == 400 and "messages.1.toolCalls.0.input" in response.json()["fields"]


def test_is_error_is_a_json_boolean_only(owner):
    conversation = stored_conversation()
    conversation["messages"][1]["toolCalls"][0]["isError"] = 0
    response = owner.client.put(f"/api/conversations/{conversation['id']}", conversation, format="json")
    assert response.status_code == 400 and "messages.1.toolCalls.0.isError" in response.json()["fields"]


def test_a_turn_whose_conversation_was_deleted_has_a_null_conversation_id(document, owner):
    schema = component(document, {"$ref": "#/components/schemas/TurnStatus"})["properties"]["conversationId"]
    assert schema["nullable"] is True
    thread = make_thread(owner)
    turn = Turn.objects.create(thread=thread, organization=owner.organization, user=owner.user, model_option="x",
                               status=Turn.Status.DONE)
    thread.delete()
    assert owner.client.get(f"/api/turns/{turn.id}").json()["conversationId"] is None


@pytest.mark.parametrize("message", ["Hello", "  a  ", "\u3000x", "x\n", "   ", "\t\n", "\x1c\x1d", "\u00a0",
                                     "\u2028", "a\x00b", "\ufeff"])
def test_the_chat_message_pattern_is_exactly_what_the_server_accepts(document, owner, message):
    pattern = component(document, {"$ref": "#/components/schemas/ChatRequestRequest"})["properties"]["message"]
    documented = re.search(pattern["pattern"], message) is not None
    response = owner.client.post("/api/chat", {"message": message}, format="json")
    accepted = response.status_code != 400
    assert documented == accepted, (message, response.json())


# --- Links ---------------------------------------------------------------------------


def test_links_chain_chat_to_turn_conversation_card_and_confirm(document):
    def links(operation_id, status):
        return operation(document, operation_id)["responses"][status]["links"]

    assert links("chat", "202")["GetTurn"] == {"operationId": "turn_get",
                                               "parameters": {"turn_id": "$response.body#/turnId"}}
    assert links("conversation_get", "200")["GetCard"]["parameters"] == {"card_id": "$response.body#/cards/0/id"}
    assert links("card_get", "200")["ConfirmCard"]["requestBody"] == {"hash": "$response.body#/hash"}
    # Issue 34.15: the stateful phase reaches regenerate, feedback, the events stream and Stop.
    put = links("conversation_put", "200")
    assert put["Regenerate"] == {"operationId": "conversation_regenerate",
                                 "parameters": {"conversation_id": "$response.body#/conversation/id"}}
    assert put["GiveFeedback"]["operationId"] == "message_feedback"
    assert links("conversation_regenerate", "202")["GetTurn"]["operationId"] == "turn_get"
    turn = links("turn_get", "200")
    assert turn["FollowEvents"] == {"operationId": "turn_events", "parameters": {"turn_id": "$response.body#/id"}}
    assert turn["CancelTurn"] == {"operationId": "turn_cancel", "parameters": {"turn_id": "$response.body#/id"}}
    assert turn["GiveFeedback"]["parameters"] == {"message_id": "$response.body#/messageIds/0"}
    targets = {link["operationId"] for _, _, op in operations(document)
               for response in op["responses"].values() for link in response.get("links", {}).values()}
    assert targets <= {op["operationId"] for _, _, op in operations(document)}


def test_operations_answering_the_same_codes_share_one_error_component(document):
    refs = {op["responses"]["401"]["content"]["application/json"]["schema"]["$ref"]
            for _, _, op in operations(document)}
    assert refs == {"#/components/schemas/ErrorNotAuthenticatedAuthenticationFailed"}
