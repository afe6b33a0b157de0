"""rest_framework.authtoken is gone (replaced by hashed, expiring, per-organization
tokens, organizations.ApiToken): its table held every token in clear, so it is
dropped rather than left behind. Those tokens stop working; their owners create
new ones on the tokens page (or `manage.py create_token`)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("assistant_organizations", "0003_api_tokens_hashed_per_organization")]

    operations = [migrations.RunSQL("DROP TABLE IF EXISTS authtoken_token", migrations.RunSQL.noop)]
