"""The full-text search of message text (GET /api/conversations?q=) keyed by
conversation first: GIN (thread_id, to_tsvector('simple', content)) with the
btree_gin extension, so a search reads the posting entries of the person's own
conversations, never the word's entries of every tenant (which the single-column
index of 0008 did). PostgreSQL only: SQLite searches with a plain match."""

from django.contrib.postgres.operations import BtreeGinExtension
from django.db import migrations

CREATE = (
    "CREATE INDEX IF NOT EXISTS message_thread_fts ON conversations_message "
    "USING gin (thread_id, to_tsvector('simple', content))"
)
DROP = "DROP INDEX IF EXISTS message_thread_fts"
OLD_CREATE = (
    "CREATE INDEX IF NOT EXISTS message_content_fts ON conversations_message "
    "USING gin (to_tsvector('simple', content))"
)
OLD_DROP = "DROP INDEX IF EXISTS message_content_fts"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)
        schema_editor.execute(OLD_DROP)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(OLD_CREATE)
        schema_editor.execute(DROP)


class BtreeGinOnPostgreSQL(BtreeGinExtension):
    """Django's operation skips other databases going forwards, not backwards
    (it asks pg_extension): SQLite has nothing to undo."""

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):
    dependencies = [("conversations", "0009_message_versions")]

    # BtreeGinExtension does nothing on other databases; btree_gin is a trusted
    # extension (PostgreSQL 13+): the database owner may create it.
    operations = [BtreeGinOnPostgreSQL(), migrations.RunPython(forwards, backwards)]
