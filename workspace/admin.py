from django.contrib import admin

from workspace.models import InboxMessage, Note, SentEmail


@admin.register(Note)
class NoteAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "organization", "updated_at"]
    list_filter = ["organization"]
    search_fields = ["title", "owner__username"]
    raw_id_fields = ["owner"]
    readonly_fields = ["created_at", "updated_at"]


@admin.register(InboxMessage)
class InboxMessageAdmin(admin.ModelAdmin):
    list_display = ["subject", "sender", "recipient", "organization", "received_at"]
    list_filter = ["organization"]
    search_fields = ["subject", "sender", "recipient__username"]
    raw_id_fields = ["recipient"]


@admin.register(SentEmail)
class SentEmailAdmin(admin.ModelAdmin):
    list_display = ["subject", "to", "sender", "organization", "sent_at"]
    list_filter = ["organization"]
    search_fields = ["subject", "to", "sender__username"]
    raw_id_fields = ["sender"]
    # A record of what went out: not something to edit afterwards.
    readonly_fields = ["organization", "sender", "from_address", "to", "subject", "body", "sent_at"]
