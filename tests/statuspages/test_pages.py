"""The public HTML pages, rendered by the test client and parsed as a browser would: content, escaping, access, hosts."""

from __future__ import annotations

import gzip
from datetime import timedelta

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.utils import timezone

from monitors.errors import ServiceError
from statuspages import services
from tests.statuspages.html_support import parse

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert('x')</script>\"&amp;<img src=x onerror=alert(1)>"


@pytest.fixture
def web() -> Client:
    return Client()


def test_the_page_shows_the_overall_status_and_each_components_status(
    web, org, make_check, make_page, add_component
):
    page = make_page(org, title="Acme")
    add_component(page, make_check(org, name="API", status="up"))
    add_component(page, make_check(org, name="MCP", status="down"))
    answer = web.get(f"/s/{page.slug}/")
    assert answer.status_code == 200
    document = parse(answer.content)
    assert document.one("overall").text == "Partial System Outage"
    statuses = {
        element.one("component-name").text: element.one("status-label").text
        for element in document.all("component")
    }
    assert statuses == {"API": "Operational", "MCP": "Major outage"}


def test_each_component_has_a_ninety_day_strip_and_a_response_time_chart(
    web, org, make_check, make_page, add_component
):
    page = make_page(org)
    add_component(page, make_check(org, age=timedelta(days=10)))
    component = parse(web.get(f"/s/{page.slug}/").content).one("component")
    strip = component.one("uptime-strip")
    assert len(strip.all("bar")) == 90
    assert len(strip.all("bar-no-data")) == 79
    assert component.one("response-chart").tag == "svg"
    assert component.one("uptime").text == "100.00 % uptime"


def test_the_page_says_how_uptime_is_computed(web, org, make_page):
    page = make_page(org)
    note = parse(web.get(f"/s/{page.slug}/").content).one("uptime-definition")
    assert "first failing check that led to an outage to the first good check" in note.text
    assert "degraded performance is not downtime" in note.text


def test_a_browser_that_accepts_gzip_gets_the_page_compressed(web, org, make_check, make_page, add_component):
    page = make_page(org)
    add_component(page, make_check(org, age=timedelta(days=10)))
    plain = web.get(f"/s/{page.slug}/")

    packed = web.get(f"/s/{page.slug}/", HTTP_ACCEPT_ENCODING="gzip")

    assert packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content
    assert len(packed.content) < len(plain.content) / 4


def test_the_page_needs_no_javascript(web, org, make_check, make_page, add_component):
    page = make_page(org)
    add_component(page, make_check(org))
    assert parse(web.get(f"/s/{page.slug}/").content).all(tag="script") == []


def test_hostile_names_and_texts_stay_escaped(web, org, make_check, make_page, add_component):
    page = make_page(org, title=HOSTILE, description=HOSTILE)
    group = services.group_create(page=page, name=HOSTILE)
    component = add_component(page, make_check(org), display_name=HOSTILE, group=group.public_id)
    services.incident_create(
        page=page,
        changes={"title": HOSTILE, "components": [component.public_id]},
        body=HOSTILE,
        now=timezone.now(),
    )
    for path in ("", "history/"):
        document = parse(web.get(f"/s/{page.slug}/{path}").content)
        assert document.all(tag="script") == []
        assert document.all(tag="img") == []
        assert HOSTILE in document.text
    document = parse(web.get(f"/s/{page.slug}/").content)
    assert document.one("component-name").text == HOSTILE
    assert document.one("group-name").text == HOSTILE
    assert document.one("incident-title").text == HOSTILE
    assert document.one("update-body").text == HOSTILE


def test_published_incidents_show_with_their_updates_newest_first(web, org, make_page):
    page = make_page(org)
    now = timezone.now()
    incident = services.incident_create(
        page=page,
        changes={"title": "Logins fail", "impact": "major"},
        body="We are looking.",
        now=now - timedelta(hours=1),
    )
    services.incident_update_add(incident=incident, status="identified", body="A bad deploy.", now=now)
    document = parse(web.get(f"/s/{page.slug}/").content)
    article = document.one("incident")
    assert article.one("incident-title").text == "Logins fail"
    assert [body.text for body in article.all("update-body")] == ["A bad deploy.", "We are looking."]
    assert document.one("overall").text == "Partial System Outage"


