"""Message ids become unique within their conversation, not across the product.

The API id of a message moves to `client_id`; the primary key stays what tool
calls and turns link to. Existing messages keep their API id (client_id = id).
The column is filled here and made required in the next migration, so on
PostgreSQL the data update and the constraint change run in separate
transactions.
"""

from django.db import migrations, models
from django.db.models import F


def fill_client_id(apps, schema_editor):
    Message = apps.get_model("conversations", "Message")
    Message.objects.update(client_id=F("id"))


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0002_message_notice_message_turn_id_toolcall_finished_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="client_id",
            field=models.UUIDField(editable=False, null=True),
        ),
        migrations.RunPython(fill_client_id, migrations.RunPython.noop),
    ]
