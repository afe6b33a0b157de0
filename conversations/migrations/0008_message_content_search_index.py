"""A GIN index for the full-text search of message text (GET /api/conversations?q=),
on PostgreSQL only: SQLite searches with a plain match."""

from django.db import migrations

CREATE = (
    "CREATE INDEX IF NOT EXISTS message_content_fts ON conversations_message "
    "USING gin (to_tsvector('simple', content))"
)
DROP = "DROP INDEX IF EXISTS message_content_fts"


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("conversations", "0007_thread_next_seq_and_history_bytes")]

    operations = [migrations.RunPython(create_index, drop_index)]
