"""Give every component a badge token: the unguessable key of its badge URLs on a password page.

In three steps, as a unique column with a generated default needs: the column nullable, a
token for each existing row, then unique and required. Not atomic as a whole, so PostgreSQL
never alters the table in the transaction that updated its rows; each step is its own.
"""

from django.db import migrations, models

import statuspages.models


def fill_tokens(apps, schema_editor):
    component = apps.get_model("statuspages", "Component")
    for row in component.objects.filter(badge_token__isnull=True).only("id").iterator():
        row.badge_token = statuspages.models.badge_token()
        row.save(update_fields=["badge_token"])


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("statuspages", "0002_subscribers"),
    ]

    operations = [
        migrations.AddField(
            model_name="component",
            name="badge_token",
            field=models.CharField(editable=False, max_length=64, null=True),
        ),
        migrations.RunPython(fill_tokens, migrations.RunPython.noop, atomic=True),
        migrations.AlterField(
            model_name="component",
            name="badge_token",
            field=models.CharField(
                default=statuspages.models.badge_token, editable=False, max_length=64, unique=True
            ),
        ),
    ]
