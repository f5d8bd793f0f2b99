"""Make JSON stored before text from targets and requests was made storable readable again.

Only SQLite could hold them: Django writes JSON there as ASCII text, so a lone surrogate or a
NUL went in as a "\\udXXX" or "\\u0000" escape, read back as a string no answer can encode, and
every list that showed the row answered 500. PostgreSQL's jsonb refused both from the start.
"""

from django.db import migrations

# Which JSON columns may hold target or request text, by model.
COLUMNS = {
    "Healthcheck": ["config"],
    "ProbeResult": ["missing_tools"],
    "RegionState": ["missing_tools"],
    "StatusChange": ["missing_tools", "failed_regions"],
    "ToolList": ["tools"],
    "ToolChange": ["removed", "added", "new_required_inputs"],
}
# Django's JSON encoder escapes every non-ASCII character with lower-case hex digits; "\\ud"
# also finds U+D000–U+D7FF, which cleaning leaves as they are.
ESCAPES = ["\\u0000", "\\ud"]


def clean(value):
    """Return ``value`` with every string, key or value, made storable (as probes.text.storable)."""
    if isinstance(value, str):
        text = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in value)
        return text.replace("\x00", "")
    if isinstance(value, list):
        return [clean(item) for item in value]
    if isinstance(value, dict):
        return {clean(key): clean(item) for key, item in value.items()}
    return value


def make_storable(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    quote = connection.ops.quote_name
    for model_name, columns in COLUMNS.items():
        model = apps.get_model("monitors", model_name)
        table = quote(model._meta.db_table)
        where = " OR ".join(f"instr({quote(column)}, %s) > 0" for column in columns for _ in ESCAPES)
        params = [escape for _ in columns for escape in ESCAPES]
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {table} WHERE {where}", params)  # noqa: S608
            ids = [row[0] for row in cursor.fetchall()]
        for row in model.objects.filter(id__in=ids).only("id", *columns):
            for column in columns:
                setattr(row, column, clean(getattr(row, column)))
            row.save(update_fields=columns)


class Migration(migrations.Migration):
    dependencies = [
        ("monitors", "0005_tool_change_counts"),
    ]

    operations = [migrations.RunPython(make_storable, migrations.RunPython.noop, elidable=True)]
