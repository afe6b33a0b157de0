"""Staff moderate conversations: find a thread, read it, delete it.

A thread's page shows each message with its tool calls (name, input, the raw
result folded, the error flag); the assistant app adds the thread's cards.
Opening it is recorded in the staff access log (organizations.access_log).
A conversation is read-only here (its person and the assistant write it); the
one write staff have is deleting a thread, refused while a reply is being
written into it, as `conversations.services.thread_delete` refuses it.
"""

import json
from uuid import UUID

from django.contrib import admin
from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Prefetch
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from assistant_engine.foundation.admin import ScaledChangeList, ViewOnlyAdminMixin, chosen_only_filter
from assistant_engine.foundation.markdown import render_markdown
from assistant_engine.foundation.people import login_field
from assistant_engine.organizations.access_log import Kind
from assistant_engine.organizations.admin import RecordsStaffAccess
from conversations.models import Message, MessageFeedback, Summary, Thread, ToolCall

BUSY = "A reply is being written into this conversation: it can be deleted once the turn has ended."


# A raw result can be hundreds of KB: folded, so moderators open the ones they need.
TOOL_CALL_HTML = (
    '<div class="tool-call" data-tool-call="{}"><strong>{}</strong>{}'
    '<pre class="tool-call__input">{}</pre>'
    '<details class="tool-call__result"><summary>raw result ({} characters)</summary><pre>{}</pre></details></div>'
)


ERROR_FLAG = mark_safe(' <span class="errornote" data-tool-call-error>error</span>')  # noqa: S308 (a constant)


def tool_call_parts(call: ToolCall) -> tuple:
    raw = "(no result yet)" if call.result is None else pretty_json(call.result)
    error = ERROR_FLAG if call.is_error else ""
    return call.tool_use_id, call.name, error, pretty_json(call.input), len(raw), raw


