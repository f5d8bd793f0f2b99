from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("monitors", "0012_maintenance_windows"),
    ]

    operations = [
        migrations.AddField(
            model_name="statuschange",
            name="cause_kind",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        migrations.AddField(
            model_name="statuschange",
            name="cause_reason",
            field=models.TextField(
                blank=True,
                default="",
                help_text='The failure\'s own sentence: "Required tools missing: search_docs".',
            ),
        ),
        migrations.AlterField(
            model_name="statuschange",
            name="reason",
            field=models.TextField(
                blank=True, default="", help_text="The verdict's sentence over the regions."
            ),
        ),
    ]
