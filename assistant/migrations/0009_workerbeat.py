from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("assistant", "0008_card_identical_done_at"),
    ]

    operations = [
        migrations.CreateModel(
            name="WorkerBeat",
            fields=[
                ("name", models.CharField(max_length=255, primary_key=True, serialize=False)),
                ("beat_at", models.DateTimeField()),
                ("started_at", models.DateTimeField()),
            ],
            options={
                "indexes": [models.Index(fields=["beat_at"], name="workerbeat_beat_at")],
            },
        ),
    ]
