from django.contrib import admin

from accounts.models import User


@admin.register(User)
class UserAdmin(admin.ModelAdmin):
    # search_fields: the assistant's admin pages pick people with an autocomplete over them.
    list_display = ["email", "full_name", "is_staff"]
    search_fields = ["email", "full_name"]
    ordering = ["email"]