def pretty_json(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


class MessageInline(ViewOnlyAdminMixin, admin.TabularInline):
    """The thread's messages in order, read-only, each with its tool calls
    (all of them in one query for the page, however many messages)."""

    model = Message
    fields = ["seq", "role", "status", "content_shown", "notice", "tool_calls_shown", "turn_id", "created_at"]
    readonly_fields = fields
    ordering = ["seq"]
    extra = 0
    can_delete = False

    def get_queryset(self, request):
        calls = ToolCall.objects.order_by("position")
        return super().get_queryset(request).prefetch_related(Prefetch("tool_calls", queryset=calls))

    @admin.display(description="content")
    def content_shown(self, message):
        # Rendered as the person saw it (the pages' sanitizer: nothing runs or loads), not raw Markdown.
        return mark_safe(f'<div class="moderated-message">{render_markdown(message.content)}</div>')  # noqa: S308

    @admin.display(description="tool calls")
    def tool_calls_shown(self, message):
        calls = message.tool_calls.all()
        if not calls:
            return "—"
        return format_html_join("", TOOL_CALL_HTML, (tool_call_parts(call) for call in calls))

    def has_view_permission(self, request, obj=None):
        # The messages are the conversation: who may see a thread sees them
        # (no separate "view message" permission to hand out).
        return request.user.has_perm("conversations.view_thread")


class SummaryInline(ViewOnlyAdminMixin, admin.TabularInline):
    """What the model is sent instead of the older messages (assistant/summaries.py),
    each with the turn that wrote it and what it cost; the newest is in use."""

    model = Summary
    fields = ["through_seq", "created_at", "turn_id", "input_tokens", "output_tokens", "read_private",
              "read_untrusted", "content"]
    readonly_fields = fields
    ordering = ["through_seq"]
    extra = 0
    can_delete = False
    verbose_name_plural = "summaries of earlier messages (the model gets the newest and the messages from its seq on)"

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("conversations.view_thread")


@admin.register(Thread)
class ThreadAdmin(ScaledChangeList, RecordsStaffAccess, admin.ModelAdmin):
    list_display = ["id", "organization", "user", "title", "status", "message_count", "last_activity_at"]
    list_filter = ["status", chosen_only_filter("organization", "organization")]
    list_select_related = ["organization", "user"]
    search_fields = ["title", f"user__{login_field()}", "=organization__slug"]
    search_help_text = ("A conversation id (exact), words of its title, its person's username or its "
                        "organization's slug (exact).")
    ordering = ["-last_activity_at"]
    fields = ["id", "organization", "user", "title", "status", "message_count", "created_at", "updated_at",
              "last_activity_at"]
    readonly_fields = fields
    inlines = [SummaryInline, MessageInline]
    staff_access_kind = Kind.CONVERSATION

    def get_inline_instances(self, request, obj=None):
        # A conversation never summarized (Thread.summary_seq 0) asks for no summary.
        inlines = super().get_inline_instances(request, obj)
        return [inline for inline in inlines if not isinstance(inline, SummaryInline) or (obj and obj.summary_seq)]

    @admin.display(description="messages", ordering="next_seq")
    def message_count(self, thread):
        # The thread's own counter: its messages are seqs 0 to next_seq - 1
        # (every write path keeps it), so the page counts no message rows.
        return thread.next_seq

    def get_search_results(self, request, queryset, search_term):
        # An id is matched exactly as a UUID: the text form of a UUID column
        # differs between SQLite and PostgreSQL, so no "contains" on it.
        try:
            wanted = UUID(search_term.strip())
        except ValueError:
            return super().get_search_results(request, queryset, search_term)
        return queryset.filter(id=wanted), False

    def get_actions(self, request):
        # One thread at a time, from its page: the bulk delete would not skip
        # the threads being answered.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.status == Thread.Status.RESPONDING:
            return False
        return super().has_delete_permission(request, obj)

    def get_deleted_objects(self, objs, request):
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        # What the thread holds goes with it, as through thread_delete: its
        # messages, tool calls and the cards other apps attach to it (whose
        # own admin refuses deleting one alone). Only the thread's own
        # permission counts, and the delete view has checked it.
        return deleted, model_count, perms_needed & {str(Thread._meta.verbose_name)}, protected

    def delete_model(self, request, obj):
        with transaction.atomic():
            # Race: a turn starting between the page's check and this delete;
            # chat_submit locks the same row to start one.
            thread = Thread.objects.select_for_update().filter(pk=obj.pk).first()
            if thread is None:
                return
            if thread.status == Thread.Status.RESPONDING:
                raise PermissionDenied(BUSY)
            thread.delete()

    def response_delete(self, request, obj_display, obj_id):
        response = super().response_delete(request, obj_display, obj_id)
        # Django goes back to the list only for staff who may change threads;
        # a moderator views and deletes them, and goes back to the list too.
        index = reverse("admin:index", current_app=self.admin_site.name)
        if response.get("Location") == index and self.has_view_permission(request):
            changelist = reverse("admin:conversations_thread_changelist", current_app=self.admin_site.name)
            context = {"preserved_filters": self.get_preserved_filters(request), "opts": self.opts}
            response["Location"] = add_preserved_filters(context, changelist)
        return response


@admin.register(MessageFeedback)
class MessageFeedbackAdmin(RecordsStaffAccess, ViewOnlyAdminMixin, admin.ModelAdmin):
    """People's 👍/👎 on replies, read-only. The list shows no words of theirs;
    a feedback's page (its word, the reply it is about) is a view of the
    person's data, recorded in the staff access log."""

    list_display = ["id", "rating", "organization", "person", "updated_at"]
    list_filter = ["rating"]
    list_select_related = ["message__thread__organization", "message__thread__user"]
    ordering = ["-updated_at"]
    fields = ["rating", "comment", "reply", "conversation", "person", "created_at", "updated_at"]
    readonly_fields = fields
    staff_access_kind = Kind.FEEDBACK

    def get_queryset(self, request):
        return super().get_queryset(request).select_related(
            "message__thread__organization", "message__thread__user")

    def staff_access_owner(self, obj) -> tuple[int | None, int | None]:
        return obj.message.thread.user_id, obj.message.thread.organization_id

    @admin.display(description="organization")
    def organization(self, obj):
        return obj.message.thread.organization

    @admin.display(description="person")
    def person(self, obj):
        return obj.message.thread.user

    @admin.display(description="reply")
    def reply(self, obj):
        return obj.message.content

    @admin.display(description="conversation")
    def conversation(self, obj):
        url = reverse("admin:conversations_thread_change", args=[obj.message.thread_id])
        return format_html('<a href="{}">{}</a>', url, obj.message.thread_id)
