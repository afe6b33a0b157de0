"""The staff permission to download a person's personal data export.

Created here, on the Erasure content type, rather than in Erasure.Meta: the
model is unchanged. Viewing users (auth.view_user) is not enough to download
everything a person has.
"""

from django.db import migrations

CODENAME = "export_personal_data"
NAME = "Can download a person's personal data export"


def add_permission(apps, schema_editor):
    content_type_model = apps.get_model("contenttypes", "ContentType")
    permission_model = apps.get_model("auth", "Permission")
    db = schema_editor.connection.alias
    # On a fresh database the content types are only created after all
    # migrations (post_migrate): create Erasure's now, that signal keeps it.
    content_type, _ = content_type_model.objects.using(db).get_or_create(app_label="assistant", model="erasure")
    permission_model.objects.using(db).get_or_create(
        content_type=content_type, codename=CODENAME, defaults={"name": NAME}
    )


def remove_permission(apps, schema_editor):
    permission_model = apps.get_model("auth", "Permission")
    permission_model.objects.using(schema_editor.connection.alias).filter(
        content_type__app_label="assistant", codename=CODENAME
    ).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("assistant", "0002_providerkey_erasure_turn_requeued_at"),
        ("auth", "0002_alter_permission_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(add_permission, remove_permission)]
