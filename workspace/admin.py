from django.contrib import admin

from assistant_engine.organizations.access_log import Kind
from assistant_engine.organizations.admin import RecordsStaffAccess
from workspace.models import InboxMessage, Note, SentEmail


@admin.register(Note)
class NoteAdmin(RecordsStaffAccess, admin.ModelAdmin):
    list_display = ["title", "owner", "organization", "updated_at"]
    list_filter = ["organization"]
    search_fields = ["title", "owner__username"]
    raw_id_fields = ["owner"]
    readonly_fields = ["created_at", "updated_at"]
    staff_access_kind = Kind.NOTE

    def staff_access_owner(self, obj):
        return obj.owner_id, obj.organization_id


@admin.register(InboxMessage)
class InboxMessageAdmin(RecordsStaffAccess, admin.ModelAdmin):
    list_display = ["subject", "sender", "recipient", "organization", "received_at"]
    list_filter = ["organization"]
    search_fields = ["subject", "sender", "recipient__username"]
    raw_id_fields = ["recipient"]
    staff_access_kind = Kind.INBOX_MESSAGE

    def staff_access_owner(self, obj):
        return obj.recipient_id, obj.organization_id


@admin.register(SentEmail)
class SentEmailAdmin(RecordsStaffAccess, admin.ModelAdmin):
    list_display = ["subject", "to", "sender", "organization", "sent_at"]
    list_filter = ["organization"]
    search_fields = ["subject", "to", "sender__username"]
    raw_id_fields = ["sender"]
    # A record of what went out: not something to edit afterwards.
    readonly_fields = ["organization", "sender", "from_address", "to", "subject", "body", "sent_at"]
    staff_access_kind = Kind.SENT_EMAIL

    def staff_access_owner(self, obj):
        return obj.sender_id, obj.organization_id
