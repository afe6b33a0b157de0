# ProviderKey moved here from the assistant app with its table (assistant_providerkey,
# created by assistant 0002): this migration creates the model's state only, no SQL
# on the table; assistant 0012 removes it from the assistant's state.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def rename_content_type(apps, schema_editor, old="assistant", new="assistant_providers"):
    """Staff permissions and admin log entries on provider keys follow the model."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    if not ContentType.objects.using(db).filter(app_label=new, model="providerkey").exists():
        ContentType.objects.using(db).filter(app_label=old, model="providerkey").update(app_label=new)


def rename_content_type_back(apps, schema_editor):
    rename_content_type(apps, schema_editor, old="assistant_providers", new="assistant")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('assistant_organizations', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ProviderKey',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('provider', models.CharField(choices=[('infomaniak', 'Infomaniak AI Services (Switzerland)'), ('bedrock', 'AWS Bedrock (EU)'), ('anthropic', 'Anthropic (US)')], max_length=20)),
                        ('sealed', models.TextField(editable=False)),
                        ('hint', models.CharField(editable=False, max_length=8)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='provider_keys', to='assistant_organizations.organization')),
                    ],
                    options={
                        'db_table': 'assistant_providerkey',
                        'constraints': [models.UniqueConstraint(fields=('organization', 'provider'), name='provider_key_one_per_provider')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(rename_content_type, rename_content_type_back),
    ]
