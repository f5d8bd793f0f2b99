import django.db.models.deletion
from django.db import migrations, models


def copy_slot_verdicts(apps, schema_editor):
    """Move each healthcheck's verdict slot and settle time to its SlotVerdict row."""
    Healthcheck = apps.get_model("monitors", "Healthcheck")
    SlotVerdict = apps.get_model("monitors", "SlotVerdict")
    rows = (
        Healthcheck.objects.filter(models.Q(verdict_slot__isnull=False) | models.Q(settle_at__isnull=False))
        .values_list("id", "verdict_slot", "settle_at")
        .iterator(chunk_size=2000)
    )
    batch = []
    for hc_id, slot, settle_at in rows:
        batch.append(SlotVerdict(healthcheck_id=hc_id, slot=slot, settle_at=settle_at))
        if len(batch) == 2000:
            SlotVerdict.objects.bulk_create(batch)
            batch = []
    SlotVerdict.objects.bulk_create(batch)


def copy_back(apps, schema_editor):
    Healthcheck = apps.get_model("monitors", "Healthcheck")
    SlotVerdict = apps.get_model("monitors", "SlotVerdict")
    for row in SlotVerdict.objects.iterator(chunk_size=2000):
        Healthcheck.objects.filter(id=row.healthcheck_id).update(
            verdict_slot=row.slot, settle_at=row.settle_at
        )


class Migration(migrations.Migration):
    dependencies = [
        ("monitors", "0010_claim_outbox"),
    ]

    operations = [
        migrations.CreateModel(
            name="SlotVerdict",
            fields=[
                (
                    "healthcheck",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="slot_verdict",
                        serialize=False,
                        to="monitors.healthcheck",
                    ),
                ),
                ("slot", models.DateTimeField(blank=True, help_text="The latest slot decided.", null=True)),
                (
                    "settle_at",
                    models.DateTimeField(
                        blank=True,
                        help_text="When the open slot is decided without the regions still silent.",
                        null=True,
                    ),
                ),
            ],
        ),
        migrations.RunPython(copy_slot_verdicts, copy_back, elidable=True),
        migrations.RemoveIndex(
            model_name="healthcheck",
            name="hc_settle",
        ),
        migrations.RemoveField(
            model_name="healthcheck",
            name="settle_at",
        ),
        migrations.RemoveField(
            model_name="healthcheck",
            name="verdict_slot",
        ),
        migrations.AddIndex(
            model_name="slotverdict",
            index=models.Index(
                condition=models.Q(("settle_at__isnull", False)),
                fields=["settle_at"],
                name="slot_verdict_settle",
            ),
        ),
    ]
