"""The free-tier quote's rules (monitors/quotes.py): what a quote must say, and when a page states it."""

from __future__ import annotations

import pytest

from monitors.quotes import MAX_NESTING, MAX_PAGE_BYTES, find_quote, free_access_problem, normalised

HTML = "text/html; charset=utf-8"
QUOTE = "Free tier: 1,000 calls a month"


def page(body: str) -> bytes:
    return f"<!doctype html><html><head><title>Pricing</title></head><body>{body}</body></html>".encode()


@pytest.mark.parametrize(
    ("body", "quote"),
    [
        ("<p>Free tier: 1,000 calls a month</p>", QUOTE),
        ("<p>FREE TIER: 1,000 CALLS A MONTH</p>", QUOTE),
        ("<p>Free\n   tier:\t1,000 calls\n a month</p>", QUOTE),
        ("<p>Free&nbsp;tier: 1,000&#32;calls a&#x20;month</p>", QUOTE),
        ("<p><strong>Free tier</strong>: <em>1,000</em> calls a month</p>", QUOTE),
        ("<td>Free tier:</td><td>1,000 calls a month</td>", QUOTE),
        ("<p><b>$0</b>/month, free forever</p>", "$0/month, free forever"),
        ("<p>\u201cIt\u2019s free\u201d \u2014 no card needed</p>", '"It\'s free" - no card needed'),
        ("<p>It&rsquo;s free &mdash; no card needed</p>", "It\u2019s free \u2013 no card needed"),
        ("<p>Start free&hellip; upgrade later</p>", "Start free... upgrade later"),
        ("<p>\uff26\uff52\uff45\uff45 plan included</p>", "Free plan included"),
        ("<p>Free tier: 1,000 calls a month<script>x</script></p>", QUOTE),
        ("<noscript><p>Free tier: 1,000 calls a month</p></noscript>", QUOTE),
    ],
    ids=[
        "exact",
        "case",
        "whitespace",
        "entities",
        "inline markup",
        "table cells",
        "price split by markup",
        "typographic quotes and dash",
        "typographic entities",
        "ellipsis",
        "full-width letters",
        "script beside it",
        "noscript is visible without scripts",
    ],
)
def test_a_page_states_the_quote(body, quote):
    assert find_quote(body=page(body), content_type=HTML, quote=quote).found


@pytest.mark.parametrize(
    ("body", "content_type", "problem"),
    [
        ("<p>Plans from $10 a month</p>", HTML, "The page does not state the quote"),
        (
            "<script>var t = 'Free tier: 1,000 calls a month'</script>",
            HTML,
            "The page does not state the quote",
        ),
        ("<style>/* Free tier: 1,000 calls a month */</style>", HTML, "The page does not state the quote"),
        ("<div hidden>Free tier: 1,000 calls a month</div>", HTML, "The page does not state the quote"),
        ("<template>Free tier: 1,000 calls a month</template>", HTML, "The page does not state the quote"),
        ("<!-- Free tier: 1,000 calls a month -->", HTML, "The page does not state the quote"),
        ("<p>Free tier: 100 calls a month</p>", HTML, "The page does not state the quote"),
        (
            "Free tier: 1,000 calls a month",
            "application/json",
            "The page is application/json, not HTML or plain text",
        ),
        (
            "Free tier: 1,000 calls a month",
            "application/pdf",
            "The page is application/pdf, not HTML or plain text",
        ),
        ("Free tier: 1,000 calls a month", "", "The page is no media type, not HTML or plain text"),
    ],
    ids=[
        "absent",
        "only in a script",
        "only in a style",
        "hidden",
        "template",
        "comment",
        "another figure",
        "json",
        "pdf",
        "no content type",
    ],
)
def test_a_page_that_does_not_state_the_quote_says_why(body, content_type, problem):
    finding = find_quote(body=page(body), content_type=content_type, quote=QUOTE)

    assert (finding.found, finding.problem) == (False, problem)


def test_plain_text_pages_are_read_as_they_are():
    assert find_quote(body=b"Free tier: 1,000 calls a month\n", content_type="text/plain", quote=QUOTE).found


def test_a_page_larger_than_the_cap_is_refused():
    body = page("<p>Free tier: 1,000 calls a month</p>" + " " * MAX_PAGE_BYTES)

    finding = find_quote(body=body, content_type=HTML, quote=QUOTE)

    assert (finding.found, finding.problem) == (False, "The page is larger than the 2 MiB cap")


def test_a_page_at_the_cap_is_read():
    body = page("<p>Free tier: 1,000 calls a month</p>")
    body += b" " * (MAX_PAGE_BYTES - len(body))

    assert find_quote(body=body, content_type=HTML, quote=QUOTE).found


@pytest.mark.parametrize(("depth", "found"), [(MAX_NESTING - 10, True), (MAX_NESTING + 1, False)])
def test_markup_nested_deeper_than_browsers_go_is_refused_before_parsing(depth, found):
    body = page("<div>" * depth + "Free tier: 1,000 calls a month")

    finding = find_quote(body=body, content_type=HTML, quote=QUOTE)

    assert finding.found is found
    if not found:
        assert finding.problem == "The page nests its markup deeper than 1,000 elements"


def test_thousands_of_closed_or_self_closing_elements_are_not_nesting():
    body = page(
        "<p>x<li>y<br><img src=a>" * 5000 + "<div></div>" * 5000 + "<p>Free tier: 1,000 calls a month"
    )

    assert find_quote(body=body, content_type=HTML, quote=QUOTE).found


def test_the_charset_of_the_content_type_decodes_the_page():
    body = "<p>Gratuit : free tier, 1 000 appels</p>".encode("latin-1")

    assert find_quote(body=body, content_type="text/html; charset=ISO-8859-1", quote="free tier").found


def test_a_meta_charset_decodes_a_page_whose_header_names_none():
    body = '<meta charset="windows-1252"><p>\u201cFree\u201d tier</p>'.encode("windows-1252")

    assert find_quote(body=body, content_type="text/html", quote='"Free" tier').found


@pytest.mark.parametrize(
    "quote",
    [
        "Free tier: 1,000 calls a month",
        "FREE plan",
        "Freemium: the basics cost nothing",
        "Start for free",
        "Free-tier access for individuals",
        "Free forever for open-source projects",
        "Free tier, and a 14-day trial of Pro",
        "\u201cFree\u201d \u2014 for everyone",
    ],
)
def test_a_quote_stating_free_or_freemium_access_is_accepted(quote):
    assert free_access_problem(quote) is None


@pytest.mark.parametrize(
    ("quote", "problem"),
    [
        (
            "1,000 calls a month at no cost",
            'The quote must state free or freemium access (it should say "free" or "freemium").',
        ),
        (
            "Risk-free payments",
            'The quote must state free or freemium access (it should say "free" or "freemium").',
        ),
        (
            "Freedom to choose",
            'The quote must state free or freemium access (it should say "free" or "freemium").',
        ),
        (
            "Start your free trial",
            "A free trial is not free access: quote the page where it states a free tier or plan.",
        ),
        (
            "Free 14-day trial",
            "A free trial is not free access: quote the page where it states a free tier or plan.",
        ),
        (
            "Free 30 day trials",
            "A free trial is not free access: quote the page where it states a free tier or plan.",
        ),
    ],
)
def test_a_quote_not_stating_free_access_says_why(quote, problem):
    assert free_access_problem(quote) == problem


def test_normalising_drops_whitespace_case_and_typographic_forms():
    assert normalised("  \u201cIt\u2019s\u00a0FREE\u201d \u2014 1,000\u2026 ") == '"it\'sfree"-1,000...'
