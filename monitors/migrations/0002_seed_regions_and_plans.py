"""Seed the three regions and the free and paid plans."""

from django.db import migrations

REGIONS = [
    ("eu-west", "Europe West (Dublin)"),
    ("us-east", "US East (Virginia)"),
    ("ap-southeast", "Asia Pacific Southeast (Singapore)"),
]

PLANS = [
    # slug, name, max healthchecks, min interval s, retention days, regions
    ("free", "Free", 10, 300, 30, ["eu-west", "us-east"]),
    ("paid", "Paid", 1000, 30, 90, ["eu-west", "us-east", "ap-southeast"]),
]


def seed(apps, schema_editor):
    Region = apps.get_model("monitors", "Region")
    Plan = apps.get_model("monitors", "Plan")
    regions = {}
    for slug, name in REGIONS:
        regions[slug], _ = Region.objects.get_or_create(slug=slug, defaults={"name": name})
    for slug, name, max_checks, min_interval, retention, region_slugs in PLANS:
        plan, _ = Plan.objects.get_or_create(
            slug=slug,
            defaults={
                "name": name,
                "max_healthchecks": max_checks,
                "min_interval_seconds": min_interval,
                "retention_days": retention,
            },
        )
        plan.allowed_regions.set([regions[s] for s in region_slugs])


def unseed(apps, schema_editor):
    apps.get_model("monitors", "Plan").objects.filter(
        slug__in=[p[0] for p in PLANS], organizations=None
    ).delete()
    apps.get_model("monitors", "Region").objects.filter(
        slug__in=[r[0] for r in REGIONS], healthchecks=None
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("monitors", "0001_initial")]
    operations = [migrations.RunPython(seed, unseed)]
