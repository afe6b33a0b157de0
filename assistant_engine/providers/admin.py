"""Staff add an organization's provider key: it is verified with the provider,
stored sealed, and only its hint is shown again."""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.org_models import KeyRefused, provider_key_save, verify_key


class ProviderKeyForm(forms.ModelForm):
    key = forms.CharField(
        label="API key", strip=True, widget=forms.PasswordInput(render_value=False),
        help_text="Verified with one cheap call to the provider, then stored sealed (AES-GCM) for this "
        "organization only; only its last 4 characters are shown again. Replaces the organization's key "
        "for that provider.",
    )

    class Meta:
        model = ProviderKey
        fields = ["organization", "provider"]

    def validate_unique(self):
        pass  # saving replaces the organization's key for that provider (provider_key_save)

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        try:
            verify_key(cleaned["provider"], cleaned["key"])
        except KeyRefused as refusal:
            raise ValidationError(f"The provider refused this key ({refusal.kind}); it was not saved.") from None
        return cleaned


@admin.register(ProviderKey)
class ProviderKeyAdmin(admin.ModelAdmin):
    form = ProviderKeyForm
    list_display = ["organization", "provider", "hint", "created_by", "created_at"]
    list_filter = ["provider"]
    list_select_related = ["organization", "created_by"]
    search_fields = ["organization__slug", "organization__name"]

    def get_fields(self, request, obj=None):
        return ["organization", "provider", "key"] if obj is None else ["organization", "provider", "hint",
                                                                       "created_by", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        # A key is replaced (delete, add), never edited: its organization is sealed into it.
        return [] if obj is None else ["organization", "provider", "hint", "created_by", "created_at"]

    def save_model(self, request, obj, form, change):
        """Through the service (verified in the form's clean), which records the change."""
        saved = provider_key_save(
            None, organization_id=form.cleaned_data["organization"].pk, provider=form.cleaned_data["provider"],
            plaintext=form.cleaned_data["key"], actor_id=request.user.pk, verified=True,
        )
        obj.pk, obj.hint, obj.sealed = saved.pk, saved.hint, saved.sealed