def test_the_history_lists_incidents_by_month_in_the_pages_zone(web, org, make_page):
    page = make_page(org, time_zone="Pacific/Auckland")
    now = timezone.now()
    services.incident_create(page=page, changes={"title": "This month"}, body="b", now=now)
    document = parse(web.get(f"/s/{page.slug}/history/").content)
    months = document.all("month")
    local = timezone.localtime(now, timezone=__import__("zoneinfo").ZoneInfo("Pacific/Auckland"))
    assert len(months) == local.month
    assert months[0].one(tag="h2").text == f"{local:%B %Y}"
    assert months[0].one("incident-title").text == "This month"


@pytest.mark.parametrize("year", ["1999", "abcd", "20266", "-1"])
def test_a_bad_history_year_shows_a_year_rather_than_failing(web, org, make_page, year):
    page = make_page(org)
    assert web.get(f"/s/{page.slug}/history/", {"year": year}).status_code == 200


def test_an_unknown_page_is_a_404(web, db):
    assert web.get("/s/no-such-page/").status_code == 404
    assert web.get("/s/no-such-page/history/").status_code == 404


def test_the_stylesheet_is_a_static_file_of_the_app(web, org, make_page):
    page = make_page(org)
    links = parse(web.get(f"/s/{page.slug}/").content).all(tag="link")
    (link,) = [link for link in links if link.attrs.get("rel") == "stylesheet"]
    assert link.attrs["href"].endswith("statuspages/page.css")
    assert finders.find("statuspages/page.css")


# --- password pages ------------------------------------------------------------------------------


@pytest.fixture
def private_page(org, make_page, make_check, add_component):
    page = make_page(org, access="password", password="correct horse")
    add_component(page, make_check(org, name="API"))
    return page


def sign_in(web: Client, page, password: str):
    return web.post(f"/s/{page.slug}/login/", {"password": password})


def test_a_password_page_sends_a_stranger_to_its_form(web, private_page):
    answer = web.get(f"/s/{private_page.slug}/")
    assert (answer.status_code, answer["Location"]) == (302, f"/s/{private_page.slug}/login/")
    form = parse(web.get(answer["Location"]).content).one("login")
    assert form.attrs["method"] == "post"


def test_a_wrong_password_opens_nothing(web, private_page):
    answer = sign_in(web, private_page, "wrong password")
    assert answer.status_code == 403
    assert "That password is not right." in parse(answer.content).text
    assert web.get(f"/s/{private_page.slug}/").status_code == 302


def test_the_right_password_sets_a_signed_cookie_that_opens_the_page(web, private_page):
    answer = sign_in(web, private_page, "correct horse")
    assert (answer.status_code, answer["Location"]) == (302, f"/s/{private_page.slug}/")
    cookie = answer.cookies[f"sp_{private_page.public_id.hex}"]
    assert cookie["httponly"]
    assert cookie["samesite"] == "Lax"
    opened = web.get(f"/s/{private_page.slug}/")
    assert opened.status_code == 200
    assert opened["Cache-Control"] == "private, no-store"


def test_a_forged_cookie_opens_nothing(web, private_page):
    web.cookies[f"sp_{private_page.public_id.hex}"] = "anything"
    assert web.get(f"/s/{private_page.slug}/").status_code == 302


def test_changing_the_password_closes_open_sessions(web, private_page):
    sign_in(web, private_page, "correct horse")
    services.status_page_update(page=private_page, changes={"password": "battery staple"})
    assert web.get(f"/s/{private_page.slug}/").status_code == 302


def test_too_many_wrong_passwords_lock_the_form_for_a_while(web, private_page):
    for _ in range(10):
        assert sign_in(web, private_page, "guess").status_code == 403
    assert sign_in(web, private_page, "correct horse").status_code == 429


# --- custom domains ------------------------------------------------------------------------------

