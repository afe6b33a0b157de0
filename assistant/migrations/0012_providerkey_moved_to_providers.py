# ProviderKey moved to the providers app with its table: removed from the
# assistant's state only (providers 0001 holds it now), no SQL on the table.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('assistant', '0011_turn_failure_kind_model'),
        ('assistant_providers', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='ProviderKey')],
            database_operations=[],
        ),
    ]
