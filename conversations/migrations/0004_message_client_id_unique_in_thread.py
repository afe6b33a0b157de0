from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0003_message_client_id_filled_from_id"),
    ]

    operations = [
        migrations.AlterField(
            model_name="message",
            name="client_id",
            field=models.UUIDField(editable=False),
        ),
        migrations.AddConstraint(
            model_name="message",
            constraint=models.UniqueConstraint(fields=("thread", "client_id"), name="message_client_id_unique_in_thread"),
        ),
    ]
