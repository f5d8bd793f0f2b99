"""Drop the empty ``headers`` that TLS, TCP, DNS and heartbeat configs were stored with.

Those types send no headers, and their parsers now refuse the key as an unknown field. A stored
config is read by several parsers (the worker's batch, the heartbeat judge, a manual run, a
partial update merging into it), so the stored shape is made what the API answers once, here,
rather than each reader tolerating the old key. Only an empty value is dropped: the parsers
always refused a non-empty one, so none was ever stored. The reverse puts it back for the code
before, whose parsers accepted it either way.
"""

from django.db import migrations

# tls, tcp, dns, heartbeat: the numbers are the registry's and never change.
TYPES = (2, 3, 4, 7)


def drop_empty_headers(apps, schema_editor):
    healthcheck = apps.get_model("monitors", "Healthcheck")
    rows = healthcheck.objects.filter(type__in=TYPES, config__has_key="headers").only("id", "config")
    changed = []
    for row in rows.iterator():
        if row.config.get("headers") in ({}, None):
            row.config = {key: value for key, value in row.config.items() if key != "headers"}
            changed.append(row)
    healthcheck.objects.bulk_update(changed, ["config"], batch_size=500)


def put_back_empty_headers(apps, schema_editor):
    healthcheck = apps.get_model("monitors", "Healthcheck")
    changed = []
    for row in healthcheck.objects.filter(type__in=TYPES).only("id", "config").iterator():
        if "headers" not in row.config:
            row.config = {**row.config, "headers": {}}
            changed.append(row)
    healthcheck.objects.bulk_update(changed, ["config"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("monitors", "0027_certificate_changes"),
    ]

    operations = [migrations.RunPython(drop_empty_headers, put_back_empty_headers)]