DOMAIN = "status.acme.example"


@pytest.fixture
def domain_page(org, make_page, make_check, add_component, settings):
    settings.ALLOWED_HOSTS = [DOMAIN, "other.example", "testserver"]
    page = make_page(org, title="Acme by domain", custom_domain=DOMAIN)
    add_component(page, make_check(org, name="API"))
    return page


def verify(page, records):
    return services.status_page_verify_domain(
        page=page, resolver=lambda name: records.get(name, []), now=timezone.now()
    )


def test_a_verified_domain_answers_by_host_header(web, domain_page):
    verify(domain_page, {f"_uptimy.{DOMAIN}": ["v=spf1 -all", domain_page.domain_token]})
    answer = web.get("/", HTTP_HOST=DOMAIN)
    assert answer.status_code == 200
    assert parse(answer.content).one("page-title").text == "Acme by domain"
    assert web.get("/history/", HTTP_HOST=f"{DOMAIN}:443").status_code == 200
    assert web.get("/api/v2/status.json", HTTP_HOST=DOMAIN).json()["page"]["url"] == f"http://{DOMAIN}/"


def test_an_unverified_domain_answers_nothing(web, domain_page):
    assert web.get("/", HTTP_HOST=DOMAIN).status_code == 404


def test_a_host_that_is_no_pages_is_a_404(web, domain_page):
    verify(domain_page, {f"_uptimy.{DOMAIN}": [domain_page.domain_token]})
    assert web.get("/", HTTP_HOST="other.example").status_code == 404


def test_verification_needs_the_token_at_the_record_name(domain_page):
    with pytest.raises(ServiceError) as refused:
        verify(domain_page, {DOMAIN: [domain_page.domain_token], f"_uptimy.{DOMAIN}": ["someone else's"]})
    assert refused.value.field == "custom_domain"
    domain_page.refresh_from_db()
    assert not domain_page.domain_verified


def test_changing_the_domain_needs_a_new_verification(web, domain_page, settings):
    verify(domain_page, {f"_uptimy.{DOMAIN}": [domain_page.domain_token]})
    old_token = domain_page.domain_token
    services.status_page_update(page=domain_page, changes={"custom_domain": "other.example"})
    assert domain_page.domain_token != old_token
    assert web.get("/", HTTP_HOST="other.example").status_code == 404
    assert web.get("/", HTTP_HOST=DOMAIN).status_code == 404


# --- the kept HTML -------------------------------------------------------------------------------


def test_the_html_is_kept_for_a_while_but_an_owners_change_shows_at_once(
    web, org, make_check, make_page, add_component
):
    page = make_page(org)
    check = make_check(org, name="API", status="up")
    add_component(page, check)
    assert parse(web.get(f"/s/{page.slug}/").content).one("status-label").text == "Operational"
    # A healthcheck's new status waits for the kept HTML to expire (30 s, the page's max-age) …
    type(check).objects.filter(pk=check.pk).update(status="down")
    assert parse(web.get(f"/s/{page.slug}/").content).one("status-label").text == "Operational"
    # … while anything the owner writes through the services shows on the next request.
    services.incident_create(page=page, changes={"title": "API down"}, body="Looking.", now=timezone.now())
    document = parse(web.get(f"/s/{page.slug}/").content)
    assert document.one("incident-title").text == "API down"
    assert document.one("status-label").text == "Major outage"


def test_the_password_form_carries_its_csrf_token(private_page):
    browser = Client(enforce_csrf_checks=True)
    form = parse(browser.get(f"/s/{private_page.slug}/login/").content).one("login")
    token = next(field for field in form.all(tag="input") if field.attrs.get("name") == "csrfmiddlewaretoken")
    answer = browser.post(
        f"/s/{private_page.slug}/login/",
        {"password": "correct horse", "csrfmiddlewaretoken": token.attrs["value"]},
    )
    assert answer.status_code == 302
    assert (
        Client(enforce_csrf_checks=True)
        .post(f"/s/{private_page.slug}/login/", {"password": "correct horse"})
        .status_code
        == 403
    )
