"""Provider keys sealed before ASSISTANT_KEYS_SECRET (v1: key derived from
SECRET_KEY, organization only in the associated data) are sealed again as v2
(ASSISTANT_KEYS_SECRET, organization and provider). A row that opens under
neither SECRET_KEY nor SECRET_KEY_FALLBACKS is left as it is and reported on
stdout: its organization must enter that key again."""

from django.db import migrations


def reseal_legacy_keys(apps, schema_editor):
    from assistant_engine.providers.sealing import reseal_all

    resealed, unreadable = reseal_all(apps.get_model("assistant", "ProviderKey"))
    if unreadable:
        print(f"\n  {len(unreadable)} provider key(s) could not be opened (ids {unreadable}): enter them again.")


class Migration(migrations.Migration):
    dependencies = [("assistant", "0003_erasure_permissions_drop_turn_assistant_message")]

    operations = [migrations.RunPython(reseal_legacy_keys, migrations.RunPython.noop)]
